// `pnpm bench lockdown`: the production lock-down through the real server (c, lib/lockdown-server.ts:
// allow list on with 10,000 documents, rate limit counted alone or through Redis, against nothing
// on), and its building blocks measured on their own in this process (a, b).
//
// (a) The allow list: a table of 10,000 allowed documents. Per request, the cost of finding the
//     request's document in it (its key computed once per document object, as with Yoga's parse
//     cache) against no check at all; also the cost when every request brings a new document object
//     (a parse-cache miss: canonical text and hash computed again), and the time to build the table.
// (b) The rate limiter: one counted request through Redis (the requests of one event-loop turn in
//     one script call, a real redis-server started by this benchmark) against the local counter and against no counting, sequentially
//     (the round-trip latency) and 50 at a time (throughput), CPU per request of this process.
//
// (c) Through the server: see lib/lockdown-server.ts.
//
// Cases are interleaved over rounds; figures are medians. Every answer is checked.
import { parse, type DocumentNode } from 'graphql';
import { createAllowlistTable } from '../packages/server/src/lockdown/allowlist.js';
import { createDocumentFactsCache } from '../packages/server/src/lockdown/document-facts.js';
import { createLocalRateLimiter, type RateLimiter } from '../packages/server/src/lockdown/rate-limiter.js';
import { createRedisRateLimiter } from '../packages/server/src/lockdown/redis-rate-limiter.js';
import { createTestRedis } from '../packages/server/test/utils/redis-server.js';
import { readConfig } from './lib/config.js';
import { serverPart } from './lib/lockdown-server.js';
import { header, progress } from './lib/report.js';
import { formatTable, median, round } from './lib/table.js';

const config = readConfig();
const ALLOWED = 10_000;
/** Requests per measured batch of (a); batches are repeated for BENCH_DURATION seconds per case. */
const BATCH = 10_000;

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

function document(index: number): string {
  return `query Q${String(index)}($id: ID!) { item(id: $id) { id name n${String(index)} owner { id email } } }`;
}

// ---------------------------------------------------------------------------------------------
// (a) The allow list

interface Sample {
  /** CPU microseconds per request. */
  cpu: number;
  /** Requests per second of wall time. */
  rps: number;
}

function allowlistPart(): string {
  const queries = Array.from({ length: ALLOWED }, (_, index) => ({ name: `q${String(index)}`, query: document(index) }));
  const metadata = { query_collections: [{ name: 'app', definition: { queries } }], allowlist: [{ collection: 'app' }] };
  let started = performance.now();
  const table = createAllowlistTable(metadata);
  const buildMs = performance.now() - started;
  started = performance.now();
  createAllowlistTable({ ...metadata, allowlist: [{ collection: 'app', scope: { global: false, roles: ['user'] } }] }, table);
  const rebuildMs = performance.now() - started;
  if (table.size !== ALLOWED) throw new Error(`the table holds ${String(table.size)} documents, expected ${String(ALLOWED)}`);

  // The documents requests send: 100 distinct texts (one in ten not allowed), parsed once as Yoga's cache would.
  const texts = Array.from({ length: 100 }, (_, i) => (i % 10 === 9 ? document(i).replace('name', 'secret') : document(i * 97)));
  const parsed = texts.map((text) => parse(text));
  const expected = texts.map((_, i) => i % 10 !== 9);
  const facts = createDocumentFactsCache();
  let failures = 0;

  const cases: Record<string, (i: number) => boolean> = {
    'allow list off': (i) => {
      // The same work as a request without the check: find its document.
      return (parsed[i % 100] as DocumentNode) !== undefined;
    },
    'on, document seen before': (i) => table.allows(facts(parsed[i % 100] as DocumentNode).allowlistKey, 'user'),
    'on, new document object each time': (i) => table.allows(facts(parse(texts[i % 100] as string)).allowlistKey, 'user'),
    'parse only (what the miss above includes)': (i) => parse(texts[i % 100] as string) !== undefined,
  };
  const samples = new Map<string, Sample[]>(Object.keys(cases).map((name) => [name, []]));
  for (let roundIndex = 0; roundIndex < config.rounds; roundIndex++) {
    for (const [name, run] of Object.entries(cases)) {
      const deadline = performance.now() + (config.duration * 1000) / 4;
      let requests = 0;
      const cpuStart = cpuMicros();
      const wallStart = performance.now();
      do {
        for (let i = 0; i < BATCH; i++) {
          const allowed = run(i);
          // Off and parse-only answer true for all; the checks must answer as the table says.
          if (name.startsWith('on') && allowed !== expected[i % 100]) failures += 1;
        }
        requests += BATCH;
      } while (performance.now() < deadline);
      samples.get(name)?.push({ cpu: (cpuMicros() - cpuStart) / requests, rps: requests / ((performance.now() - wallStart) / 1000) });
    }
    progress(`allow list: round ${String(roundIndex + 1)} of ${String(config.rounds)} done`);
  }
  if (failures > 0) throw new Error(`${String(failures)} allow-list answers differed from the table`);
  const off = median((samples.get('allow list off') ?? []).map((s) => s.cpu));
  const rows = [...samples].map(([name, list]) => {
    const cpu = median(list.map((s) => s.cpu));
    return [name, round(cpu, 3), round(median(list.map((s) => s.rps)) / 1e6, 2), round(cpu - off, 3)];
  });
  return [
    `### (a) Allow list of ${String(ALLOWED)} documents (in process, per request)`,
    '',
    formatTable(['case', 'CPU us/request', 'M requests/s', 'us over off'], rows),
    '',
    `Table of ${String(ALLOWED)} documents built in ${String(round(buildMs, 1))} ms; rebuilt after a scope change in ${String(round(rebuildMs, 1))} ms (keys reused). Every answer checked (${String(failures)} wrong).`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// (b) The rate limiter

async function measureLimiter(limiter: RateLimiter | undefined, concurrency: number, seconds: number): Promise<Sample & { refused: number }> {
  const deadline = performance.now() + seconds * 1000;
  let requests = 0;
  let refused = 0;
  const cpuStart = cpuMicros();
  const wallStart = performance.now();
  let key = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      // 1,000 clients, each far below its limit: every request must be allowed.
      const decision = limiter === undefined ? { allowed: true } : await limiter.hit(`["user","ip","10.0.${String(key++ % 1000)}"]`, 1_000_000);
      if (!decision.allowed) refused += 1;
      requests += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { cpu: (cpuMicros() - cpuStart) / requests, rps: requests / ((performance.now() - wallStart) / 1000), refused };
}

async function rateLimitPart(): Promise<string> {
  const redis = await createTestRedis();
  await redis.start();
  const shared = createRedisRateLimiter({ url: redis.url, keyPrefix: `bench-${String(process.pid)}:`, logger: console });
  const local = createLocalRateLimiter();
  try {
    for (let i = 0; i < 100 && shared.state !== 'ready'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    if (shared.state !== 'ready') throw new Error('Redis did not become ready');
    const cases: Array<[string, RateLimiter | undefined]> = [
      ['no rate limit', undefined],
      ['local counter', local],
      ['Redis (script calls batched per event-loop turn)', shared],
    ];
    const rows: Array<Array<string | number>> = [];
    for (const concurrency of [1, 50]) {
      const samples = new Map<string, Sample[]>(cases.map(([name]) => [name, []]));
      for (let roundIndex = 0; roundIndex < config.rounds; roundIndex++) {
        for (const [name, limiter] of cases) {
          const sample = await measureLimiter(limiter, concurrency, config.duration / 4);
          if (sample.refused > 0) throw new Error(`${name}: ${String(sample.refused)} requests refused below their limit`);
          samples.get(name)?.push(sample);
        }
      }
      for (const [name, list] of samples) {
        const rps = median(list.map((s) => s.rps));
        rows.push([`${name}, ${String(concurrency)} at a time`, round(median(list.map((s) => s.cpu)), 2), Math.round(rps), round(1e6 / rps * concurrency, 1)]);
      }
      progress(`rate limit: ${String(concurrency)} at a time done`);
    }
    if (!shared.isHealthy()) throw new Error('Redis became unreachable during the run');
    return [
      '### (b) Rate limit: one counted request (in process, this process\'s CPU)',
      '',
      formatTable(['case', 'CPU us/request', 'requests/s', 'latency us'], rows),
      '',
      'Redis runs beside this process on the same machine (its own CPU is not in the CPU column). Every decision checked (all allowed).',
    ].join('\n');
  } finally {
    await shared.dispose();
    await local.dispose();
    await redis.kill();
  }
}

console.log(
  header(
    'lockdown: allow list and rate limits through the server, and their building blocks',
    config,
    '(c) real HTTP load on svc-graphql child processes, cases interleaved per round, then alternating windows (the allow list against another process with nothing on, each rate limit against its own process with the limit removed); ' +
      '(a, b) in this process, no HTTP; medians; CPU from process.cpuUsage().',
  ),
);
console.log('');
console.log(await serverPart(config));
console.log('');
console.log(allowlistPart());
console.log('');
console.log(await rateLimitPart());
