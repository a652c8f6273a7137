// Entry of a server child: `node --import tsx child-main.ts <module URL> <JSON options>`.
// Keeping the server in its own process means the load generator's event loop never delays it and
// the server's CPU time can be read on its own.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import type { ChildMessage, ChildModule, ParentMessage, StartedServer } from './child-protocol.js';

function send(message: ChildMessage): void {
  process.send?.(message);
}

const [moduleUrl, json] = process.argv.slice(2);
if (moduleUrl === undefined || json === undefined || process.send === undefined) {
  console.error('child-main: run me through bench/lib/child.ts');
  process.exit(2);
}

// The parent going away (crash, Ctrl-C) must not leave a server running.
process.on('disconnect', () => process.exit(0));

let server: StartedServer;
try {
  const mod = (await import(moduleUrl)) as ChildModule;
  server = await mod.start(JSON.parse(json) as unknown);
} catch (error) {
  send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}

const gc = (globalThis as { gc?: () => void }).gc;

process.on('message', (raw: ParentMessage) => {
  if (raw.type === 'stats') {
    if (raw.gc) gc?.();
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    send({
      id: raw.id,
      type: 'stats',
      stats: {
        rss: mem.rss,
        heapUsed: mem.heapUsed,
        heapTotal: mem.heapTotal,
        external: mem.external,
        spaces: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, { committed: space.space_size, used: space.space_used_size }])),
        cpuUser: cpu.user,
        cpuSystem: cpu.system,
        ...(server.requests && { requests: server.requests() }),
      },
    });
  } else if (raw.type === 'heapSnapshot') {
    send({ id: raw.id, type: 'heapSnapshot', path: writeHeapSnapshot(raw.path) });
  } else if (raw.type === 'allocations') {
    void allocations(raw).then((path) => send({ id: raw.id, type: 'allocations', ...(path !== undefined && { path }) }));
  } else if (raw.type === 'close') {
    void server.close().finally(() => {
      send({ id: raw.id, type: 'closed' });
      // process.exit (not a natural end) so that --cpu-prof writes its profile even when some
      // handle (a keep-alive socket, a timer) is still open.
      setTimeout(() => process.exit(0), 50);
    });
  }
});

// Where --trace-gc's times (milliseconds since the process started) begin, to line them up with
// the benchmark's own times.
if (process.execArgv.includes('--trace-gc')) {
  console.log(`[${process.pid}] trace-gc clock starts at ${performance.timeOrigin.toFixed(0)} ms since the epoch`);
}
// BENCH_LOOP_LAG=1: every turn of this process's event loop that came more than 25 ms late (a
// 5 ms timer), with when it ended, to line up with the benchmark's timeline.
if (process.env['BENCH_LOOP_LAG'] === '1') {
  let last = performance.now();
  setInterval(() => {
    const at = performance.now();
    if (at - last > 30) {
      // The monotonic clock in microseconds too, the clock of --cpu-prof's samples (profile-summary.ts FROM-TO).
      const monotonic = process.hrtime.bigint() / 1000n;
      console.log(`[${process.pid}] loop lag ${(at - last - 5).toFixed(0)} ms ending at ${(performance.timeOrigin + at).toFixed(0)} (monotonic ${monotonic} µs)`);
    }
    last = at;
  }, 5).unref();
}
send({ type: 'ready', url: server.url });

let profiler: Session | undefined;

/**
 * The sampling heap profiler over every allocation (collected ones included), or with
 * `BENCH_ALLOCATIONS_KIND=promoted` over what outlived the young generation (what a full
 * collection has to clean up later): started, or stopped and written.
 */
async function allocations(request: Extract<ParentMessage, { type: 'allocations' }>): Promise<string | undefined> {
  if (request.action === 'start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('HeapProfiler.enable');
    await profiler.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: process.env['BENCH_ALLOCATIONS_KIND'] !== 'promoted',
    });
    return undefined;
  }
  if (profiler === undefined) throw new Error('allocations: not started');
  const { profile } = await profiler.post('HeapProfiler.stopSampling');
  profiler.disconnect();
  profiler = undefined;
  writeFileSync(request.path, JSON.stringify(profile));
  return request.path;
}
