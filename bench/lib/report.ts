// Shared printing for the benchmarks: the machine line, the settings, targets as PASS/MISS.
import type { BenchConfig } from './config.js';
import { describeMachine, loadAverage, machineInfo } from './machine.js';

const loadAtStart = loadAverage();

export interface Target {
  readonly name: string;
  /** The measured value as shown, e.g. "0.93x". */
  readonly measured: string;
  readonly pass: boolean;
}

export function header(title: string, config: BenchConfig, method: string): string {
  return [
    `## ${title}`,
    '',
    `Machine: ${describeMachine(machineInfo())}`,
    `Settings: ${config.rounds} round(s) x ${config.duration} s per case after ${config.warmup} s warm-up (0.5 s after round 1), ` +
      `${config.connections} connections, pipelining 1, ${config.pin ? 'server pinned to CPU 1, load on CPU 0' : 'no CPU pinning'}.`,
    `Load average (1 min) when the run started / ended: ${loadAtStart} / ${loadAverage()} (on ${machineInfo().cores} cores; this run itself adds about 2).`,
    `Method: ${method}`,
  ].join('\n');
}

export function targets(list: readonly Target[]): string {
  return list.map((t) => `- ${t.pass ? 'PASS' : 'MISS'} ${t.name}: measured ${t.measured}`).join('\n');
}

export function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function mib(bytes: number): number {
  return Math.round((bytes / 2 ** 20) * 10) / 10;
}
