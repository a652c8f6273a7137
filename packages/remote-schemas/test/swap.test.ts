import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGeneratedRemote, startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaEntry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';

let sample: RunningRemote;
let other: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

const sampleEntry: RemoteSchemaEntry = { name: 'sample', definition: { url: '' } };
let otherEntry: RemoteSchemaEntry;

beforeAll(async () => {
  sample = await startSampleRemote({ name: 'sample' });
  other = await startGeneratedRemote({ types: 20, prefix: 'Other' });
  sampleEntry.definition = { url: sample.url };
  otherEntry = { name: 'other', definition: { url: other.url } };
  registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false });
  gateway = await startGateway(registry);
  registry.commit(await registry.plan([sampleEntry]));
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await other.close();
  await sample.close();
});

/**
 * The subscription's end after its remote was removed: whatever was in flight may still arrive,
 * then the error, then the end; the remote's sockets are closed.
 */
async function endsRemoved(iterator: AsyncIterator<unknown>): Promise<void> {
  const rest: unknown[] = [];
  let step = await iterator.next();
  for (let i = 0; i < 10 && !step.done; i++) {
    rest.push(step.value);
    step = await iterator.next();
  }
  expect(step.done).toBe(true);
  expect(rest.at(-1)).toEqual({
    errors: [{ message: 'remote schema "sample" was removed', extensions: { code: 'remote-schema-error', path: '$' } }],
  });
  expect(rest.slice(0, -1).every((value) => (value as { data?: unknown }).data !== undefined)).toBe(true);
  for (let i = 0; i < 100 && sample.openSockets() > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(sample.openSockets()).toBe(0);
}

describe('schema swaps under load', () => {
  it('fail none of 2,000 queries in flight across 50 add/remove cycles of another remote', async () => {
    const queries = [
      // fast path: one uncustomized remote
      { query: 'query Hello($name: String) { hello(name: $name) }', check: (d: any, i: number) => d.hello === `Hello, n${i}!` },
      // delegation: asks the gateway too
      { query: 'query Mixed($name: String) { __typename hello(name: $name) }', check: (d: any, i: number) => d.hello === `Hello, n${i}!` && d.__typename === 'Query' },
      // long enough to span a swap
      { query: 'query Slow($name: String) { hello(name: $name) slow(ms: 15) }', check: (d: any, i: number) => d.hello === `Hello, n${i}!` && d.slow === 'slept 15 ms' },
    ];
    let cycles = 0;
    let sent = 0;
    const swapping = (async () => {
      for (; cycles < 50; cycles++) {
        // Spread the cycles over the whole run: one every 40 queries.
        while (sent < cycles * 40 && sent < 2000) await new Promise((r) => setTimeout(r, 1));
        registry.commit(await registry.plan([sampleEntry, otherEntry]));
        await new Promise((r) => setTimeout(r, 2));
        registry.commit(await registry.plan([sampleEntry]));
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const failures: unknown[] = [];
    let otherAnswers = 0;
    const worker = async () => {
      while (sent < 2000) {
        const i = sent++;
        if (i % 10 === 9) {
          // A query on the remote that comes and goes: answered by it, or refused by validation.
          const response = await gateway.post({ query: '{ Othert3 { name } }' });
          if (response.status === 200 && response.body.data?.Othert3?.name === 'OtherT3') otherAnswers++;
          else if (!(response.status === 200 && /Cannot query field "Othert3"/.test(response.body.errors?.[0]?.message))) failures.push(response);
          continue;
        }
        const { query, check } = queries[i % 3]!;
        const response = await gateway.post({ query, variables: { name: `n${i}` } });
        if (response.status !== 200 || response.body.errors || !check(response.body.data, i)) failures.push(response);
      }
    };
    await Promise.all([swapping, ...Array.from({ length: 64 }, worker)]);
    expect(cycles).toBe(50);
    expect(sent).toBeGreaterThanOrEqual(2000);
    expect(failures).toEqual([]);
    expect(otherAnswers).toBeGreaterThan(0);
  }, 90_000);
});

describe('open subscriptions', () => {
  it('keep running across an unrelated add and a reload of their own remote', async () => {
    registry.commit(await registry.plan([sampleEntry]));
    const client = gateway.wsClient({ session: { role: 'user', variables: {} } });
    const iterator = client.iterate({ query: 'subscription { messageAdded { text } }' });
    const publish = async (text: string) => {
      const response = await gateway.post({ query: `mutation { addMessage(input: {text: "${text}"}) { id } }` });
      expect(response.status).toBe(200);
    };
    const next = async (text: string) => {
      const value = iterator.next();
      // The upstream subscription must exist before the event is published.
      for (let i = 0; i < 100 && sample.openSockets() === 0; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20));
      await publish(text);
      return value;
    };
    expect(await next('before')).toEqual({ done: false, value: { data: { messageAdded: { text: 'before' } } } });
    registry.commit(await registry.plan([sampleEntry, otherEntry]));
    expect(await next('after add')).toEqual({ done: false, value: { data: { messageAdded: { text: 'after add' } } } });
    registry.commit(await registry.plan([sampleEntry, otherEntry], { reload: 'all' }));
    expect(await next('after reload')).toEqual({ done: false, value: { data: { messageAdded: { text: 'after reload' } } } });
    await iterator.return?.();
  });

  it('end with an error saying so when their remote is removed', async () => {
    registry.commit(await registry.plan([sampleEntry]));
    const client = gateway.wsClient();
    const iterator = client.iterate({ query: 'subscription { countdown(from: 1000, intervalMs: 20) }' });
    expect(await iterator.next()).toEqual({ done: false, value: { data: { countdown: 1000 } } });
    registry.commit(await registry.plan([otherEntry]));
    await endsRemoved(iterator);
  });

  it('end when their remote is removed, also those opened before an update moved it to another URL', async () => {
    const moved = await startSampleRemote({ name: 'sample' });
    try {
      registry.commit(await registry.plan([sampleEntry]));
      const client = gateway.wsClient();
      const iterator = client.iterate({ query: 'subscription { countdown(from: 1000, intervalMs: 20) }' });
      expect(await iterator.next()).toEqual({ done: false, value: { data: { countdown: 1000 } } });
      // Updated: the open subscription stays on the old URL, as documented.
      registry.commit(await registry.plan([{ name: 'sample', definition: { url: moved.url } }]));
      expect((await iterator.next()).done).toBe(false);
      expect(sample.openSockets()).toBe(1);
      registry.commit(await registry.plan([otherEntry]));
      await endsRemoved(iterator);
    } finally {
      await moved.close();
      registry.commit(await registry.plan([sampleEntry]));
    }
  });
});
