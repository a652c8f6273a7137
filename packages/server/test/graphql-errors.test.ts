import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { GraphQLError } from 'graphql';
import { createSchema } from 'graphql-yoga';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { startStubRemote, type StubRemote } from '../../remote-schemas/test/utils/fixtures.js';

/**
 * Errors keep the GraphQL specification's rules whatever route an operation takes (sent to one
 * remote as it is, rewritten by a plan, executed by Yoga or delegated; the direct lane on and off,
 * as this file runs in both test projects), over HTTP (POST and GET, both media types), SSE and
 * graphql-ws:
 * - an error before execution has no `data`, and is 400 with `application/graphql-response+json`,
 *   200 with `application/json`;
 * - locations point into the client's own document;
 * - a remote's error keeps its message and extensions (stack traces aside), at the client's path;
 * - a failure names the transport that failed.
 */

const ADMIN_SECRET = 'errors-test-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const JSON_TYPE = 'application/json';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-errors-'));
let sample: RunningRemote;
let raw: StubRemote;
let server: SvcGraphqlServer;

interface Request {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function post(request: Request, accept: string): Promise<Answer> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify(request),
  });
  expect(response.headers.get('content-type')).toBe(`${accept}; charset=utf-8`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function get(request: Request, accept: string): Promise<Answer> {
  const params = new URLSearchParams({ query: request.query });
  if (request.variables) params.set('variables', JSON.stringify(request.variables));
  if (request.operationName) params.set('operationName', request.operationName);
  const response = await fetch(`${server.url}/v1/graphql?${params}`, { headers: { accept, 'x-svc-admin-secret': ADMIN_SECRET } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The results of an SSE request (`text/event-stream`), which must end with `complete`. */
async function sse(request: Request): Promise<{ status: number; results: unknown[] }> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify(request),
  });
  const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('event: '));
  expect(events.at(-1)).toMatch(/^event: complete/);
  const results = events.filter((e) => e.startsWith('event: next')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as unknown);
  return { status: response.status, results };
}

/** The results of an operation over graphql-ws, or the errors of its `error` message. */
async function ws(request: Request): Promise<{ results: unknown[]; refused?: unknown }> {
  const client = createClient({
    url: server.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { headers: { 'x-svc-admin-secret': ADMIN_SECRET } },
    retryAttempts: 0,
    lazy: true,
  });
  const results: unknown[] = [];
  try {
    for await (const result of client.iterate(request)) results.push(result);
    return { results };
  } catch (error) {
    return { results, refused: error };
  } finally {
    await client.dispose();
  }
}

/** `body` over every route a query takes: POST and GET with both media types, SSE and graphql-ws. */
async function everyRoute(request: Request, expected: Record<string, unknown>): Promise<void> {
  const beforeExecution = !('data' in expected);
  for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE]) {
    const status = beforeExecution && accept === GRAPHQL_RESPONSE ? 400 : 200;
    expect(await post(request, accept), `POST ${accept}`).toEqual({ status, body: expected });
    expect(await get(request, accept), `GET ${accept}`).toEqual({ status, body: expected });
  }
  expect(await sse(request), 'SSE').toEqual({ status: 200, results: [expected] });
  expect(await ws(request), 'graphql-ws').toEqual({ results: [expected] });
}

/** A subscription's answer over POST (both media types), SSE and graphql-ws. */
async function everySubscriptionRoute(request: Request, expected: Record<string, unknown>): Promise<void> {
  for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE]) {
    expect(await post(request, accept), `POST ${accept}`).toEqual({ status: accept === GRAPHQL_RESPONSE ? 400 : 200, body: expected });
  }
  expect(await sse(request), 'SSE').toEqual({ status: 200, results: [expected] });
  expect(await ws(request), 'graphql-ws').toEqual({ results: [expected] });
}

async function metadata(body: unknown): Promise<void> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify(body),
  });
  expect(await response.json()).toEqual({ message: 'success' });
}

beforeAll(async () => {
  sample = await startSampleRemote({ name: 'sample' });
  // A remote that answers with errors as some servers write them (no extensions; stack traces in
  // them), and has no WebSocket endpoint.
  raw = await startStubRemote(
    ({ body, res, answer }) => {
      // `refused` is refused before execution, with extensions of the remote's own (`refusedAt`
      // with a path too, naming a field nobody asked for).
      if (!body.query.includes('refused')) return answer();
      res.writeHead(200, { 'content-type': 'application/json' });
      const path = body.query.includes('refusedAt') ? { path: ['refusedAt', 'secretField'] } : {};
      res.end(JSON.stringify({ errors: [{ message: 'remote refused', ...path, extensions: { code: 'NOPE', x: [1, 2] } }] }));
    },
    {
    schema: createSchema({
      typeDefs: 'type Query { plain: String stacked: String refused: String refusedAt: String } type Subscription { tick: Int }',
      resolvers: {
        Query: {
          plain: () => {
            throw new GraphQLError('plain failure');
          },
          stacked: () => {
            throw new GraphQLError('stacked failure', {
              extensions: { code: 'STACKED', detail: 'kept', stacktrace: ['at resolver (remote.js:1:1)'], exception: { stacktrace: ['at x'] } },
            });
          },
        },
        Subscription: { tick: { subscribe: async function* () {} } },
      },
    }),
    },
  );
  server = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, logger: quiet });
  await metadata({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: sample.url } } });
  await metadata({
    type: 'add_remote_schema',
    args: {
      name: 'custom',
      definition: {
        url: sample.url,
        customization: {
          root_fields_namespace: 'ns',
          type_names: { prefix: 'C_', mapping: { Int: 'Count' } },
          field_names: [{ parent_type: 'Query', mapping: { boom: 'kaboom' } }],
        },
      },
    },
  });
  await metadata({ type: 'add_remote_schema', args: { name: 'raw', definition: { url: raw.url } } });
  // The same remote again, its root fields renamed: operations on it go through a plan.
  await metadata({
    type: 'add_remote_schema',
    args: { name: 'raw_renamed', definition: { url: raw.url, customization: { field_names: [{ parent_type: 'Query', prefix: 'r_' }, { parent_type: 'Subscription', prefix: 'r_' }] } } },
  });
});

afterAll(async () => {
  await server?.close();
  await Promise.all([sample?.close(), raw?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const notInt = (variable: string, value: string, column: number) => ({
  message: `Variable "$${variable}" got invalid value "${value}"; Int cannot represent non-integer value: "${value}"`,
  locations: [{ line: 1, column }],
});

describe('an error before execution', () => {
  it('has no data when the operation goes to one remote as it is (the remote refuses the variable)', async () => {
    await everyRoute({ query: 'query($v: Int!) { slow(ms: $v) }', variables: { v: 'NOPE' } }, { errors: [notInt('v', 'NOPE', 7)] });
  });

  it('has no data and only what the remote sent for a role too, not only for admin (the remote refuses the variable)', async () => {
    for (const [accept, status] of [[JSON_TYPE, 200], [GRAPHQL_RESPONSE, 400]] as const) {
      const response = await fetch(`${server.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' },
        body: JSON.stringify({ query: 'query($v: Int!) { slow(ms: $v) }', variables: { v: 'NOPE' } }),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({ status, body: { errors: [notInt('v', 'NOPE', 7)] } });
    }
  });

  it('is what the remote answered without data, its extensions as they were, for admin and a role alike, as it is or through a plan', async () => {
    const refused = { errors: [{ message: 'remote refused', extensions: { code: 'NOPE', x: [1, 2] } }] };
    for (const query of ['{ refused }', '{ r_refused }']) {
      for (const role of [{}, { 'x-svc-role': 'user' }]) {
        for (const [accept, status] of [[JSON_TYPE, 200], [GRAPHQL_RESPONSE, 400]] as const) {
          const response = await fetch(`${server.url}/v1/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept, 'x-svc-admin-secret': ADMIN_SECRET, ...role },
            body: JSON.stringify({ query }),
          });
          expect({ status: response.status, body: await response.json() }, `${query} ${JSON.stringify(role)} ${accept}`).toEqual({ status, body: refused });
        }
      }
    }
  });

  it('is an error of its fields, status 200, when another remote of the operation answered', async () => {
    for (const role of [{}, { 'x-svc-role': 'user' }]) {
      for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE]) {
        const response = await fetch(`${server.url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept, 'x-svc-admin-secret': ADMIN_SECRET, ...role },
          body: JSON.stringify({ query: '{ refused remoteName }' }),
        });
        expect({ status: response.status, body: await response.json() }, `${JSON.stringify(role)} ${accept}`).toEqual({
          status: 200,
          body: {
            data: { refused: null, remoteName: 'sample' },
            errors: [{ message: 'remote refused', path: ['refused'], extensions: { code: 'NOPE', x: [1, 2] } }],
          },
        });
      }
    }
  });

  it('refuses a variable value JSON cannot write (1e400 is read as Infinity) instead of sending null', async () => {
    for (const [accept, status] of [[JSON_TYPE, 200], [GRAPHQL_RESPONSE, 400]] as const) {
      const response = await fetch(`${server.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, 'x-svc-admin-secret': ADMIN_SECRET },
        // Written by hand: JSON.stringify cannot write it.
        body: '{"query":"query($v: Int!) { slow(ms: $v) }","variables":{"v":1e400}}',
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status,
        body: { errors: [{ message: 'Variable "$v" got invalid value Infinity; Int cannot represent non-integer value: Infinity', locations: [{ line: 1, column: 7 }] }] },
      });
    }
  });

  it('has no data when a plan rewrites the operation (the gateway refuses the variable, in the client\'s type names)', async () => {
    await everyRoute({ query: 'query($v: Count!) { ns { slow(ms: $v) } }', variables: { v: 'NOPE' } }, { errors: [notInt('v', 'NOPE', 7)] });
    await everyRoute(
      { query: 'query($v: Count!) { ns { slow(ms: $v) } }', variables: { v: null } },
      { errors: [{ message: 'Variable "$v" of non-null type "Count!" must not be null.', locations: [{ line: 1, column: 7 }] }] },
    );
  });

  it('has no data when Yoga executes the operation itself', async () => {
    await everyRoute(
      { query: 'query($v: Boolean!) { __typename @include(if: $v) }', variables: { v: 'x' } },
      { errors: [{ message: 'Variable "$v" got invalid value "x"; Boolean cannot represent a non boolean value: "x"', locations: [{ line: 1, column: 7 }] }] },
    );
  });

  it('has no data for a subscription, without a code the remote did not send, as it is or delegated', async () => {
    await everySubscriptionRoute({ query: 'subscription($f: Int!) { countdown(from: $f) }', variables: { f: 'x' } }, { errors: [notInt('f', 'x', 14)] });
    await everySubscriptionRoute({ query: 'subscription($f: Count!) { ns { countdown(from: $f) } }', variables: { f: 'x' } }, { errors: [notInt('f', 'x', 14)] });
  });

  it('is a validation error where graphql-js 16 throws from validation instead of reporting', async () => {
    const request = { query: 'subscription($d: Boolean!) { countdown(from: 1) @skip(if: $d) }', variables: { d: true } };
    const error = {
      message: 'Argument "if" of required type "Boolean!" was provided the variable "$d" which was not provided a runtime value.',
      locations: [{ line: 1, column: 59 }],
      extensions: { code: 'validation-failed', path: '$' },
    };
    for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE]) {
      expect(await post(request, accept)).toEqual({ status: accept === JSON_TYPE ? 200 : 400, body: { errors: [error] } });
    }
    expect(await sse(request)).toEqual({ status: 200, results: [{ errors: [error] }] });
    expect(await ws(request)).toEqual({ results: [], refused: [error] });
  });

  it('is an operation that cannot be chosen (several and no operationName, or an unknown name), with path $', async () => {
    const notChosen = { errors: [{ message: 'Could not determine what operation to execute.', extensions: { code: 'OPERATION_RESOLUTION_FAILURE', path: '$' } }] };
    const several = { query: 'query A { __typename } query B { __typename }' };
    const unknown = { query: 'query A { __typename }', operationName: 'Z' };
    for (const request of [several, unknown]) {
      for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE]) {
        const status = accept === GRAPHQL_RESPONSE ? 400 : 200;
        expect(await post(request, accept), `POST ${accept}`).toEqual({ status, body: notChosen });
        expect(await get(request, accept), `GET ${accept}`).toEqual({ status, body: notChosen });
      }
      const overSocket = await ws(request);
      expect((overSocket.refused as Array<{ extensions?: unknown }> | undefined)?.map((error) => error.extensions)).toEqual([{ code: 'OPERATION_RESOLUTION_FAILURE', path: '$' }]);
    }
  });

  it('answers parse errors with the code parse-failed', async () => {
    const parseError = { message: 'Syntax Error: Expected Name, found <EOF>.', locations: [{ line: 1, column: 8 }], extensions: { code: 'parse-failed', path: '$' } };
    for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE]) {
      expect(await post({ query: '{ hello' }, accept)).toEqual({ status: accept === JSON_TYPE ? 200 : 400, body: { errors: [parseError] } });
    }
  });
});

describe('an error before execution, with remote schema permissions on', () => {
  it('is what the remote answered without data, with its status, for a role whose grant hides names', async () => {
    const guarded = await createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'permissions.json')}`,
      adminSecret: ADMIN_SECRET,
      logger: quiet,
      enableRemoteSchemaPermissions: true,
    });
    try {
      const call = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${guarded.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, ...headers }, body: JSON.stringify(body) });
      expect(await (await call('/v1/metadata', { type: 'add_remote_schema', args: { name: 'raw', definition: { url: raw.url } } })).json()).toEqual({ message: 'success' });
      // The grant hides `plain` and `stacked`: the role's errors are scrubbed of those names.
      const grant = {
        type: 'add_remote_schema_permissions',
        args: { remote_schema: 'raw', role: 'user', definition: { schema: 'type Query { refused: String refusedAt: String }' } },
      };
      expect(await (await call('/v1/metadata', grant)).json()).toEqual({ message: 'success' });
      for (const [accept, status] of [[JSON_TYPE, 200], [GRAPHQL_RESPONSE, 400]] as const) {
        const response = await call('/v1/graphql', { query: '{ refused }' }, { accept, 'x-svc-role': 'user' });
        expect({ status: response.status, body: await response.json() }, accept).toEqual({
          status,
          body: { errors: [{ message: 'remote refused', extensions: { code: 'NOPE', x: [1, 2] } }] },
        });
      }
      // A path in an error without data is nothing of the answer: the role gets none (admin, as sent).
      const at = async (headers: Record<string, string>) => (await (await call('/v1/graphql', { query: '{ refusedAt }' }, headers)).json()) as unknown;
      expect(await at({ 'x-svc-role': 'user' })).toEqual({ errors: [{ message: 'remote refused', extensions: { code: 'NOPE', x: [1, 2] } }] });
      expect(await at({})).toEqual({ errors: [{ message: 'remote refused', path: ['refusedAt', 'secretField'], extensions: { code: 'NOPE', x: [1, 2] } }] });
    } finally {
      await guarded.close();
    }
  });
});

describe('locations', () => {
  const boom = (line: number, column: number, path: Array<string | number>, code = 'BOOM') => ({
    message: 'boom: this field always fails',
    locations: [{ line, column }],
    path,
    extensions: { code },
  });

  it('point into the client\'s document when the gateway answers a root __typename itself', async () => {
    await everyRoute({ query: '{ __typename boom }' }, { data: { __typename: 'Query', boom: null }, errors: [boom(1, 14, ['boom'])] });
  });

  it('point into the client\'s document with two operations and operationName', async () => {
    await everyRoute(
      { query: 'query A { hello }\nquery B {\n  hello\n    boom\n}', operationName: 'B' },
      { data: { hello: 'Hello, world!', boom: null }, errors: [boom(4, 5, ['boom'])] },
    );
  });

  it('point into the client\'s document through fragments and comments', async () => {
    await everyRoute(
      {
        query: '# the client\'s comment\nquery Main { ...F }\nquery Other { ...G }\nfragment G on Query { remoteName }\nfragment F on Query { hello  boom }',
        operationName: 'Main',
      },
      { data: { hello: 'Hello, world!', boom: null }, errors: [boom(5, 30, ['boom'])] },
    );
  });

  it('point into the client\'s document through a namespace and renamed fields and types', async () => {
    await everyRoute(
      { query: 'query Q {\n  ns {\n    ... on ns_query { hello }\n    x: kaboom\n  }\n}' },
      { data: { ns: { hello: 'Hello, world!', x: null } }, errors: [boom(4, 5, ['ns', 'x'])] },
    );
  });
});

describe('a remote\'s error', () => {
  it('keeps its message and has no extensions when the remote sent none', async () => {
    await everyRoute(
      { query: '{\n  plain\n}' },
      { data: { plain: null }, errors: [{ message: 'plain failure', locations: [{ line: 2, column: 3 }], path: ['plain'] }] },
    );
  });

  it('keeps its extensions but the stack traces', async () => {
    await everyRoute(
      { query: '{ stacked }' },
      {
        data: { stacked: null },
        errors: [{ message: 'stacked failure', locations: [{ line: 1, column: 3 }], path: ['stacked'], extensions: { code: 'STACKED', detail: 'kept' } }],
      },
    );
  });
});

describe('a subscription', () => {
  const leftOut = (column: number) => ({
    message: 'Anonymous Subscription must select one top level field, but every one is left out by @skip or @include.',
    locations: [{ line: 1, column }],
  });

  it('whose only root field is skipped is a request error, and the remote is not called', async () => {
    const connections = sample.connections.length;
    await everySubscriptionRoute({ query: 'subscription { countdown(from: 1) @skip(if: true) }' }, { errors: [leftOut(35)] });
    await everySubscriptionRoute({ query: 'subscription { ... @include(if: false) { ns { countdown(from: 1) } } }' }, { errors: [leftOut(20)] });
    // Under a namespace, the one field inside the namespace field is the stream's.
    await everySubscriptionRoute({ query: 'subscription { ns { __typename countdown(from: 1) @skip(if: true) } }' }, { errors: [leftOut(51)] });
    expect(sample.connections.length).toBe(connections);
    expect(sample.subscribed).toEqual([]);
  });

  it('that fails at the remote over graphql-ws names the WebSocket URL, not HTTP', async () => {
    const failed = {
      errors: [{ message: `WebSocket exception occurred while subscribing to "${raw.url.replace('http', 'ws')}"`, extensions: { code: 'remote-schema-error', path: '$' } }],
    };
    expect(await ws({ query: 'subscription { tick }' })).toEqual({ results: [failed] });
    expect(await sse({ query: 'subscription { tick }' })).toEqual({ status: 200, results: [failed] });
  });
});
