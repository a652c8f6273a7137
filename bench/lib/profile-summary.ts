// Where the time goes in a V8 CPU profile (from BENCH_CPU_PROF=1):
//   pnpm exec tsx bench/lib/profile-summary.ts bench/profiles/<name>.cpuprofile [top] [FROM-TO]
// Prints self time grouped by package (or workspace package), the same grouped by the nearest
// package on the stack, and the hottest functions. FROM-TO (microseconds of the monotonic clock,
// as `pnpm bench proxy` prints them with BENCH_CPU_PROF=1) keeps only the samples of that window.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `graphql-yoga`, `packages/jwt-session`, `node:internal`, ... from a script URL. */
export function groupOf(url: string): string {
  if (url === '') return '(native / idle / gc)';
  if (url.startsWith('node:')) return 'node:' + (url.split('/')[1] ?? 'internal');
  const store = url.lastIndexOf('/node_modules/');
  if (store >= 0) {
    const rest = url.slice(store + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const workspace = /\/(packages|examples|bench)\/([^/]+)\//.exec(url);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  return url;
}

/** Only the samples taken between `from` and `to` (microseconds of the profile's monotonic clock). */
export function samplesBetween(profile: Profile, from: number, to: number): Profile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t >= from && t <= to) {
      samples.push(id);
      timeDeltas.push(delta);
    }
  });
  return { ...profile, samples, timeDeltas };
}

export function summarize(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const idle = [...selfMicros].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((n, [, us]) => n + us, 0);
  const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfMicros) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const group = functionName === '(idle)' ? '(idle)' : groupOf(url);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|packages|examples)\//, '$1/')}:${lineNumber + 1}` : ''}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  // Inclusive ("total") time: every function on the stack of a sample gets the sample once.
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  // Who asked for the work: the nearest frame on the stack outside Node's own code (a socket write
  // under whatwg-node's response writer counts for @whatwg-node/server); "node only" when none.
  const owners = new Map<string, number>();
  for (const [id, us] of selfMicros) {
    let owner = byId.get(id)?.callFrame.functionName === '(idle)' ? '(idle)' : undefined;
    for (let cur: number | undefined = id; owner === undefined && cur !== undefined; cur = parents.get(cur)) {
      const url = byId.get(cur)?.callFrame.url ?? '';
      if (url !== '' && !url.startsWith('node:')) owner = groupOf(url);
    }
    const key = owner ?? 'node only (or native, GC)';
    owners.set(key, (owners.get(key) ?? 0) + us);
  }
  const inclusive = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parents.get(cur)) {
      const frame = byId.get(cur)?.callFrame;
      if (!frame || frame.functionName === '(root)' || frame.functionName === '(idle)' || frame.url === '') continue;
      seen.add(`${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|packages|examples)\//, '$1/')}:${frame.lineNumber + 1}`);
    }
    for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `total ${(total / 1e6).toFixed(2)} s sampled, ${((total - idle) / 1e6).toFixed(2)} s busy (not idle)`,
    '',
    'self time by package:',
    ...sorted(groups).slice(0, top).map(([g, us]) => `${pct(us)}  ${g}`),
    '',
    'self time by the nearest package on the stack (Node internals count for the package that called them):',
    ...sorted(owners).slice(0, top).map(([g, us]) => `${pct(us)}  ${g}`),
    '',
    'hottest functions (self time):',
    ...sorted(functions).slice(0, top).map(([f, us]) => `${pct(us)}  ${f}`),
    '',
    'hottest functions (total time, callees included):',
    ...sorted(inclusive).slice(0, top).map(([f, us]) => `${pct(us)}  ${f}`),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top, span] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/lib/profile-summary.ts <file.cpuprofile> [top] [FROM-TO]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const [from, to] = (span ?? '').split('-').map(Number);
  const chosen = from !== undefined && to !== undefined && to > from ? samplesBetween(profile, from, to) : profile;
  console.log(summarize(chosen, Number(top ?? 25)));
}
