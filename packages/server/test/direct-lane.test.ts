import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, print } from 'graphql';
import { createSessionResolver, type SessionResolver } from '@svc-graphql/jwt-session';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import { startSampleRemote, startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createSchema } from 'graphql-yoga';
import { createServer, type SvcGraphqlServer } from '../src/server.js';
import { answerMediaType, createDirectLane } from '../src/http/direct-lane.js';
import { boundedParserCaches, createLimitedParse } from '../src/http/limits.js';
import { RequestRecords } from '../src/request-record.js';
import { customizationArb, namingOf } from '../../remote-schemas/test/utils/differential-customization.js';
import { documentFor, operationArb, resolveOperation } from '../../remote-schemas/test/utils/differential-operations.js';

/**
 * The direct lane answers operations served by remotes alone before Yoga's pipeline; everything
 * else, and every answer with errors, is handed to Yoga. These tests hold the lane to Yoga's own
 * answers (a server with the lane against one without, byte for byte: data, errors with their
 * locations and extensions, `data` left out before execution, and the status of each media type,
 * over generated operations with invalid variable values and skipped roots) and check which requests
 * the lane takes, that what it hands over reaches Yoga whole, and that nothing runs twice.
 */

const ADMIN_SECRET = 'lane-secret';
const RUNS = Math.max(1, Number(process.env['LANE_DIFF_RUNS'] ?? 40));
const silent = { debug() {}, info() {}, warn() {}, error() {} };

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-request-id': 'lane-test', ...headers },
    body,
  });
  const kept: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'keep-alive' && name !== 'connection') kept[name] = value;
  });
  return { status: response.status, headers: kept, body: await response.text() };
}

async function metadata(server: SvcGraphqlServer, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

function operationsReceived(remote: RunningRemote): number {
  return remote.received.filter((r) => !String((r.body as { query?: unknown }).query).includes('__schema')).length;
}

describe('direct lane: the same answers as Yoga', () => {
  // Each server has its own remote: both remotes see the same mutations in the same order.
  let laneRemote: RunningRemote;
  let yogaRemote: RunningRemote;
  let lane: SvcGraphqlServer;
  let yoga: SvcGraphqlServer;
  const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-lane-'));

  beforeAll(async () => {
    [laneRemote, yogaRemote] = await Promise.all([startSampleRemote({ name: 'sample' }), startSampleRemote({ name: 'sample' })]);
    const common = { port: 0, adminSecret: ADMIN_SECRET, logger: silent } as const;
    [lane, yoga] = await Promise.all([
      createServer({ ...common, databaseUrl: `file:${join(dir, 'lane.json')}`, directLane: true }),
      createServer({ ...common, databaseUrl: `file:${join(dir, 'yoga.json')}`, directLane: false }),
    ]);
    for (const [server, remote] of [
      [lane, laneRemote],
      [yoga, yogaRemote],
    ] as const) {
      const added = await metadata(server, { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } });
      expect(added.status).toBe(200);
    }
  });

  afterAll(async () => {
    await Promise.all([lane?.close(), yoga?.close()]);
    await Promise.all([laneRemote?.close(), yogaRemote?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  async function both(body: string, headers?: Record<string, string>): Promise<void> {
    const before = [operationsReceived(laneRemote), operationsReceived(yogaRemote)];
    const throughLane = await post(`${lane.url}/v1/graphql`, body, headers);
    const throughYoga = await post(`${yoga.url}/v1/graphql`, body, headers);
    try {
      expect(throughLane).toEqual(throughYoga);
      // The lane never calls a remote more often than Yoga's path (a handed-over answer is reused).
      expect(operationsReceived(laneRemote) - before[0]!).toBe(operationsReceived(yogaRemote) - before[1]!);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n\nrequest: ${body}\nheaders: ${JSON.stringify(headers ?? {})}`, { cause: error });
    }
  }

  it('for requests the lane takes and requests it hands over', async () => {
    const query = JSON.stringify({ query: 'query Q($id: ID!) { user(id: $id) { id name } hello }', variables: { id: '1' } });
    await both(query);
    await both(query, { accept: 'application/graphql-response+json, application/json' });
    await both(query, { accept: 'text/html;q=0.9, application/*' });
    await both(query, { accept: 'text/event-stream' });
    await both(query, { accept: 'application/xml' });
    await both(query, { origin: 'https://app.example.com' });
    await both(query, { 'x-svc-admin-secret': 'wrong' });
    await both(query, { 'content-type': 'text/plain' });
    await both(JSON.stringify({ query: '{ boom hello }' }));
    await both(JSON.stringify({ query: 'query($id: ID!) { user(id: $id) { id } }', variables: { id: { x: 1 } } }));
    await both(JSON.stringify({ query: '{ nope }' }));
    await both(JSON.stringify({ query: '{ hello' }));
    await both(JSON.stringify({ query: '{ __typename hello }' }));
    await both(JSON.stringify({ query: '{ __schema { queryType { name } } }' }));
    await both(JSON.stringify({ query: '{ hello }', extra: 1 }));
    await both(JSON.stringify({ query: '{ hello }', extensions: {} }));
    await both(JSON.stringify({ query: '{ hello }', variables: [] }));
    await both(JSON.stringify({ query: '{ hello }', operationName: 3 }));
    await both(JSON.stringify({ query: '{ hello } query B { remoteName }' }));
    await both(JSON.stringify({ query: '{ hello } query B { remoteName }', operationName: 'B' }));
    await both(JSON.stringify({ query: '{ hello }', operationName: 'Missing' }));
    await both(JSON.stringify({ query: 'subscription { countdown(from: 1, intervalMs: 1) }' }));
    // graphql-js throws from validation here (a directive without its required argument).
    await both(JSON.stringify({ query: 'subscription { countdown @skip }' }));
    await both(JSON.stringify({ query: 'query { hello @skip }' }));
    await both(JSON.stringify({ query: 'mutation { addMessage(input: { text: "one" }) { id text } }' }));
    await both(JSON.stringify({ query: 'mutation { addMessage(input: { text: "" }) { id text } }' }));
    await both(JSON.stringify([{ query: '{ hello }' }]));
    await both('{"query": "{ hello }"');
    await both('null');
    await both(JSON.stringify({ query: `{ ${'a: hello '.repeat(16_000)} }` }));
    await both(JSON.stringify({ query: `{ hello ${'@skip(if: false) '.repeat(2)} }` }));
    // Errors before execution, errors located in the client's document, for both media types.
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      await both(JSON.stringify({ query: 'query($v: Int!) { slow(ms: $v) }', variables: { v: 'NOPE' } }), { accept });
      await both(JSON.stringify({ query: 'query($v: Boolean!) { hello @include(if: $v) }', variables: { v: 'x' } }), { accept });
      await both(JSON.stringify({ query: '{ __typename boom }' }), { accept });
      await both(JSON.stringify({ query: '# comment\nquery A { hello }\nquery B {\n  hello\n  boom\n}', operationName: 'B' }), { accept });
      await both(JSON.stringify({ query: 'subscription { countdown(from: 1) @skip(if: true) }' }), { accept });
      await both(JSON.stringify({ query: '{ ... @skip(if: true) { hello } }' }), { accept });
    }
    await both(JSON.stringify({ query: 'subscription { countdown(from: 1) @skip(if: true) }' }), { accept: 'text/event-stream' });
  });

  it(
    'for generated operations and customizations',
    async () => {
      await fc.assert(
        fc.asyncProperty(customizationArb, fc.array(fc.tuple(operationArb, fc.boolean()), { minLength: 1, maxLength: 4 }), async (customization, generated) => {
          const definition = (remote: RunningRemote) => ({ url: remote.url, timeout_seconds: 10, customization });
          const [updatedLane, updatedYoga] = await Promise.all([
            metadata(lane, { type: 'update_remote_schema', args: { name: 'sample', definition: definition(laneRemote) } }),
            metadata(yoga, { type: 'update_remote_schema', args: { name: 'sample', definition: definition(yogaRemote) } }),
          ]);
          expect(updatedLane).toEqual(updatedYoga);
          // A customization refused as wrong on its own is refused by both: nothing to compare.
          fc.pre(updatedLane.status === 200);
          const naming = namingOf(customization as RemoteSchemaCustomization);
          for (const [generatedOperation, graphqlResponse] of generated) {
            const operation = resolveOperation(generatedOperation);
            const body = JSON.stringify({
              query: documentFor(operation, naming),
              variables: operation.variables,
              ...(operation.operationName !== undefined && { operationName: operation.operationName }),
            });
            try {
              // Errors (invalid variable values among the generated operations) and statuses too.
              await both(body, { accept: graphqlResponse ? 'application/graphql-response+json' : 'application/json' });
            } catch (error) {
              throw new Error(`${(error as Error).message}\ncustomization: ${JSON.stringify(customization)}\n${print(parse(JSON.parse(body).query))}`, {
                cause: error,
              });
            }
          }
        }),
        { numRuns: RUNS, maxSkipsPerRun: 1 },
      );
    },
    60_000 + RUNS * 1_000,
  );
});

describe('direct lane: which requests it takes', () => {
  let remote: RunningRemote;
  // A remote whose mutation fails: it counts the calls it gets.
  let failing: RunningRemote;
  let failedCalls = 0;
  let registry: RemoteSchemaRegistry;
  let resolver: SessionResolver;
  let server: Server;
  let url: string;
  // What reached the fallback (Yoga in the server): method, path and the body it can still read.
  const handedOver: Array<{ method: string; url: string; body: string }> = [];

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'sample' });
    failing = await startSchemaServer(
      createSchema({
        typeDefs: 'type Query { ok: Int } type Mutation { fail: Int }',
        resolvers: {
          Mutation: {
            fail: () => {
              failedCalls++;
              throw new Error('failed on purpose');
            },
          },
        },
      }),
    );
    registry = createRemoteSchemaRegistry({ retry: false, logger: silent });
    const plan = await registry.plan([
      { name: 'sample', definition: { url: remote.url } },
      { name: 'failing', definition: { url: failing.url } },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    resolver = createSessionResolver({ adminSecret: ADMIN_SECRET, logger: silent });
    const caches = boundedParserCaches();
    const fallback = (req: IncomingMessage, res: ServerResponse) => {
      void (async () => {
        let body = '';
        const replayed = (req as { body?: AsyncIterable<Buffer> }).body;
        for await (const chunk of replayed ?? req) body += chunk.toString();
        handedOver.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.writeHead(299).end();
      })();
    };
    const handler = createDirectLane(fallback, {
      graphqlPath: '/v1/graphql',
      maxBodyBytes: 4096,
      resolver,
      registry,
      documentCache: caches.documentCache,
      errorCache: caches.errorCache,
      parse: createLimitedParse({ maxTokens: 100 }),
      corsHeaders: () => undefined,
      records: new RequestRecords(),
    });
    server = createHttpServer(handler);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((done) => server?.close(done));
    await registry?.dispose();
    resolver?.dispose();
    await remote?.close();
    await failing?.close();
  });

  async function send(body: string, init: { path?: string; method?: string; headers?: Record<string, string> } = {}) {
    handedOver.length = 0;
    const before = operationsReceived(remote);
    const response = await fetch(`${url}${init.path ?? '/v1/graphql'}`, {
      method: init.method ?? 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, ...init.headers },
      ...(init.method !== 'GET' && { body }),
    });
    return {
      status: response.status,
      body: await response.text(),
      handedOver: handedOver.map((h) => h.body),
      remoteCalls: operationsReceived(remote) - before,
    };
  }

  it('answers an operation of remotes alone without errors itself, in one call', async () => {
    const body = JSON.stringify({ query: 'query Q($id: ID!) { user(id: $id) { id } hello }', variables: { id: '1' } });
    expect(await send(body)).toEqual({
      status: 200,
      body: '{"data":{"user":{"id":"1"},"hello":"Hello, world!"}}',
      handedOver: [],
      remoteCalls: 1,
    });
  });

  it('hands over what it does not recognize at once, untouched', async () => {
    const body = JSON.stringify({ query: '{ hello }' });
    for (const init of [
      { path: '/v1/graphql?x=1' },
      { path: '/v1/metadata' },
      { headers: { 'content-type': 'application/graphql' } },
      { headers: { accept: 'text/event-stream' } },
    ]) {
      const answer = await send(body, init);
      expect(answer, JSON.stringify(init)).toEqual({ status: 299, body: '', handedOver: [body], remoteCalls: 0 });
    }
    expect((await send('', { method: 'GET', path: '/v1/graphql?query=%7Bhello%7D' })).status).toBe(299);
    // Declared larger than the limit: Yoga answers 413 without the lane reading it.
    expect((await send(JSON.stringify({ query: `{ hello } #${'x'.repeat(5000)}` }))).handedOver).toHaveLength(1);
  });

  it('hands over, with the body it read, what Yoga must answer', async () => {
    for (const text of [
      '{"query": "{ hello }", "extensions": {}}',
      '{"query": "{ hello }", "extra": 1}',
      '[{"query": "{ hello }"}]',
      '{"query": "{ hello"}',
      '{"query": "{ nope }"}',
      '{"query": "{ __typename }"}',
      '{"query": "{ hello } query B { remoteName }"}',
      '{"query": "subscription { countdown(from: 1) }"}',
      `{"query": "{ ${'hello '.repeat(101)} }"}`,
    ]) {
      expect(await send(text), text).toEqual({ status: 299, body: '', handedOver: [text], remoteCalls: 0 });
    }
    expect((await send('{"query": "{ hello }"}', { headers: { 'x-svc-admin-secret': 'wrong' } })).handedOver).toHaveLength(1);
  });

  it('hands over an answer with errors after one call to the remote, never two', async () => {
    const text = '{"query": "mutation { fail }"}';
    expect(await send(text)).toMatchObject({ status: 299, handedOver: [text] });
    expect(failedCalls).toBe(1);
    const boom = await send('{"query": "{ boom }"}');
    expect(boom).toMatchObject({ status: 299, remoteCalls: 1 });
  });

  it('answers with the media type Yoga would choose for the Accept header', () => {
    expect(answerMediaType(undefined)).toBe('application/json');
    expect(answerMediaType('*/*')).toBe('application/json');
    expect(answerMediaType('application/graphql-response+json, application/json;q=0.9')).toBe('application/graphql-response+json');
    expect(answerMediaType('application/json, application/graphql-response+json')).toBe('application/json');
    expect(answerMediaType('text/html, application/*;q=0.8')).toBe('application/json');
    expect(answerMediaType('application/json; charset=latin1')).toBeUndefined();
    expect(answerMediaType('text/event-stream')).toBeUndefined();
    expect(answerMediaType('multipart/mixed, application/json')).toBe('application/json');
  });
});
