import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteRequestEvent, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';

let remote: RunningRemote;

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
});

afterAll(async () => {
  await remote.close();
});

interface Recorded {
  events: Array<RemoteRequestEvent & { context: unknown }>;
  swaps: number;
  swapped: Array<readonly string[]>;
}

/** A registry (default transport, or `fetch`) whose hooks record what they are told, behind a gateway. */
async function setUp(options: { fetch?: typeof fetch; timeoutSeconds: number }): Promise<{
  registry: RemoteSchemaRegistry;
  gateway: Gateway;
  recorded: Recorded;
}> {
  const recorded: Recorded = { events: [], swaps: 0, swapped: [] };
  const registry = createRemoteSchemaRegistry({
    retry: false,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...(options.fetch && { fetch: options.fetch }),
    hooks: {
      onRemoteRequest: (event, context) => recorded.events.push({ ...event, context }),
      onSchemaSwap: (event) => {
        recorded.swaps++;
        recorded.swapped.push(event.remoteSchemas);
      },
    },
  });
  const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, timeout_seconds: options.timeoutSeconds } }]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  const gateway = await startGateway(registry);
  return { registry, gateway, recorded };
}

describe.each([
  ['the default transport', undefined],
  ['a given fetch', fetch],
])('hooks with %s', (_label, fetchFn) => {
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;
  let recorded: Recorded;

  beforeAll(async () => {
    ({ registry, gateway, recorded } = await setUp(fetchFn ? { fetch: fetchFn, timeoutSeconds: 2 } : { timeoutSeconds: 2 }));
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
  });

  it('report one swap per commit, with the names of its remote schemas, and no remote request for the introspection', () => {
    expect(recorded.swaps).toBe(1);
    expect(recorded.swapped).toEqual([['sample']]);
    expect(recorded.events).toEqual([]);
  });

  it('report each call with its remote, outcome (ok, error, timeout), duration and the request context', async () => {
    recorded.events.length = 0;
    expect((await gateway.post({ query: '{ hello }' })).body).toEqual({ data: { hello: 'Hello, world!' } });
    expect((await gateway.post({ query: '{ boom }' })).body.errors).toHaveLength(1);
    expect((await gateway.post({ query: '{ slow(ms: 4000) }' })).body.errors).toHaveLength(1);
    expect((await gateway.post({ query: 'mutation { addMessage(input: { text: "x" }) { id } }' })).body.errors).toBeUndefined();
    expect(recorded.events.map((e) => [e.remoteSchema, e.outcome])).toEqual([
      ['sample', 'ok'],
      ['sample', 'error'],
      ['sample', 'timeout'],
      ['sample', 'ok'],
    ]);
    for (const event of recorded.events) {
      expect(event.durationSeconds).toBeGreaterThanOrEqual(0);
      expect((event.context as { params?: { query?: string } }).params?.query).toBeTypeOf('string');
    }
    expect(recorded.events[2]?.durationSeconds).toBeGreaterThanOrEqual(1.9);
  });
});

describe('hooks', () => {
  it('a hook that throws is logged and the request is answered', async () => {
    const errors: unknown[][] = [];
    const registry = createRemoteSchemaRegistry({
      retry: false,
      logger: { debug() {}, info() {}, warn() {}, error: (...args) => errors.push(args) },
      hooks: {
        onRemoteRequest: () => {
          throw new Error('hook broke');
        },
        onSchemaSwap: () => {
          throw new Error('swap hook broke');
        },
      },
    });
    registry.commit(await registry.plan([{ name: 'sample', definition: { url: remote.url } }]));
    const gateway = await startGateway(registry);
    try {
      expect((await gateway.post({ query: '{ hello }' })).body).toEqual({ data: { hello: 'Hello, world!' } });
      expect(errors.map((args) => args[0])).toEqual([
        'remote schemas: the onSchemaSwap hook failed:',
        'remote schema "sample": the onRemoteRequest hook failed:',
      ]);
    } finally {
      await gateway.close();
      await registry.dispose();
    }
  });

  it('are checked when the registry is created', () => {
    expect(() => createRemoteSchemaRegistry({ hooks: 'x' as never })).toThrow('createRemoteSchemaRegistry: expected "hooks" to be an object, but got string');
    expect(() => createRemoteSchemaRegistry({ hooks: { onRemoteRequest: 1 as never } })).toThrow(
      'createRemoteSchemaRegistry: expected "hooks.onRemoteRequest" to be a function, but got number',
    );
  });
});
