/**
 * Rate limits over a sliding minute: the interface both counters share, the key a request is
 * counted under, and the counter of one instance (the time of every counted request of the last
 * minute remembered per key, so the window slides exactly). The shared counter is in redis-rate-limiter.ts.
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

/**
 * The times of one key's counted requests of the last minute, oldest first, in a ring: counting
 * a request writes one number and allocates nothing (the ring doubles when full, halves when
 * three quarters empty).
 */
class Window {
  times = new Float64Array(4);
  /** Index of the oldest time. */
  head = 0;
  size = 0;

  /** Forgets the times at or before `cutoff`. */
  expire(cutoff: number): void {
    const { times } = this;
    while (this.size > 0 && (times[this.head] as number) <= cutoff) {
      this.head = this.head + 1 === times.length ? 0 : this.head + 1;
      this.size -= 1;
    }
    if (times.length > 64 && this.size * 4 < times.length) this.resize(times.length / 2);
  }

  oldest(): number {
    return this.times[this.head] as number;
  }

  /** The most recent time, or `-Infinity` when empty. */
  latest(): number {
    if (this.size === 0) return -Infinity;
    return this.times[(this.head + this.size - 1) % this.times.length] as number;
  }

  push(at: number): void {
    if (this.size === this.times.length) this.resize(this.times.length * 2);
    this.times[(this.head + this.size) % this.times.length] = at;
    this.size += 1;
  }

  private resize(capacity: number): void {
    const next = new Float64Array(capacity);
    for (let i = 0; i < this.size; i++) next[i] = this.times[(this.head + i) % this.times.length] as number;
    this.times = next;
    this.head = 0;
  }
}

export interface LocalRateLimiterOptions {
  /** The clock. @default Date.now */
  now?: () => number;
  /**
   * Keys kept at most; past it, keys whose window is empty are dropped, then the tenth of the
   * keys counted least recently. @default 100000
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
    for (const [key, window] of windows) if (window.latest() <= at - RATE_WINDOW_MS) windows.delete(key);
    if (windows.size < maxKeys) return;
    // Still full of live keys: the tenth counted least recently go (their clients start a new
    // minute). Done in bulk, so a flood of new keys costs a sort per tenth of the table.
    const latest = [...windows.values()].map((window) => window.latest()).sort((a, b) => a - b);
    const cutoff = latest[Math.max(0, Math.floor(maxKeys / 10) - 1)] as number;
    for (const [key, window] of windows) if (window.latest() <= cutoff) windows.delete(key);
  }

  // Empty windows are dropped once a minute, so keys of clients that went away do not stay.
  const timer = setInterval(() => sweep(now()), RATE_WINDOW_MS);
  timer.unref();

  function hitNow(key: string, maxPerMinute: number): RateDecision {
    const at = now();
    let window = windows.get(key);
    if (window === undefined) {
      if (windows.size >= maxKeys) sweep(at);
      window = new Window();
      windows.set(key, window);
    } else {
      window.expire(at - RATE_WINDOW_MS);
    }
    const count = window.size;
    if (count >= maxPerMinute) return { allowed: false, count, retryAfterSeconds: retryAfter(window.oldest(), at) };
    window.push(at);
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
