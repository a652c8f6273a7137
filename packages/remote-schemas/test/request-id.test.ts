import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaDefinition, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';

/**
 * `getRequestId`: the request's id reaches remotes as `x-request-id` (HTTP and the graphql-ws
 * upstream), a client's own `x-request-id`, `traceparent` and `tracestate` never do.
 */

const clientHeaders = {
  'x-request-id': 'the-clients-own-id',
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'vendor=value',
  'x-other': 'kept',
  'x-test-request-id': 'checked-id-1',
};

let remote: RunningRemote;
let withIds: RemoteSchemaRegistry;
let byDefault: RemoteSchemaRegistry;
let gateway: Gateway;
let plainGateway: Gateway;

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
  // The application's id: here a header the test sets (the server checks the client's and uses its own).
  withIds = createRemoteSchemaRegistry({
    retry: false,
    getRequestId: (context) => (context as { request?: Request }).request?.headers.get('x-test-request-id') ?? undefined,
  });
  byDefault = createRemoteSchemaRegistry({ retry: false });
  gateway = await startGateway(withIds);
  plainGateway = await startGateway(byDefault);
});

afterAll(async () => {
  await gateway.close();
  await plainGateway.close();
  await withIds.dispose();
  await byDefault.dispose();
  await remote.close();
});

async function use(registry: RemoteSchemaRegistry, definition: Omit<RemoteSchemaDefinition, 'url'>): Promise<void> {
  const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, ...definition } }]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  remote.received.length = 0;
}

describe('request ids sent to remotes', () => {
  it('sends getRequestId as x-request-id, never the client own x-request-id or trace context', async () => {
    await use(withIds, { forward_client_headers: true });
    const answer = await gateway.post({ query: '{ hello(name: "id") }' }, clientHeaders);
    expect(answer.body).toEqual({ data: { hello: 'Hello, id!' } });
    const received = remote.received[0]?.headers ?? {};
    expect(received['x-request-id']).toBe('checked-id-1');
    expect(received['x-other']).toBe('kept');
    // No OpenTelemetry SDK in this process: nothing of the client's trace goes on.
    expect(received['traceparent']).toBeUndefined();
    expect(received['tracestate']).toBeUndefined();
  });

  it('keeps a configured x-request-id header as configured', async () => {
    await use(withIds, { headers: [{ name: 'X-Request-Id', value: 'configured' }] });
    await gateway.post({ query: '{ hello }' }, clientHeaders);
    expect(remote.received[0]?.headers['x-request-id']).toBe('configured');
  });

  it('sends the id in connection_init of the upstream graphql-ws connection, sharing the connection across ids', async () => {
    await use(withIds, {});
    const before = remote.connections.length;
    const clients = ['ws-id-1', 'ws-id-2'].map((id) => gateway.wsClient({ headers: { 'x-test-request-id': id } }));
    try {
      const run = async (index: number) => {
        const values: unknown[] = [];
        const client = clients[index]!;
        for await (const result of client.iterate({ query: 'subscription { countdown(from: 3, intervalMs: 50) }' })) values.push(result);
        return values;
      };
      const [first, second] = await Promise.all([run(0), run(1)]);
      const expected = [3, 2, 1, 0].map((countdown) => ({ data: { countdown } }));
      expect(first).toEqual(expected);
      expect(second).toEqual(expected);
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
    // One upstream connection for both (the id does not choose it), carrying the id of its opener.
    const opened = remote.connections.slice(before);
    expect(opened).toHaveLength(1);
    expect(['ws-id-1', 'ws-id-2']).toContain(opened[0]?.headers['x-request-id']);
  });

  it('reads context.requestId by default, and sends nothing without one', async () => {
    await use(byDefault, { forward_client_headers: true });
    await plainGateway.post({ query: '{ hello }' }, clientHeaders);
    expect(remote.received[0]?.headers['x-request-id']).toBeUndefined();
    expect(remote.received[0]?.headers['x-other']).toBe('kept');
  });

  it('refuses a getRequestId that is not a function', () => {
    expect(() => createRemoteSchemaRegistry({ getRequestId: 'id' as never })).toThrow(
      'createRemoteSchemaRegistry: expected "getRequestId" to be a function, but got string',
    );
  });
});
