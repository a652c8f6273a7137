// Cases of a request benchmark: one server, one set of credentials and one request body each,
// measured in interleaved rounds and in alternating windows (ABBA) against a base case.
import { cpuMicros, type ChildServer } from './child.js';
import { warmupFor, type BenchConfig } from './config.js';
import { runLoad, type LoadResult, type RequestSpec, type ResponseCheck } from './load.js';
import { progress } from './report.js';
import { median, round } from './table.js';

export interface Sample {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** CPU time of the server under test per request (microseconds). */
  readonly svcCpu: number;
  /** CPU time of the remote per request (microseconds). */
  readonly remoteCpu: number;
}

export interface Case {
  readonly label: string;
  readonly server: ChildServer;
  /** Request i carries `headers[i % length]`. */
  readonly headers: readonly Record<string, string>[];
  /** The JSON body of request i. */
  readonly body: (index: number) => string;
  readonly check: ResponseCheck;
  cursor: number;
  failures: number;
  readonly reasons: Map<string, number>;
  readonly samples: Sample[];
  /** Puts the server in this case's state (outside any measured window): cases that share one server. */
  readonly prepare?: (() => Promise<void>) | undefined;
}

/** Ratios of `other` to `base` measured in alternating windows (req/s: other / base; CPU: base / other). */
export interface PairResult {
  readonly base: Case;
  readonly other: Case;
  readonly rps: number[];
  readonly cpu: number[];
}

export function newCase(
  label: string,
  server: ChildServer,
  headers: readonly Record<string, string>[],
  check: ResponseCheck,
  body: (index: number) => string,
  prepare?: () => Promise<void>,
): Case {
  return { label, server, headers, body, check, cursor: 0, failures: 0, reasons: new Map(), samples: [], prepare };
}

export type SampleKey = keyof Sample;

/** The median of a case's samples. */
export function stat(c: Case, key: SampleKey): number {
  return median(c.samples.map((s) => s[key]));
}

/** Loads, measures and compares cases whose servers all call `remote`. */
export function caseRunner(config: BenchConfig, remote: ChildServer) {
  /** Load on one case for `duration` seconds; failures are counted on the case. */
  const load = async (c: Case, duration: number): Promise<LoadResult> => {
    const request = (i: number): RequestSpec => ({ headers: c.headers[i % c.headers.length] ?? {}, body: c.body(i) });
    const res = await runLoad({ url: `${c.server.url}/v1/graphql`, connections: config.connections, duration, check: c.check, request }, c.cursor);
    c.cursor = res.requestsBuilt;
    c.failures += res.failures;
    for (const [reason, n] of res.reasons) c.reasons.set(reason, (c.reasons.get(reason) ?? 0) + n);
    return res;
  };

  /** A measured window: req/s, latency, and the CPU time per request of the server and of the remote. */
  const measure = async (c: Case, duration: number): Promise<Sample> => {
    await c.prepare?.();
    const [svcBefore, remoteBefore] = await Promise.all([c.server.stats(), remote.stats()]);
    const res = await load(c, duration);
    const [svcAfter, remoteAfter] = await Promise.all([c.server.stats(), remote.stats()]);
    const perRequest = (us: number) => us / Math.max(1, res.responses);
    return {
      rps: res.rps,
      p50: res.p50,
      p99: res.p99,
      svcCpu: perRequest(cpuMicros(svcBefore, svcAfter)),
      remoteCpu: perRequest(cpuMicros(remoteBefore, remoteAfter)),
    };
  };

  /** `config.rounds` rounds of every case in turn, each after its warm-up; samples go to the cases. */
  const rounds = async (cases: readonly Case[]): Promise<void> => {
    for (let r = 1; r <= config.rounds; r++) {
      for (const c of cases) {
        await c.prepare?.();
        await load(c, warmupFor(config, r));
        const sample = await measure(c, config.duration);
        c.samples.push(sample);
        progress(
          `[round ${r}/${config.rounds}] ${c.label}: ${Math.round(sample.rps)} req/s, p99 ${sample.p99} ms, ` +
            `svc CPU ${round(sample.svcCpu, 0)} us/req, failures so far ${c.failures}`,
        );
      }
    }
  };

  /**
   * `count` pairs of `seconds`-long windows of `base` and `other` back to back, in turn first (ABBA):
   * drift of the machine slower than a pair hits both sides of it alike.
   */
  const alternate = async (base: Case, other: Case, count: number, seconds: number): Promise<PairResult> => {
    const pair: PairResult = { base, other, rps: [], cpu: [] };
    for (let k = 0; k < count; k++) {
      const order = k % 2 === 0 ? [base, other] : [other, base];
      const samples = new Map<Case, Sample>();
      for (const c of order) samples.set(c, await measure(c, seconds));
      const b = samples.get(base);
      const o = samples.get(other);
      if (!b || !o) continue;
      pair.rps.push(o.rps / b.rps);
      pair.cpu.push(b.svcCpu / o.svcCpu);
    }
    progress(
      `[pairs] ${other.label} / ${base.label}: req/s ratio ${median(pair.rps).toFixed(3)}, ` +
        `CPU ratio ${median(pair.cpu).toFixed(3)} (${count} pairs of ${seconds} s)`,
    );
    return pair;
  };

  return { load, measure, rounds, alternate };
}

/** The interquartile range of `values`, as text. */
export function quartiles(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `${at(0.25).toFixed(2)} - ${at(0.75).toFixed(2)}`;
}

export const CASE_COLUMNS = ['case', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'svc CPU us/req', 'CPU ratio', 'remote CPU us/req', 'req/s per round', 'ratio per round', 'failures'];

/** A table row of `c`, with its ratios to `base` (the case it is compared with, if any). */
export function caseRow(c: Case, base: Case | undefined): Array<string | number> {
  return [
    c.label,
    Math.round(stat(c, 'rps')),
    base ? `${(stat(c, 'rps') / stat(base, 'rps')).toFixed(3)}x` : '1 (baseline)',
    stat(c, 'p50'),
    stat(c, 'p99'),
    Math.round(stat(c, 'svcCpu')),
    base ? `${(stat(base, 'svcCpu') / stat(c, 'svcCpu')).toFixed(3)}x` : '1 (baseline)',
    Math.round(stat(c, 'remoteCpu')),
    c.samples.map((s) => Math.round(s.rps)).join(' / '),
    base ? c.samples.map((s, i) => (s.rps / (base.samples[i]?.rps ?? Number.NaN)).toFixed(2)).join(' / ') : '-',
    c.failures,
  ];
}

export const PAIR_COLUMNS = ['comparison', 'pairs', 'req/s ratio', 'req/s ratio IQR', 'CPU ratio', 'CPU ratio IQR'];

export function pairRow(p: PairResult): Array<string | number> {
  return [`${p.other.label} / ${p.base.label}`, p.rps.length, `${median(p.rps).toFixed(3)}x`, quartiles(p.rps), `${median(p.cpu).toFixed(3)}x`, quartiles(p.cpu)];
}

/**
 * What the alternating windows measure, for the report: `count` pairs of `seconds` each, order
 * swapped every pair; per pair the req/s ratio (other / base) and the CPU ratio (base / other).
 */
export function pairsNote(count: number, seconds: number): string {
  return (
    `Alternating windows: each comparison measured as ${count} pairs of ${seconds} s windows back to back, ` +
    'the order swapped every pair (ABBA); per pair the req/s ratio (other / base) and the CPU ratio (base svc CPU ' +
    "per request / other's); median and interquartile range over the pairs:"
  );
}
