/**
 * Rate limits over a sliding minute: the interface both counters share, the key a request is
 * counted under, and the counter of one instance (every request of the last minute remembered per
 * key, so the window slides exactly). The shared counter is in redis-rate-limiter.ts.
 */
import { createHash } from 'node:crypto';
import type { RoleRateLimit } from './policy.js';

/** The sliding window: one minute. */
export const RATE_WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  /** Requests of the window counted for the key, this one included when allowed. */
  count: number;
  /** When refused: whole seconds until the oldest request of the window leaves it (at least 1). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request under `key` when fewer than `maxPerMinute` were counted in the last minute,
   * and answers whether it may run. A refused request is not counted. Never rejects. A counter
   * that decides in this thread answers at once, without a promise (one microtask less per request).
   */
  hit(key: string, maxPerMinute: number): RateDecision | Promise<RateDecision>;
  /** `false` while a shared store cannot be reached (requests are then counted by this instance alone). */
  isHealthy(): boolean;
  /** Stops timers and closes connections. */
  dispose(): Promise<void>;
}

/** Who a request is for its rate limit. */
export interface RateSubject {
  role: string;
  /** The client address (see client-ip.ts). */
  ip: string;
  /** Session variables, names lower-cased. */
  variables: Readonly<Record<string, string>>;
}

/** Keys longer than this are hashed, so a hostile session variable cannot make a key of megabytes. */
const MAX_PLAIN_KEY_LENGTH = 200;

/**
 * The key a request is counted under: its role, and the client IP or the values of the named
 * session variables (matched case-insensitively). A session that lacks one of them is counted
 * under its role alone.
 */
export function rateLimitKey(limit: RoleRateLimit, subject: RateSubject): string {
  const parts: string[] = [subject.role];
  const params = limit.uniqueParams;
  if (params === 'IP') {
    parts.push('ip', subject.ip);
  } else if (params !== undefined && params.length > 0) {
    const values: string[] = [];
    for (const name of params) {
      const found = Object.hasOwn(subject.variables, name) ? subject.variables[name] : undefined;
      if (found === undefined) break;
      values.push(found);
    }
    if (values.length === params.length) parts.push('vars', ...params.flatMap((name, index) => [name, values[index] as string]));
  }
  const plain = JSON.stringify(parts);
  return plain.length <= MAX_PLAIN_KEY_LENGTH ? plain : `#${createHash('sha256').update(plain).digest('base64url')}`;
}

function retryAfter(oldest: number, now: number): number {
  return Math.max(1, Math.ceil((oldest + RATE_WINDOW_MS - now) / 1000));
}

/** The times of one key's requests of the last minute, oldest first, from `head` on. */
interface Window {
  times: number[];
  head: number;
}

export interface LocalRateLimiterOptions {
  /** The clock. @default Date.now */
  now?: () => number;
  /**
   * Keys kept at most; past it, keys whose window is empty are dropped, then the least recently
   * counted ones. @default 100000
   */
  maxKeys?: number;
}

/** A counter of this instance alone. Its decisions are synchronous. */
export interface LocalRateLimiter extends RateLimiter {
  hitNow(key: string, maxPerMinute: number): RateDecision;
  /** Keys held now (for tests and the benchmark). */
  readonly size: number;
}

export function createLocalRateLimiter(options: LocalRateLimiterOptions = {}): LocalRateLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  const windows = new Map<string, Window>();

  function sweep(at: number): void {
    for (const [key, window] of windows) {
      const last = window.times[window.times.length - 1];
      if (last === undefined || last <= at - RATE_WINDOW_MS) windows.delete(key);
    }
    // Still too many live keys: the least recently counted go (their clients start a new minute).
    for (const key of windows.keys()) {
      if (windows.size <= maxKeys) break;
      windows.delete(key);
    }
  }

  // Empty windows are dropped once a minute, so keys of clients that went away do not stay.
  const timer = setInterval(() => sweep(now()), RATE_WINDOW_MS);
  timer.unref();

  function hitNow(key: string, maxPerMinute: number): RateDecision {
    const at = now();
    let window = windows.get(key);
    if (window === undefined) {
      if (windows.size >= maxKeys) sweep(at);
      window = { times: [], head: 0 };
    } else {
      // Re-inserted: the map's order is that of the last count.
      windows.delete(key);
    }
    windows.set(key, window);
    const { times } = window;
    while (window.head < times.length && (times[window.head] as number) <= at - RATE_WINDOW_MS) window.head += 1;
    if (window.head > 1024 && window.head * 2 > times.length) {
      times.splice(0, window.head);
      window.head = 0;
    }
    const count = times.length - window.head;
    if (count >= maxPerMinute) return { allowed: false, count, retryAfterSeconds: retryAfter(times[window.head] as number, at) };
    times.push(at);
    return { allowed: true, count: count + 1, retryAfterSeconds: 0 };
  }

  return {
    hitNow,
    hit: hitNow,
    isHealthy: () => true,
    get size() {
      return windows.size;
    },
    dispose: async () => {
      clearInterval(timer);
      windows.clear();
    },
  };
}
