// `pnpm exec tsx bench/lib/allocation-summary.ts <profile.heapprofile> [per] [top]`: what a process
// allocated while V8's sampling heap profiler ran (bench subscriptions' BENCH_ALLOCATIONS), by the
// function that allocated it (self) and by the package or file it is in, in bytes divided by `per`
// (e.g. the events delivered in the window: bytes per event).
import { readFileSync } from 'node:fs';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const [path, perArg, topArg] = process.argv.slice(2);
if (path === undefined) {
  console.error('usage: allocation-summary.ts <profile.heapprofile> [per] [top]');
  process.exit(2);
}
const per = Number(perArg ?? 1);
const top = Number(topArg ?? 30);
const { head } = JSON.parse(readFileSync(path, 'utf8')) as { head: ProfileNode };

/** `node_modules/.pnpm/<name>@<version>/…` → `<name>`; our files → their path in the repository. */
function where(url: string): string {
  const inModules = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inModules) return inModules[1]!;
  const ours = /\/(packages\/[^?]+|bench\/[^?]+)/.exec(url);
  if (ours) return ours[1]!;
  return url === '' ? '(native or V8)' : url.replace(/^node:/, 'node:');
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode): void => {
  if (node.selfSize > 0) {
    const { functionName, url, lineNumber } = node.callFrame;
    const place = where(url);
    const fn = `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize);
    total += node.selfSize;
  }
  for (const child of node.children) walk(child);
};
walk(head);

const table = (title: string, rows: Map<string, number>): void => {
  console.log(`\n| ${title} | bytes${per === 1 ? '' : ' per unit'} | share |\n|---|---:|---:|`);
  for (const [name, bytes] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| ${name} | ${Math.round(bytes / per)} | ${((bytes / total) * 100).toFixed(1)} % |`);
  }
};
console.log(`Allocated (sampled): ${Math.round(total / per)} bytes${per === 1 ? '' : ' per unit'}`);
table('package or file', byPlace);
table('function', byFunction);
