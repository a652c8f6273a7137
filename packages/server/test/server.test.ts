import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, ServerOptionError, type SvcGraphqlServer } from '../src/index.js';

const KEY = 'a server test secret of 32+ characters';
const ADMIN_SECRET = 'server-test-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-server-'));
let remote: RunningRemote;
let server: SvcGraphqlServer;

function token(role: string, ttlSeconds = 600): Promise<string> {
  return new SignJWT({
    'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': role, 'x-svc-allowed-roles': [role], 'x-svc-user-id': '7' },
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(KEY));
}

function metadata(body: unknown, headers: Record<string, string> = { 'x-svc-admin-secret': ADMIN_SECRET }) {
  return fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function graphql(query: string, headers: Record<string, string>, variables?: Record<string, unknown>) {
  return fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
}

function wsClient(headers: Record<string, string>): Client {
  return createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers }, retryAttempts: 0, lazy: true });
}

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: JSON.stringify({ type: 'HS256', key: KEY }),
    logger: quiet,
  });
});

afterAll(async () => {
  await server?.close();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('createServer', () => {
  it('refuses a JWT configuration naming the option, before listening', async () => {
    const error = await createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'never.json')}`,
      adminSecret: 'x',
      jwtSecret: { type: 'HS256', key: KEY, claims_namespace: 'a', claims_namespace_path: '$' },
      logger: quiet,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerOptionError);
    expect(error).toMatchObject({ option: 'jwtSecret', message: 'claims_namespace and claims_namespace_path both cannot be set' });
  });

  it('serves only no_queries_available before a remote is added', async () => {
    const response = await graphql('{ no_queries_available }', { 'x-svc-admin-secret': ADMIN_SECRET });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { no_queries_available: null } });
  });

  it('answers an absurdly nested operation 400 instead of exhausting the stack', async () => {
    const response = await graphql(`${'{a'.repeat(3000)}${'}'.repeat(3000)}`, { 'x-svc-admin-secret': ADMIN_SECRET });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'the operation is nested too deeply: more than 256 levels', extensions: { code: 'validation-failed', path: '$' } }],
    });
    const deepButFine = `{ __schema { queryType { fields { type { ${'ofType { '.repeat(20)}name${' }'.repeat(20)} } } } } }`;
    const fine = await graphql(deepButFine, { 'x-svc-admin-secret': ADMIN_SECRET });
    expect(fine.status).toBe(200);
    expect(await fine.json()).toMatchObject({ data: { __schema: { queryType: { fields: [{ type: { ofType: null } }] } } } });
  });

  it('refuses a request with neither token nor secret in JWT mode', async () => {
    const response = await graphql('{ no_queries_available }', {});
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: "Missing 'Authorization' or 'Cookie' header in JWT authentication mode",
          extensions: { code: 'invalid-headers', path: '$' },
        },
      ],
    });
  });

  it('lets only the admin role call the metadata API', async () => {
    const asUser = await metadata({ type: 'export_metadata', args: {} }, { authorization: `Bearer ${await token('user')}` });
    expect(asUser.status).toBe(403);
    expect(await asUser.json()).toEqual({ error: 'restricted access : admin only', path: '$', code: 'access-denied' });
    const asAdminToken = await metadata({ type: 'export_metadata', args: {} }, { authorization: `Bearer ${await token('admin')}` });
    expect(asAdminToken.status).toBe(200);
  });

  it('answers a metadata call with a bad token 401 with the bearer challenge', async () => {
    const response = await metadata({ type: 'export_metadata', args: {} }, { authorization: `Bearer ${(await token('admin')).slice(0, -4)}AAAA` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await response.json()).toEqual({
      error: 'Could not verify JWT: JWSError JWSInvalidSignature',
      path: '$',
      code: 'invalid-jwt',
    });
  });

  it('adds a remote schema, then serves its queries and subscriptions to a token holder, then removes it', async () => {
    const added = await metadata({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } });
    expect(await added.json()).toEqual({ message: 'success' });
    expect(added.status).toBe(200);

    const userToken = await token('user');
    const query = await graphql('query Hi($name: String) { hello(name: $name) }', { authorization: `Bearer ${userToken}` }, { name: 'svc' });
    expect(query.status).toBe(200);
    const body = (await query.json()) as { data?: { hello?: unknown }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(typeof body.data?.hello).toBe('string');

    const client = wsClient({ Authorization: `Bearer ${userToken}` });
    const values: unknown[] = [];
    for await (const result of client.iterate({ query: 'subscription { countdown(from: 2, intervalMs: 10) }' })) {
      values.push(result);
    }
    await client.dispose();
    expect(values).toEqual([{ data: { countdown: 2 } }, { data: { countdown: 1 } }, { data: { countdown: 0 } }]);

    const removed = await metadata({ type: 'remove_remote_schema', args: { name: 'sample' } });
    expect(await removed.json()).toEqual({ message: 'success' });
    const after = await graphql('{ hello }', { authorization: `Bearer ${userToken}` });
    const afterBody = (await after.json()) as { errors?: Array<{ message: string }> };
    expect(afterBody.errors?.[0]?.message).toMatch(/Cannot query field "hello"/);
  });

  it('refuses an environment variable that is not set or holds no URL at the field naming it, never showing its value', async () => {
    const add = async (definition: Record<string, unknown>) => {
      const response = await metadata({ type: 'add_remote_schema', args: { name: 'from_env', definition } });
      return { status: response.status, body: await response.json() };
    };
    const invalid = (path: string, error: string) => ({ status: 400, body: { error, path, code: 'invalid-params' } });
    delete process.env['SERVER_TEST_UNSET_VARIABLE'];
    expect(await add({ url_from_env: 'SERVER_TEST_UNSET_VARIABLE' })).toEqual(
      invalid('$.args.definition.url_from_env', 'environment variable "SERVER_TEST_UNSET_VARIABLE" not set'),
    );
    process.env['SERVER_TEST_NOT_A_URL'] = 'ftp://user:secret-in-env@example.com/';
    try {
      const answer = await add({ url_from_env: 'SERVER_TEST_NOT_A_URL' });
      expect(answer).toEqual(invalid('$.args.definition.url_from_env', 'environment variable "SERVER_TEST_NOT_A_URL" does not hold a valid http(s) URL'));
      expect(JSON.stringify(answer.body)).not.toContain('secret-in-env');
    } finally {
      delete process.env['SERVER_TEST_NOT_A_URL'];
    }
    expect(await add({ url: remote.url, headers: [{ name: 'x-a', value: 'a' }, { name: 'x-b', value_from_env: 'SERVER_TEST_UNSET_VARIABLE' }] })).toEqual(
      invalid('$.args.definition.headers[1].value_from_env', 'environment variable "SERVER_TEST_UNSET_VARIABLE" not set'),
    );
  });

  it('ignores connection_init headers that are not valid HTTP headers', async () => {
    const client = wsClient({ Authorization: `Bearer ${await token('user')}`, 'not a header': 'x', 'x-svc-note': 'line\nbreak' });
    const results: unknown[] = [];
    for await (const result of client.iterate({ query: '{ no_queries_available }' })) results.push(result);
    await client.dispose();
    expect(results).toEqual([{ data: { no_queries_available: null } }]);
  });

  it('answers a WebSocket operation with a syntax error with an error, keeping the connection', async () => {
    const client = wsClient({ Authorization: `Bearer ${await token('user')}` });
    const failed = await new Promise<unknown>((done) => {
      client.subscribe({ query: '{ no_queries_available' }, { next() {}, error: done, complete() {} });
    });
    expect(failed).toEqual([expect.objectContaining({ message: 'Syntax Error: Expected Name, found <EOF>.' })]);
    const results: unknown[] = [];
    for await (const result of client.iterate({ query: '{ no_queries_available }' })) results.push(result);
    await client.dispose();
    expect(results).toEqual([{ data: { no_queries_available: null } }]);
  });

  it('closes a WebSocket whose token is invalid with 4403', async () => {
    const client = wsClient({ Authorization: 'Bearer not.a.token' });
    const closed = await new Promise<{ code: number; reason: string }>((done) => {
      client.on('closed', (event) => done(event as { code: number; reason: string }));
      client.subscribe({ query: '{ no_queries_available }' }, { next() {}, error() {}, complete() {} });
    });
    await client.dispose();
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/^Forbidden/);
  });
});

describe('graceful shutdown', () => {
  it('lets an in-flight request finish and closes WebSockets with 1001', async () => {
    const own = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'shutdown.json')}`, logger: quiet });
    const add = await fetch(`${own.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } }),
    });
    expect(add.status).toBe(200);

    const socket = new WebSocket(own.wsUrl, 'graphql-transport-ws');
    await new Promise((done) => socket.once('open', done));
    const socketClosed = new Promise<number>((done) => socket.once('close', (code) => done(code)));

    const slow = fetch(`${own.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ slow(ms: 300) }' }),
    });
    await new Promise((done) => setTimeout(done, 100));
    const closing = own.close();
    const response = await slow;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { slow: expect.any(String) } });
    expect(await socketClosed).toBe(1001);
    await closing;
    await expect(fetch(`${own.url}/healthz`)).rejects.toThrow();
  });
});
