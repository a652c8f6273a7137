// Run-wide knobs, read once from the environment so every case of one run uses the same values.

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`${name} must be a positive number, got "${raw}"`);
  }
  return value;
}

/** Settings shared by every benchmark; see bench/README.md for what each one does. */
export interface BenchConfig {
  /** Seconds of measured load per case and round (`BENCH_DURATION`, default 5). */
  readonly duration: number;
  /** Seconds of unmeasured load before each measurement in round 1 (`BENCH_WARMUP`, default 2; later rounds 0.5). */
  readonly warmup: number;
  /** Concurrent HTTP/1.1 connections (`BENCH_CONNECTIONS`, default 50). */
  readonly connections: number;
  /** How many times the whole list of cases is repeated, interleaved (`BENCH_ROUNDS`, default 3). */
  readonly rounds: number;
  /** Pin the server child to CPU 1 and the load generator to CPU 0 (`BENCH_PIN=1`). */
  readonly pin: boolean;
  /** Write a V8 CPU profile of every server child to bench/profiles (`BENCH_CPU_PROF=1`). */
  readonly cpuProf: boolean;
}

/**
 * Warm-up before a measurement in round `round` (1-based): the full warm-up in round 1, when the
 * JIT is cold, and a short one afterwards, only to reopen connections and refill caches.
 */
export function warmupFor(config: BenchConfig, round: number): number {
  return round === 1 ? config.warmup : Math.min(config.warmup, 0.5);
}

export function readConfig(): BenchConfig {
  return {
    duration: positiveNumber('BENCH_DURATION', 5),
    warmup: positiveNumber('BENCH_WARMUP', 2),
    connections: Math.round(positiveNumber('BENCH_CONNECTIONS', 50)),
    rounds: Math.round(positiveNumber('BENCH_ROUNDS', 3)),
    pin: process.env['BENCH_PIN'] === '1',
    cpuProf: process.env['BENCH_CPU_PROF'] === '1',
  };
}
