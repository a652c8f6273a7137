// `pnpm bench auth`: bare Yoga `{ hello }` against the same app with useJwtSession.
//
// Every server runs in its own child process; this process only generates load (autocannon) and
// checks every response. Cases are interleaved round by round so drift on a shared machine hits all
// of them alike; each figure is the median over the rounds.
import { createSecretKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { BEFORE_SUFFIX, beforeCheckout, compareTwins, twinsOf, importFrom, inRoundOrder, moduleOf } from './lib/before.js';
import { cpuMicros, startChild, type ChildServer } from './lib/child.js';
import { readConfig, warmupFor } from './lib/config.js';
import { describeFailures, graphqlData, runLoad, type LoadResult } from './lib/load.js';
import { header, progress, targets, type Target } from './lib/report.js';
import { createHelloYoga } from './lib/hello-server.js';
import { mintPool, mintUserToken } from './lib/jwt.js';
import { formatTable, median, round } from './lib/table.js';

const config = readConfig();
/** The plugin's default verified-token cache holds 10,000 entries. */
const CACHE_ENTRIES = 10_000;
/**
 * Distinct tokens minted per algorithm (BENCH_TOKENS). They are used in order and, when a run needs
 * more, from the start again: with at least 3x the cache size an LRU cache has always evicted a
 * token long before it comes round again, so every request is still a miss.
 */
const POOL = Math.max(3 * CACHE_ENTRIES, Number(process.env['BENCH_TOKENS'] ?? 40_000));

interface Algorithm {
  /** `type` in the JWT configuration. */
  readonly type: 'HS256' | 'RS256' | 'ES256' | 'Ed25519';
  /** `alg` in the JWS header. */
  readonly alg: string;
  readonly signingKey: KeyObject;
  /** `key` in the JWT configuration. */
  readonly configKey: string;
}

function algorithms(): Algorithm[] {
  const secret = randomBytes(48).toString('base64url'); // 64 characters
  const pem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ed = generateKeyPairSync('ed25519');
  return [
    { type: 'HS256', alg: 'HS256', signingKey: createSecretKey(Buffer.from(secret, 'utf8')), configKey: secret },
    { type: 'RS256', alg: 'RS256', signingKey: rsa.privateKey, configKey: pem(rsa.publicKey) },
    { type: 'ES256', alg: 'ES256', signingKey: ec.privateKey, configKey: pem(ec.publicKey) },
    { type: 'Ed25519', alg: 'EdDSA', signingKey: ed.privateKey, configKey: pem(ed.publicKey) },
  ];
}

interface Case {
  readonly label: string;
  /** The app in-process (this checkout's, or BENCH_BEFORE's). */
  readonly createYoga: typeof createHelloYoga;
  readonly kind: 'bare' | 'hit' | 'distinct';
  readonly alg?: Algorithm['type'];
  readonly server: ChildServer;
  readonly token: (index: number) => string;
  readonly expected: string;
  /** Next unused index into the token pool (distinct cases only). */
  cursor: number;
  readonly samples: { rps: number; p50: number; p99: number; cpu: number }[];
  /** req/s of this case / req/s of bare Yoga loaded at the same time, per round. */
  readonly paired: number[];
  /** With BENCH_BEFORE: short windows alternating with the twin case (BENCH_PAIRS). */
  readonly twinWindows: { rps: number; cpu: number }[];
  failures: number;
  readonly reasons: Map<string, number>;
}

/**
 * BENCH_PAIRED=1 adds the paired phase (bare Yoga and a plugin server under load at the same time).
 * Off by default: on the 2-core machine it was no steadier than the sequential rounds and it
 * penalizes work done off the main thread (GC helpers), see bench/README.md.
 */
const PAIRED = process.env['BENCH_PAIRED'] === '1';
/** With BENCH_BEFORE: pairs of short windows per case and its twin after the rounds (BENCH_PAIRS, default 20). */
const PAIRS = process.env['BENCH_BEFORE'] ? Math.max(0, Number(process.env['BENCH_PAIRS'] ?? 20)) : 0;
const PAIR_SECONDS = Math.max(0.5, Number(process.env['BENCH_PAIR_SECONDS'] ?? 1));
/** BENCH_IN_PROCESS=0 skips the in-process phase (the apps driven through yoga.fetch, no HTTP). */
const IN_PROCESS = process.env['BENCH_IN_PROCESS'] !== '0';
/** BENCH_ONLY=RS256 (a regular expression on the algorithm) runs bare Yoga and the matching algorithms only. */
const only = new RegExp(process.env['BENCH_ONLY'] ?? '.', 'i');
/** BENCH_BEFORE: another checkout whose useJwtSession runs every plugin case too, as a twin "(before)". */
const before = beforeCheckout();
const checkouts = [
  { suffix: '', module: 'lib/hello-server.ts', createYoga: createHelloYoga },
  ...(before
    ? [
        {
          suffix: BEFORE_SUFFIX,
          module: moduleOf(before, 'lib/hello-server.ts'),
          createYoga: (await importFrom<{ createHelloYoga: typeof createHelloYoga }>(before, 'lib/hello-server.ts')).createHelloYoga,
        },
      ]
    : []),
];
const algs = algorithms().filter((a) => only.test(a.type));
progress(`minting ${POOL} distinct tokens per algorithm with jose (not measured) ...`);
const pools = new Map<Algorithm['type'], { hit: string; distinct: string[] }>();
for (const alg of algs) {
  const started = performance.now();
  const distinct = await mintPool(alg.signingKey, alg.alg, POOL);
  pools.set(alg.type, { hit: await mintUserToken(alg.signingKey, alg.alg, 'user-reused'), distinct });
  progress(`  ${alg.type}: ${POOL} tokens in ${round((performance.now() - started) / 1000, 1)} s`);
}

const servers: ChildServer[] = [];
const cases: Case[] = [];
const newCase = (c: Omit<Case, 'cursor' | 'samples' | 'paired' | 'twinWindows' | 'failures' | 'reasons'>): Case => ({
  ...c,
  cursor: 0,
  samples: [],
  paired: [],
  twinWindows: [],
  failures: 0,
  reasons: new Map(),
});
try {
  const bare = await startChild('auth-bare', 'lib/hello-server.ts', {}, config);
  servers.push(bare);
  const anyToken = [...pools.values()][0]?.hit ?? 'not-a-token';
  cases.push(newCase({ label: 'bare Yoga', kind: 'bare', createYoga: createHelloYoga, server: bare, token: () => anyToken, expected: 'world' }));
  for (const alg of algs) {
    const pool = pools.get(alg.type);
    if (!pool) throw new Error(`no tokens for ${alg.type}`);
    // With BENCH_BEFORE, each case's twin on the other checkout right after it: neighbours in time.
    const hits: Case[] = [];
    const distinct: Case[] = [];
    for (const { suffix, module, createYoga } of checkouts) {
      const label = `auth-${alg.type}${suffix === '' ? '' : '-before'}`;
      const server = await startChild(label, module, { jwt: { type: alg.type, key: alg.configKey } }, config);
      servers.push(server);
      hits.push(newCase({ label: `${alg.type} one token (hits)${suffix}`, kind: 'hit', alg: alg.type, createYoga, server, token: () => pool.hit, expected: 'hello user' }));
      distinct.push(
        newCase({
          label: `${alg.type} distinct tokens${suffix}`,
          kind: 'distinct',
          alg: alg.type,
          createYoga,
          server,
          token: (i) => pool.distinct[i % pool.distinct.length] ?? '',
          expected: 'hello user',
        }),
      );
    }
    cases.push(...hits, ...distinct);
  }

  const body = JSON.stringify({ query: '{ hello }' });
  /** Load on one case's server; its responses are checked and its failures counted on the case. */
  const loadOn = async (c: Case, duration: number, connections: number): Promise<LoadResult> => {
    const check = graphqlData((data) => (data['hello'] === c.expected ? undefined : `hello was ${JSON.stringify(data['hello'])}`));
    const res = await runLoad(
      {
        url: `${c.server.url}/graphql`,
        connections,
        duration,
        check,
        request: (i) => ({ headers: { authorization: `Bearer ${c.token(i)}` }, body }),
      },
      c.cursor,
    );
    c.cursor = res.requestsBuilt;
    c.failures += res.failures;
    for (const [reason, n] of res.reasons) c.reasons.set(reason, (c.reasons.get(reason) ?? 0) + n);
    return res;
  };

  for (let r = 1; r <= config.rounds; r++) {
    for (const c of inRoundOrder(cases, r)) {
      const warm = await loadOn(c, warmupFor(config, r), config.connections);
      const before = await c.server.stats();
      const res = await loadOn(c, config.duration, config.connections);
      const after = await c.server.stats();
      const cpu = cpuMicros(before, after) / Math.max(1, res.responses);
      c.samples.push({ rps: res.rps, p50: res.p50, p99: res.p99, cpu });
      progress(
        `[round ${r}/${config.rounds}] ${c.label}: ${Math.round(res.rps)} req/s, p99 ${res.p99} ms, ` +
          `server CPU ${round(cpu, 1)} us/req, failures ${warm.failures + res.failures}`,
      );
    }
  }

  // With BENCH_BEFORE: many short windows, each case alternating with its twin, which runs first
  // alternating too: a sharper before/after ratio than a few rounds on a busy machine.
  for (let p = 1; p <= PAIRS; p++) {
    for (const [after, twin] of twinsOf(cases)) {
      for (const c of p % 2 === 1 ? [after, twin] : [twin, after]) {
        await loadOn(c, 0.25, config.connections);
        const before = await c.server.stats();
        const res = await loadOn(c, PAIR_SECONDS, config.connections);
        const after = await c.server.stats();
        c.twinWindows.push({ rps: res.rps, cpu: cpuMicros(before, after) / Math.max(1, res.responses) });
      }
    }
    progress(`[pair ${p}/${PAIRS}] done`);
  }

  // Paired: bare Yoga and one plugin server loaded at the same time, half the connections each.
  // Both saturate and the scheduler shares the CPUs fairly, so the req/s ratio of one window is the
  // ratio of their costs per request, and whatever else the machine does hits both alike.
  const bareYoga = cases[0];
  if (PAIRED && bareYoga) {
    const half = Math.max(1, Math.round(config.connections / 2));
    for (let r = 1; r <= config.rounds; r++) {
      for (const c of cases.slice(1)) {
        await Promise.all([loadOn(bareYoga, 0.5, half), loadOn(c, 0.5, half)]);
        const [b, x] = await Promise.all([loadOn(bareYoga, config.duration, half), loadOn(c, config.duration, half)]);
        c.paired.push(x.rps / b.rps);
        progress(`[paired ${r}/${config.rounds}] ${c.label}: ${Math.round(x.rps)} vs bare ${Math.round(b.rps)} req/s`);
      }
    }
  }
} finally {
  await Promise.all(servers.map((s) => s.close()));
}

// In-process: the same apps driven through `yoga.fetch` in this process (no HTTP, no load
// generator), variants alternating every batch so that drift of the machine hits them alike.
// The CPU time per request of each variant minus bare Yoga's is the plugin's own cost.
interface InProcess {
  readonly label: string;
  readonly perRequest: number[];
}
const inProcess: InProcess[] = [];
if (IN_PROCESS) {
  const body = JSON.stringify({ query: '{ hello }' });
  const variants = cases.map((c) => {
    const alg = algs.find((a) => a.type === c.alg);
    return {
      c,
      yoga: c.createYoga(alg ? { jwt: { type: alg.type, key: alg.configKey } } : {}),
      cursor: c.cursor,
      result: { label: c.label, perRequest: [] as number[] },
    };
  });
  const BATCH = 1000;
  const CONCURRENCY = 50;
  const runBatch = async (v: (typeof variants)[number]): Promise<number> => {
    const before = process.cpuUsage();
    for (let done = 0; done < BATCH; done += CONCURRENCY) {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          const token = v.c.token(v.cursor++);
          const response = await v.yoga.fetch('http://bench.local/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body,
          });
          const reason = graphqlData((data) => (data['hello'] === v.c.expected ? undefined : `hello was ${JSON.stringify(data['hello'])}`))(
            response.status,
            await response.text(),
          );
          if (reason !== undefined) {
            v.c.failures += 1;
            v.c.reasons.set(`in-process: ${reason}`, (v.c.reasons.get(`in-process: ${reason}`) ?? 0) + 1);
          }
        }),
      );
    }
    const cpu = process.cpuUsage(before);
    return (cpu.user + cpu.system) / BATCH;
  };
  for (let i = 0; i < 3; i++) for (const v of variants) await runBatch(v); // warm-up (JIT)
  const deadline = performance.now() + config.duration * 1000 * cases.length;
  let batches = 0;
  while (performance.now() < deadline || batches < 5) {
    for (const v of variants) v.result.perRequest.push(await runBatch(v));
    batches += 1;
  }
  inProcess.push(...variants.map((v) => v.result));
  progress(`in-process: ${batches} alternating batches of ${BATCH} requests per variant`);
}

const stat = (c: Case, key: 'rps' | 'p50' | 'p99' | 'cpu'): number => median(c.samples.map((s) => s[key]));
const bareCase = cases[0];
if (!bareCase) throw new Error('no cases ran');
const bareRps = stat(bareCase, 'rps');
const bareCpu = stat(bareCase, 'cpu');
const rows = cases.map((c) => [
  c.label,
  Math.round(stat(c, 'rps')),
  `${round(stat(c, 'rps') / bareRps, 3).toFixed(3)}x`,
  stat(c, 'p50'),
  stat(c, 'p99'),
  round(stat(c, 'cpu'), 1),
  `${round(bareCpu / stat(c, 'cpu'), 3).toFixed(3)}x`,
  c.samples.map((s) => Math.round(s.rps)).join(' / '),
  // Each round's ratio against the same round's baseline: less exposed to slow drift of the machine.
  c.samples.map((s, i) => (s.rps / (bareCase.samples[i]?.rps ?? Number.NaN)).toFixed(2)).join(' / '),
  ...(PAIRED
    ? [c === bareCase ? '-' : `${median(c.paired).toFixed(3)}x`, c === bareCase ? '-' : c.paired.map((x) => x.toFixed(2)).join(' / ')]
    : []),
  c.failures,
]);

const ratioOf = (c: Case | undefined): number => (c ? stat(c, 'rps') / bareRps : Number.NaN);
const pairedOf = (c: Case | undefined): number => (c && c.paired.length > 0 ? median(c.paired) : Number.NaN);
const targetList: Target[] = [];
const judge = (name: string, c: Case | undefined, min: number): void => {
  targetList.push({ name: `${name} >= ${min}x bare (sequential)`, measured: `${ratioOf(c).toFixed(3)}x`, pass: ratioOf(c) >= min });
  if (PAIRED) targetList.push({ name: `${name} >= ${min}x bare (paired)`, measured: `${pairedOf(c).toFixed(3)}x`, pass: pairedOf(c) >= min });
};
for (const c of cases.filter((x) => x.kind === 'hit' && !x.label.endsWith(BEFORE_SUFFIX))) judge(`${c.alg} cache hits`, c, 0.97);
const rsDistinct = cases.find((c) => c.kind === 'distinct' && c.alg === 'RS256' && !c.label.endsWith(BEFORE_SUFFIX));
if (rsDistinct) judge('RS256 distinct tokens', rsDistinct, 0.85);
function inProcessTable(): string {
  const bareCost = median(inProcess[0]?.perRequest ?? []);
  const rows = inProcess.map((v) => {
    const cost = median(v.perRequest);
    const overhead = cost - bareCost;
    return [
      v.label,
      round(cost, 1),
      round(overhead, 1),
      // What the overhead means on top of an HTTP request to bare Yoga (its CPU per request above).
      `${(bareCpu / (bareCpu + overhead)).toFixed(3)}x`,
    ];
  });
  return [
    'In-process (apps driven through `yoga.fetch` in the benchmark process, no HTTP; variants alternate every ' +
      'batch of 1,000 requests, 50 at a time; CPU time per request, median over batches). Expected ratio = bare ' +
      'HTTP server CPU per request (table above) / (that + the plugin overhead measured here):',
    '',
    formatTable(['case', 'CPU us/req in-process', 'overhead us/req', 'expected HTTP ratio'], rows),
  ].join('\n');
}

const comparison = before
  ? compareTwins(
      cases,
      (c) => c.samples,
      (c) => c.twinWindows,
      0.97,
    )
  : undefined;
if (comparison) targetList.push(...comparison.targets);
const totalFailures = cases.reduce((n, c) => n + c.failures, 0);
targetList.push({ name: 'no failed responses (every response 200 with data, no errors)', measured: String(totalFailures), pass: totalFailures === 0 });

console.log(
  [
    header(
      'auth: bare Yoga vs useJwtSession',
      config,
      `each server in its own Node child process (tsx, NODE_ENV=production), autocannon in the parent; ` +
        `query \`{ hello }\` over POST /graphql with \`Authorization: Bearer <token>\` on every request (bare Yoga ignores it); ` +
        `distinct tokens from a pool of ${POOL} per algorithm minted before the run; the answer must be ` +
        `"hello user" (so the plugin authenticated it) or "world" for bare Yoga. Ratio = median req/s / median bare req/s (cases one after the other); ` +
        `CPU ratio = bare server CPU per request / this server's CPU per request; ` +
        `paired ratio = median over rounds of this case's req/s / bare Yoga's req/s while both are loaded at the same time ` +
        `(${Math.round(config.connections / 2)} connections each), which cancels most of the machine's drift.` +
        (before ? ` Cases marked "(before)" run useJwtSession of BENCH_BEFORE (${before.benchDir}), right after their twin of this checkout.` : ''),
    ),
    '',
    formatTable(
      ['case', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'server CPU us/req', 'CPU ratio', 'req/s per round', 'ratio per round', ...(PAIRED ? ['paired ratio', 'paired per round'] : []), 'failures'],
      rows,
    ),
    '',
    ...(inProcess.length > 0 ? [inProcessTable(), ''] : []),
    ...(comparison ? [comparison.table, ''] : []),
    targets(targetList),
  ].join('\n'),
);
for (const c of cases) {
  if (c.failures > 0) console.log(`\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`);
}
process.exitCode = totalFailures > 0 ? 1 : 0;
