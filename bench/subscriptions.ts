// `pnpm bench subscriptions`: N subscribers with distinct sessions, one event per second each,
// subscribed through the gateway and, side by side in the same run, the same clients subscribed
// directly to the remote. Gateway memory per subscriber, delivery latency (event sent by the
// remote to event received by the client), CPU per delivered event of the gateway and of the
// remote, and failed subscriptions (must be 0; a client not connected and acknowledged within
// 30 s counts as failed). Every event is checked: its user is the subscriber's own.
//
// BENCH_SUBSCRIBERS: comma-separated N (default 1000,10000, each lowered to what the open-file
// limit lets the gateway hold: two sockets per subscriber); BENCH_DURATION: measured seconds per
// case (default 15 here); BENCH_WARMUP: seconds after the last subscriber is in (default 3).
// A third route, the floor, puts a bare WebSocket pass-through (bench/lib/ws-passthrough-server.ts:
// a socket of its own upstream per client, bytes passed on both ways, nothing parsed) where the
// gateway is: what any gateway keeping each session upstream pays at least, on the same machine.
// BENCH_ONLY: comma-separated routes to run, of `direct`, `floor`, `gateway` (default: these three)
// and `namespace`: through the gateway to the same remote added a second time under
// `root_fields_namespace` (`subscription { ns { tick { ... } } }`, each event nested under `ns` by
// the gateway), and `renamed`: the same remote added once more with its types prefixed `R_` and its
// root fields `r_` (`subscription { r_tick { ... } }`, each event renamed back by the gateway), to
// compare with `gateway`. BENCH_HEAP_SNAPSHOT: a directory where
// the gateway's heap is written before and with each N subscribers (bench/lib/heap-summary.ts);
// BENCH_ALLOCATIONS: a directory where what the gateway allocates over each measured window is
// written (V8's sampling heap profiler, collected objects included; bench/lib/allocation-summary.ts);
// BENCH_TIMELINE=1: the 100 ms slices of the window with an event over 50 ms late.
// BENCH_SEMI_SPACE_MB: the gateway's and the floor's `--max-semi-space-size` (default 64; 0: Node's own).
// BENCH_LOOP_LAG=1: each server process prints every turn of its event loop over 25 ms late, with
// its end in ms since the epoch (bench/lib/child-main.ts), to line up with BENCH_TIMELINE's slices.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { cpuMicros, startChild, type ChildServer } from './lib/child.js';
import type { ProcessStats } from './lib/child-protocol.js';
import type { BenchConfig } from './lib/config.js';
import { CLAIMS_NAMESPACE } from './lib/jwt.js';
import { metadataOrThrow } from './lib/metadata.js';
import { header, mib, progress, targets } from './lib/report.js';
import { formatTable, round } from './lib/table.js';
import { now } from './lib/ticker-remote.js';

const ADMIN_SECRET = 'bench-subscriptions-admin-secret';
const JWT_KEY = 'bench-subscriptions-jwt-key-of-at-least-32-characters';
const QUERY = 'subscription { tick { user seq sentAt } }';
/** What each route's clients ask, and where the tick is in each event. */
const SHAPES = {
  plain: { query: QUERY, tick: (data: EventData | undefined) => data?.tick },
  namespace: { query: 'subscription { ns { tick { user seq sentAt } } }', tick: (data: EventData | undefined) => data?.ns?.tick },
  renamed: { query: 'subscription { r_tick { user seq sentAt } }', tick: (data: EventData | undefined) => data?.r_tick },
} as const;
type EventData = { tick?: Tick; ns?: { tick?: Tick }; r_tick?: Tick };
/** Subscribers connecting at once while they are set up. */
const CONNECT_BATCH = 250;
/**
 * How long a subscriber waits for its WebSocket handshake, and then for `connection_ack`: past it,
 * it counts as failed and the run goes on (a server that stops accepting would hold the ramp-up
 * for ever).
 */
const CONNECT_TIMEOUT_MS = 30_000;
/** Memory samples after the window, a second apart, each after a full collection; the last is reported. */
const MEMORY_SAMPLES = 5;

/** `ws` with a bounded handshake (graphql-ws's client bounds only the wait for `connection_ack`). */
class BoundedWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { handshakeTimeout: CONNECT_TIMEOUT_MS });
  }
}

const config: BenchConfig = {
  duration: Number(process.env['BENCH_DURATION'] ?? 15),
  warmup: Number(process.env['BENCH_WARMUP'] ?? 3),
  connections: 0,
  rounds: 1,
  pin: false,
  cpuProf: process.env['BENCH_CPU_PROF'] === '1',
};
/**
 * Open files a process may hold (the soft limit, which child processes inherit), read from
 * /proc/self/limits; `undefined` where that file does not exist.
 */
function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}
/** Open files a server process needs besides its two sockets per subscriber (listeners, pipes, its own files). */
const FILES_BESIDES_SUBSCRIBERS = 200;
const fileLimit = openFileLimit();
const lowered: string[] = [];
/**
 * The gateway (and the floor) hold two sockets per subscriber, its own and its upstream one: N is
 * lowered, in steps of 100, to what the open-file limit lets every process hold, and the run says so.
 */
const sizes = (process.env['BENCH_SUBSCRIBERS'] ?? '1000,10000').split(',').map((text) => {
  const wanted = Number(text);
  if (fileLimit === undefined || 2 * wanted + FILES_BESIDES_SUBSCRIBERS <= fileLimit) return wanted;
  const most = Math.floor((fileLimit - FILES_BESIDES_SUBSCRIBERS) / 2 / 100) * 100;
  lowered.push(`N = ${wanted} was lowered to ${most} by the open-file limit of ${fileLimit} per process (two sockets per subscriber in the gateway)`);
  progress(
    `  N = ${wanted} needs ${2 * wanted + FILES_BESIDES_SUBSCRIBERS} open files in the gateway process; this machine's limit ` +
      `is ${fileLimit} (ulimit -n): measuring N = ${most} instead`,
  );
  return most;
});
const ROUTES = ['direct', 'floor', 'gateway', 'namespace', 'renamed'] as const;
type Route = (typeof ROUTES)[number];
const routes = new Set((process.env['BENCH_ONLY'] ?? 'direct,floor,gateway').split(',').map((r) => r.trim()));
for (const route of routes) {
  if (!(ROUTES as readonly string[]).includes(route)) throw new Error(`BENCH_ONLY: unknown route "${route}" (routes: ${ROUTES.join(', ')})`);
}
const runs = (route: Route) => routes.has(route);
const snapshotDir = process.env['BENCH_HEAP_SNAPSHOT'];
const allocationsDir = process.env['BENCH_ALLOCATIONS'];
const timeline = process.env['BENCH_TIMELINE'] === '1';
/**
 * The young generation of the gateway and the floor, in MiB per semi-space: 64 by default
 * (`--max-semi-space-size=64`, what docs/production.md recommends for thousands of subscribers);
 * `0`: Node's default (16 MiB on 64-bit Node 20), as the server runs without that setting.
 */
const semiSpaceMiB = Number(process.env['BENCH_SEMI_SPACE_MB'] ?? 64);
const relayNodeArgs = semiSpaceMiB > 0 ? [`--max-semi-space-size=${semiSpaceMiB}`] : [];

interface Tick {
  user: string;
  seq: number;
  sentAt: number;
}

/** The subscribers of one case and what they received. */
class Subscribers {
  readonly clients: Client[] = [];
  /** Subscribers whose subscription ended, failed, or received an event of another user. */
  readonly #failed = new Set<number>();
  /** Subscribers that received their first event. */
  readonly #receiving = new Set<number>();
  delivered = 0;
  measuring = false;
  latencies: number[] = [];
  /** When each measured event was received (`now()`), in the order of `latencies`. */
  receivedAt: number[] = [];
  readonly #errors = new Map<string, number>();

  get failed(): number {
    return this.#failed.size;
  }

  get firstEvents(): number {
    return this.#receiving.size;
  }

  /** Subscribers of the first `n` that failed or never received an event: each counts once. */
  failedOf(n: number): number {
    let failed = 0;
    for (let i = 0; i < n; i++) if (this.#failed.has(i) || !this.#receiving.has(i)) failed++;
    return failed;
  }

  /** Subscribers of the first `n` that neither failed nor received an event yet. */
  waiting(n: number): number {
    let waiting = 0;
    for (let i = 0; i < n; i++) if (!this.#failed.has(i) && !this.#receiving.has(i)) waiting++;
    return waiting;
  }

  /** Every reason is counted; a subscriber with two (its connection, then its subscription) fails once. */
  error(i: number, what: string): void {
    this.#failed.add(i);
    this.#errors.set(what, (this.#errors.get(what) ?? 0) + 1);
  }

  errors(): string {
    return [...this.#errors].map(([what, n]) => `${n} x ${what}`).join('; ');
  }

  /** `namespace`: asked under the `ns` namespace field (its events nested under it); `renamed`: as `r_tick`. */
  constructor(readonly shape: keyof typeof SHAPES = 'plain') {}

  async open(n: number, url: string, params: (i: number) => Promise<Record<string, unknown>>): Promise<void> {
    for (let from = 0; from < n; from += CONNECT_BATCH) {
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, n - from) }, (_, j) => from + j);
      await Promise.all(batch.map(async (i) => this.#subscribe(i, url, await params(i))));
    }
  }

  #subscribe(i: number, url: string, connectionParams: Record<string, unknown>): Promise<void> {
    const user = `user-${i}`;
    return new Promise<void>((connected) => {
      const client = createClient({
        url,
        webSocketImpl: BoundedWebSocket,
        connectionParams,
        connectionAckWaitTimeout: CONNECT_TIMEOUT_MS,
        retryAttempts: 0,
        lazy: false,
        on: { connected: () => connected(), closed: () => connected() },
        onNonLazyError: (error) => {
          this.error(i, `connection: ${failure(error)}`);
          connected();
        },
      });
      this.clients.push(client);
      const shape = SHAPES[this.shape];
      client.subscribe<EventData>(
        { query: shape.query },
        {
          next: (result) => {
            const tick = shape.tick(result.data ?? undefined);
            if (!tick || tick.user !== user) {
              this.error(i, tick ? 'event of another user' : `result: ${JSON.stringify(result).slice(0, 200)}`);
              return;
            }
            this.#receiving.add(i);
            if (this.measuring) {
              this.delivered++;
              const at = now();
              this.latencies.push(at - tick.sentAt);
              this.receivedAt.push(at);
            }
          },
          error: (error) => this.error(i, `error: ${failure(error)}`),
          complete: () => this.error(i, 'completed'),
        },
      );
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((client) => client.dispose()));
  }
}

/**
 * What a client's connection or subscription failed with: a close's code and reason, a socket
 * error's message (ws hands graphql-ws an `ErrorEvent`, which JSON shows as `{}`), or the
 * server's errors.
 */
function failure(error: unknown): string {
  const { code, reason, message } = (error ?? {}) as { code?: unknown; reason?: unknown; message?: unknown };
  if (typeof code === 'number') return `${code} ${String(reason ?? '')}`.trim();
  if (typeof message === 'string') return message;
  return JSON.stringify(error).slice(0, 200);
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Cores busy on the whole machine over a window, and how much of it was the kernel's softirq work (the loopback network's). */
interface MachineBusy {
  busy: number;
  softirq: number;
}

/** The `cpu` line of /proc/stat (Linux), in clock ticks: user nice system idle iowait irq softirq steal. */
function machineTicks(): number[] | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return line.startsWith('cpu ') && ticks.length === 8 && ticks.every(Number.isFinite) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

function machineBusy(before: number[] | undefined, after: number[] | undefined): MachineBusy | undefined {
  if (!before || !after) return undefined;
  const delta = after.map((value, i) => value - before[i]!);
  const total = delta.reduce((sum, value) => sum + value, 0);
  if (total <= 0) return undefined;
  const idle = delta[3]! + delta[4]!;
  const cores = availableParallelism();
  return { busy: ((total - idle) / total) * cores, softirq: (delta[6]! / total) * cores };
}

interface Measured {
  n: number;
  route: Route;
  failed: number;
  errors: string;
  delivered: number;
  p50: number;
  p99: number;
  remoteCpuPerEvent: number;
  /** Cores in use over the window: the remote, the relay (gateway or floor; 0 directly), the clients (this process). */
  cores: { remote: number; relay: number; clients: number; machine?: MachineBusy };
  gatewayCpuPerEvent?: number;
  rssPerSubscriber?: number;
  /** The gateway's largest RSS in the latency window (sampled each second, no forced collection) minus idle, per subscriber. */
  peakRssPerSubscriber?: number;
  heapPerSubscriber?: number;
  externalPerSubscriber?: number;
  rssMiB?: number;
}

async function measure(
  n: number,
  route: Measured['route'],
  remote: ChildServer,
  gateway: ChildServer | undefined,
  url: string,
  params: (i: number) => Promise<Record<string, unknown>>,
): Promise<Measured> {
  const subscribers = new Subscribers(route === 'namespace' || route === 'renamed' ? route : 'plain');
  if (gateway && snapshotDir) progress(`  heap snapshot: ${await gateway.heapSnapshot(join(snapshotDir, `gateway-${n}-idle.heapsnapshot`))}`);
  const idle = gateway && (await gateway.stats(true));
  progress(`  ${route}, ${n} subscribers: connecting`);
  await subscribers.open(n, url, params);
  // Every subscriber had its first event (the remote sends it within a second).
  await until(() => subscribers.waiting(n) === 0, 30_000);
  progress(`  ${route}, ${n} subscribers: ${subscribers.firstEvents} receiving, ${subscribers.failed} failed; warm-up ${config.warmup} s`);
  await sleep(config.warmup);
  if (gateway && allocationsDir) await gateway.startAllocations();
  const remoteBefore = await remote.stats();
  const gatewayBefore = gateway && (await gateway.stats());
  const clientsBefore = process.cpuUsage();
  const machineBefore = machineTicks();
  const windowStarts = performance.now();
  subscribers.measuring = true;
  // The gateway's RSS under load, read each second of the window (garbage included: what the
  // machine must have, as opposed to what the subscribers keep).
  let peakRss = 0;
  const windowEnds = Date.now() + config.duration * 1000;
  while (Date.now() < windowEnds) {
    await sleep(Math.min(1, (windowEnds - Date.now()) / 1000));
    if (gateway) peakRss = Math.max(peakRss, (await gateway.stats()).rss);
  }
  subscribers.measuring = false;
  const clientsCpu = process.cpuUsage(clientsBefore);
  const machine = machineBusy(machineBefore, machineTicks());
  const windowMicros = (performance.now() - windowStarts) * 1000;
  const remoteAfter = await remote.stats();
  const gatewayAfter = gateway && (await gateway.stats());
  if (gateway && allocationsDir) {
    const path = await gateway.stopAllocations(join(allocationsDir, `gateway-${n}.heapprofile`));
    progress(`  allocations: ${path} (${subscribers.delivered} events; bench/lib/allocation-summary.ts)`);
  }
  // Memory after the latency window: the forced collection stops the gateway for a fifth of a
  // second or more at 10,000 subscribers, and the events it holds up must not be measured. RSS
  // goes on falling for a few seconds after a collection (freed pages go back to the system
  // gradually): the last of five samples a second apart, each after a collection, is reported.
  let held: ProcessStats | undefined;
  if (gateway && idle) {
    const samples: ProcessStats[] = [];
    for (let sample = 0; sample < MEMORY_SAMPLES; sample++) {
      if (sample > 0) await sleep(1);
      samples.push(await gateway.stats(true));
      progress(`  gateway memory per subscriber, sample ${sample + 1}: ${memoryLine(idle, samples.at(-1)!, n)}`);
    }
    held = samples.at(-1);
  }
  if (gateway && snapshotDir) progress(`  heap snapshot: ${await gateway.heapSnapshot(join(snapshotDir, `gateway-${n}-held.heapsnapshot`))}`);
  const sent = (remoteAfter.requests ?? 0) - (remoteBefore.requests ?? 0);
  if (timeline) printTimeline(subscribers);
  const latencies = subscribers.latencies.sort((a, b) => a - b);
  const result: Measured = {
    n,
    route,
    failed: subscribers.failedOf(n),
    errors: subscribers.errors(),
    delivered: subscribers.delivered,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    remoteCpuPerEvent: cpuMicros(remoteBefore, remoteAfter) / Math.max(1, sent),
    cores: {
      remote: cpuMicros(remoteBefore, remoteAfter) / windowMicros,
      relay: gatewayBefore && gatewayAfter ? cpuMicros(gatewayBefore, gatewayAfter) / windowMicros : 0,
      clients: (clientsCpu.user + clientsCpu.system) / windowMicros,
      ...(machine && { machine }),
    },
  };
  if (idle && held && gatewayBefore && gatewayAfter) {
    result.gatewayCpuPerEvent = cpuMicros(gatewayBefore, gatewayAfter) / Math.max(1, subscribers.delivered);
    result.rssPerSubscriber = (held.rss - idle.rss) / n / 1024;
    result.peakRssPerSubscriber = (Math.max(peakRss, held.rss) - idle.rss) / n / 1024;
    result.heapPerSubscriber = (held.heapUsed - idle.heapUsed) / n / 1024;
    result.externalPerSubscriber = (held.external - idle.external) / n / 1024;
    result.rssMiB = mib(held.rss);
  }
  progress(`  ${route}, ${n} subscribers: ${subscribers.delivered} events in ${config.duration} s, p99 ${round(result.p99, 1)} ms; closing`);
  await subscribers.close();
  return result;
}

/** Per 100 ms of the measured window: events received, their worst latency, and how many took over 50 ms. */
function printTimeline(subscribers: Subscribers): void {
  const start = Math.min(...subscribers.receivedAt.slice(0, 1000));
  progress(`  timeline from ${start.toFixed(0)} (ms since the epoch; this process ${process.pid}, started at ${performance.timeOrigin.toFixed(0)})`);
  const slots = new Map<number, { events: number; max: number; slow: number }>();
  subscribers.receivedAt.forEach((at, i) => {
    const slot = Math.floor((at - start) / 100);
    const entry = slots.get(slot) ?? { events: 0, max: 0, slow: 0 };
    const latency = subscribers.latencies[i]!;
    entry.events++;
    entry.max = Math.max(entry.max, latency);
    if (latency > 50) entry.slow++;
    slots.set(slot, entry);
  });
  for (const [slot, { events, max, slow }] of [...slots].sort((a, b) => a[0] - b[0])) {
    if (slow > 0) progress(`  timeline ${(slot / 10).toFixed(1)} s: ${events} events, max ${round(max, 1)} ms, ${slow} over 50 ms`);
  }
}

/** What the gateway's memory grew by with the subscribers, per subscriber: RSS, heap used and committed, by heap space. */
function memoryLine(idle: ProcessStats, held: ProcessStats, n: number): string {
  const kib = (bytes: number) => round(bytes / n / 1024, 1);
  const spaces = Object.entries(held.spaces ?? {})
    .map(([name, { committed, used }]) => {
      const before = idle.spaces?.[name];
      return `${name.replace(/_space$/, '')} ${kib(used - (before?.used ?? 0))}/${kib(committed - (before?.committed ?? 0))}`;
    })
    .join(', ');
  return `RSS ${kib(held.rss - idle.rss)} KiB, heap used ${kib(held.heapUsed - idle.heapUsed)} KiB, committed ${kib(held.heapTotal - idle.heapTotal)} KiB (used/committed by space: ${spaces})`;
}

function token(i: number): Promise<string> {
  return new SignJWT({ [CLAIMS_NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': `user-${i}` } })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('6h')
    .sign(new TextEncoder().encode(JWT_KEY));
}

const dir = mkdtempSync(join(tmpdir(), 'bench-subscriptions-'));
const remote = await startChild('ticker-remote', 'lib/remote-server.ts', { kind: 'ticker' }, config);
const floor = runs('floor')
    ? await startChild('ws-passthrough', 'lib/ws-passthrough-server.ts', { target: remote.url.replace(/^http/, 'ws') }, config, relayNodeArgs)
    : undefined;
const gateway = await startChild(
  'svc-graphql',
  'lib/svc-server.ts',
  { databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, jwtSecret: { type: 'HS256', key: JWT_KEY } },
  config,
  relayNodeArgs,
);
const results: Measured[] = [];
try {
  await metadataOrThrow(gateway.url, ADMIN_SECRET, 'add_remote_schema', { name: 'ticker', definition: { url: remote.url } });
  if (runs('namespace')) {
    await metadataOrThrow(gateway.url, ADMIN_SECRET, 'add_remote_schema', {
      name: 'ticker_ns',
      definition: { url: remote.url, customization: { root_fields_namespace: 'ns' } },
    });
  }
  if (runs('renamed')) {
    await metadataOrThrow(gateway.url, ADMIN_SECRET, 'add_remote_schema', {
      name: 'ticker_renamed',
      definition: {
        url: remote.url,
        customization: {
          type_names: { prefix: 'R_' },
          field_names: [
            { parent_type: 'Query', prefix: 'r_' },
            { parent_type: 'Subscription', prefix: 'r_' },
          ],
        },
      },
    });
  }
  const remoteWs = remote.url.replace(/^http/, 'ws');
  const gatewayWs = `${gateway.url.replace(/^http/, 'ws')}/v1/graphql`;
  for (const n of sizes) {
    // The same sessions both ways: directly, the headers the gateway would forward.
    if (runs('direct')) {
      results.push(await measure(n, 'direct', remote, undefined, remoteWs, async (i) => ({ headers: { 'x-svc-role': 'user', 'x-svc-user-id': `user-${i}` } })));
      await sleep(2);
    }
    if (floor) {
      results.push(await measure(n, 'floor', remote, floor, floor.url.replace(/^http/, 'ws'), async (i) => ({ headers: { 'x-svc-role': 'user', 'x-svc-user-id': `user-${i}` } })));
      await sleep(2);
    }
    if (runs('gateway')) {
      results.push(await measure(n, 'gateway', remote, gateway, gatewayWs, async (i) => ({ headers: { authorization: `Bearer ${await token(i)}` } })));
      await sleep(2);
    }
    for (const route of ['namespace', 'renamed'] as const) {
      if (!runs(route)) continue;
      results.push(await measure(n, route, remote, gateway, gatewayWs, async (i) => ({ headers: { authorization: `Bearer ${await token(i)}` } })));
      await sleep(2);
    }
  }
} finally {
  await gateway.close();
  await floor?.close();
  await remote.close();
  rmSync(dir, { recursive: true, force: true });
}

const method =
  'one remote (graphql-ws, one event per second per subscription, each naming its user) and svc-graphql in child ' +
  'processes; N graphql-ws clients in this process, each with its own session (a JWT of its own through the gateway; ' +
  'the same session headers directly), first directly to the remote, then through a bare WebSocket pass-through (floor: ' +
  'a socket of its own upstream per client, bytes passed on, nothing parsed), then through the gateway; in the floor ' +
  "row the gateway columns are the pass-through's" +
  (runs('namespace') ? '; then through the gateway to the same remote under a root fields namespace (namespace row)' : '') +
  (runs('renamed') ? '; then to the same remote with its types and root fields prefixed (renamed row)' : '') +
  '. Latency: sent at the ' +
  'remote to received by the client. Memory: gateway RSS and heap after a full GC with the N subscribers (after the ' +
  'latency window, the last of 5 samples 1 s apart) minus before them, per subscriber; peak RSS: the largest RSS read ' +
  'each second of the window (no forced GC, garbage included) minus before, per subscriber. CPU per event: CPU time of the process over the window / events delivered (gateway) or sent (remote).' +
  (relayNodeArgs.length > 0
    ? ` The gateway and the floor run with ${relayNodeArgs.join(' ')} (as docs/production.md recommends for thousands of subscribers; its young generation, up to 128 MB whatever N, is in their RSS), the remote with Node's defaults.`
    : " Every process runs with Node's default flags.");
console.log(header('Subscriptions: N subscribers with distinct sessions', config, method));
console.log('');
console.log(
  formatTable(
    ['N', 'route', 'failed', 'events', 'p50 ms', 'p99 ms', 'gateway RSS KiB/sub', 'gateway peak RSS KiB/sub', 'gateway heap KiB/sub', 'gateway external KiB/sub', 'gateway CPU µs/event', 'remote CPU µs/event'],
    results.map((r) => [
      r.n,
      r.route,
      r.failed,
      r.delivered,
      round(r.p50, 1),
      round(r.p99, 1),
      r.rssPerSubscriber === undefined ? '-' : round(r.rssPerSubscriber, 1),
      r.peakRssPerSubscriber === undefined ? '-' : round(r.peakRssPerSubscriber, 1),
      r.heapPerSubscriber === undefined ? '-' : round(r.heapPerSubscriber, 1),
      r.externalPerSubscriber === undefined ? '-' : round(r.externalPerSubscriber, 1),
      r.gatewayCpuPerEvent === undefined ? '-' : round(r.gatewayCpuPerEvent, 1),
      round(r.remoteCpuPerEvent, 1),
    ]),
  ),
);
for (const r of results) if (r.errors) console.log(`\n${r.route} ${r.n}: ${r.errors}`);
// How busy the machine was: latency grows as the processes together approach the cores there are.
console.log('');
for (const r of results) {
  const { remote: rc, relay, clients, machine } = r.cores;
  console.log(
    `- cores in use, ${r.route} ${r.n}: remote ${round(rc, 2)}, ${r.route === 'direct' ? 'no relay' : `${r.route} ${round(relay, 2)}`}, clients ${round(clients, 2)}; ` +
      `${round(rc + relay + clients, 2)} of ${availableParallelism()}` +
      (machine ? `; the whole machine ${round(machine.busy, 2)} busy, ${round(machine.softirq, 2)} of it the kernel's softirq` : ''),
  );
}
const largest = Math.max(...sizes);
const direct = results.find((r) => r.n === largest && r.route === 'direct');
const through = results.find((r) => r.n === largest && r.route === 'gateway');
const passthrough = results.find((r) => r.n === largest && r.route === 'floor');
const customized = (['namespace', 'renamed'] as const).flatMap((route) => results.filter((r) => r.n === largest && r.route === route));
if (direct && through) {
  console.log('');
  console.log(
    targets([
      // At a few hundred subscribers the RSS moves by less than its noise: a value <= 0 measures nothing.
      {
        name: `gateway memory per subscriber at ${largest} <= 30 KiB`,
        measured: `${round(through.rssPerSubscriber ?? NaN, 1)} KiB`,
        pass: (through.rssPerSubscriber ?? 0) > 0 && (through.rssPerSubscriber ?? Infinity) <= 30,
      },
      { name: 'p99 delivery <= direct + 50 ms', measured: `${round(through.p99, 1)} ms vs ${round(direct.p99, 1)} ms`, pass: through.p99 <= direct.p99 + 50 },
      {
        name: 'gateway CPU per event <= 2x the remote\'s',
        measured: `${round(through.gatewayCpuPerEvent ?? NaN, 1)} µs vs ${round(through.remoteCpuPerEvent, 1)} µs`,
        pass: (through.gatewayCpuPerEvent ?? Infinity) <= 2 * through.remoteCpuPerEvent,
      },
      { name: 'failed subscriptions = 0', measured: String(results.reduce((sum, r) => sum + r.failed, 0)), pass: results.every((r) => r.failed === 0) },
    ]),
  );
  for (const line of lowered) console.log(`- ${line}`);
  if (passthrough) {
    console.log(
      `- the floor at ${largest} (not a target): p99 ${round(passthrough.p99, 1)} ms, CPU ${round(passthrough.gatewayCpuPerEvent ?? NaN, 1)} µs per event, ` +
        `${round(passthrough.rssPerSubscriber ?? NaN, 1)} KiB RSS per subscriber; the gateway's p99 is ${round(through.p99 - passthrough.p99, 1)} ms above it`,
    );
  }
}
for (const other of through ? customized : []) {
  const what = other.route === 'namespace' ? 'under a namespace' : 'renamed (type and root field prefixes)';
  console.log(
    `- ${what} at ${largest} (not a target): CPU ${round(other.gatewayCpuPerEvent ?? NaN, 1)} µs per event vs ` +
      `${round(through!.gatewayCpuPerEvent ?? NaN, 1)} as it is (${round((other.gatewayCpuPerEvent ?? NaN) / (through!.gatewayCpuPerEvent ?? NaN), 2)}x), ` +
      `p99 ${round(other.p99, 1)} ms vs ${round(through!.p99, 1)}, ${round(other.rssPerSubscriber ?? NaN, 1)} KiB RSS per subscriber vs ${round(through!.rssPerSubscriber ?? NaN, 1)}`,
  );
}
