// `pnpm bench swap`: steady load through svc-graphql while remote schemas of 100, 1,000 and 5,000
// types are added and removed with the metadata API.
//
// Child processes: svc-graphql (embedded store, JWT mode), the sample remote that the steady load
// queries through svc-graphql, and one generated remote per size. Per size: adds and removes without
// load (time to add, memory), then per round a steady phase and a swap phase of equal length under
// the same load, where the generated remote is added and removed back to back.
import { mkdtempSync, rmSync } from 'node:fs';
import { getIntrospectionQuery } from 'graphql';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, type ChildServer } from './lib/child.js';
import type { ProcessStats } from './lib/child-protocol.js';
import { readConfig } from './lib/config.js';
import { ADMIN_SECRET, startSampleGateway } from './lib/gateway.js';
import { describeFailures, graphqlData, runLoad, type LoadResult, type RequestSpec } from './lib/load.js';
import { metadata, type MetadataCall } from './lib/metadata.js';
import { header, mib, progress, targets, type Target } from './lib/report.js';
import { formatTable, median, round } from './lib/table.js';

const config = readConfig();
const SIZES = (process.env['BENCH_SWAP_SIZES'] ?? '100,1000,5000').split(',').map((s) => Number(s.trim()));
/** Add/remove pairs without load per size, for the time-to-add and memory figures. */
const IDLE_CYCLES = 3;
/** At least this many add/remove pairs per swap phase, even when they outlast BENCH_DURATION. */
const MIN_SWAPS = 2;

const QUERY = 'query Steady($id: ID!, $name: String) { hello(name: $name) user(id: $id) { id name } }';
const check = graphqlData((data) => {
  const hello = data['hello'];
  if (typeof hello !== 'string' || !hello.startsWith('Hello, n')) return `hello was ${JSON.stringify(hello)}`;
  return (data['user'] as { id?: unknown } | null)?.id === undefined ? 'no user' : undefined;
});

interface SizeResult {
  readonly types: number;
  readonly idleAdd: number[];
  readonly idleRemove: number[];
  /** The remote answering an introspection query alone (what every add waits for at least). */
  readonly introspection: number[];
  /** Heap after GC with the remote added minus before it, per idle cycle (bytes). */
  readonly heapGrowth: number[];
  readonly steady: LoadResult[];
  readonly swapping: LoadResult[];
  readonly loadedAdd: number[];
  readonly loadedRemove: number[];
  swaps: number;
  peakRss: number;
  peakHeap: number;
  metadataFailures: number;
  readonly reasons: Map<string, number>;
}

async function timeIntrospection(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  const body = (await response.json()) as { data?: unknown };
  if (!response.ok || !body.data) throw new Error(`introspection of ${url} failed: HTTP ${response.status}`);
  return performance.now() - started;
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-swap-'));
const children: ChildServer[] = [];
const results: SizeResult[] = [];
let memoryAtStart: ProcessStats | undefined;
let memoryAtEnd: ProcessStats | undefined;
try {
  const { svc, jwt } = await startSampleGateway('swap', dir, config, children);

  let cursor = 0;
  const request = (i: number): RequestSpec => ({
    headers: { authorization: `Bearer ${jwt.token}` },
    body: JSON.stringify({ query: QUERY, variables: { id: String((i % 3) + 1), name: `n${i}` } }),
  });
  const load = async (duration: number, until?: Promise<unknown>): Promise<LoadResult> => {
    const res = await runLoad(
      { url: `${svc.url}/v1/graphql`, connections: config.connections, duration, check, request, ...(until ? { until } : {}) },
      cursor,
    );
    cursor = res.requestsBuilt;
    return res;
  };

  // Warm svc-graphql up once before the first figures are taken.
  const warm = await load(config.warmup);
  if (warm.failures > 0) throw new Error(`steady load fails before any swap:\n${describeFailures(warm.reasons)}`);
  memoryAtStart = await svc.stats(true);

  for (const types of SIZES) {
    const remote = await startChild(`swap-remote-${types}`, 'lib/remote-server.ts', { kind: 'generated', types, prefix: `G${types}_` }, config);
    children.push(remote);
    const name = `generated_${types}`;
    const add = () => metadata(svc.url, ADMIN_SECRET, 'add_remote_schema', { name, definition: { url: remote.url } });
    const remove = () => metadata(svc.url, ADMIN_SECRET, 'remove_remote_schema', { name });
    const result: SizeResult = {
      types,
      idleAdd: [],
      idleRemove: [],
      introspection: [],
      heapGrowth: [],
      steady: [],
      swapping: [],
      loadedAdd: [],
      loadedRemove: [],
      swaps: 0,
      peakRss: 0,
      peakHeap: 0,
      metadataFailures: 0,
      reasons: new Map(),
    };
    results.push(result);
    const noteMetadata = (call: MetadataCall, into: number[]): void => {
      if (call.ok) into.push(call.ms);
      else {
        result.metadataFailures += 1;
        const reason = `metadata HTTP ${call.status}: ${call.body.slice(0, 200)}`;
        result.reasons.set(reason, (result.reasons.get(reason) ?? 0) + 1);
      }
    };

    for (let i = 0; i < IDLE_CYCLES; i++) {
      result.introspection.push(await timeIntrospection(remote.url));
      const before = await svc.stats(true);
      noteMetadata(await add(), result.idleAdd);
      const withRemote = await svc.stats(true);
      noteMetadata(await remove(), result.idleRemove);
      result.heapGrowth.push(withRemote.heapUsed - before.heapUsed);
    }
    progress(`${types} types, no load: add ${result.idleAdd.map((ms) => Math.round(ms)).join(' / ')} ms`);

    for (let r = 1; r <= config.rounds; r++) {
      const steady = await load(config.duration);
      result.steady.push(steady);

      let swapping = true;
      const sampler = setInterval(() => {
        void svc.stats().then((s) => {
          result.peakRss = Math.max(result.peakRss, s.rss);
          result.peakHeap = Math.max(result.peakHeap, s.heapUsed);
        });
      }, 200);
      const swaps = (async () => {
        const started = performance.now();
        let done = 0;
        while (done < MIN_SWAPS || performance.now() - started < config.duration * 1000) {
          noteMetadata(await add(), result.loadedAdd);
          noteMetadata(await remove(), result.loadedRemove);
          done += 1;
        }
        return done;
      })();
      // The upper bound only matters if a swap hangs; the load stops when the swaps are done.
      const during = await load(config.duration * 20 + 120, swaps.finally(() => (swapping = false)));
      clearInterval(sampler);
      if (swapping) throw new Error('load ended before the swaps did');
      result.swaps += await swaps;
      result.swapping.push(during);
      progress(
        `[round ${r}/${config.rounds}] ${types} types: steady p99 ${steady.p99} ms (${Math.round(steady.rps)} req/s), ` +
          `during swaps p99 ${during.p99} ms (${Math.round(during.rps)} req/s), failures ${steady.failures + during.failures}`,
      );
    }
    await remote.close();
    children.splice(children.indexOf(remote), 1);
  }
  memoryAtEnd = await svc.stats(true);
} finally {
  await Promise.all(children.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
}

const med = (values: readonly number[]): number => median(values);
const failuresOf = (r: SizeResult): number =>
  [...r.steady, ...r.swapping].reduce((n, l) => n + l.failures, 0) + r.metadataFailures;
const p99Ratio = (r: SizeResult): number => med(r.swapping.map((l) => l.p99)) / med(r.steady.map((l) => l.p99));

/** Cost of each extra type between this size and the previous one: the fixed cost of a call cancels out. */
const marginal = (r: SizeResult, i: number): string => {
  const previous = results[i - 1];
  if (!previous) return '-';
  return round((med(r.idleAdd) - med(previous.idleAdd)) / (r.types - previous.types), 3).toFixed(3);
};
const addRows = results.map((r, i) => [
  r.types,
  round(med(r.idleAdd), 1),
  round(med(r.idleAdd) / r.types, 3),
  marginal(r, i),
  round(med(r.introspection), 1),
  round(med(r.idleRemove), 1),
  round(med(r.loadedAdd), 1),
  round(med(r.loadedAdd) / r.types, 3),
  round(med(r.loadedRemove), 1),
  mib(med(r.heapGrowth)),
]);
const loadRows = results.map((r) => [
  r.types,
  Math.round(med(r.steady.map((l) => l.rps))),
  med(r.steady.map((l) => l.p99)),
  Math.round(med(r.swapping.map((l) => l.rps))),
  med(r.swapping.map((l) => l.p99)),
  `${p99Ratio(r).toFixed(2)}x`,
  Math.max(...r.swapping.map((l) => l.max)),
  r.swaps,
  mib(r.peakRss),
  mib(r.peakHeap),
  r.steady.reduce((n, l) => n + l.failures, 0),
  r.swapping.reduce((n, l) => n + l.failures, 0) + r.metadataFailures,
]);

const targetList: Target[] = [];
const totalFailures = results.reduce((n, r) => n + failuresOf(r), 0);
targetList.push({ name: 'failed requests = 0 (steady and during swaps)', measured: String(totalFailures), pass: totalFailures === 0 });
// The same target for every size, 5,000 types included.
for (const r of results) {
  targetList.push({ name: `p99 during swaps <= 2x steady (${r.types} types)`, measured: `${p99Ratio(r).toFixed(2)}x`, pass: p99Ratio(r) <= 2 });
}
for (const r of results) {
  const perType = med(r.idleAdd) / r.types;
  targetList.push({ name: `time to add <= 0.15 ms/type (${r.types} types, no load)`, measured: `${perType.toFixed(3)} ms/type`, pass: perType <= 0.15 });
}

console.log(
  [
    header(
      'swap: remote schemas added and removed under steady load',
      config,
      'svc-graphql (packages/server, embedded file store, JWT mode, log level error), the sample remote and one ' +
        'generated remote per size (examples/sample-remotes `startGeneratedRemote`, N object types with 3-4 fields ' +
        'and N root fields) each in their own Node child process. Steady load: `hello` + `user` from the sample ' +
        'remote through svc-graphql with one HS256 token and different variables per request, every answer checked. ' +
        `Per size: ${IDLE_CYCLES} add/remove pairs without load (time from sending \`add_remote_schema\` to its answer, ` +
        'heap after a forced GC with and without the remote; "remote introspection" is the remote answering the ' +
        'standard introspection query to this process alone, a floor for every add), then per round a steady phase and a swap phase ' +
        `(add, remove, add, ... back to back for at least ${config.duration} s and ${MIN_SWAPS} pairs) under the same load. ` +
        'Memory: svc-graphql process, sampled every 200 ms during swaps.',
    ),
    '',
    'Adding and removing (median ms; "no load" and "under load" columns):',
    '',
    formatTable(
      ['types', 'add ms', 'add ms/type', 'marginal ms/type', 'remote introspection ms', 'remove ms', 'add ms (load)', 'add ms/type (load)', 'remove ms (load)', 'heap +MiB with remote'],
      addRows,
    ),
    '',
    'Steady load vs load during swaps (medians over rounds):',
    '',
    formatTable(
      ['types', 'steady req/s', 'steady p99 ms', 'swap req/s', 'swap p99 ms', 'p99 ratio', 'swap max ms', 'swaps', 'peak RSS MiB', 'peak heap MiB', 'failures steady', 'failures swapping'],
      loadRows,
    ),
    '',
    memoryAtStart && memoryAtEnd
      ? `svc-graphql heap after GC before the first swap / after the last: ${mib(memoryAtStart.heapUsed)} / ${mib(memoryAtEnd.heapUsed)} MiB ` +
        `(RSS ${mib(memoryAtStart.rss)} / ${mib(memoryAtEnd.rss)} MiB).`
      : '',
    '',
    targets(targetList),
  ].join('\n'),
);
for (const r of results) {
  const reasons = new Map(r.reasons);
  for (const l of [...r.steady, ...r.swapping]) for (const [k, n] of l.reasons) reasons.set(k, (reasons.get(k) ?? 0) + n);
  if (reasons.size > 0) console.log(`\nfailures with ${r.types} types:\n${describeFailures(reasons)}`);
}
process.exitCode = totalFailures > 0 ? 1 : 0;
