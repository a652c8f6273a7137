import { spawn } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { exportJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { ConfigError, createServer, parseCommandLine, ServerOptionError, type SvcGraphqlServer } from '../src/index.js';
import { USAGE } from '../src/cli/command-line.js';
import { cleanEnv, BIN, ROOT } from './utils/server-process.js';

const ADMIN = 'jwt-secrets-admin-secret';
const ISS_A = 'https://a.example';
const ISS_B = 'https://b.example';
const KEY_A = 'an HS256 secret of issuer A, 32+ chars';
const KEY_FALLBACK = 'an HS256 secret of the fallback entry';
const NAMESPACE = 'https://svc-graphql.dev/jwt/claims';
const rsaB = generateKeyPairSync('rsa', { modulusLength: 2048 });
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** A: HS256, claims in the default namespace, `Authorization` (given as `--jwt-secret`). */
const entryA = { type: 'HS256', key: KEY_A, issuer: ISS_A };
/** B: RS256 keys from a JWKS, claims through claims_map, its token in the `b_token` cookie. */
const entryB = (jwksUrl: string) => ({
  jwk_url: jwksUrl,
  issuer: ISS_B,
  header: { type: 'Cookie', name: 'b_token' },
  claims_map: {
    'x-svc-allowed-roles': { path: '$.roles' },
    'x-svc-default-role': { path: '$.roles[0]' },
    'x-svc-user-id': { path: '$.sub' },
  },
});
/** The entry without issuer: tokens of any other issuer, or without iss. */
const fallbackEntry = { type: 'HS256', key: KEY_FALLBACK };

const NOT_IN_ISSUER = { errors: [{ message: 'Could not verify JWT: JWTNotInIssuer', extensions: { code: 'invalid-jwt', path: '$' } }] };

function sign(payload: JWTPayload, key: KeyObject | string, kid?: string): Promise<string> {
  const alg = typeof key === 'string' ? 'HS256' : 'RS256';
  return new SignJWT(payload)
    .setProtectedHeader({ alg, ...(kid !== undefined && { kid }) })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(typeof key === 'string' ? new TextEncoder().encode(key) : key);
}
const tokenA = () =>
  sign({ iss: ISS_A, [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': 'a-1' } }, KEY_A);
const tokenB = () => sign({ iss: ISS_B, sub: 'b-7', roles: ['reader'] }, rsaB.privateKey, 'b1');
const otherIssuerToken = (key = KEY_FALLBACK) =>
  sign({ iss: 'https://other.example', [NAMESPACE]: { 'x-svc-allowed-roles': ['guest'], 'x-svc-default-role': 'guest' } }, key);

/** A real JWKS endpoint on 127.0.0.1. */
async function startJwks(keys: JWK[]): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server: Server = createHttpServer((_request, response) => {
    hits += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    hits: () => hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-jwt-secrets-'));
let remote: RunningRemote;
let jwks: Awaited<ReturnType<typeof startJwks>>;

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
  jwks = await startJwks([{ ...(await exportJWK(rsaB.publicKey)), kid: 'b1', alg: 'RS256', use: 'sig' }]);
});
afterAll(async () => {
  await remote?.close();
  await jwks?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('createServer with jwtSecrets', () => {
  let server: SvcGraphqlServer;

  beforeAll(async () => {
    server = await createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'metadata.json')}`,
      adminSecret: ADMIN,
      jwtSecret: JSON.stringify(entryA),
      jwtSecrets: JSON.stringify([entryB(jwks.url), fallbackEntry]),
      logger: quiet,
    });
    const added = await fetch(`${server.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN },
      body: JSON.stringify({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } }),
    });
    expect(added.status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The session the remote received (as x-svc-* headers) for a request with these headers, or the refusal. */
  async function sessionHeaders(headers: Record<string, string>): Promise<Record<string, string> | { status: number; body: unknown }> {
    const response = await fetch(`${server.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: '{ echoHeaders }' }),
    });
    const body = (await response.json()) as { data?: { echoHeaders: string } };
    if (response.status !== 200 || body.data === undefined) return { status: response.status, body };
    const received = JSON.parse(body.data.echoHeaders) as Record<string, string>;
    return Object.fromEntries(Object.entries(received).filter(([name]) => name.startsWith('x-svc-')));
  }

  it('verifies a token of each issuer with its own keys, claims and location', async () => {
    expect(await sessionHeaders({ authorization: `Bearer ${await tokenA()}` })).toEqual({ 'x-svc-role': 'user', 'x-svc-user-id': 'a-1' });
    expect(await sessionHeaders({ cookie: `theme=dark; b_token=${await tokenB()}` })).toEqual({
      'x-svc-role': 'reader',
      'x-svc-user-id': 'b-7',
    });
  });

  it('gives a token of another issuer to the entry without issuer, and only with its key', async () => {
    expect(await sessionHeaders({ authorization: `Bearer ${await otherIssuerToken()}` })).toEqual({ 'x-svc-role': 'guest' });
    expect(await sessionHeaders({ authorization: `Bearer ${await otherIssuerToken(KEY_A)}` })).toEqual({
      status: 401,
      body: { errors: [{ message: 'Could not verify JWT: JWSError JWSInvalidSignature', extensions: { code: 'invalid-jwt', path: '$' } }] },
    });
  });

  it('refuses a token where its entry does not read it', async () => {
    expect(await sessionHeaders({ authorization: `Bearer ${await tokenB()}` })).toEqual({ status: 401, body: NOT_IN_ISSUER });
    expect(await sessionHeaders({ cookie: `b_token=${await tokenA()}` })).toEqual({ status: 401, body: NOT_IN_ISSUER });
  });

  it('authenticates graphql-ws connections of both issuers', async () => {
    const sessionOverWs = async (headers: Record<string, string>) => {
      const client = createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers }, retryAttempts: 0, lazy: true });
      const results: unknown[] = [];
      try {
        for await (const result of client.iterate({ query: 'subscription { echoHeaders }' })) {
          results.push(result);
          break;
        }
      } finally {
        await client.dispose();
      }
      const received = JSON.parse((results[0] as { data: { echoHeaders: string } }).data.echoHeaders) as Record<string, string>;
      return { role: received['x-svc-role'], user: received['x-svc-user-id'] };
    };
    expect(await sessionOverWs({ Authorization: `Bearer ${await tokenA()}` })).toEqual({ role: 'user', user: 'a-1' });
    expect(await sessionOverWs({ Cookie: `b_token=${await tokenB()}` })).toEqual({ role: 'reader', user: 'b-7' });

    const refused = createClient({
      url: server.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { headers: { Authorization: `Bearer ${await tokenB()}` } },
      retryAttempts: 0,
      lazy: true,
    });
    const closed = await new Promise<{ code: number; reason: string }>((done) => {
      refused.on('closed', (event) => done(event as { code: number; reason: string }));
      refused.subscribe({ query: '{ no_queries_available }' }, { next() {}, error() {}, complete() {} });
    });
    await refused.dispose();
    expect({ code: closed.code, reason: closed.reason }).toEqual({ code: 4403, reason: 'Forbidden: Could not verify JWT: JWTNotInIssuer' });
  });

  it('refuses duplicate issuers, bad entries and a missing admin secret, naming the option', async () => {
    const attempt = (options: Parameters<typeof createServer>[0]) =>
      createServer({ port: 0, databaseUrl: `file:${join(dir, 'never.json')}`, logger: quiet, adminSecret: ADMIN, ...options }).catch(
        (error: unknown) => error,
      );
    const duplicate = await attempt({ jwtSecret: entryA, jwtSecrets: [{ ...fallbackEntry, issuer: ISS_A }] });
    expect(duplicate).toBeInstanceOf(ServerOptionError);
    expect(duplicate).toMatchObject({ option: 'jwtSecrets', message: `issuer "${ISS_A}" is configured twice` });
    expect(await attempt({ jwtSecrets: [fallbackEntry, { type: 'HS256', key: KEY_A }] })).toMatchObject({
      option: 'jwtSecrets',
      message: 'an entry without "issuer" is configured twice (at most one entry may have no issuer)',
    });
    expect(await attempt({ jwtSecrets: [entryA, { type: 'HS256', key: 'short' }] })).toMatchObject({
      option: 'jwtSecrets',
      message: expect.stringMatching(/^\[1\]: key: HS256 key must be at least 32 characters/),
    });
    expect(await attempt({ jwtSecret: { type: 'HS256' }, jwtSecrets: [entryA] })).toMatchObject({ option: 'jwtSecret' });
    const noAdmin = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'never.json')}`, logger: quiet, jwtSecrets: [entryA] }).catch(
      (error: unknown) => error,
    );
    expect(noAdmin).toMatchObject({ option: 'jwtSecrets', message: expect.stringMatching(/^JWT mode needs an admin secret/) });
  });
});

describe('svc-graphql serve --jwt-secrets', () => {
  function run(args: string[], env: Record<string, string> = {}) {
    return spawn(process.execPath, ['--import', 'tsx', BIN, 'serve', '--server-port', '0', ...args], { cwd: ROOT, env: cleanEnv(env) });
  }
  async function runToExit(args: string[], env: Record<string, string> = {}) {
    const child = run(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    return { code, stdout, stderr };
  }
  const db = () => ['--database-url', `file:${join(dir, 'cli.json')}`];

  it('exits 1 with one line naming the variable or flag for issuers configured twice', async () => {
    // Two processes only (each loads TypeScript); the other refusals are checked in process below.
    const [duplicate, duplicateWithFlag] = await Promise.all([
      runToExit([...db(), '--admin-secret', ADMIN], { SVC_GRAPHQL_JWT_SECRETS: JSON.stringify([entryA, { ...fallbackEntry, issuer: ISS_A }]) }),
      runToExit([...db(), '--admin-secret', ADMIN, '--jwt-secret', JSON.stringify(entryA), '--jwt-secrets', JSON.stringify([{ ...fallbackEntry, issuer: ISS_A }])]),
    ]);
    for (const result of [duplicate, duplicateWithFlag]) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
    }
    expect(duplicate.stderr).toBe(`Fatal error: SVC_GRAPHQL_JWT_SECRETS: issuer "${ISS_A}" is configured twice\n`);
    expect(duplicateWithFlag.stderr).toBe(`Fatal error: --jwt-secrets: issuer "${ISS_A}" is configured twice\n`);
  }, 180_000);

  it('refuses bad JSON, a non-list and a missing admin secret while reading the command line', () => {
    const refusal = (args: string[], env: Record<string, string> = {}) => {
      try {
        parseCommandLine(['serve', ...args], env);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    // The key's text must not be echoed back by the JSON error.
    const badJson = refusal(['--admin-secret', ADMIN], { SVC_GRAPHQL_JWT_SECRETS: `[{"type":"HS256","key": ${KEY_A}}]` });
    expect(badJson).toBeInstanceOf(ConfigError);
    expect(badJson).toMatchObject({ setting: 'SVC_GRAPHQL_JWT_SECRETS', message: expect.stringMatching(/^invalid JSON: \S/) });
    expect((badJson as Error).message).not.toContain('secret of issuer');
    expect(refusal(['--admin-secret', ADMIN, '--jwt-secrets', JSON.stringify(entryA)])).toMatchObject({
      setting: '--jwt-secrets',
      message: 'expected a JSON array of JWT configurations',
    });
    expect(refusal([], { SVC_GRAPHQL_JWT_SECRETS: JSON.stringify([entryA]) })).toMatchObject({
      setting: 'SVC_GRAPHQL_JWT_SECRETS',
      message: 'JWT mode needs an admin secret: set --admin-secret or SVC_GRAPHQL_ADMIN_SECRET',
    });
    const parsed = parseCommandLine(['serve', '--admin-secret', ADMIN, '--jwt-secrets', JSON.stringify([entryA])], {});
    expect(parsed).toMatchObject({ command: 'serve', config: { jwtSecrets: JSON.stringify([entryA]), sources: { jwtSecrets: '--jwt-secrets' } } });
    expect(USAGE).toContain('--jwt-secrets JSON');
    expect(USAGE).toContain('SVC_GRAPHQL_JWT_SECRETS');
  });

  it('serves tokens of --jwt-secret and of each SVC_GRAPHQL_JWT_SECRETS entry; without a fallback, another issuer is refused', async () => {
    const child = run([...db(), '--admin-secret', ADMIN, '--jwt-secret', JSON.stringify(entryA)], {
      SVC_GRAPHQL_JWT_SECRETS: JSON.stringify([entryB(jwks.url)]),
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    try {
      const url = await new Promise<string>((done, fail) => {
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /^svc-graphql listening on (http:\/\/\S+)$/m.exec(stdout);
          if (match) done(match[1] as string);
        });
        child.on('exit', (code) => fail(new Error(`exited with ${code}: ${stderr}`)));
      });
      const ask = async (headers: Record<string, string>) => {
        const response = await fetch(`${url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query: '{ no_queries_available }' }),
        });
        return { status: response.status, body: (await response.json()) as unknown };
      };
      const ok = { status: 200, body: { data: { no_queries_available: null } } };
      expect(await ask({ authorization: `Bearer ${await tokenA()}` })).toEqual(ok);
      expect(await ask({ cookie: `b_token=${await tokenB()}` })).toEqual(ok);
      expect(await ask({ authorization: `Bearer ${await otherIssuerToken()}` })).toEqual({ status: 401, body: NOT_IN_ISSUER });
      const noIss = await sign({ [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } }, KEY_A);
      expect(await ask({ authorization: `Bearer ${noIss}` })).toEqual({ status: 401, body: NOT_IN_ISSUER });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
