import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionResolver } from '@svc-graphql/jwt-session';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { boundedParserCaches, cachedDocuments, createLimitedParse } from '../src/http/limits.js';
import { createSubscriptionLane } from '../src/ws/lane.js';

/**
 * The graphql-ws lane starts subscriptions one remote answers as they are sent without Envelop's
 * per-operation hooks. These tests hold it to Envelop's own answers (a server with the lane against
 * one without, message for message, with remote schema permissions and presets, refusals, and the
 * open subscriptions gauge), and check which operations the lane takes.
 */

const ADMIN_SECRET = 'ws-lane-test-admin-secret';
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-ws-lane-'));

async function metadata(server: SvcGraphqlServer, body: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify(body),
  });
  return response.json();
}

/** `ws` with the upgrade headers a test gives (graphql-ws's client sets none). */
function socketWith(headers: Record<string, string>): typeof WebSocket {
  return class extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  } as unknown as typeof WebSocket;
}

interface Case {
  /** What the client gets: events (and the end), or errors only. */
  gets: 'events' | 'errors';
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** `connection_init` headers. */
  headers: Record<string, string>;
}

/** Every message a subscription gets, in order: `next` payloads, then `error` or `complete`. */
async function messages(server: SvcGraphqlServer, { query, variables, operationName, headers }: Case): Promise<unknown[]> {
  const client: Client = createClient({
    url: server.wsUrl,
    webSocketImpl: socketWith({ 'x-request-id': 'ws-lane-test' }),
    connectionParams: { headers },
    retryAttempts: 0,
  });
  try {
    return await new Promise<unknown[]>((resolve) => {
      const seen: unknown[] = [];
      client.subscribe(
        { query, ...(variables && { variables }), ...(operationName && { operationName }) },
        {
          next: (value) => seen.push({ next: value }),
          error: (error) => resolve([...seen, { error: Array.isArray(error) ? error : String((error as { code?: unknown }).code ?? error) }]),
          complete: () => resolve([...seen, 'complete']),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

/** The headers the remote received, without the one that differs on every connection. */
function withoutSocketKey(seen: unknown[]): unknown[] {
  return seen.map((message) => {
    const echoed = (message as { next?: { data?: { echoHeaders?: string } } }).next?.data?.echoHeaders;
    if (echoed === undefined) return message;
    const headers = JSON.parse(echoed) as Record<string, unknown>;
    delete headers['sec-websocket-key'];
    return { next: { data: { echoHeaders: headers } } };
  });
}

async function activeSubscriptions(server: SvcGraphqlServer): Promise<number> {
  const text = await (await fetch(`${server.url}/v1/metrics`, { headers: { 'x-svc-admin-secret': ADMIN_SECRET } })).text();
  const line = text.split('\n').find((l) => l.startsWith('svc_graphql_active_subscriptions '));
  return Number(line?.split(' ')[1]);
}

/**
 * A server with the lane and the sample remote added, given to `body`, both closed after it.
 * `name`: its metadata file; `options`: more server options.
 */
async function withLaneServer(
  name: string,
  options: Partial<Parameters<typeof createServer>[0]>,
  body: (server: SvcGraphqlServer, remote: RunningRemote) => Promise<void>,
): Promise<void> {
  const remote = await startSampleRemote({ name: 'sample' });
  const server = await createServer({ port: 0, adminSecret: ADMIN_SECRET, logger: silent, databaseUrl: `file:${join(dir, `${name}.json`)}`, directLane: true, ...options });
  try {
    expect(await metadata(server, { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } })).toEqual({ message: 'success' });
    await body(server, remote);
  } finally {
    await server.close();
    await remote.close();
  }
}

describe('graphql-ws lane: the same messages as Envelop', () => {
  let remote: RunningRemote;
  let lane: SvcGraphqlServer;
  let envelop: SvcGraphqlServer;

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'sample' });
    const common = { port: 0, adminSecret: ADMIN_SECRET, logger: silent, enableRemoteSchemaPermissions: true, enableMetrics: true } as const;
    [lane, envelop] = await Promise.all([
      createServer({ ...common, databaseUrl: `file:${join(dir, 'lane.json')}`, directLane: true }),
      createServer({ ...common, databaseUrl: `file:${join(dir, 'envelop.json')}`, directLane: false }),
    ]);
    for (const server of [lane, envelop]) {
      expect(await metadata(server, { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } })).toEqual({ message: 'success' });
      expect(
        await metadata(server, {
          type: 'add_remote_schema_permissions',
          args: {
            remote_schema: 'sample',
            role: 'user',
            definition: {
              schema: `
                type Query { hello: String! }
                type Subscription {
                  countdown(from: Int! @preset(value: "x-svc-from"), intervalMs: Int): Int!
                  echoHeaders: String
                }
              `,
            },
          },
        }),
      ).toEqual({ message: 'success' });
      // The same remote again, customized, with the same grant for role user.
      const again = async (name: string, customization: unknown) =>
        metadata(server, {
          type: 'bulk',
          args: [
            { type: 'add_remote_schema', args: { name, definition: { url: remote.url, customization } } },
            {
              type: 'add_remote_schema_permissions',
              args: {
                remote_schema: name,
                role: 'user',
                definition: {
                  schema: `
                    type Query { hello: String! }
                    type Message { id: ID! text: String! }
                    type Subscription {
                      countdown(from: Int! @preset(value: "x-svc-from"), intervalMs: Int): Int!
                      messageAdded: Message!
                    }
                  `,
                },
              },
            },
          ],
        });
      // Its root fields under a namespace, its types renamed.
      expect(await again('nested', { root_fields_namespace: 'ns', type_names: { prefix: 'N_' } })).toEqual([{ message: 'success' }, { message: 'success' }]);
      // Its types and root fields renamed, without a namespace.
      const renamed = {
        type_names: { prefix: 'R_' },
        field_names: [
          { parent_type: 'Query', prefix: 'r_' },
          { parent_type: 'Subscription', prefix: 'r_' },
          { parent_type: 'Mutation', prefix: 'r_' },
          { parent_type: 'Message', mapping: { text: 'body' } },
        ],
      };
      expect(await again('renamed', renamed)).toEqual([{ message: 'success' }, { message: 'success' }]);
    }
  });

  afterAll(async () => {
    await Promise.all([lane?.close(), envelop?.close()]);
    await remote?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const user = { 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user', 'x-svc-from': '2' };
  const other = { 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'other' };
  const admin = { 'x-svc-admin-secret': ADMIN_SECRET };
  const cases: Array<[string, Case]> = [
    ['a role with a preset', { gets: 'events', query: 'subscription { countdown(intervalMs: 1) }', headers: user }],
    ['a role with variables', { gets: 'events', query: 'subscription S($ms: Int) { countdown(intervalMs: $ms) }', variables: { ms: 1 }, headers: user }],
    ['a variable of the wrong type', { gets: 'errors', query: 'subscription S($ms: Int) { countdown(intervalMs: $ms) }', variables: { ms: 'x' }, headers: user }],
    ['a missing required variable', { gets: 'errors', query: 'subscription S($ms: Int!) { countdown(intervalMs: $ms) }', headers: user }],
    ['a preset argument the role cannot give', { gets: 'errors', query: 'subscription { countdown(from: 9, intervalMs: 1) }', headers: user }],
    ['a field the role is not granted', { gets: 'errors', query: 'subscription { messageAdded { id } }', headers: user }],
    ['a role without a grant', { gets: 'errors', query: 'subscription { countdown(from: 1, intervalMs: 1) }', headers: other }],
    ['a syntax error', { gets: 'errors', query: 'subscription { countdown(', headers: user }],
    ['an unknown operation name', { gets: 'errors', query: 'subscription A { echoHeaders }', operationName: 'B', headers: user }],
    ['one of two operations', { gets: 'events', query: 'subscription A { echoHeaders } subscription B { countdown(intervalMs: 1) }', operationName: 'B', headers: user }],
    ['the forwarded session and request id', { gets: 'events', query: 'subscription { echoHeaders }', headers: user }],
    ['an alias', { gets: 'events', query: 'subscription { n: countdown(intervalMs: 1) }', headers: user }],
    ['two root fields', { gets: 'errors', query: 'subscription { countdown(intervalMs: 1) echoHeaders }', headers: user }],
    ['admin', { gets: 'events', query: 'subscription { countdown(from: 2, intervalMs: 1) }', headers: admin }],
    ['a query over the socket', { gets: 'events', query: '{ hello }', headers: user }],
    ['under a namespace', { gets: 'events', query: 'subscription { ns { countdown(intervalMs: 1) } }', headers: user }],
    ['under a namespace, with aliases and __typename', { gets: 'events', query: 'subscription { n: ns { __typename c: countdown(intervalMs: 1) } }', headers: user }],
    ['admin under a namespace', { gets: 'events', query: 'subscription { ns { countdown(from: 1, intervalMs: 1) } }', headers: admin }],
    ['two fields under a namespace', { gets: 'errors', query: 'subscription { ns { countdown(intervalMs: 1) messageAdded { id } } }', headers: user }],
    ['the one field under a namespace left out', { gets: 'errors', query: 'subscription { ns { countdown(intervalMs: 1) @include(if: false) } }', headers: user }],
    ['a field under a namespace the role is not granted', { gets: 'errors', query: 'subscription { ns { echoHeaders } }', headers: user }],
    ['renamed types and fields', { gets: 'events', query: 'subscription { r_countdown(intervalMs: 1) }', headers: user }],
    ['renamed, with aliases, fragments and __typename', { gets: 'events', query: 'subscription { ...F } fragment F on Subscription { c: r_countdown(intervalMs: 1) }', headers: user }],
    ['admin, renamed', { gets: 'events', query: 'subscription S($from: Int!) { r_countdown(from: $from, intervalMs: 1) }', variables: { from: 2 }, headers: admin }],
    ['renamed, a variable of the wrong type', { gets: 'errors', query: 'subscription S($ms: Int) { r_countdown(intervalMs: $ms) }', variables: { ms: 'x' }, headers: user }],
    ['renamed, a field the role is not granted', { gets: 'errors', query: 'subscription { r_echoHeaders }', headers: user }],
  ];

  it.each(cases)('%s', async (_name, operation) => {
    const [throughLane, throughEnvelop] = await Promise.all([messages(lane, operation), messages(envelop, operation)]);
    expect(withoutSocketKey(throughLane)).toEqual(withoutSocketKey(throughEnvelop));
    // Each case shows what it is about, not two empty answers.
    if (operation.gets === 'events') expect(throughLane.filter((m) => (m as { next?: { data?: unknown } }).next?.data != null).length).toBeGreaterThan(0);
    else expect(JSON.stringify(throughLane)).toMatch(/"message":"[^"]+"/);
  });

  it('counts open subscriptions while they run, and not after', async () => {
    for (const server of [lane, envelop]) {
      const client = createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers: user }, retryAttempts: 0 });
      const first = new Promise<void>((resolve, reject) => {
        client.subscribe({ query: 'subscription { countdown(intervalMs: 60000) }' }, { next: () => resolve(), error: reject, complete: () => {} });
      });
      await first;
      expect(await activeSubscriptions(server)).toBe(1);
      await client.dispose();
      await expect.poll(() => activeSubscriptions(server)).toBe(0);
    }
  });

  it("ends a subscription at the client's complete, sends nothing more for it, takes its id again, and refuses it twice", async () => {
    const long = { ...user, 'x-svc-from': '100000' };
    for (const server of [lane, envelop]) {
      const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
      const received: Array<{ id?: string; type: string; payload?: unknown }> = [];
      socket.on('message', (data) => received.push(JSON.parse(String(data))));
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: long } }));
      await expect.poll(() => received.some((m) => m.type === 'connection_ack')).toBe(true);
      const subscribe = () => socket.send(JSON.stringify({ id: 'a', type: 'subscribe', payload: { query: 'subscription { countdown(intervalMs: 10) }' } }));
      const nexts = () => received.filter((m) => m.id === 'a' && m.type === 'next');
      subscribe();
      await expect.poll(() => nexts().length).toBeGreaterThanOrEqual(3);
      expect(nexts().slice(0, 3).map((m) => m.payload)).toEqual([{ data: { countdown: 100000 } }, { data: { countdown: 99999 } }, { data: { countdown: 99998 } }]);
      socket.send(JSON.stringify({ id: 'a', type: 'complete' }));
      await expect.poll(() => activeSubscriptions(server)).toBe(0);
      // Its upstream subscription was the only one of its connection to the remote: both are gone.
      await expect.poll(() => remote.openSockets()).toBe(0);
      const settled = nexts().length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Nothing more for the completed id, and no `complete` back (the client ended it).
      expect(nexts().length).toBe(settled);
      expect(received.some((m) => m.id === 'a' && m.type !== 'next')).toBe(false);
      subscribe();
      await expect.poll(() => nexts().length).toBeGreaterThan(settled);
      expect(nexts().at(-1)?.payload).toEqual({ data: { countdown: expect.any(Number) } });
      // The same id again while it runs: the protocol's 4409, and the socket's close ends it all.
      const closed = new Promise<[number, string]>((resolve) => socket.once('close', (code, reason) => resolve([code, String(reason)])));
      subscribe();
      expect(await closed).toEqual([4409, 'Subscriber for a already exists']);
      await expect.poll(() => activeSubscriptions(server)).toBe(0);
      await expect.poll(() => remote.openSockets()).toBe(0);
    }
  });
});

describe('graphql-ws lane: a remote that goes away', () => {
  /** A subscription of role user on `server` that records every message: `first` at its first event, `ended` with all it got. */
  function recorded(server: SvcGraphqlServer, query: string) {
    const client = createClient({
      url: server.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { headers: { 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' } },
      retryAttempts: 0,
    });
    const seen: unknown[] = [];
    let firstEvent!: () => void;
    const first = new Promise<void>((resolve) => (firstEvent = resolve));
    const ended = new Promise<unknown[]>((resolve) => {
      client.subscribe(
        { query },
        {
          next: (value) => {
            seen.push({ next: value });
            firstEvent();
          },
          error: (error) => resolve([...seen, { error: String(error) }]),
          complete: () => resolve([...seen, 'complete']),
        },
      );
    });
    return { client, first, ended };
  }

  it('ends its subscriptions with an error naming it when the remote schema is removed, either way', async () => {
    for (const directLane of [true, false]) {
      await withLaneServer(`removed-${String(directLane)}`, { directLane }, async (server) => {
        const { client, first, ended } = recorded(server, 'subscription { countdown(from: 100000, intervalMs: 20) }');
        await first;
        expect(await metadata(server, { type: 'remove_remote_schema', args: { name: 'sample' } })).toEqual({ message: 'success' });
        const seen = await ended;
        await client.dispose();
        expect(seen.slice(-2)).toEqual([
          { next: { errors: [{ message: 'remote schema "sample" was removed', extensions: { code: 'remote-schema-error', path: '$' } }] } },
          'complete',
        ]);
      });
    }
  });

  it('ends a role\'s subscriptions as no longer permitted when the remote is removed, over graphql-ws either way and SSE', async () => {
    const denied = { errors: [{ message: 'the subscription is no longer permitted for this role', extensions: { code: 'access-denied', path: '$' } }] };
    for (const directLane of [true, false]) {
      await withLaneServer(`removed-role-${String(directLane)}`, { directLane, enableRemoteSchemaPermissions: true }, async (server) => {
        const grant = 'type Query { hello: String! } type Subscription { countdown(from: Int!, intervalMs: Int): Int! }';
        const granted = { type: 'add_remote_schema_permissions', args: { remote_schema: 'sample', role: 'user', definition: { schema: grant } } };
        expect(await metadata(server, granted)).toEqual({ message: 'success' });
        const query = 'subscription { countdown(from: 100000, intervalMs: 20) }';
        const { client, first, ended } = recorded(server, query);
        const sse = await fetch(server.url.replace(/\/$/, '') + '/v1/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' },
          body: JSON.stringify({ query }),
        });
        const reader = sse.body!.getReader();
        let text = '';
        while (!text.includes('event: next')) text += new TextDecoder().decode((await reader.read()).value);
        await first;
        expect(await metadata(server, { type: 'remove_remote_schema', args: { name: 'sample', cascade: true } })).toEqual({ message: 'success' });
        const seen = await ended;
        await client.dispose();
        expect(seen.slice(-2)).toEqual([{ next: denied }, 'complete']);
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        const events = text.split('\n\n').filter((event) => event.startsWith('event: '));
        expect(events.slice(-2)).toEqual([`event: next\ndata: ${JSON.stringify(denied)}`, 'event: complete\ndata:']);
      });
    }
  });

  it('ends its subscriptions with the same last result either way', async () => {
    const flaky = await startSampleRemote({ name: 'flaky' });
    const common = { port: 0, adminSecret: ADMIN_SECRET, logger: silent } as const;
    const servers = await Promise.all([
      createServer({ ...common, databaseUrl: `file:${join(dir, 'flaky-lane.json')}`, directLane: true }),
      createServer({ ...common, databaseUrl: `file:${join(dir, 'flaky-envelop.json')}`, directLane: false }),
    ]);
    try {
      for (const server of servers) {
        expect(await metadata(server, { type: 'add_remote_schema', args: { name: 'flaky', definition: { url: flaky.url } } })).toEqual({ message: 'success' });
      }
      const running = servers.map((server) => recorded(server, 'subscription { countdown(from: 100000, intervalMs: 20) }'));
      await Promise.all(running.map(({ first }) => first));
      await flaky.close();
      const [throughLane, throughEnvelop] = await Promise.all(
        running.map(async ({ client, ended }) => {
          const seen = await ended;
          await client.dispose();
          return seen;
        }),
      );
      // Events until the remote went (how many depends on timing), then the same last result.
      expect(throughLane!.at(-1)).toBe('complete');
      expect(throughLane!.at(-2)).toEqual(throughEnvelop!.at(-2));
      expect(JSON.stringify(throughLane!.at(-2))).toContain('remote-schema-error');
    } finally {
      await Promise.all(servers.map((server) => server.close()));
      await flaky.close();
    }
  });
});

describe('graphql-ws lane: which subscriptions it starts', () => {
  let remote: RunningRemote;
  let registry: RemoteSchemaRegistry;

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'sample' });
    registry = createRemoteSchemaRegistry({ retry: false, logger: silent });
    const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url } }]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
  });

  afterAll(async () => {
    await registry?.dispose();
    await remote?.close();
  });

  it('takes a subscription of one remote as it is sent, and leaves the rest to Envelop', async () => {
    const lane = createSubscriptionLane({ registry, documentOf: cachedDocuments(boundedParserCaches(), createLimitedParse({ maxTokens: 1000 })) });
    const resolver = createSessionResolver({ adminSecret: ADMIN_SECRET, logger: silent });
    const user = await resolver.resolve({ 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' });
    const admin = await resolver.resolve({ 'x-svc-admin-secret': ADMIN_SECRET });
    const taken = lane.find(user, 'subscription Tick { countdown(from: 1) }', null);
    expect(taken?.name).toBe('Tick');
    expect(taken?.schema).toBe(registry.schemaFor(user));
    expect(lane.find(user, 'subscription A { countdown(from: 1) } subscription B { echoHeaders }', 'B')?.name).toBe('B');
    // The same document once more: the decision is remembered, the document is the cached one.
    expect(lane.find(user, 'subscription Tick { countdown(from: 1) }', null)?.document).toBe(taken?.document);
    for (const [session, query, operationName] of [
      [admin, 'subscription { countdown(from: 1) }', null],
      [user, '{ hello }', null],
      [user, 'mutation { addMessage(input: { text: "x" }) { id } }', null],
      [user, 'subscription { nope }', null],
      [user, 'subscription { countdown(', null],
      [user, 'subscription A { echoHeaders }', 'B'],
      [user, 'subscription { countdown(from: 1) echoHeaders }', null],
      [user, 'subscription { __typename }', null],
    ] as const) {
      expect(lane.find(session, query, operationName), query).toBeUndefined();
    }
  });
});

describe('graphql-ws lane: the bound on operations per connection', () => {
  it("counts the lane's subscriptions and graphql-ws's operations together", async () => {
    await withLaneServer('bound', { maxOperationsPerConnection: 2 }, async (server) => {
      const client = createClient({
        url: server.wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { headers: { 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' } },
        retryAttempts: 0,
      });
      const first = (query: string) =>
        new Promise<unknown>((resolve) => {
          const stop = client.subscribe({ query }, { next: (value) => (resolve({ next: value }), stop()), error: (error) => resolve({ error }), complete: () => {} });
        });
      const long = () => client.iterate({ query: 'subscription { countdown(from: 1000, intervalMs: 1000) }' });
      const open = [long(), long()];
      await Promise.all(open.map((iterator) => iterator.next()));
      const refusal = { error: [{ message: 'too many operations at once on this connection (at most 2)', extensions: { code: 'validation-failed', path: '$' } }] };
      // A third subscription (the lane's) and a query (graphql-ws's) are refused alike.
      expect(await first('subscription { countdown(from: 1, intervalMs: 1) }')).toEqual(refusal);
      expect(await first('{ hello }')).toEqual(refusal);
      await open[0]?.return?.();
      await expect.poll(() => first('{ hello }')).toEqual({ next: { data: { hello: expect.any(String) } } });
      await open[1]?.return?.();
      await client.dispose();
    });
  });
});

describe("graphql-ws lane: a token's expiry", () => {
  it('closes the socket with 4403 and releases the upstream subscription', async () => {
    const key = 'ws-lane-test-jwt-key-of-at-least-32-characters';
    await withLaneServer('expiry', { jwtSecret: { type: 'HS256', key } }, async (server, remote) => {
      // exp is in whole seconds: two to three seconds from now.
      const token = await new SignJWT({ 'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'] } })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime(Math.floor(Date.now() / 1000) + 3)
        .sign(new TextEncoder().encode(key));
      const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
      const closed = new Promise<[number, string]>((resolve) => socket.once('close', (code, reason) => resolve([code, String(reason)])));
      const events: unknown[] = [];
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
        if (message.type === 'connection_ack') {
          socket.send(JSON.stringify({ id: 's', type: 'subscribe', payload: { query: 'subscription { countdown(from: 100000, intervalMs: 100) }' } }));
        } else if (message.type === 'next') events.push(message.payload);
      });
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: { authorization: `Bearer ${token}` } } }));
      await expect.poll(() => events.length).toBeGreaterThan(0);
      expect(remote.openSockets()).toBe(1);
      expect(await closed).toEqual([4403, 'Forbidden: JWTExpired']);
      await expect.poll(() => remote.openSockets()).toBe(0);
    });
  });
});
