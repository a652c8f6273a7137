import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { createTestRedis, type TestRedis } from './utils/redis-server.js';

/**
 * Rate limits shared through a real redis-server of the test's own (two instances, one count),
 * served and counted locally while it is down, the client IP behind trusted proxies, and the time
 * limit, all through the real server.
 */

const ADMIN_SECRET = 'lockdown-redis-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-lockdown-redis-'));
let remote: RunningRemote;
let redis: TestRedis;
let client: Redis;
let databases = 0;

async function start(options: Parameters<typeof createServer>[0] = {}): Promise<SvcGraphqlServer> {
  databases++;
  return createServer({ port: 0, databaseUrl: `file:${join(dir, `metadata-${String(databases)}.json`)}`, adminSecret: ADMIN_SECRET, logger: quiet, ...options });
}

async function metadata(server: SvcGraphqlServer, type: string, args: unknown): Promise<void> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify({ type, args }),
  });
  expect(response.status, await response.text()).toBe(200);
}

async function setUp(server: SvcGraphqlServer, limits: unknown): Promise<void> {
  await metadata(server, 'add_remote_schema', { name: 'sample', definition: { url: remote.url } });
  await metadata(server, 'set_api_limits', limits);
}

async function hello(server: SvcGraphqlServer, role: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': role, ...headers },
    body: JSON.stringify({ query: '{ hello }' }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${what}`);
}

/** Waits until `server` counts `role`'s requests in Redis (its connection is ready). */
async function countingInRedis(server: SvcGraphqlServer, prefix: string, role: string): Promise<void> {
  await eventually(async () => {
    expect(await hello(server, role)).toBe(200);
    return (await client.exists(`${prefix}${JSON.stringify([role])}`)) === 1;
  }, `${server.url} counts in Redis`);
}

async function health(server: SvcGraphqlServer): Promise<string> {
  return (await fetch(`${server.url}/healthz`)).text();
}

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
  redis = await createTestRedis();
  await redis.start();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  // Its reconnection attempts while the test's Redis is down are expected.
  client.on('error', () => undefined);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.kill();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

const LIMITS = { rate_limit: { global: { max_reqs_per_min: 1000 }, per_role: { user: { max_reqs_per_min: 3 } } } };

describe('rate limits through Redis', () => {
  it('are one count for two instances sharing one Redis', async () => {
    const prefix = 'test-shared:';
    const first = await start({ rateLimitRedisUrl: redis.url, rateLimitKeyPrefix: prefix });
    const second = await start({ rateLimitRedisUrl: redis.url, rateLimitKeyPrefix: prefix });
    try {
      await setUp(first, LIMITS);
      await setUp(second, LIMITS);
      await countingInRedis(first, prefix, 'probe-1');
      await countingInRedis(second, prefix, 'probe-2');
      expect([await hello(first, 'user'), await hello(second, 'user'), await hello(first, 'user')]).toEqual([200, 200, 200]);
      expect(await hello(second, 'user')).toBe(429);
      expect(await hello(first, 'user')).toBe(429);
      expect(await client.zcard(`${prefix}${JSON.stringify(['user'])}`)).toBe(3);
      expect(await client.ttl(`${prefix}${JSON.stringify(['user'])}`)).toBeGreaterThan(0);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('count a batch refused by its size once, and answer 429 to it past the rate', async () => {
    const prefix = 'test-batch:';
    const server = await start({ rateLimitRedisUrl: redis.url, rateLimitKeyPrefix: prefix });
    try {
      await setUp(server, { ...LIMITS, batch_limit: { global: 1 } });
      await countingInRedis(server, prefix, 'probe');
      const batch = async () => {
        const response = await fetch(`${server.url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' },
          body: JSON.stringify([{ query: '{ hello }' }, { query: '{ hello }' }]),
        });
        return { status: response.status, body: (await response.json()) as { errors: Array<{ message: string }> } };
      };
      expect(await batch()).toMatchObject({ status: 200, body: { errors: [{ message: 'the batch has 2 operations, more than the limit of 1' }] } });
      expect(await client.zcard(`${prefix}${JSON.stringify(['user'])}`)).toBe(1);
      expect([await hello(server, 'user'), await hello(server, 'user'), await hello(server, 'user')]).toEqual([200, 200, 429]);
      expect(await batch()).toMatchObject({ status: 429, body: { errors: [{ message: 'rate limit exceeded' }] } });
      expect(await client.zcard(`${prefix}${JSON.stringify(['user'])}`)).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('hold per session for hundreds of sessions at once across two instances', async () => {
    const prefix = 'test-sessions:';
    const first = await start({ rateLimitRedisUrl: redis.url, rateLimitKeyPrefix: prefix });
    const second = await start({ rateLimitRedisUrl: redis.url, rateLimitKeyPrefix: prefix });
    const perUser = { rate_limit: { global: { max_reqs_per_min: 3, unique_params: ['x-svc-user-id'] } } };
    try {
      await setUp(first, perUser);
      await setUp(second, perUser);
      await countingInRedis(first, prefix, 'probe-1');
      await countingInRedis(second, prefix, 'probe-2');
      // 300 sessions, 4 operations each, all in flight together, split between the instances:
      // the counts of many sessions leave in the same script calls, and each session gets 3.
      const users = Array.from({ length: 300 }, (_, i) => `user-${String(i)}`);
      const statuses = await Promise.all(
        users.flatMap((user, u) => [0, 1, 2, 3].map((n) => hello((u + n) % 2 === 0 ? first : second, 'user', { 'x-svc-user-id': user }))),
      );
      for (let u = 0; u < users.length; u++) {
        const mine = statuses.slice(u * 4, u * 4 + 4);
        expect(mine.filter((status) => status === 200), users[u]).toHaveLength(3);
        expect(mine.filter((status) => status === 429), users[u]).toHaveLength(1);
      }
      expect(await client.zcard(`${prefix}${JSON.stringify(['user', 'vars', 'x-svc-user-id', 'user-7'])}`)).toBe(3);
    } finally {
      await first.close();
      await second.close();
    }
  }, 60_000);

  it('serve and count locally while Redis is down, warn in /healthz, and reconnect alone', async () => {
    const prefix = 'test-down:';
    const warnings: string[] = [];
    const logger = { ...quiet, warn: (...args: unknown[]) => warnings.push(args.map(String).join(' ')) };
    const server = await start({ rateLimitRedisUrl: redis.url, rateLimitKeyPrefix: prefix, logger });
    try {
      await setUp(server, LIMITS);
      await countingInRedis(server, prefix, 'probe');
      expect(await health(server)).toBe('OK');
      await redis.kill();
      await eventually(async () => (await health(server)) === 'WARN: rate limit store unreachable', 'the warning');
      expect(warnings.some((line) => line.includes('rate limit store'))).toBe(true);
      // Served, and counted by this instance alone.
      expect([await hello(server, 'user'), await hello(server, 'user'), await hello(server, 'user')]).toEqual([200, 200, 200]);
      expect(await hello(server, 'user')).toBe(429);
      await redis.start();
      await eventually(async () => (await health(server)) === 'OK', 'the reconnection');
      await countingInRedis(server, prefix, 'probe-again');
    } finally {
      await server.close();
    }
  });

  it('are counted by each instance alone without a Redis URL, as the log says at start', async () => {
    const lines: string[] = [];
    const server = await start({ logger: { ...quiet, info: (...args: unknown[]) => lines.push(args.map(String).join(' ')) } });
    try {
      expect(lines.some((line) => line.includes('rate limits are counted by each instance alone'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('the client IP and the time limit', () => {
  it('takes the N-th address from the right of X-Forwarded-For: what a client writes left of it changes nothing', async () => {
    const byIp = { rate_limit: { global: { max_reqs_per_min: 1, unique_params: 'IP' } } };
    const behindProxy = await start({ trustProxy: 1 });
    const direct = await start();
    try {
      await setUp(behindProxy, byIp);
      await setUp(direct, byIp);
      expect(await hello(behindProxy, 'user', { 'x-forwarded-for': '203.0.113.7' })).toBe(200);
      // The same client spoofing another address in front of what the proxy appended.
      expect(await hello(behindProxy, 'user', { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' })).toBe(429);
      expect(await hello(behindProxy, 'user', { 'x-forwarded-for': '203.0.113.8' })).toBe(200);
      // Trusting no proxy, the header is not read at all.
      expect(await hello(direct, 'user', { 'x-forwarded-for': '203.0.113.7' })).toBe(200);
      expect(await hello(direct, 'user', { 'x-forwarded-for': '203.0.113.8' })).toBe(429);
    } finally {
      await behindProxy.close();
      await direct.close();
    }
  });

  it('answers an operation still running after its role time limit', async () => {
    const server = await start();
    try {
      await setUp(server, { time_limit: { global: 1 } });
      const response = await fetch(`${server.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' },
        body: JSON.stringify({ query: '{ slow(ms: 4000) }' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        errors: [{ message: 'the operation exceeded the time limit of 1 seconds', extensions: { code: 'unexpected', path: '$' } }],
      });
    } finally {
      await server.close();
    }
  });

  it('abandons the remote calls of an operation out of time', async () => {
    // A remote whose `stuck` field never answers; it tells when a request it holds loses its connection.
    let abandoned!: () => void;
    const abandonedCall = new Promise<void>((resolve) => (abandoned = resolve));
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: 'type Query { stuck: String, hello: String }',
        resolvers: { Query: { stuck: () => new Promise(() => {}), hello: () => 'hi' } },
      }),
      logging: false,
    });
    const holding = createHttpServer((req, res) => {
      res.once('close', () => {
        if (!res.writableFinished) abandoned();
      });
      void yoga(req, res);
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    const server = await start();
    try {
      await metadata(server, 'add_remote_schema', {
        name: 'holding',
        definition: { url: `http://127.0.0.1:${String((holding.address() as AddressInfo).port)}/graphql`, timeout_seconds: 120 },
      });
      await metadata(server, 'set_api_limits', { time_limit: { global: 1 } });
      for (const query of ['{ stuck }', 'query Stuck { stuck hello }']) {
        const response = await fetch(`${server.url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' },
          body: JSON.stringify({ query }),
        });
        expect(await response.json()).toEqual({
          errors: [{ message: 'the operation exceeded the time limit of 1 seconds', extensions: { code: 'unexpected', path: '$' } }],
        });
      }
      // The remote's call is given up when the limit passes, not after its 120 s timeout.
      await abandonedCall;
    } finally {
      await server.close();
      holding.closeAllConnections();
      await new Promise((resolve) => holding.close(resolve));
    }
  });
});
