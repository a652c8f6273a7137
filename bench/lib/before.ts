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

/**
 * The order of `cases` in round `round` (1-based): as listed in odd rounds; in even rounds each
 * case listed right before its twin "(before)" comes after it, so that neither checkout always
 * runs first (a drift of the machine within a round then leans both ways).
 */
export function inRoundOrder<T extends { readonly label: string }>(cases: readonly T[], round: number): T[] {
  if (round % 2 === 1) return [...cases];
  const ordered: T[] = [];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i] as T;
    const next = cases[i + 1];
    if (next !== undefined && next.label === `${c.label}${BEFORE_SUFFIX}`) {
      ordered.push(next, c);
      i++;
    } else {
      ordered.push(c);
    }
  }
  return ordered;
}

/** Each case of this checkout with its twin "(before)", in the order of `cases`. */
export function twinsOf<T extends { readonly label: string }>(cases: readonly T[]): Array<readonly [after: T, before: T]> {
  return cases.flatMap((c) => {
    const twin = cases.find((t) => t.label === `${c.label}${BEFORE_SUFFIX}`);
    return twin ? [[c, twin] as const] : [];
  });
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
  /** One entry per pair of short windows (BENCH_PAIRS), when there were any. */
  readonly pairedAfter?: readonly RoundFigures[];
  readonly pairedBefore?: readonly RoundFigures[];
}

/** The middle half of `values`: `q1–q3`. */
function quartiles(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))] ?? Number.NaN;
  return `${at(0.25).toFixed(2)}-${at(0.75).toFixed(2)}`;
}

/**
 * This checkout against BENCH_BEFORE, case by case: CPU per answer (the figure that holds on a
 * shared machine) and req/s, each as a ratio per round (the twin cases run one after the other in
 * the same round, which one first alternating with the rounds), median over rounds. A ratio of at least `min` on CPU per answer is the target.
 */
export function beforeAfter(pairs: readonly BeforeAfterPair[], min: number): { table: string; targets: Target[] } {
  const ratios = (after: readonly RoundFigures[], before: readonly RoundFigures[]) => ({
    cpu: after.map((a, i) => (before[i]?.cpu ?? Number.NaN) / a.cpu),
    rps: after.map((a, i) => a.rps / (before[i]?.rps ?? Number.NaN)),
  });
  const withPairs = pairs.some((pair) => (pair.pairedAfter?.length ?? 0) > 0);
  const rows = pairs.map((pair) => {
    const rounds = ratios(pair.after, pair.before);
    const paired = ratios(pair.pairedAfter ?? [], pair.pairedBefore ?? []);
    // The verdict: the pairs when there are any (many short windows), else the rounds.
    const verdict = median(paired.cpu.length > 0 ? paired.cpu : rounds.cpu);
    return {
      pair,
      verdict,
      cells: [
        pair.label,
        round(median(pair.before.map((s) => s.cpu)), 1),
        round(median(pair.after.map((s) => s.cpu)), 1),
        `${median(rounds.cpu).toFixed(3)}x`,
        rounds.cpu.map((r) => r.toFixed(2)).join(' / '),
        `${median(rounds.rps).toFixed(3)}x`,
        rounds.rps.map((r) => r.toFixed(2)).join(' / '),
        ...(withPairs
          ? [
              paired.cpu.length,
              paired.cpu.length > 0 ? `${median(paired.cpu).toFixed(3)}x` : '-',
              paired.cpu.length > 0 ? quartiles(paired.cpu) : '-',
              paired.rps.length > 0 ? `${median(paired.rps).toFixed(3)}x` : '-',
            ]
          : []),
      ],
    };
  });
  const table = [
    'This checkout against BENCH_BEFORE (twin cases one after the other in each round, this checkout first in odd rounds and second in even ones; ' +
      'CPU ratio = CPU per answer before / after, req/s ratio = after / before, per round and their median' +
      (withPairs ? '; then pairs of short windows, the twins alternating, with the median ratio and the middle half of the ratios' : '') +
      '):',
    '',
    formatTable(
      [
        'case',
        'CPU us/req before',
        'CPU us/req after',
        'CPU ratio',
        'CPU ratio per round',
        'req/s ratio',
        'req/s ratio per round',
        ...(withPairs ? ['pairs', 'CPU ratio (pairs)', 'middle half', 'req/s ratio (pairs)'] : []),
      ],
      rows.map((r) => r.cells),
    ),
  ].join('\n');
  const targets = rows.map((r) => ({
    name: `${r.pair.label}: CPU per answer at least ${min}x of before${withPairs ? ' (pairs)' : ''}`,
    measured: `${r.verdict.toFixed(3)}x`,
    pass: r.verdict >= min,
  }));
  return { table, targets };
}

/**
 * {@link beforeAfter} of the twins among `cases`: `rounds(c)` gives a case's figures per round,
 * `pairs(c)` per window of BENCH_PAIRS.
 */
export function compareTwins<T extends { readonly label: string }>(
  cases: readonly T[],
  rounds: (c: T) => readonly RoundFigures[],
  pairs: (c: T) => readonly RoundFigures[],
  min: number,
): { table: string; targets: Target[] } {
  return beforeAfter(
    twinsOf(cases).map(([after, before]) => ({
      label: after.label,
      after: rounds(after),
      before: rounds(before),
      pairedAfter: pairs(after),
      pairedBefore: pairs(before),
    })),
    min,
  );
}
