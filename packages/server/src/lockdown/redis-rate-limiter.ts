/**
 * Rate limits shared by every instance through Redis. Each counted request is one atomic round
 * trip: a Lua script (sent once, then called by its SHA1 through ioredis' `defineCommand`) keeps
 * one sorted set per key holding the requests of the last minute, scored by Redis' own clock (so
 * instances with skewed clocks agree): it drops the entries older than a minute, counts the rest,
 * and adds this request only when it fits. Each key expires a minute after its last request.
 *
 * When Redis cannot be reached (at start, or later: a refused or lost connection, a command
 * without an answer within `commandTimeoutMs`), requests are counted by this instance alone,
 * `isHealthy()` is `false` and a warning is logged; ioredis reconnects by itself (every 2 s at
 * most) and a timed-out but connected Redis is probed every second, so counting is shared again
 * within seconds of Redis answering.
 */
import { randomBytes } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import { createLocalRateLimiter, RATE_WINDOW_MS, type LocalRateLimiter, type RateDecision, type RateLimiter } from './rate-limiter.js';

const SLIDING_WINDOW = `
if redis.replicate_commands then redis.replicate_commands() end
local key = KEYS[1]
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < max then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
  return {1, count + 1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, count, tonumber(oldest[2]) + window - now}
`;

export interface RedisRateLimiterOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  url: string;
  /** Prefix of every key (one per deployment sharing a Redis). @default 'svc-graphql:rate:' */
  keyPrefix?: string;
  /** Warnings when Redis becomes unreachable, information when it is back. */
  logger?: { info(...args: unknown[]): void; warn(...args: unknown[]): void; error(...args: unknown[]): void };
  /** How long a connection attempt may take. @default 2000 */
  connectTimeoutMs?: number;
  /** How long a counted request waits for Redis before it is counted locally. @default 1000 */
  commandTimeoutMs?: number;
  /** How often a connected Redis that stopped answering is probed. @default 1000 */
  probeIntervalMs?: number;
  /** The counter used while Redis is unreachable. @default a new local counter */
  local?: LocalRateLimiter;
}

export interface RedisRateLimiter extends RateLimiter {
  /** `connecting` until the first connection (counted locally, not yet a warning), then `ready` or `unreachable`. */
  readonly state: 'connecting' | 'ready' | 'unreachable';
}

type SlidingWindow = (key: string, max: number, window: number, member: string) => Promise<[number, number, number]>;

/** The URL without its password, for logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured Redis URL';
  }
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  const keyPrefix = options.keyPrefix ?? 'svc-graphql:rate:';
  const logger = options.logger ?? console;
  const connectTimeout = options.connectTimeoutMs ?? 2000;
  const probeIntervalMs = options.probeIntervalMs ?? 1000;
  const local = options.local ?? createLocalRateLimiter();
  const where = redactRedisUrl(options.url);
  // Members of the sorted sets must be distinct across instances and requests.
  const instance = randomBytes(6).toString('base64url');
  let sequence = 0;
  let state: RedisRateLimiter['state'] = 'connecting';
  let disposed = false;
  let probe: ReturnType<typeof setInterval> | undefined;

  const redis = new Redis(options.url, {
    connectTimeout,
    commandTimeout: options.commandTimeoutMs ?? 1000,
    // A command while disconnected fails at once (counted locally) instead of waiting in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // The counts of requests read in one turn of the event loop leave in one write (ioredis sends
    // them together at setImmediate): each is still one script call, answered on its own.
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(200 * attempt, 2000),
  });
  redis.defineCommand('svcSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
  const slidingWindow = (redis as unknown as { svcSlidingWindow: SlidingWindow }).svcSlidingWindow.bind(redis);

  function stopProbe(): void {
    if (probe !== undefined) clearInterval(probe);
    probe = undefined;
  }

  function markReady(): void {
    stopProbe();
    if (state === 'unreachable') logger.info(`rate limit store ${where} is reachable again: requests are counted by every instance together`);
    state = 'ready';
  }

  function markUnreachable(reason: unknown): void {
    if (disposed) return;
    if (state !== 'unreachable') {
      const message = reason instanceof Error ? reason.message : String(reason);
      logger.warn(`rate limit store ${where} is unreachable (${message}): requests are counted by this instance alone until it answers`);
    }
    state = 'unreachable';
    // A connection that is up but does not answer (a paused Redis) is not reconnected by ioredis: ask it.
    if (probe === undefined && redis.status === 'ready') {
      probe = setInterval(() => {
        redis.ping().then(markReady, () => undefined);
      }, probeIntervalMs);
      probe.unref();
    }
  }

  redis.on('ready', markReady);
  redis.on('error', markUnreachable);
  redis.on('close', () => {
    stopProbe();
    if (state === 'ready') markUnreachable(new Error('connection closed'));
  });
  // Not connected within the connect timeout at start: say so (ioredis keeps trying).
  const startTimer = setTimeout(() => {
    if (state === 'connecting') markUnreachable(new Error(`no connection within ${String(connectTimeout)} ms`));
  }, connectTimeout + 100);
  startTimer.unref();

  async function hit(key: string, maxPerMinute: number): Promise<RateDecision> {
    if (state !== 'ready') return local.hitNow(key, maxPerMinute);
    sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
    try {
      const [allowed, count, retryMs] = await slidingWindow(keyPrefix + key, maxPerMinute, RATE_WINDOW_MS, `${instance}:${String(sequence)}`);
      return { allowed: allowed === 1, count, retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryMs / 1000)) };
    } catch (error) {
      // Redis answered, but with an error (a key of another type under our prefix): a fault to
      // fix, not an outage. Counted locally meanwhile.
      if (error instanceof (ReplyError as new () => Error)) logger.error(`rate limit store ${where} refused the count:`, error);
      else markUnreachable(error);
      return local.hitNow(key, maxPerMinute);
    }
  }

  return {
    hit,
    get state() {
      return state;
    },
    isHealthy: () => state !== 'unreachable',
    dispose: async () => {
      disposed = true;
      clearTimeout(startTimer);
      stopProbe();
      redis.disconnect();
      await local.dispose();
    },
  };
}
