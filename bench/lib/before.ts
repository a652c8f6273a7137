// BENCH_BEFORE: another checkout of this repository (the code before a change), whose servers a
// benchmark starts next to this checkout's, so that both are measured side by side in one run:
//
//   git worktree add /tmp/before <revision> && (cd /tmp/before && pnpm install)
//   BENCH_BEFORE=/tmp/before pnpm bench proxy
//
// The other checkout's own bench/lib server modules are started (with its own packages and
// node_modules); this checkout's benchmark drives both and checks every answer alike.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatTable, median, round } from './table.js';
import type { Target } from './report.js';

export interface Checkout {
  /** Added to the label of each case run on this checkout: '' or ' (before)'. */
  readonly suffix: string;
  /** The checkout's bench/ directory, where its server modules are. */
  readonly benchDir: string;
}

export const BEFORE_SUFFIX = ' (before)';

/** The checkout BENCH_BEFORE names, or `undefined` when it is not set. */
export function beforeCheckout(): Checkout | undefined {
  const dir = process.env['BENCH_BEFORE'];
  if (dir === undefined || dir === '') return undefined;
  const benchDir = join(resolve(dir), 'bench');
  if (!existsSync(join(benchDir, 'lib', 'child-main.ts'))) throw new Error(`BENCH_BEFORE=${dir}: no bench/lib/child-main.ts there`);
  if (!existsSync(join(resolve(dir), 'node_modules'))) throw new Error(`BENCH_BEFORE=${dir}: run pnpm install there first`);
  return { suffix: BEFORE_SUFFIX, benchDir };
}

/** The absolute path of a server module (`lib/…`) of `checkout`. */
export function moduleOf(checkout: Checkout, module: string): string {
  return join(checkout.benchDir, module);
}

/** Imports a module (`lib/…`) of `checkout` into this process. */
export async function importFrom<T>(checkout: Checkout, module: string): Promise<T> {
  return (await import(pathToFileURL(moduleOf(checkout, module)).href)) as T;
}

export interface RoundFigures {
  readonly rps: number;
  /** CPU microseconds per answer of the server under test. */
  readonly cpu: number;
}

export interface BeforeAfterPair {
  readonly label: string;
  /** One entry per round, this checkout's case and its twin on BENCH_BEFORE measured in the same round. */
  readonly after: readonly RoundFigures[];
  readonly before: readonly RoundFigures[];
}

/**
 * This checkout against BENCH_BEFORE, case by case: CPU per answer (the figure that holds on a
 * shared machine) and req/s, each as a ratio per round (the twin cases run one after the other in
 * the same round), median over rounds. A ratio of at least `min` on CPU per answer is the target.
 */
export function beforeAfter(pairs: readonly BeforeAfterPair[], min: number): { table: string; targets: Target[] } {
  const rows = pairs.map((pair) => {
    const cpuRatios = pair.after.map((a, i) => (pair.before[i]?.cpu ?? Number.NaN) / a.cpu);
    const rpsRatios = pair.after.map((a, i) => a.rps / (pair.before[i]?.rps ?? Number.NaN));
    return {
      pair,
      cpuRatio: median(cpuRatios),
      cells: [
        pair.label,
        round(median(pair.before.map((s) => s.cpu)), 1),
        round(median(pair.after.map((s) => s.cpu)), 1),
        `${median(cpuRatios).toFixed(3)}x`,
        cpuRatios.map((r) => r.toFixed(2)).join(' / '),
        Math.round(median(pair.before.map((s) => s.rps))),
        Math.round(median(pair.after.map((s) => s.rps))),
        `${median(rpsRatios).toFixed(3)}x`,
        rpsRatios.map((r) => r.toFixed(2)).join(' / '),
      ],
    };
  });
  const table = [
    'This checkout against BENCH_BEFORE (twin cases one after the other in each round; CPU ratio = CPU per answer before / after, ' +
      'req/s ratio = after / before, per round and their median):',
    '',
    formatTable(
      ['case', 'CPU us/req before', 'CPU us/req after', 'CPU ratio', 'CPU ratio per round', 'req/s before', 'req/s after', 'req/s ratio', 'req/s ratio per round'],
      rows.map((r) => r.cells),
    ),
  ].join('\n');
  const targets = rows.map((r) => ({
    name: `${r.pair.label}: CPU per answer at least ${min}x of before`,
    measured: `${r.cpuRatio.toFixed(3)}x`,
    pass: r.cpuRatio >= min,
  }));
  return { table, targets };
}
