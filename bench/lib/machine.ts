// What the numbers were measured on: without this a req/s figure means nothing.
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  readonly date: string;
}

function cpuModelFromProc(): string | undefined {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    return line?.split(':').slice(1).join(':').trim();
  } catch {
    return undefined;
  }
}

export function machineInfo(): MachineInfo {
  return {
    cpuModel: cpuModelFromProc() ?? cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: `${process.platform} ${release()}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/** The 1-minute load average: other work on the machine skews every figure, so it is printed too. */
export function loadAverage(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

export function describeMachine(m: MachineInfo): string {
  return `${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.kernel}, ${m.date}`;
}
