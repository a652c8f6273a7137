import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSchema } from 'graphql-yoga';
import { startSampleRemote, startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaEntry, type RemoteSchemaRegistryOptions } from '../src/index.js';
import { SubscriptionPool, isPushable, mapResults } from '../src/subscriptions.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger, startStubRemote, waitFor, type StubRemote } from './utils/fixtures.js';

const MiB = 1024 * 1024;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

let sample: RunningRemote;
beforeAll(async () => {
  sample = await startSampleRemote({ name: 'sample' });
});
afterAll(() => sample.close());

function remoteError(url: string) {
  return { message: `HTTP exception occurred while sending the request to "${url}"`, extensions: { code: 'remote-schema-error', path: '$' } };
}

/** A subscription's connection failed: the message names the transport it used. */
function subscriptionError(url: string) {
  return {
    message: `WebSocket exception occurred while subscribing to "${url.replace(/^http/, 'ws')}"`,
    extensions: { code: 'remote-schema-error', path: '$' },
  };
}

async function stubRemote(handler: Parameters<typeof startStubRemote>[0]): Promise<StubRemote> {
  const stub = await startStubRemote(handler);
  cleanups.push(() => stub.close());
  return stub;
}

/** A registry serving `entries` behind a test gateway, all closed after the test. */
async function serve(entries: RemoteSchemaEntry[], options: RemoteSchemaRegistryOptions = {}) {
  const logger = memoryLogger();
  const registry = createRemoteSchemaRegistry({ logger, retry: false, ...options });
  const gateway = await startGateway(registry);
  cleanups.push(() => registry.dispose(), () => gateway.close());
  const plan = await registry.plan(entries);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  return { registry, gateway, logger };
}

interface Streamed {
  /** Bytes of the body written before the connection closed, or all of them. */
  written: number;
  completed: boolean;
}

/**
 * Answers `{"data":{"hello":"xxx…"}}` of `total` bytes in 64 KiB chunks, following backpressure, so
 * that it never holds more than a chunk; stops as soon as the client closes the connection.
 */
function streamHuge(res: ServerResponse, total: number, log: Streamed[]): void {
  const entry: Streamed = { written: 0, completed: false };
  log.push(entry);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"data":{"hello":"');
  const pump = () => {
    while (!res.destroyed && entry.written < total) {
      entry.written += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) {
      entry.completed = true;
      res.end('"}}');
    }
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

describe('an answer larger than maxResponseBytes', () => {
  for (const transport of ['node:http', 'fetch'] as const) {
    const options: RemoteSchemaRegistryOptions = transport === 'fetch' ? { fetch: globalThis.fetch } : {};

    it(`fails that call only, read no further than the default 64 MiB (${transport}, 100 MiB streamed)`, async () => {
      const streamed: Streamed[] = [];
      const huge = await stubRemote(({ res }) => streamHuge(res, 100 * MiB, streamed));
      const { gateway, logger } = await serve(
        [
          { name: 'sample', definition: { url: sample.url } },
          { name: 'huge', definition: { url: huge.url, customization: { root_fields_namespace: 'huge' } } },
        ],
        options,
      );
      const response = await gateway.post({ query: '{ hello huge { hello } }' });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({ hello: 'Hello, world!', huge: null });
      expect(response.body.errors).toEqual([{ ...remoteError(huge.url), path: ['huge'] }]);
      // The connection was closed under the remote: it never got to write the whole body.
      expect(await waitFor(() => streamed.length === 1 && !streamed[0]!.completed)).toBe(true);
      expect(streamed[0]!.written).toBeLessThan(100 * MiB);
      expect(logger.lines.some((l) => l.includes(`the answer is larger than ${64 * MiB} bytes`))).toBe(true);
      // The gateway keeps serving, the same remote included.
      expect(await gateway.post({ query: '{ hello }' })).toEqual({ status: 200, body: { data: { hello: 'Hello, world!' } } });
    });

    it(`fails at once when Content-Length declares too much (${transport})`, async () => {
      const declared = await stubRemote(({ res }) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * MiB) });
        // ... and then nothing more: only the declared length can end this call before the timeout.
        res.write('{"data":');
      });
      const { gateway } = await serve(
        [{ name: 'declared', definition: { url: declared.url, timeout_seconds: 10 } }],
        { ...options, maxResponseBytes: MiB },
      );
      const started = performance.now();
      const response = await gateway.post({ query: '{ hello }' });
      expect(performance.now() - started).toBeLessThan(2000);
      expect(response).toEqual({ status: 200, body: { errors: [remoteError(declared.url)] } });
    });
  }

  it('makes introspection fail with remote-schema-error', async () => {
    const logger = memoryLogger();
    const registry = createRemoteSchemaRegistry({ logger, retry: false, maxResponseBytes: 1000 });
    cleanups.push(() => registry.dispose());
    const plan = await registry.plan([{ name: 'sample', definition: { url: sample.url } }]);
    expect(plan.problems).toEqual([
      { name: 'sample', code: 'remote-schema-error', message: `HTTP exception occurred while sending the request to "${sample.url}"` },
    ]);
    expect(logger.lines.some((l) => l.includes('the answer is larger than 1000 bytes'))).toBe(true);
  });

  it('ends a subscription whose remote sends one larger message', async () => {
    const schema = createSchema({
      typeDefs: 'type Query { ok: String } type Subscription { big: String }',
      resolvers: {
        Query: { ok: () => 'ok' },
        Subscription: {
          big: {
            async *subscribe() {
              yield { big: 'small' };
              yield { big: 'x'.repeat(2 * MiB) };
              yield { big: 'never seen' };
            },
          },
        },
      },
    });
    const remote = await startSchemaServer(schema);
    cleanups.push(() => remote.close());
    const { gateway, logger } = await serve([{ name: 'big', definition: { url: remote.url } }], { maxResponseBytes: MiB });
    const values: unknown[] = [];
    for await (const result of gateway.wsClient().iterate({ query: 'subscription { big }' })) values.push(result);
    expect(values).toEqual([{ data: { big: 'small' } }, { errors: [subscriptionError(remote.url)] }]);
    expect(logger.lines).toContain(`warn remote subscription to "${remote.wsUrl}" failed: Max payload size exceeded`);
    expect(await gateway.post({ query: '{ ok }' })).toEqual({ status: 200, body: { data: { ok: 'ok' } } });
  });
});

describe('timeout_seconds', () => {
  it('bounds the WebSocket handshake of a subscription too', async () => {
    const silent = await startStubRemote(() => {}, { onOtherRequest: () => {} });
    cleanups.push(() => silent.close());
    const { gateway } = await serve([{ name: 'silent', definition: { url: silent.url, timeout_seconds: 0.3 } }]);
    const started = performance.now();
    const values: unknown[] = [];
    for await (const result of gateway.wsClient().iterate({ query: 'subscription { countdown(from: 1) }' })) values.push(result);
    expect(values).toEqual([{ errors: [subscriptionError(silent.url)] }]);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('a call that may have reached the remote', () => {
  /**
   * Answers the first request of each connection and, on a reused connection, reads the request in
   * full and then drops the connection without a byte of answer.
   */
  const dropsReused = () =>
    stubRemote(({ requestOnConnection, req, answer }) => {
      if (requestOnConnection > 1) req.socket.destroy();
      else answer();
    });

  const cases: Array<[string, RemoteSchemaEntry['definition'], string]> = [
    ['fast path', {}, 'mutation { addMessage(input: {text: "once"}) { text } }'],
    ['delegation', { customization: { root_fields_namespace: 'ns' } }, 'mutation { ns { addMessage(input: {text: "once"}) { text } } }'],
  ];
  it.each(cases)('is never sent again for a mutation (%s)', async (_, definition, mutation) => {
    const remote = await dropsReused();
    // Introspection is the first request on the connection the mutation then reuses.
    const { gateway } = await serve([{ name: 'drops', definition: { url: remote.url, ...definition } }]);
    const response = await gateway.post({ query: mutation });
    expect(response.status).toBe(200);
    expect(response.body.errors).toEqual([
      definition.customization ? { ...remoteError(remote.url), path: ['ns'] } : remoteError(remote.url),
    ]);
    expect(remote.operations).toHaveLength(1);
    expect(remote.operations[0]).toMatchObject({ query: expect.stringContaining('addMessage'), requestOnConnection: 2 });
  });

  const queries: Array<[string, RemoteSchemaEntry['definition'], string, unknown]> = [
    ['fast path', {}, '{ hello }', { hello: 'Hello, world!' }],
    ['delegation', { customization: { root_fields_namespace: 'ns' } }, '{ ns { hello } }', { ns: { hello: 'Hello, world!' } }],
  ];
  it.each(queries)('is sent once more for a query whose reused connection was dropped before any answer (%s)', async (_, definition, query, data) => {
    const remote = await dropsReused();
    const { gateway } = await serve([{ name: 'drops', definition: { url: remote.url, ...definition } }]);
    expect(await gateway.post({ query })).toEqual({ status: 200, body: { data } });
    expect(remote.operations.map((o) => [o.requestOnConnection])).toEqual([[2], [1]]);
  });
});

describe('an answer that is not a GraphQL response', () => {
  it('fails the call with remote-schema-error instead of reaching the client as it is', async () => {
    const bodies = ['{"data":"weird"}', '{"data":[1,2]}', '{"errors":{"message":"x"}}', '{"errors":[]}', '{"data":{"hello":"fine"}}'];
    let next = 0;
    const odd = await stubRemote(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(bodies[next++]);
    });
    const { gateway } = await serve([{ name: 'odd', definition: { url: odd.url } }]);
    for (let i = 0; i < 4; i++) {
      expect(await gateway.post({ query: '{ hello }' }), bodies[i]).toEqual({ status: 200, body: { errors: [remoteError(odd.url)] } });
    }
    expect(await gateway.post({ query: '{ hello }' })).toEqual({ status: 200, body: { data: { hello: 'fine' } } });
  });
});

describe('errors of a remote', () => {
  it('reach the client without the stack traces the remote put in their extensions', async () => {
    const leaky = await stubRemote(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          data: { hello: null },
          errors: [{ message: 'boom', path: ['hello'], extensions: { code: 'E42', stack: 'at secret.js:1', exception: { stacktrace: ['x'] } } }],
        }),
      );
    });
    const { gateway } = await serve([{ name: 'leaky', definition: { url: leaky.url } }]);
    const response = await gateway.post({ query: '{ hello }' });
    expect(response.body.errors).toEqual([{ message: 'boom', path: ['hello'], extensions: { code: 'E42' } }]);
  });
});

describe('a remote that answers many errors', () => {
  it('has the first 1,000 passed on, and one more error saying how many it answered', async () => {
    const count = 200_000;
    const many = await stubRemote(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { hello: null }, errors: Array.from({ length: count }, (_, i) => ({ message: `e${i}`, path: ['hello'] })) }));
    });
    const { gateway } = await serve([{ name: 'many', definition: { url: many.url } }]);
    const response = await gateway.post({ query: '{ hello }' });
    const errors = response.body.errors as Array<{ message: string; extensions?: unknown }>;
    expect(response.body.data).toEqual({ hello: null });
    expect(errors).toHaveLength(1001);
    expect(errors.slice(0, 2).map((error) => error.message)).toEqual(['e0', 'e1']);
    expect(errors[999]?.message).toBe('e999');
    expect(errors[1000]).toEqual({ message: `the remote answered ${count} errors: the first 1000 are passed on`, extensions: { code: 'remote-schema-error' } });
  });
});

describe('a remote that drips its answer', () => {
  it('is cut off at timeout_seconds however steadily bytes arrive', async () => {
    let closedByGateway = false;
    const drip = await stubRemote(({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":{"hello":"');
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => {
        clearInterval(timer);
        closedByGateway = true;
      });
    });
    const { gateway } = await serve([{ name: 'drip', definition: { url: drip.url, timeout_seconds: 0.5 } }]);
    const started = Date.now();
    expect(await gateway.post({ query: '{ hello }' })).toEqual({ status: 200, body: { errors: [remoteError(drip.url)] } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await waitFor(() => closedByGateway)).toBe(true);
  });
});

describe('maxSocketsPerRemote', () => {
  it('bounds the sockets to one remote; further calls wait for one', async () => {
    const slow = await stubRemote(({ res }) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: { hello: 'slow' } }));
      }, 50);
    });
    const { gateway } = await serve([{ name: 'slow', definition: { url: slow.url } }], { maxSocketsPerRemote: 2 });
    const responses = await Promise.all(Array.from({ length: 10 }, () => gateway.post({ query: '{ hello }' })));
    expect(responses).toEqual(Array.from({ length: 10 }, () => ({ status: 200, body: { data: { hello: 'slow' } } })));
    expect(slow.operations).toHaveLength(10);
    expect(slow.mostOpenAtOnce()).toBe(2);
  });
});

describe('maxSubscriptionsPerRemote', () => {
  const open = (gateway: Gateway, role: string, query = 'subscription { messageAdded { text } }') => {
    const iterator = gateway.wsClient({ session: { role, variables: {} } }).iterate({ query });
    return { iterator, first: iterator.next() };
  };

  it('refuses a subscription past the bound with its own error, a warning and the hook, and keeps the others', async () => {
    const refused: string[] = [];
    const { gateway, logger } = await serve([{ name: 'sample', definition: { url: sample.url } }], {
      maxSubscriptionsPerRemote: 3,
      hooks: { onSubscriptionRefused: (event) => refused.push(event.remoteSchema) },
    });
    const subscribed = sample.subscribed.length;
    // Three subscribers: two of them identical (one upstream subscription), one of another session.
    const a = open(gateway, 'a');
    const a2 = open(gateway, 'a');
    const b = open(gateway, 'b');
    expect(await waitFor(() => sample.openSockets() === 2 && sample.subscribed.length === subscribed + 2)).toBe(true);
    const c = open(gateway, 'c');
    expect(await c.first).toEqual({
      done: false,
      value: { errors: [{ message: 'too many subscriptions to remote schema "sample"', extensions: { code: 'remote-schema-error', path: '$' } }] },
    });
    expect(await c.iterator.next()).toEqual({ done: true, value: undefined });
    expect(refused).toEqual(['sample']);
    expect(logger.lines.filter((l) => l.startsWith('warn') && l.includes('3 subscriptions to remote schema "sample" are open already'))).toHaveLength(1);
    expect(logger.lines.some((l) => l.includes('HTTP exception'))).toBe(false);
    await gateway.post({ query: 'mutation { addMessage(input: {text: "ping"}) { id } }' });
    for (const sub of [a, a2, b]) {
      expect(await sub.first).toEqual({ done: false, value: { data: { messageAdded: { text: 'ping' } } } });
    }
    // A subscriber that leaves makes room again; its shared upstream subscription keeps running.
    await a2.iterator.return?.();
    const d = open(gateway, 'd');
    expect(await waitFor(() => sample.openSockets() === 3 && sample.subscribed.length === subscribed + 3)).toBe(true);
    await gateway.post({ query: 'mutation { addMessage(input: {text: "pong"}) { id } }' });
    for (const next of [a.iterator.next(), b.iterator.next(), d.first]) {
      expect(await next).toEqual({ done: false, value: { data: { messageAdded: { text: 'pong' } } } });
    }
    for (const sub of [a, b, d]) await sub.iterator.return?.();
    expect(await waitFor(() => sample.openSockets() === 0)).toBe(true);
  });

  it('takes the former option name maxSubscriptionConnectionsPerRemote', async () => {
    const { gateway } = await serve([{ name: 'sample', definition: { url: sample.url } }], { maxSubscriptionConnectionsPerRemote: 1 });
    const a = open(gateway, 'a');
    expect(await waitFor(() => sample.openSockets() === 1)).toBe(true);
    const b = open(gateway, 'b');
    expect((await b.first).value).toEqual({
      errors: [{ message: 'too many subscriptions to remote schema "sample"', extensions: { code: 'remote-schema-error', path: '$' } }],
    });
    await a.iterator.return?.();
    expect(await waitFor(() => sample.openSockets() === 0)).toBe(true);
  });
});

describe('identical subscriptions', () => {
  it('share one upstream subscription: each subscriber gets every event, the last to leave ends it', async () => {
    const { gateway } = await serve([{ name: 'sample', definition: { url: sample.url } }]);
    const subscribed = sample.subscribed.length;
    const query = 'subscription { messageAdded { text } }';
    const subscribers = Array.from({ length: 5 }, () => gateway.wsClient({ session: { role: 'user', variables: { 'x-svc-user-id': '7' } } }).iterate({ query }));
    const other = gateway.wsClient({ session: { role: 'user', variables: { 'x-svc-user-id': '8' } } }).iterate({ query });
    const firsts = [...subscribers, other].map((s) => s.next());
    expect(await waitFor(() => sample.subscribed.length === subscribed + 2)).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    // One upstream subscription per session: the five identical ones share theirs.
    expect(sample.subscribed.length).toBe(subscribed + 2);
    expect(sample.openSockets()).toBe(2);
    await gateway.post({ query: 'mutation { addMessage(input: {text: "fan"}) { id } }' });
    for (const first of firsts) expect(await first).toEqual({ done: false, value: { data: { messageAdded: { text: 'fan' } } } });
    for (const s of subscribers.slice(0, 4)) await s.return?.();
    await gateway.post({ query: 'mutation { addMessage(input: {text: "still"}) { id } }' });
    expect(await subscribers[4]!.next()).toEqual({ done: false, value: { data: { messageAdded: { text: 'still' } } } });
    await subscribers[4]!.return?.();
    await other.return?.();
    expect(await waitFor(() => sample.openSockets() === 0)).toBe(true);
  });

  it('are the same with no variables and with {}: one upstream subscription', async () => {
    const pool = samplePool();
    const subscribed = sample.subscribed.length;
    const headers = { 'x-svc-role': 'user' };
    const query = 'subscription { countdown(from: 1000, intervalMs: 50) }';
    const bare = pool.subscribe({ query }, headers, false);
    const empty = pool.subscribe({ query, variables: {} }, headers, false);
    expect((await bare.next()).done).toBe(false);
    expect((await empty.next()).done).toBe(false);
    expect(pool.upstreams).toBe(1);
    expect(sample.subscribed.length).toBe(subscribed + 1);
    await bare.return?.();
    await empty.return?.();
  });
});

/** A subscription pool of the sample remote on its own, disposed after the test. */
function samplePool(logger = memoryLogger(), maxQueuedEvents?: number, maxQueuedBytes?: number): SubscriptionPool {
  const pool = new SubscriptionPool({
    name: 'sample',
    url: sample.url,
    adminUrl: sample.url,
    publicUrl: sample.url,
    timeoutMs: 5000,
    logger,
    maxMessageBytes: MiB,
    maxSubscriptions: 10,
    ...(maxQueuedEvents === undefined ? {} : { maxQueuedEvents }),
    ...(maxQueuedBytes === undefined ? {} : { maxQueuedBytes }),
  });
  cleanups.push(() => pool.dispose());
  return pool;
}

describe('a subscriber that falls behind its remote', () => {
  it('ends once the events waiting for it are larger than its byte bound, one large event always taken', async () => {
    const pool = samplePool(memoryLogger(), 1000, 4096);
    const slow = pool.subscribe({ query: 'subscription { messageAdded { text } }' }, { 'x-svc-role': 'slow-bytes' }, false);
    const first = slow.next();
    expect(await waitFor(() => pool.upstreams === 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const add = (text: string) =>
      fetch(sample.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation($text: String!) { addMessage(input: { text: $text }) { id } }', variables: { text } }),
      });
    // One event larger than the bound is read, as it comes.
    await add('x'.repeat(10_000));
    expect(((await first).value as { data: { messageAdded: { text: string } } }).data.messageAdded.text).toHaveLength(10_000);
    // Then three of 2,000 characters wait unread: past 4,096 together, the subscriber ends.
    for (let i = 0; i < 3; i++) await add('y'.repeat(2000));
    expect(await waitFor(() => pool.upstreams === 0)).toBe(true);
    expect(JSON.parse(JSON.stringify(await slow.next()))).toEqual({
      done: false,
      value: { errors: [{ message: 'the subscription fell too far behind remote schema "sample"', extensions: { code: 'remote-schema-error', path: '$' } }] },
    });
    expect(await slow.next()).toEqual({ done: true, value: undefined });
  });

  it('ends with its own error once more events wait for it than its queue holds; nothing else grows', async () => {
    const logger = memoryLogger();
    const pool = samplePool(logger, 3);
    const payload = { query: 'subscription { countdown(from: 20, intervalMs: 1) }' };
    const slow = pool.subscribe(payload, { 'x-svc-role': 'slow' }, false);
    const first = await slow.next();
    expect(first).toEqual({ done: false, value: { data: { countdown: 20 } } });
    // The remote sends the other 20 events while nothing reads them.
    expect(await waitFor(() => pool.upstreams === 0)).toBe(true);
    expect(JSON.parse(JSON.stringify(await slow.next()))).toEqual({
      done: false,
      value: { errors: [{ message: 'the subscription fell too far behind remote schema "sample"', extensions: { code: 'remote-schema-error', path: '$' } }] },
    });
    expect(await slow.next()).toEqual({ done: true, value: undefined });
    expect(logger.lines.some((l) => l.startsWith('warn') && l.includes('fell more than 3 events (or 1048576 bytes) behind'))).toBe(true);
    expect(pool.subscribers).toBe(0);
    expect(await waitFor(() => pool.size === 0)).toBe(true);
  });
});

describe('a subscriber that listens', () => {
  it('is handed every event as it comes, past its queue bound, and the end once', async () => {
    const pool = samplePool(memoryLogger(), 3);
    const stream = pool.subscribe({ query: 'subscription { countdown(from: 20, intervalMs: 1) }' }, { 'x-svc-role': 'listener' }, false);
    if (!isPushable(stream)) throw new Error('expected a pushable stream');
    const steps: Array<IteratorResult<unknown>> = [];
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    stream.listen((step) => {
      steps.push(step);
      if (step.done === true) ended();
    });
    await end;
    // countdown(from: 20) sends 20 down to 0: more than the queue bound of 3, none dropped.
    expect(steps.slice(0, -1).map((step) => step.value)).toEqual(Array.from({ length: 21 }, (_, i) => ({ data: { countdown: 20 - i } })));
    expect(steps.at(-1)).toEqual({ done: true, value: undefined });
    expect(pool.subscribers).toBe(0);
    expect(await waitFor(() => pool.size === 0)).toBe(true);
  });

  it('ended from inside its listener gets the end once and nothing after; its upstream is released', async () => {
    const pool = samplePool();
    const stream = pool.subscribe({ query: 'subscription { countdown(from: 20, intervalMs: 1) }' }, { 'x-svc-role': 'leaver' }, false);
    if (!isPushable(stream)) throw new Error('expected a pushable stream');
    const steps: Array<IteratorResult<unknown>> = [];
    stream.listen((step) => {
      steps.push(step);
      // As a client too slow to read is closed while its event is written.
      if (step.done !== true && steps.length === 2) void stream.return?.();
    });
    expect(await waitFor(() => steps.length === 3)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(steps).toEqual([
      { done: false, value: { data: { countdown: 20 } } },
      { done: false, value: { data: { countdown: 19 } } },
      { done: true, value: undefined },
    ]);
    expect(pool.subscribers).toBe(0);
    expect(await waitFor(() => pool.size === 0)).toBe(true);
  });
});

describe('a mapped subscriber (a subscription under a namespace)', () => {
  const nest = (value: unknown) => ({ nested: value });

  it('stays pushable: its listener gets each event mapped, then the end once', async () => {
    const pool = samplePool();
    const stream = mapResults(pool.subscribe({ query: 'subscription { countdown(from: 2, intervalMs: 1) }' }, { 'x-svc-role': 'mapped' }, false), nest);
    if (!isPushable(stream)) throw new Error('expected a pushable stream');
    const steps: Array<IteratorResult<unknown>> = [];
    stream.listen((step) => steps.push(step));
    expect(await waitFor(() => steps.at(-1)?.done === true)).toBe(true);
    expect(steps).toEqual([
      { done: false, value: { nested: { data: { countdown: 2 } } } },
      { done: false, value: { nested: { data: { countdown: 1 } } } },
      { done: false, value: { nested: { data: { countdown: 0 } } } },
      { done: true, value: undefined },
    ]);
    expect(await waitFor(() => pool.size === 0)).toBe(true);
  });

  it('maps what next() reads, and return() releases its upstream', async () => {
    const pool = samplePool();
    const stream = mapResults(pool.subscribe({ query: 'subscription { countdown(from: 100, intervalMs: 1) }' }, { 'x-svc-role': 'reader' }, false), nest);
    expect(await stream.next()).toEqual({ done: false, value: { nested: { data: { countdown: 100 } } } });
    expect(await stream.return?.()).toEqual({ done: true, value: undefined });
    expect(pool.subscribers).toBe(0);
    expect(await waitFor(() => pool.size === 0)).toBe(true);
  });

  it('of a stream that cannot push, is an ordinary mapped iterator', async () => {
    async function* two() {
      yield 1;
      yield 2;
    }
    const stream = mapResults(two(), (n: number) => n * 10);
    expect(isPushable(stream)).toBe(false);
    const seen: number[] = [];
    for await (const value of stream) seen.push(value);
    expect(seen).toEqual([10, 20]);
  });
});

describe('an upstream graphql-ws connection', () => {
  it('offers no permessage-deflate, even to a remote that would take it', async () => {
    const { WebSocketServer } = await import('ws');
    const offered: Array<string | undefined> = [];
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: true });
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    server.on('connection', (socket, request) => {
      offered.push(request.headers['sec-websocket-extensions']);
      socket.close(4400, 'enough');
    });
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const pool = new SubscriptionPool({
      name: 'deflate',
      url: `http://127.0.0.1:${port}/graphql`,
      adminUrl: `http://127.0.0.1:${port}/graphql`,
      publicUrl: `http://127.0.0.1:${port}/graphql`,
      timeoutMs: 5000,
      logger: memoryLogger(),
      maxMessageBytes: MiB,
      maxSubscriptions: 10,
    });
    cleanups.push(() => pool.dispose());
    const result = await pool.subscribe({ query: 'subscription { x }' }, {}, false).next();
    expect(result.done).toBe(false);
    expect(offered).toEqual([undefined]);
  });
});
