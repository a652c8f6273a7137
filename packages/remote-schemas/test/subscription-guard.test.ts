import { describe, expect, it } from 'vitest';
import { buildSchema, parse, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { SubscriptionGuard } from '../src/permissions/subscription-guard.js';
import { memoryLogger } from './utils/fixtures.js';

/**
 * The guard of roles' open subscriptions on its own: what it keeps, and how a stream it ends looks
 * to the transport that reads it (a pending read answered at once, then completion).
 */

const before = buildSchema('type Query { a: Int } type Subscription { ticks: Int! other: Int }');
const without = buildSchema('type Query { a: Int } type Subscription { other: Int }');
const noSubscriptions = buildSchema('type Query { a: Int }');

/** A stream the test pushes results into; `returned` says whether its consumer stopped it. */
function stream() {
  const queue: Array<(step: IteratorResult<ExecutionResult>) => void> = [];
  const state = { returned: false };
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    next: () => new Promise((resolve) => queue.push(resolve)),
    return: async () => {
      state.returned = true;
      for (const resolve of queue.splice(0)) resolve({ done: true, value: undefined });
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return { iterator, state, push: (value: ExecutionResult) => queue.shift()?.({ done: false, value }) };
}

const args = (query: string, schema: GraphQLSchema = before): ExecutionArgs => ({ schema, document: parse(query) });
const NO_LONGER = { errors: [expect.objectContaining({ message: 'the subscription is no longer permitted for this role' })] };

describe('the subscription guard', () => {
  it('ends a waiting subscription at once when its document no longer validates, then completes', async () => {
    let schema = before;
    const guard = new SubscriptionGuard(() => schema, memoryLogger());
    const source = stream();
    const tracked = guard.track('viewer', args('subscription { ticks }'), source.iterator);
    const first = tracked.next();
    source.push({ data: { ticks: 1 } });
    expect(await first).toEqual({ done: false, value: { data: { ticks: 1 } } });
    const waiting = tracked.next();
    schema = without;
    guard.revalidate();
    expect(await waiting).toEqual({ done: false, value: NO_LONGER });
    expect(await tracked.next()).toEqual({ done: true, value: undefined });
    expect(source.state.returned).toBe(true);
    expect(guard.size).toBe(0);
  });

  it('hands the error to the next read when none is waiting, and ends on a schema without subscriptions', async () => {
    let schema = before;
    const guard = new SubscriptionGuard(() => schema, memoryLogger());
    const source = stream();
    const tracked = guard.track('viewer', args('subscription { other }'), source.iterator);
    schema = noSubscriptions;
    guard.revalidate();
    expect(await tracked.next()).toEqual({ done: false, value: NO_LONGER });
    expect(await tracked.next()).toEqual({ done: true, value: undefined });
  });

  it('keeps one that still validates, and forgets those that end or that their consumer stops', async () => {
    let schema = before;
    const guard = new SubscriptionGuard(() => schema, memoryLogger());
    const kept = stream();
    const stopped = stream();
    const trackedKept = guard.track('viewer', args('subscription { other }'), kept.iterator);
    const trackedStopped = guard.track('viewer', args('subscription { ticks }'), stopped.iterator);
    expect(guard.size).toBe(2);
    await trackedStopped.return!();
    expect(stopped.state.returned).toBe(true);
    expect(guard.size).toBe(1);
    schema = without;
    guard.revalidate();
    const next = trackedKept.next();
    kept.push({ data: { other: 2 } });
    expect(await next).toEqual({ done: false, value: { data: { other: 2 } } });
    expect(guard.size).toBe(1);
    const end = trackedKept.next();
    await kept.iterator.return!();
    expect(await end).toEqual({ done: true, value: undefined });
    expect(guard.size).toBe(0);
  });

  it('ends one whose role\'s schema cannot be had, and logs why', async () => {
    const logger = memoryLogger();
    let fail = false;
    const guard = new SubscriptionGuard(() => {
      if (fail) throw new Error('no schema');
      return before;
    }, logger);
    const tracked = guard.track('viewer', args('subscription { ticks }'), stream().iterator);
    fail = true;
    guard.revalidate();
    expect(await tracked.next()).toEqual({ done: false, value: NO_LONGER });
    expect(logger.lines).toEqual([expect.stringMatching(/^error remote schemas: a subscription of role "viewer" could not be validated again; ended: no schema/)]);
  });
});
