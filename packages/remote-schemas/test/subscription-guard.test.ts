import { describe, expect, it } from 'vitest';
import { buildSchema, parse, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { SubscriptionGuard } from '../src/permissions/subscription-guard.js';
import { isPushable, type PushableStream } from '../src/subscriptions.js';
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

/** A stream that pushes to its listener, as the remote-schemas subscriber does. */
function pushing() {
  const state = { returned: false, listener: undefined as ((step: IteratorResult<ExecutionResult>) => void) | undefined };
  const end = () => {
    const listener = state.listener;
    state.listener = undefined;
    listener?.({ done: true, value: undefined });
  };
  const iterator: PushableStream<ExecutionResult> = {
    next: () => Promise.reject(new Error('read while listened to')),
    return: async () => {
      state.returned = true;
      end();
      return { done: true, value: undefined };
    },
    listen: (listener) => {
      state.listener = listener;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return { iterator, state, push: (value: ExecutionResult) => state.listener?.({ done: false, value }), end };
}

describe('the subscription guard over a stream that pushes', () => {
  const listenTo = (tracked: AsyncIterableIterator<ExecutionResult>) => {
    if (!isPushable(tracked)) throw new Error('expected the guarded stream to push');
    const steps: Array<IteratorResult<ExecutionResult>> = [];
    tracked.listen((step) => steps.push(step));
    return steps;
  };

  it('pushes as well: every result, then the end once, and forgets the subscription', () => {
    const guard = new SubscriptionGuard(() => before, memoryLogger());
    const source = pushing();
    const steps = listenTo(guard.track('viewer', args('subscription { ticks }'), source.iterator));
    source.push({ data: { ticks: 1 } });
    source.push({ data: { ticks: 2 } });
    source.end();
    source.end();
    expect(steps).toEqual([
      { done: false, value: { data: { ticks: 1 } } },
      { done: false, value: { data: { ticks: 2 } } },
      { done: true, value: undefined },
    ]);
    expect(guard.size).toBe(0);
  });

  it('hands a listener the revoking error and the end, and nothing the inner stream sends after', () => {
    let schema = before;
    const guard = new SubscriptionGuard(() => schema, memoryLogger());
    const source = pushing();
    const steps = listenTo(guard.track('viewer', args('subscription { ticks }'), source.iterator));
    source.push({ data: { ticks: 1 } });
    schema = without;
    guard.revalidate();
    source.push({ data: { ticks: 2 } });
    expect(steps).toEqual([{ done: false, value: { data: { ticks: 1 } } }, { done: false, value: NO_LONGER }, { done: true, value: undefined }]);
    expect(source.state.returned).toBe(true);
    expect(guard.size).toBe(0);
  });

  it('revoked before anyone listened: the first listener gets the error and the end', () => {
    let schema = before;
    const guard = new SubscriptionGuard(() => schema, memoryLogger());
    const source = pushing();
    const tracked = guard.track('viewer', args('subscription { ticks }'), source.iterator);
    schema = without;
    guard.revalidate();
    expect(listenTo(tracked)).toEqual([{ done: false, value: NO_LONGER }, { done: true, value: undefined }]);
  });

  it('stopped by its consumer: the listener gets the end once', async () => {
    const guard = new SubscriptionGuard(() => before, memoryLogger());
    const source = pushing();
    const tracked = guard.track('viewer', args('subscription { ticks }'), source.iterator);
    const steps = listenTo(tracked);
    await tracked.return!();
    expect(steps).toEqual([{ done: true, value: undefined }]);
    expect(source.state.returned).toBe(true);
    expect(guard.size).toBe(0);
  });

  it('does not push when the inner stream cannot', () => {
    const guard = new SubscriptionGuard(() => before, memoryLogger());
    expect(isPushable(guard.track('viewer', args('subscription { ticks }'), stream().iterator))).toBe(false);
  });
});
