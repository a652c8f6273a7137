/**
 * Runs an operation under a time limit: past it, the operation's signal is aborted (its remote
 * calls with it) and the run is answered with {@link TimeLimitExceededError} at once, without
 * waiting for work that ignores the signal.
 */

/** The operation ran longer than its limit. */
export class TimeLimitExceededError extends Error {
  override readonly name = 'TimeLimitExceededError';
  readonly code = 'ERR_TIME_LIMIT_EXCEEDED';
  constructor(readonly limitMs: number) {
    super(`the operation exceeded the time limit of ${String(limitMs)} ms`);
  }
}

/**
 * `run(signal)` within `limitMs`. The signal also follows `parent` (a client that went away). The
 * timer is cleared as soon as the run settles.
 */
export async function withTimeLimit<T>(limitMs: number, run: (signal: AbortSignal) => Promise<T>, parent?: AbortSignal): Promise<T> {
  const controller = new AbortController();
  const forward = () => controller.abort(parent?.reason);
  if (parent?.aborted) forward();
  else parent?.addEventListener('abort', forward, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new TimeLimitExceededError(limitMs);
      controller.abort(error);
      reject(error);
    }, limitMs);
  });
  try {
    return await Promise.race([run(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener('abort', forward);
  }
}

/**
 * The abort signal of each operation running under a time limit, by its GraphQL context: where
 * the remotes' calls of the operation find it (the registry's `getSignal`).
 */
export class OperationSignals {
  readonly #signals = new WeakMap<object, AbortSignal>();

  set(context: unknown, signal: AbortSignal): void {
    if (typeof context === 'object' && context !== null) this.#signals.set(context, signal);
  }

  readonly of = (context: unknown): AbortSignal | undefined =>
    typeof context === 'object' && context !== null ? this.#signals.get(context) : undefined;
}
