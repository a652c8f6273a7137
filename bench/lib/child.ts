// Starts a server module in a child process and talks to it over IPC.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchConfig } from './config.js';
import type { ChildMessage, ParentMessage, ParentRequest, ProcessStats } from './child-protocol.js';

const here = dirname(fileURLToPath(import.meta.url));
export const benchDir = dirname(here);
const repoRoot = dirname(benchDir);

export interface ChildServer {
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  /** Memory and CPU time of the child; `gc` runs a full collection first (heap after GC). */
  stats(gc?: boolean): Promise<ProcessStats>;
  /** Writes a V8 heap snapshot of the child to `path` (it collects garbage first). */
  heapSnapshot(path: string): Promise<string>;
  /**
   * Starts V8's sampling heap profiler in the child, counting every allocation, also those the
   * garbage collector has taken back by the time it stops (what a run allocates, not what it keeps).
   */
  startAllocations(): Promise<void>;
  /** Stops it and writes the profile (`.heapprofile`, Chrome DevTools' format) to `path`. */
  stopAllocations(path: string): Promise<string>;
  close(): Promise<void>;
}

let pinnedSelf = false;

/** With BENCH_PIN=1 the load generator (this process, all its threads) stays on CPU 0. */
function pinSelf(config: BenchConfig): void {
  if (!config.pin || pinnedSelf) return;
  execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' });
  pinnedSelf = true;
}

/**
 * Runs `start(options)` of `modulePath` (a file under bench/, absolute or relative to bench/) in a
 * fresh Node process with tsx, NODE_ENV=production and --expose-gc.
 */
export async function startChild(
  label: string,
  modulePath: string,
  options: unknown,
  config: BenchConfig,
  /** Node/V8 flags of this child alone (after BENCH_NODE_ARGS). */
  extraNodeArgs: readonly string[] = [],
): Promise<ChildServer> {
  pinSelf(config);
  const moduleUrl = pathToFileURL(modulePath.startsWith('/') ? modulePath : join(benchDir, modulePath)).href;
  const nodeArgs = ['--import', 'tsx', '--expose-gc'];
  if (config.cpuProf) {
    // One directory per child: tsx's loader runs on a second thread that writes its own profile.
    const dir = join(benchDir, 'profiles', label.replace(/[^\w.-]+/g, '_'));
    mkdirSync(dir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', dir);
  }
  // BENCH_TRACE_GC=1: every child prints V8's line per garbage collection (pauses, heap sizes).
  if (process.env['BENCH_TRACE_GC'] === '1') nodeArgs.push('--trace-gc');
  // BENCH_NODE_ARGS: more Node/V8 flags for every child, e.g. `--max-semi-space-size=64`.
  nodeArgs.push(...(process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== ''));
  nodeArgs.push(...extraNodeArgs);
  nodeArgs.push(join(here, 'child-main.ts'), moduleUrl, JSON.stringify(options));
  const [command, args] = config.pin
    ? ['taskset', ['-c', '1', process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs];
  const child = spawn(command as string, args as string[], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });

  let nextId = 1;
  const pending = new Map<number, (message: ChildMessage) => void>();
  let exited = false;
  const url = await new Promise<string>((resolve, reject) => {
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') resolve(message.url);
      else if (message.type === 'failed') reject(new Error(`${label}: child failed to start:\n${message.error}`));
      else pending.get(message.id)?.(message);
    });
    child.once('exit', (code, signal) => {
      exited = true;
      reject(new Error(`${label}: child exited (${code ?? signal}) before it was ready`));
      for (const done of pending.values()) done({ id: -1, type: 'closed' });
    });
    child.once('error', reject);
  });

  const call = (message: ParentRequest): Promise<ChildMessage> =>
    new Promise((resolve, reject) => {
      if (exited) {
        reject(new Error(`${label}: child is gone`));
        return;
      }
      const id = nextId++;
      pending.set(id, (reply) => {
        pending.delete(id);
        resolve(reply);
      });
      const full: ParentMessage = { ...message, id };
      child.send(full);
    });

  return {
    label,
    url,
    pid: child.pid ?? -1,
    async stats(gc = false) {
      const reply = await call({ type: 'stats', gc });
      if (reply.type !== 'stats') throw new Error(`${label}: child is gone`);
      return reply.stats;
    },
    async heapSnapshot(path) {
      const reply = await call({ type: 'heapSnapshot', path });
      if (reply.type !== 'heapSnapshot') throw new Error(`${label}: child is gone`);
      return reply.path;
    },
    async startAllocations() {
      const reply = await call({ type: 'allocations', action: 'start' });
      if (reply.type !== 'allocations') throw new Error(`${label}: child is gone`);
    },
    async stopAllocations(path) {
      const reply = await call({ type: 'allocations', action: 'stop', path });
      if (reply.type !== 'allocations' || reply.path === undefined) throw new Error(`${label}: child is gone`);
      return reply.path;
    },
    async close() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await call({ type: 'close' }).catch(() => undefined);
      await gone;
    },
  };
}

/** CPU microseconds the child spent between two stats() snapshots. */
export function cpuMicros(before: ProcessStats, after: ProcessStats): number {
  return after.cpuUser - before.cpuUser + (after.cpuSystem - before.cpuSystem);
}
