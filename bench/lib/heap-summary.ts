// `pnpm exec tsx bench/lib/heap-summary.ts <before.heapsnapshot> <after.heapsnapshot> [per] [top]`:
// what the heap gained between two V8 heap snapshots, by constructor (objects) or node type
// (closures, strings, arrays, code, ...): count and self size, divided by `per` (e.g. the number
// of subscribers held in the second snapshot but not the first).
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Node types that belong to whatever holds them (a closure's context, an object's backing array). */
const OWNED = new Set(['array', 'hidden', 'code', 'string', 'concatenated string', 'sliced string', 'number', 'object shape', 'system']);

type Groups = Map<string, { count: number; bytes: number }>;

function groups(path: string): Groups {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out: Groups = new Map();
  const { nodes, edges, strings } = snapshot;
  const edgeWidth = snapshot.snapshot.meta.edge_fields.length;
  const edgeTypeAt = snapshot.snapshot.meta.edge_fields.indexOf('type');
  const toAt = snapshot.snapshot.meta.edge_fields.indexOf('to_node');
  const weak = snapshot.snapshot.meta.edge_types[0].indexOf('weak');
  const countAt = fields.indexOf('edge_count');
  // The first (strong) retainer of every node: what an array or a context is counted for.
  const owner = new Int32Array(nodes.length / width).fill(-1);
  for (let i = 0, e = 0; i < nodes.length; i += width) {
    const end = e + (nodes[i + countAt] as number) * edgeWidth;
    for (; e < end; e += edgeWidth) {
      if (edges[e + edgeTypeAt] === weak) continue;
      const to = (edges[e + toAt] as number) / width;
      if (owner[to] === -1) owner[to] = i / width;
    }
  }
  const label = (index: number): string => {
    const type = types[nodes[index * width + typeAt] as number] as string;
    const name = strings[nodes[index * width + nameAt] as number] as string;
    return type === 'closure' ? `closure:${name || '(anonymous)'}` : `${type}:${name}`;
  };
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt] as number] as string;
    let key: string;
    if (OWNED.has(type)) {
      // Up the first retainers to the nearest object or closure (at most 6 steps).
      let at = owner[i / width] as number;
      for (let step = 0; step < 6 && at !== -1 && OWNED.has(types[nodes[at * width + typeAt] as number] as string); step++) at = owner[at] as number;
      key = `${type} of ${at === -1 ? '?' : label(at)}`;
    } else {
      // Objects by constructor, closures by function name, native objects by name.
      key = label(i / width);
    }
    const group = out.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += nodes[i + sizeAt] as number;
    out.set(key, group);
  }
  return out;
}

const [beforePath, afterPath, perText = '1', topText = '40'] = process.argv.slice(2);
if (!beforePath || !afterPath) {
  console.error('usage: heap-summary.ts <before.heapsnapshot> <after.heapsnapshot> [per] [top]');
  process.exit(2);
}
const per = Number(perText);
const before = groups(beforePath);
const after = groups(afterPath);
const rows = [...after].map(([key, a]) => {
  const b = before.get(key) ?? { count: 0, bytes: 0 };
  return { key, count: (a.count - b.count) / per, bytes: (a.bytes - b.bytes) / per };
});
rows.sort((x, y) => y.bytes - x.bytes);
const total = rows.reduce((sum, r) => sum + r.bytes, 0);
console.log(`self size gained: ${(total / 1024).toFixed(2)} KiB per ${per === 1 ? 'snapshot' : 'unit'}`);
console.log('| what | count | bytes |');
console.log('|---|---:|---:|');
for (const r of rows.slice(0, Number(topText))) console.log(`| ${r.key} | ${r.count.toFixed(2)} | ${r.bytes.toFixed(0)} |`);
