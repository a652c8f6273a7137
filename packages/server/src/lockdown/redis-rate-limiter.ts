/**
 * Rate limits shared by every instance through Redis. Each counted request is one atomic round
 * trip: a Lua script (sent once, then called by its SHA1 through ioredis' `defineCommand`) keeps
 * one sorted set per key holding the requests of the last minute, scored by Redis' own clock (so
 * instances with skewed clocks agree): it drops the entries older than a minute, counts the rest,
 * and adds a request only when it fits. Each key expires a minute after its last counted request.
 *
 * The requests that arrive in one turn of the event loop are counted by one call of the script
 * (at most {@link MAX_BATCH} at a time), in the order they arrived: every request still waits for
 * exactly one round trip, and Redis and this process parse one command instead of one per request.
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

/** Requests counted by one call of the script at most (a bound on the time Redis spends in one call). */
export const MAX_BATCH = 256;

// KEYS: one per request, in arrival order (a key may repeat). ARGV[1]: the window in ms; ARGV[2]:
// the prefix of this call's members; ARGV[2 + i]: the limit of request i. Answers three numbers
// per request: allowed (1 or 0), the count, and when refused the ms until the oldest entry leaves.
const SLIDING_WINDOW = `
if redis.replicate_commands then redis.replicate_commands() end
local window = tonumber(ARGV[1])
local member = ARGV[2]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local counts = {}
local added = {}
local result = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local max = tonumber(ARGV[i + 2])
  local count = counts[key]
  if count == nil then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    count = redis.call('ZCARD', key)
  end
  if count < max then
    redis.call('ZADD', key, now, member .. i)
    count = count + 1
    added[key] = true
    result[#result + 1] = 1
    result[#result + 1] = count
    result[#result + 1] = 0
  else
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    result[#result + 1] = 0
    result[#result + 1] = count
    result[#result + 1] = tonumber(oldest[2]) + window - now
  end
  counts[key] = count
end
for key in pairs(added) do redis.call('PEXPIRE', key, window) end
return result
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

/** The script: the number of keys, the keys, then its arguments. */
type SlidingWindow = (...args: (string | number)[]) => Promise<number[]>;

/** A request waiting for the next call of the script. */
interface Waiting {
  key: string;
  maxPerMinute: number;
  resolve(decision: RateDecision): void;
}

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
  const commandTimeout = options.commandTimeoutMs ?? 1000;
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
    commandTimeout,
    // A command while disconnected fails at once (counted locally) instead of waiting in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // The counts of requests read in one turn of the event loop leave in one write (ioredis sends
    // them together at setImmediate): each is still one script call, answered on its own.
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(200 * attempt, 2000),
  });
  // The number of keys changes from call to call: it is the script's first argument.
  redis.defineCommand('svcSlidingWindow', { lua: SLIDING_WINDOW });
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

  let waiting: Waiting[] = [];
  let flushScheduled = false;

  /** Counts `batch` by one call of the script; on any failure, each of them locally. */
  async function count(batch: readonly Waiting[]): Promise<void> {
    sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
    const args: (string | number)[] = [batch.length];
    for (const request of batch) args.push(keyPrefix + request.key);
    args.push(RATE_WINDOW_MS, `${instance}:${String(sequence)}:`);
    for (const request of batch) args.push(request.maxPerMinute);
    let reply: number[];
    // ioredis times a command from when it is written, and a command waiting behind a pipeline that
    // Redis does not answer is written late: the deadline runs from here, as the request waits.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    try {
      reply = await Promise.race([
        slidingWindow(...args),
        new Promise<never>((_, reject) => {
          deadline = setTimeout(() => reject(new Error(`no answer within ${String(commandTimeout)} ms`)), commandTimeout);
        }),
      ]);
    } catch (error) {
      // Redis answered, but with an error (a key of another type under our prefix): a fault to
      // fix, not an outage. Counted locally meanwhile.
      if (error instanceof (ReplyError as new () => Error)) logger.error(`rate limit store ${where} refused the count:`, error);
      else markUnreachable(error);
      for (const request of batch) request.resolve(local.hitNow(request.key, request.maxPerMinute));
      return;
    } finally {
      clearTimeout(deadline);
    }
    batch.forEach((request, index) => {
      const allowed = reply[index * 3] === 1;
      const retryMs = reply[index * 3 + 2] ?? 0;
      request.resolve({ allowed, count: reply[index * 3 + 1] ?? 0, retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(retryMs / 1000)) });
    });
  }

  function flush(): void {
    flushScheduled = false;
    const all = waiting;
    waiting = [];
    for (let start = 0; start < all.length; start += MAX_BATCH) void count(all.slice(start, start + MAX_BATCH));
  }

  function hit(key: string, maxPerMinute: number): RateDecision | Promise<RateDecision> {
    if (state !== 'ready') return local.hitNow(key, maxPerMinute);
    return new Promise((resolve) => {
      waiting.push({ key, maxPerMinute, resolve });
      if (!flushScheduled) {
        flushScheduled = true;
        // After the requests read in this turn of the event loop.
        setImmediate(flush);
      }
    });
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
