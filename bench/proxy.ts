// `pnpm bench proxy`: one query sent through svc-graphql and straight to the remote, in one run
// (issue 3, section 6).
//
// Three child processes: the sample remote, svc-graphql (embedded store, JWT mode) with that remote
// added through the metadata API, and this process generating load. Every request carries different
// variables, so nothing along the way can answer several requests with one upstream call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, type ChildServer } from './lib/child.js';
import { readConfig, warmupFor } from './lib/config.js';
import { ADMIN_SECRET, startSampleGateway } from './lib/gateway.js';
import { describeFailures, graphqlData, runLoad, type RequestSpec } from './lib/load.js';
import { metadataOrThrow } from './lib/metadata.js';
import { header, progress, targets, type Target } from './lib/report.js';
import { formatTable, median, round } from './lib/table.js';

const config = readConfig();
const QUERY = /* GraphQL */ `
  query Bench($id: ID!, $name: String) {
    hello(name: $name)
    user(id: $id) { id name role posts { id title } }
  }
`;
/** The same selection under the root field namespace of the customized copy of the remote. */
const NAMESPACED_QUERY = /* GraphQL */ `
  query Bench($id: ID!, $name: String) {
    custom { hello(name: $name) user(id: $id) { id name role posts { id title } } }
  }
`;
const variables = (i: number) => ({ id: String((i % 3) + 1), name: `n${i}` });
const checkFields = (fields: Record<string, unknown> | undefined): string | undefined => {
  const hello = fields?.['hello'];
  const user = fields?.['user'] as { id?: unknown } | null | undefined;
  if (typeof hello !== 'string' || !hello.startsWith('Hello, n')) return `hello was ${JSON.stringify(hello)}`;
  if (!user || typeof user.id !== 'string') return `user was ${JSON.stringify(user)}`;
  return undefined;
};
const check = graphqlData((data) => checkFields(data));
const checkNamespaced = graphqlData((data) => checkFields(data['custom'] as Record<string, unknown> | undefined));

interface Case {
  readonly label: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly query: string;
  readonly check: typeof check;
  cursor: number;
  failures: number;
  readonly reasons: Map<string, number>;
  readonly samples: { rps: number; p50: number; p99: number; svcCpu: number; remoteCpu: number }[];
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-proxy-'));
const children: ChildServer[] = [];
const cases: Case[] = [];
try {
  const { remote, svc, jwt } = await startSampleGateway('proxy', dir, config, children);
  // The same remote once more, renamed: operations on it cannot be forwarded as they are and go
  // through delegation on the stitched schema, which shows what the fast path saves.
  await metadataOrThrow(svc.url, ADMIN_SECRET, 'add_remote_schema', {
    name: 'sample_customized',
    definition: { url: remote.url, customization: { root_fields_namespace: 'custom', type_names: { prefix: 'C_' } } },
  });

  const newCase = (label: string, url: string, headers: Record<string, string>, namespaced = false): Case => ({
    label,
    url,
    headers,
    query: namespaced ? NAMESPACED_QUERY : QUERY,
    check: namespaced ? checkNamespaced : check,
    cursor: 0,
    failures: 0,
    reasons: new Map(),
    samples: [],
  });
  cases.push(newCase('direct to the remote', remote.url, {}));
  cases.push(newCase('through svc-graphql (JWT)', `${svc.url}/v1/graphql`, { authorization: `Bearer ${jwt.token}` }));
  cases.push(newCase('through svc-graphql (admin secret)', `${svc.url}/v1/graphql`, { 'x-svc-admin-secret': ADMIN_SECRET }));
  cases.push(
    newCase('through svc-graphql, customized remote (JWT, delegation)', `${svc.url}/v1/graphql`, { authorization: `Bearer ${jwt.token}` }, true),
  );

  for (let r = 1; r <= config.rounds; r++) {
    for (const c of cases) {
      const request = (i: number): RequestSpec => ({
        headers: c.headers,
        body: JSON.stringify({ query: c.query, operationName: 'Bench', variables: variables(i) }),
      });
      const load = (duration: number) =>
        runLoad({ url: c.url, connections: config.connections, duration, check: c.check, request }, c.cursor);
      const warm = await load(warmupFor(config, r));
      c.cursor = warm.requestsBuilt;
      const [svcBefore, remoteBefore] = await Promise.all([svc.stats(), remote.stats()]);
      const res = await load(config.duration);
      const [svcAfter, remoteAfter] = await Promise.all([svc.stats(), remote.stats()]);
      c.cursor = res.requestsBuilt;
      for (const outcome of [warm, res]) {
        c.failures += outcome.failures;
        for (const [reason, n] of outcome.reasons) c.reasons.set(reason, (c.reasons.get(reason) ?? 0) + n);
      }
      const perRequest = (us: number) => us / Math.max(1, res.responses);
      c.samples.push({
        rps: res.rps,
        p50: res.p50,
        p99: res.p99,
        svcCpu: perRequest(cpuMicros(svcBefore, svcAfter)),
        remoteCpu: perRequest(cpuMicros(remoteBefore, remoteAfter)),
      });
      progress(
        `[round ${r}/${config.rounds}] ${c.label}: ${Math.round(res.rps)} req/s, p99 ${res.p99} ms, ` +
          `failures ${warm.failures + res.failures}`,
      );
    }
  }
} finally {
  await Promise.all(children.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
}

type Key = 'rps' | 'p50' | 'p99' | 'svcCpu' | 'remoteCpu';
const stat = (c: Case, key: Key): number => median(c.samples.map((s) => s[key]));
const direct = cases[0];
if (!direct) throw new Error('no cases ran');
const directRps = stat(direct, 'rps');
const ratio = (c: Case | undefined): number => (c ? stat(c, 'rps') / directRps : Number.NaN);
const rows = cases.map((c, i) => [
  c.label,
  Math.round(stat(c, 'rps')),
  `${ratio(c).toFixed(3)}x`,
  stat(c, 'p50'),
  stat(c, 'p99'),
  i === 0 ? '-' : String(round(stat(c, 'svcCpu'), 0)),
  round(stat(c, 'remoteCpu'), 0),
  c.samples.map((s) => Math.round(s.rps)).join(' / '),
  // Each round's ratio against the same round's baseline: less exposed to slow drift of the machine.
  c.samples.map((s, i) => (s.rps / (direct.samples[i]?.rps ?? Number.NaN)).toFixed(2)).join(' / '),
  c.failures,
]);
const viaJwt = cases[1];
const totalFailures = cases.reduce((n, c) => n + c.failures, 0);
const targetList: Target[] = [
  { name: 'through svc-graphql (JWT) >= 0.5x direct', measured: `${ratio(viaJwt).toFixed(3)}x`, pass: ratio(viaJwt) >= 0.5 },
  { name: 'no failed responses', measured: String(totalFailures), pass: totalFailures === 0 },
];
console.log(
  [
    header(
      'proxy: svc-graphql vs the remote called directly',
      config,
      'the sample remote (examples/sample-remotes) and svc-graphql (packages/server, embedded store, JWT mode, ' +
        'log level error) each in their own Node child process, the remote added with `add_remote_schema`; ' +
        'autocannon in the parent sends `query Bench($id: ID!, $name: String) { hello(name: $name) user(id: $id) ' +
        '{ id name role posts { id title } } }` with different variables on every request (name n0, n1, ...), ' +
        'so no two concurrent upstream requests are identical (the remote-schemas executor has no de-duplication ' +
        'to turn off); each answer must carry `hello` and `user`. JWT cases: one HS256 token (cache hits). ' +
        'The customized case sends the same selection to a second copy of the remote added with ' +
        '`root_fields_namespace: custom` and `type_names.prefix: C_`, which cannot be forwarded as it is. ' +
        'CPU columns: child CPU time per request.',
    ),
    '',
    formatTable(
      ['case', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'svc CPU us/req', 'remote CPU us/req', 'req/s per round', 'ratio per round', 'failures'],
      rows,
    ),
    '',
    targets(targetList),
  ].join('\n'),
);
for (const c of cases) {
  if (c.failures > 0) console.log(`\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`);
}
process.exitCode = totalFailures > 0 ? 1 : 0;
