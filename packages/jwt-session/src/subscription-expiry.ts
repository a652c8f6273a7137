/** setTimeout cannot wait longer than this; longer delays are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const EXPIRED = Symbol('expired');

/**
 * Wraps the event stream of a subscription so that it ends at `endAt` (ms since the epoch): from
 * then on the consumer gets `last()` once and then the end, and `source` is returned so whatever
 * feeds it (a pub/sub listener, a connection to a remote) is released. When `endAt` has already
 * passed, the first event is `last()`. An event `source` yields at or after `endAt` is dropped.
 *
 * The timer is unref'd (an open stream must not keep the process alive) and cleared as soon as
 * the stream ends some other way: `source` finishes or fails, or the consumer returns early.
 */
export function endStreamAt<T>(source: AsyncIterable<T>, endAt: number, last: () => T): AsyncIterableIterator<T> {
  const upstream = source[Symbol.asyncIterator]();
  // open → expired (the timer fired, `last()` not sent yet) → closed; or open → closed.
  let state: 'open' | 'expired' | 'closed' = 'open';
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake!: (value: typeof EXPIRED) => void;
  const expired = new Promise<typeof EXPIRED>((resolve) => (wake = resolve));

  function clearTimer(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  }

  function expire(): void {
    if (state !== 'open') return;
    state = 'expired';
    clearTimer();
    // Not awaited: an async generator parked in an `await` holds its return() until it wakes up,
    // and the consumer must get its last event now.
    void Promise.resolve()
      .then(() => upstream.return?.())
      .catch(() => undefined);
    wake(EXPIRED);
  }

  function arm(): void {
    timer = setTimeout(
      () => {
        timer = undefined;
        if (Date.now() < endAt) arm();
        else expire();
      },
      Math.max(0, Math.min(endAt - Date.now(), MAX_TIMER_MS)),
    );
    timer.unref?.();
  }

  function lastEvent(): IteratorResult<T> {
    state = 'closed';
    return { done: false, value: last() };
  }

  arm();
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (state === 'open' && Date.now() >= endAt) expire();
      if (state === 'expired') return lastEvent();
      if (state === 'closed') return { done: true, value: undefined };
      const pending = upstream.next();
      // Once expired, nobody awaits `pending` any more; its failure must not go unhandled.
      pending.catch(() => undefined);
      let result: IteratorResult<T> | typeof EXPIRED;
      try {
        result = await Promise.race([pending, expired]);
      } catch (error) {
        state = 'closed';
        clearTimer();
        throw error;
      }
      if (result !== EXPIRED && result.done === true) {
        state = 'closed';
        clearTimer();
        return result;
      }
      if (result === EXPIRED || Date.now() >= endAt) {
        expire();
        return lastEvent();
      }
      return result;
    },
    async return(value?: unknown) {
      const wasOpen = state === 'open';
      state = 'closed';
      clearTimer();
      if (wasOpen && upstream.return !== undefined) return upstream.return(value);
      return { done: true, value };
    },
    async throw(error?: unknown) {
      const wasOpen = state === 'open';
      state = 'closed';
      clearTimer();
      if (wasOpen && upstream.throw !== undefined) return upstream.throw(error);
      throw error;
    },
  };
}
