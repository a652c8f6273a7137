import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { createLogger } from '../src/observability/logger.js';

/**
 * The allow list, introspection options and API limits enforced on /v1/graphql by the real server:
 * over POST, GET, batches and graphql-ws, admin exempt.
 */

const ADMIN_SECRET = 'lockdown-enforce-admin-secret';
/** The server's log lines (JSON), for the http-log entries of refused requests. */
const logLines: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-lockdown-enforce-'));
let remote: RunningRemote;
let server: SvcGraphqlServer;

const NOT_ALLOWED = { errors: [{ message: 'query is not allowed', extensions: { code: 'validation-failed', path: '$' } }] };

async function metadata(type: string, args: unknown): Promise<any> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify({ type, args }),
  });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

function headersFor(role: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, ...(role !== undefined && { 'x-svc-role': role }), ...extra };
}

async function post(body: unknown, role?: string, extra?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: headersFor(role, extra), body: JSON.stringify(body) });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** One operation over graphql-ws, as `role`: its messages up to `complete` or `error`. */
async function overWebSocket(query: string, role: string, extra: Record<string, string> = {}): Promise<any[]> {
  const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
  const messages: any[] = [];
  try {
    await new Promise<void>((done, fail) => {
      socket.once('error', fail);
      socket.once('open', () =>
        socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: { 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': role, ...extra } } })),
      );
      socket.on('message', (data) => {
        const message = JSON.parse(String(data));
        if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
        else if (message.id === '1') {
          messages.push(message);
          if (message.type === 'complete' || message.type === 'error') done();
        }
      });
    });
    expect(socket.readyState).toBe(WebSocket.OPEN);
  } finally {
    socket.close();
  }
  return messages;
}

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
  server = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, enableAllowlist: true, logger: createLogger('info', (line) => logLines.push(line), 'json') });
  await metadata('add_remote_schema', { name: 'sample', definition: { url: remote.url } });
  await metadata('create_query_collection', {
    name: 'app',
    definition: { queries: [{ name: 'hello', query: 'query Hello { hello }' }, { name: 'schema', query: '{ __schema { queryType { name } } }' }] },
  });
  await metadata('add_collection_to_allowlist', { collection: 'app' });
});
afterAll(async () => {
  await server?.close();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the allow list', () => {
  it('runs an allowed document written differently, refuses another, and lets admin through', async () => {
    const allowed = await post({ query: '# a comment\nquery Hello {\n  hello  __typename }' }, 'user');
    expect(allowed.body).toEqual({ data: { hello: expect.any(String), __typename: 'Query' } });
    const refused = await post({ query: '{ hello }' }, 'user');
    expect(refused).toMatchObject({ status: 200, body: NOT_ALLOWED });
    const admin = await post({ query: '{ hello }' });
    expect(admin.body).toEqual({ data: { hello: expect.any(String) } });
  });

  it('holds over GET', async () => {
    const url = `${server.url}/v1/graphql?query=${encodeURIComponent('{ hello }')}`;
    const response = await fetch(url, { headers: { 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' } });
    expect(await response.json()).toEqual(NOT_ALLOWED);
  });

  it('holds for each operation of a batch, answered in order', async () => {
    const answer = await post([{ query: 'query Hello { hello }' }, { query: '{ hello }' }], 'user');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([{ data: { hello: expect.any(String) } }, NOT_ALLOWED]);
  });

  it('leaves malformed operations of a batch to the parameter checks, answering the others', async () => {
    const answer = await post([null, { query: 'query Hello { hello }', operationName: 7 }, { query: 'query Hello { hello }' }], 'user');
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(3);
    expect(answer.body[0].errors[0].message).not.toBe('Unexpected error.');
    expect(answer.body[1].errors[0].message).not.toBe('Unexpected error.');
    expect(answer.body[2]).toEqual({ data: { hello: expect.any(String) } });
    for (const body of [null, 7, 'text', { query: 'query Hello { hello }', operationName: ['Hello'] }]) {
      const single = await post(body, 'user');
      expect(single.status, JSON.stringify(body)).toBeLessThan(500);
      expect(single.body.errors[0].message).not.toBe('Unexpected error.');
    }
  });

  it('answers a subscription in a batch with an error of its own', async () => {
    await metadata('add_query_to_collection', { collection_name: 'app', query_name: 'countdown', query: 'subscription { countdown(from: 1) }' });
    const answer = await post([{ query: 'query Hello { hello }' }, { query: 'subscription { countdown(from: 1) }' }], 'user');
    expect(answer.body).toEqual([
      { data: { hello: expect.any(String) } },
      { errors: [{ message: 'a subscription cannot be sent in a batch', extensions: { code: 'validation-failed', path: '$' } }] },
    ]);
  });

  it('holds over graphql-ws: an error message for the operation, the socket staying open', async () => {
    const refused = await overWebSocket('{ hello }', 'user');
    expect(refused).toEqual([{ id: '1', type: 'error', payload: NOT_ALLOWED.errors }]);
    const allowed = await overWebSocket('query Hello { hello }', 'user');
    expect(allowed[0]).toMatchObject({ type: 'next', payload: { data: { hello: expect.any(String) } } });
  });

  it("holds for a remote's subscriptions over graphql-ws: the allow list, then the rate", async () => {
    // Added by the test before (the batch's subscription); added again here so this test stands alone.
    await metadata('add_query_to_collection', { collection_name: 'app', query_name: 'countdown-alone', query: 'subscription { countdown(from: 1) }' });
    expect(await overWebSocket('subscription { countdown(from: 2) }', 'user')).toEqual([{ id: '1', type: 'error', payload: NOT_ALLOWED.errors }]);
    const events = [
      { id: '1', type: 'next', payload: { data: { countdown: 1 } } },
      { id: '1', type: 'next', payload: { data: { countdown: 0 } } },
      { id: '1', type: 'complete' },
    ];
    expect(await overWebSocket('subscription { countdown(from: 1) }', 'user')).toEqual(events);
    await metadata('set_api_limits', { rate_limit: { per_role: { user: { max_reqs_per_min: 1, unique_params: ['x-svc-user-id'] } } } });
    const subscriber = { 'x-svc-user-id': 'subscriber-of-the-rate-test' };
    try {
      expect(await overWebSocket('subscription { countdown(from: 1) }', 'user', subscriber)).toEqual(events);
      expect(await overWebSocket('subscription { countdown(from: 1) }', 'user', subscriber)).toEqual([
        { id: '1', type: 'error', payload: [{ message: 'rate limit exceeded', extensions: { code: 'rate-limit-exceeded', path: '$' } }] },
      ]);
    } finally {
      await metadata('remove_api_limits', {});
      await metadata('drop_query_from_collection', { collection_name: 'app', query_name: 'countdown-alone' });
    }
  });

  it('refuses a document that is not allowed before validating it against the schema', async () => {
    const invalid = '{ no_such_field { id } }';
    expect(await post({ query: invalid }, 'user')).toMatchObject({ status: 200, body: NOT_ALLOWED });
    expect(await post([{ query: invalid }, { query: 'query Hello { hello }' }], 'user')).toMatchObject({
      status: 200,
      body: [NOT_ALLOWED, { data: { hello: expect.any(String) } }],
    });
    expect(await overWebSocket(invalid, 'user')).toEqual([{ id: '1', type: 'error', payload: NOT_ALLOWED.errors }]);
    // Admin is not held to the allow list: the schema's own validation answers.
    const admin = await post({ query: invalid });
    expect(admin.body.errors[0]).toMatchObject({ extensions: { code: 'validation-failed' } });
    expect(admin.body.errors[0].message).toMatch(/no_such_field/);
    // A text that is not a document is answered as one: parse-failed, for any role.
    expect((await post({ query: '{ hello' }, 'user')).body.errors[0].extensions.code).toBe('parse-failed');
  });

  it("says why in the refused request's http-log entry", async () => {
    await post({ query: '{ hello }' }, 'user', { 'x-request-id': 'refused-by-allowlist' });
    await post({ query: 'query Hello { hello }' }, 'user', { 'x-request-id': 'allowed-by-allowlist' });
    const entryOf = async (id: string) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const line = logLines.find((candidate) => candidate.includes(`"request_id":"${id}"`));
        if (line !== undefined) return JSON.parse(line);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no http-log entry for ${id}`);
    };
    expect(await entryOf('refused-by-allowlist')).toMatchObject({ type: 'http-log', status: 200, role: 'user', operation_type: 'query', rejected: 'allowlist' });
    expect(await entryOf('allowed-by-allowlist')).not.toHaveProperty('rejected');
  });

  it('follows a change of the metadata', async () => {
    expect((await post({ query: '{ users { id } }' }, 'editor')).body).toEqual(NOT_ALLOWED);
    await metadata('create_query_collection', { name: 'editors', definition: { queries: [{ name: 'all', query: '{ users { id } }' }] } });
    await metadata('add_collection_to_allowlist', { collection: 'editors', scope: { global: false, roles: ['editor'] } });
    expect((await post({ query: '{ users { id } }' }, 'editor')).body).toHaveProperty('data.users');
    expect((await post({ query: '{ users { id } }' }, 'user')).body).toEqual(NOT_ALLOWED);
  });
});

describe('introspection options and API limits', () => {
  it('refuses introspection for a listed role, __typename staying allowed', async () => {
    await metadata('set_graphql_schema_introspection_options', { disabled_for_roles: ['user'] });
    expect((await post({ query: '{ __schema { queryType { name } } }' }, 'user')).body).toEqual({
      errors: [{ message: 'introspection is disabled for role "user"', extensions: { code: 'validation-failed', path: '$' } }],
    });
    expect((await post({ query: '{ __schema { queryType { name } } }' }, 'editor')).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    await metadata('set_graphql_schema_introspection_options', { disabled_for_roles: [] });
  });

  it('refuses by depth, nodes and batch size per role, and counts the refusals', async () => {
    await metadata('set_api_limits', { depth_limit: { global: 1 }, batch_limit: { global: 1 } });
    expect((await post({ query: '{ users { id } }' }, 'editor')).body).toEqual({
      errors: [{ message: "the operation's depth 2 exceeds the limit of 1", extensions: { code: 'validation-failed', path: '$' } }],
    });
    await metadata('set_api_limits', { node_limit: { global: 10, per_role: { editor: 1 } }, batch_limit: { global: 1 } });
    expect((await post({ query: '{ users { id } }' }, 'editor')).body).toEqual({
      errors: [{ message: 'the operation has 2 nodes, more than the limit of 1', extensions: { code: 'validation-failed', path: '$' } }],
    });
    const batch = await post([{ query: 'query Hello { hello }' }, { query: 'query Hello { hello }' }], 'user');
    expect(batch).toMatchObject({
      status: 200,
      body: { errors: [{ message: 'the batch has 2 operations, more than the limit of 1', extensions: { code: 'validation-failed', path: '$' } }] },
    });
    // Admin is never limited.
    expect((await post([{ query: '{ users { id } }' }, { query: '{ hello }' }])).body).toHaveLength(2);
    const scrape = await (await fetch(`${server.url}/v1/metrics`, { headers: { 'x-svc-admin-secret': ADMIN_SECRET } })).text();
    for (const reason of ['allowlist', 'introspection', 'depth', 'nodes', 'batch']) {
      expect(scrape).toMatch(new RegExp(`svc_graphql_rejected_operations_total\\{reason="${reason}"\\} [1-9]`));
    }
    await metadata('remove_api_limits', {});
  });

  it('limits the rate per role and client IP over a sliding minute, 429 with Retry-After', async () => {
    await metadata('set_api_limits', { rate_limit: { per_role: { user: { max_reqs_per_min: 2, unique_params: ['x-svc-user-id'] } } } });
    const asUser = (id: string) => post({ query: 'query Hello { hello }' }, 'user', { 'x-svc-user-id': id });
    expect((await asUser('1')).status).toBe(200);
    expect((await asUser('1')).status).toBe(200);
    const limited = await asUser('1');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toEqual({ errors: [{ message: 'rate limit exceeded', extensions: { code: 'rate-limit-exceeded', path: '$' } }] });
    // Another user has a count of their own; admin is never limited.
    expect((await asUser('2')).status).toBe(200);
    expect((await post({ query: '{ hello }' })).status).toBe(200);
    await metadata('remove_api_limits', {});
    expect((await asUser('1')).status).toBe(200);
  });

  it('counts the rate first: refused documents count, and graphql-ws gets an error message', async () => {
    await metadata('set_api_limits', { rate_limit: { per_role: { user: { max_reqs_per_min: 2, unique_params: ['x-svc-user-id'] } } } });
    const as = (query: string) => post({ query }, 'user', { 'x-svc-user-id': 'counted' });
    // Not allowed, not even valid: still a request of the minute.
    expect((await as('{ no_such_field }')).body).toEqual(NOT_ALLOWED);
    expect((await as('query Hello { hello }')).status).toBe(200);
    const limited = await as('{ no_such_field }');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ errors: [{ message: 'rate limit exceeded', extensions: { code: 'rate-limit-exceeded', path: '$' } }] });
    await metadata('set_api_limits', { rate_limit: { per_role: { user: { max_reqs_per_min: 1, unique_params: 'IP' } } } });
    expect((await overWebSocket('query Hello { hello }', 'user'))[0]).toMatchObject({ type: 'next', payload: { data: { hello: expect.any(String) } } });
    expect(await overWebSocket('query Hello { hello }', 'user')).toEqual([
      { id: '1', type: 'error', payload: [{ message: 'rate limit exceeded', extensions: { code: 'rate-limit-exceeded', path: '$' } }] },
    ]);
    await metadata('remove_api_limits', {});
  });

  it('counts a batch refused by its size as one request, and answers 429 before the batch limit', async () => {
    await metadata('set_api_limits', {
      batch_limit: { global: 2 },
      rate_limit: { per_role: { user: { max_reqs_per_min: 3, unique_params: ['x-svc-user-id'] } } },
    });
    const headers = { 'x-svc-user-id': 'batcher' };
    const hello = { query: 'query Hello { hello }' };
    const tooBig = [hello, hello, hello];
    expect((await post(tooBig, 'user', headers)).body).toEqual({
      errors: [{ message: 'the batch has 3 operations, more than the limit of 2', extensions: { code: 'validation-failed', path: '$' } }],
    });
    // The refused batch was the first request of the minute: two more run, the next is refused.
    expect((await post(hello, 'user', headers)).status).toBe(200);
    expect((await post(hello, 'user', headers)).status).toBe(200);
    expect((await post(hello, 'user', headers)).status).toBe(429);
    const over = await post(tooBig, 'user', headers);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.body).toEqual({ errors: [{ message: 'rate limit exceeded', extensions: { code: 'rate-limit-exceeded', path: '$' } }] });
    await metadata('remove_api_limits', {});
  });
});

describe('an allow list without --enable-allowlist', () => {
  it('is kept, not enforced, and said once in the log', async () => {
    const lines: string[] = [];
    const off = await createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'allowlist-off.json')}`,
      adminSecret: ADMIN_SECRET,
      logger: createLogger('info', (line) => lines.push(line), 'json'),
    });
    try {
      const call = async (type: string, args: unknown) =>
        (await fetch(`${off.url}/v1/metadata`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET }, body: JSON.stringify({ type, args }) })).json();
      expect(await call('add_remote_schema', { name: 'sample', definition: { url: remote.url } })).toEqual({ message: 'success' });
      expect(await call('create_query_collection', { name: 'app', definition: { queries: [{ name: 'hello', query: 'query Hello { hello }' }] } })).toEqual({ message: 'success' });
      expect(await call('add_collection_to_allowlist', { collection: 'app' })).toEqual({ message: 'success' });
      expect(await call('create_query_collection', { name: 'more', definition: { queries: [] } })).toEqual({ message: 'success' });
      const warnings = lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((entry) => entry.msg.includes('allow list'));
      expect(warnings).toEqual([
        expect.objectContaining({ level: 'warn', msg: 'the metadata has an allow list, but the allow list is disabled (--enable-allowlist): it is kept, not enforced' }),
      ]);
      const response = await fetch(`${off.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' },
        body: JSON.stringify({ query: '{ remoteName }' }),
      });
      expect(await response.json()).toEqual({ data: { remoteName: 'sample' } });
    } finally {
      await off.close();
    }
  });
});
