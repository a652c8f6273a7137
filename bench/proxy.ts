// `pnpm bench proxy`: svc-graphql against the remote called directly and against a bare `node:http`
// pass-through (the floor of any Node proxy), side by side in one run.
//
// Child processes: the sample remote, a generated remote (prefix `g_`, for the operation over two
// remotes), the pass-through floor, svc-graphql (embedded store, RS256 JWT mode) with both remotes and
// a customized copy of the sample remote added through the metadata API, and, when the server has
// `--disable-metrics`, a second svc-graphql with metrics off. This process only generates load and
// checks every answer. Every request carries different variables, so nothing along the way can
// answer several requests with one upstream call.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BEFORE_SUFFIX, beforeCheckout, compareTwins, twinsOf, inRoundOrder, moduleOf } from './lib/before.js';
import { benchDir, cpuMicros, startChild, type ChildServer } from './lib/child.js';
import { readConfig, warmupFor } from './lib/config.js';
import { ADMIN_SECRET, startSvc } from './lib/gateway.js';
import { mintPool, rs256UserToken } from './lib/jwt.js';
import { describeFailures, graphqlData, runLoad, runPaced, type RequestSpec, type ResponseCheck } from './lib/load.js';
import { metadataOrThrow } from './lib/metadata.js';
import { header, progress, targets, type Target } from './lib/report.js';
import { formatTable, median } from './lib/table.js';

const config = readConfig();
/** BENCH_BEFORE: another checkout whose svc-graphql runs every svc-graphql case too, as a twin "(before)". */
const before = beforeCheckout();
/** With BENCH_BEFORE: pairs of short windows per case and its twin after the rounds (BENCH_PAIRS, default 20). */
const PAIRS = before ? Math.max(0, Number(process.env['BENCH_PAIRS'] ?? 20)) : 0;
const PAIR_WINDOW = { warmup: 0.25, duration: Math.max(0.5, Number(process.env['BENCH_PAIR_SECONDS'] ?? 1)) };
/** BENCH_ONLY: a regular expression on the case labels; direct and the floor always run. */
const only = new RegExp(process.env['BENCH_ONLY'] ?? '.', 'i');
/** The JWT plugin's verified-token cache holds 10,000 entries: a pool twice that size always misses. */
const POOL = Math.max(20_000, Number(process.env['BENCH_TOKENS'] ?? 20_000));
const ALIASES = 50;

const SELECTION = 'hello(name: $name) user(id: $id) { id name role posts { id title } }';
const QUERY = `query Bench($id: ID!, $name: String) { ${SELECTION} }`;
/** The same selection under the root field namespace of the customized copy of the remote. */
const NAMESPACED_QUERY = `query Bench($id: ID!, $name: String) { custom { ${SELECTION} } }`;
/** The same selection plus one root field of the generated remote. */
const TWO_REMOTES_QUERY = `query Bench($id: ID!, $name: String) { ${SELECTION} g_t3 { id name value parent { id } } }`;
const ALIASES_QUERY = `query Bench($name: String) { ${Array.from({ length: ALIASES }, (_, i) => `a${i}: hello(name: $name)`).join(' ')} }`;

const variables = (i: number) => ({ id: String((i % 3) + 1), name: `n${i}` });
const helloOk = (hello: unknown): string | undefined =>
  typeof hello === 'string' && hello.startsWith('Hello, n') ? undefined : `hello was ${JSON.stringify(hello)}`;
const checkFields = (fields: Record<string, unknown> | undefined): string | undefined => {
  const user = fields?.['user'] as { id?: unknown } | null | undefined;
  return helloOk(fields?.['hello']) ?? (user && typeof user.id === 'string' ? undefined : `user was ${JSON.stringify(user)}`);
};
const check = graphqlData((data) => checkFields(data));
const checkNamespaced = graphqlData((data) => checkFields(data['custom'] as Record<string, unknown> | undefined));
const checkTwoRemotes = graphqlData((data) => {
  const g = data['g_t3'] as { id?: unknown } | null | undefined;
  return checkFields(data) ?? (g?.id === 'g_3' ? undefined : `g_t3 was ${JSON.stringify(g)}`);
});
const checkAliases = graphqlData((data) => {
  for (let i = 0; i < ALIASES; i++) {
    const bad = helloOk(data[`a${i}`]);
    if (bad !== undefined) return `a${i}: ${bad}`;
  }
  return undefined;
});

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time per answer of the process in front of the remotes (floor or svc-graphql); NaN for direct. */
  proxyCpu: number;
  /** CPU time per answer of both remote processes together. */
  remoteCpu: number;
  /** HTTP requests both remotes received per answer. */
  remoteRequests: number;
}

interface Case {
  readonly label: string;
  readonly url: string;
  /** The process in front of the remotes, absent when the remote is called directly. */
  readonly proxy?: ChildServer;
  readonly headers: (index: number) => Record<string, string>;
  readonly query: string;
  readonly variables: (index: number) => Record<string, unknown>;
  readonly check: ResponseCheck;
  /** Requests the sample remote and the generated remote must each receive for one operation. */
  readonly perOperation: readonly [number, number];
  /** What one operation sent alone made each remote receive (checked before the rounds). */
  measuredPerOperation?: [number, number];
  cursor: number;
  failures: number;
  readonly reasons: Map<string, number>;
  readonly samples: Sample[];
  /** The fixed-rate phase (direct and the fast path only). */
  readonly fixed: Sample[];
  /** With BENCH_BEFORE: short windows alternating with the twin case (BENCH_PAIRS). */
  readonly paired: Sample[];
}

/** Does this server's CLI know `--disable-metrics`? (Another change adds it; until then that pair is skipped.) */
function serverHasDisableMetrics(): boolean {
  const help = spawnSync(process.execPath, ['--import', 'tsx', 'packages/server/src/cli/bin.ts', 'serve', '--help'], {
    cwd: dirname(benchDir),
    encoding: 'utf8',
  });
  return help.stdout.includes('--disable-metrics');
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-proxy-'));
const children: ChildServer[] = [];
const cases: Case[] = [];
let remotes: ChildServer[] = [];
let p99Rate = 0;
const metricsFlag = serverHasDisableMetrics();
const us = (n: number) => (Number.isNaN(n) ? '-' : String(Math.round(n)));

/** `window`: a short measurement (BENCH_PAIRS) instead of a round's: its warm-up and duration, in seconds. */
const measure = async (c: Case, round: number, rate?: number, window?: { warmup: number; duration: number }): Promise<Sample> => {
  const request = (i: number): RequestSpec => ({
    headers: c.headers(i),
    body: JSON.stringify({ query: c.query, operationName: 'Bench', variables: c.variables(i) }),
  });
  const load = (duration: number) => {
    const options = { url: c.url, connections: config.connections, duration, check: c.check, request };
    return rate === undefined ? runLoad(options, c.cursor) : runPaced({ ...options, rate }, c.cursor);
  };
  const watched = [...remotes, ...(c.proxy ? [c.proxy] : [])];
  const warm = await load(window?.warmup ?? (rate === undefined ? warmupFor(config, round) : 0.5));
  c.cursor = warm.requestsBuilt;
  const before = await Promise.all(watched.map((s) => s.stats()));
  const started = process.hrtime.bigint() / 1000n; // the clock of V8's CPU profiles, for profile-summary.ts
  const res = await load(window?.duration ?? config.duration);
  const ended = process.hrtime.bigint() / 1000n;
  const after = await Promise.all(watched.map((s) => s.stats()));
  c.cursor = res.requestsBuilt;
  for (const outcome of [warm, res]) {
    c.failures += outcome.failures;
    for (const [reason, n] of outcome.reasons) c.reasons.set(reason, (c.reasons.get(reason) ?? 0) + n);
  }
  const perAnswer = (n: number) => n / Math.max(1, res.responses);
  // watched[i] for i < remotes.length are the remotes, the last one the proxy (when there is one).
  const cpu = (i: number) => (after[i] && before[i] ? cpuMicros(before[i], after[i]) : 0);
  const requests = (i: number) => (after[i]?.requests ?? 0) - (before[i]?.requests ?? 0);
  const overRemotes = (f: (i: number) => number) => remotes.reduce((n, _, i) => n + f(i), 0);
  const sample: Sample = {
    rps: res.rps,
    p50: res.p50,
    p99: res.p99,
    proxyCpu: c.proxy ? perAnswer(cpu(remotes.length)) : Number.NaN,
    remoteCpu: perAnswer(overRemotes(cpu)),
    remoteRequests: perAnswer(overRemotes(requests)),
  };
  progress(
    `[${window ? `pair ${round}` : rate === undefined ? `round ${round}/${config.rounds}` : `${rate} req/s`}] ${c.label}: ` +
      `${Math.round(res.rps)} req/s, p99 ${res.p99} ms, proxy CPU ${us(sample.proxyCpu)} us, failures ${warm.failures + res.failures}` +
      (config.cpuProf ? ` (profile window ${started}-${ended}, ${res.responses} answers)` : ''),
  );
  return sample;
};

/** Sends one operation alone and counts the requests each remote received for it. */
const countPerOperation = async (c: Case): Promise<void> => {
  const before = await Promise.all(remotes.map((s) => s.stats()));
  const response = await fetch(c.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...c.headers(c.cursor) },
    body: JSON.stringify({ query: c.query, operationName: 'Bench', variables: c.variables(c.cursor) }),
  });
  c.cursor += 1;
  const bad = c.check(response.status, await response.text());
  if (bad !== undefined) {
    c.failures += 1;
    c.reasons.set(`single operation: ${bad}`, 1);
  }
  const after = await Promise.all(remotes.map((s) => s.stats()));
  const count = (i: number) => (after[i]?.requests ?? 0) - (before[i]?.requests ?? 0);
  c.measuredPerOperation = [count(0), count(1)];
};

try {
  progress(`minting ${POOL} distinct RS256 tokens with jose (not measured) ...`);
  const jwt = await rs256UserToken();
  const pool = await mintPool(jwt.signingKey, 'RS256', POOL);

  const remote = await startChild('proxy-remote', 'lib/remote-server.ts', { kind: 'sample' }, config);
  children.push(remote);
  const generated = await startChild('proxy-remote-g', 'lib/remote-server.ts', { kind: 'generated', types: 10, prefix: 'g_' }, config);
  children.push(generated);
  remotes = [remote, generated];
  const floor = await startChild('proxy-floor', 'lib/passthrough-server.ts', { target: remote.url }, config);
  children.push(floor);
  /** svc-graphql of a checkout (this one, or BENCH_BEFORE's), its remotes added; and one with metrics off. */
  const startGateways = async (suffix: string, module: string) => {
    const tag = suffix === '' ? '' : '-before';
    const svc = await startSvc(`proxy-svc${tag}`, dir, config, jwt.config, { sample: remote.url, generated: generated.url }, {}, module);
    children.push(svc);
    // The same remote once more, renamed: operations on it must be rewritten into the remote's names.
    await metadataOrThrow(svc.url, ADMIN_SECRET, 'add_remote_schema', {
      name: 'sample_customized',
      definition: { url: remote.url, customization: { root_fields_namespace: 'custom', type_names: { prefix: 'C_' } } },
    });
    const noMetrics =
      metricsFlag && only.test('fast path, JWT one token, metrics off')
        ? await startSvc(`proxy-svc-no-metrics${tag}`, dir, config, jwt.config, { sample: remote.url }, { disableMetrics: true }, module)
        : undefined;
    if (noMetrics) children.push(noMetrics);
    return { suffix, svc, noMetrics };
  };
  const gateways = [await startGateways('', 'lib/svc-server.ts'), ...(before ? [await startGateways(BEFORE_SUFFIX, moduleOf(before, 'lib/svc-server.ts'))] : [])];

  const bearer = (token: string) => () => ({ authorization: `Bearer ${token}` });
  const newCase = (
    label: string,
    proxy: ChildServer | undefined,
    url: string,
    rest: Partial<Pick<Case, 'headers' | 'query' | 'variables' | 'check' | 'perOperation'>> = {},
  ): Case => ({
    label,
    url,
    ...(proxy && { proxy }),
    headers: bearer(jwt.token),
    query: QUERY,
    variables,
    check,
    perOperation: [1, 0],
    ...rest,
    cursor: 0,
    failures: 0,
    reasons: new Map(),
    samples: [],
    fixed: [],
    paired: [],
  });
  const svcCases = ({ suffix, svc, noMetrics }: (typeof gateways)[number]): Case[] => {
    const gql = `${svc.url}/v1/graphql`;
    return [
      newCase(`fast path, JWT one token${suffix}`, svc, gql),
      ...(noMetrics ? [newCase(`fast path, JWT one token, metrics off${suffix}`, noMetrics, `${noMetrics.url}/v1/graphql`)] : []),
      newCase(`fast path, JWT distinct RS256 tokens${suffix}`, svc, gql, {
        headers: (i) => ({ authorization: `Bearer ${pool[i % pool.length] ?? ''}` }),
      }),
      newCase(`customized remote (namespace + prefix)${suffix}`, svc, gql, { query: NAMESPACED_QUERY, check: checkNamespaced }),
      newCase(`one operation over two remotes${suffix}`, svc, gql, { query: TWO_REMOTES_QUERY, check: checkTwoRemotes, perOperation: [1, 1] }),
      newCase(`${ALIASES} aliases of one remote field${suffix}`, svc, gql, {
        query: ALIASES_QUERY,
        variables: (i) => ({ name: `n${i}` }),
        check: checkAliases,
      }),
      // BENCH_ONLY picks cases by their label on this checkout: a case and its twin run together.
    ].filter((c) => only.test(c.label.slice(0, c.label.length - suffix.length)));
  };
  // With BENCH_BEFORE, each case's twin on the other checkout right after it: neighbours in time.
  const [current, ...others] = gateways.map(svcCases);
  cases.push(
    newCase('direct to the remote', undefined, remote.url, { headers: () => ({}) }),
    newCase('pass-through floor (node:http)', floor, `${floor.url}/graphql`, { headers: () => ({}) }),
    ...(current ?? []).flatMap((c) => [c, ...others.flatMap((twins) => twins.filter((t) => t.label === `${c.label}${BEFORE_SUFFIX}`))]),
  );

  for (const c of cases) await countPerOperation(c);
  for (let r = 1; r <= config.rounds; r++) {
    for (const c of inRoundOrder(cases, r)) c.samples.push(await measure(c, r));
  }
  // With BENCH_BEFORE: many short windows, each case alternating with its twin, which runs first
  // alternating too: a sharper before/after ratio than a few rounds on a busy machine.
  for (let p = 1; p <= PAIRS; p++) {
    for (const [after, twin] of twinsOf(cases)) {
      for (const c of p % 2 === 1 ? [after, twin] : [twin, after]) c.paired.push(await measure(c, p, undefined, PAIR_WINDOW));
    }
  }
  // p99 at the same req/s: direct and the fast path at a fixed rate both can hold; the floor too,
  // for what any process in between costs in p99 on this machine.
  const fast = cases.find((c) => c.label === 'fast path, JWT one token');
  const directCase = cases[0];
  const floorAtRate = cases.find((c) => c.label === 'pass-through floor (node:http)');
  if (fast && directCase) {
    p99Rate = Number(process.env['BENCH_P99_RATE'] ?? 0) || Math.max(50, Math.round((median(fast.samples.map((s) => s.rps)) * 0.5) / 50) * 50);
    for (let r = 1; r <= config.rounds; r++) {
      for (const c of floorAtRate ? [directCase, floorAtRate, fast] : [directCase, fast]) c.fixed.push(await measure(c, r, p99Rate));
    }
  }
} finally {
  await Promise.all(children.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
}

type Key = keyof Sample;
const stat = (c: Case | undefined, key: Key, from: 'samples' | 'fixed' = 'samples'): number =>
  c ? median(c[from].map((s) => s[key])) : Number.NaN;
const byLabel = (label: string) => cases.find((c) => c.label === label);
const direct = cases[0];
const floorCase = byLabel('pass-through floor (node:http)');
const fast = byLabel('fast path, JWT one token');
const vsDirect = (c: Case | undefined) => stat(c, 'rps') / stat(direct, 'rps');
/** Per round: `a`'s figure / `b`'s in the same round (neighbours in time, so less exposed to the machine's drift). */
const roundRatios = (a: Case | undefined, b: Case | undefined, key: Key): number[] =>
  a ? a.samples.map((s, i) => s[key] / (b?.samples[i]?.[key] ?? Number.NaN)) : [];
const floorRatios = (c: Case | undefined): number[] => roundRatios(c, floorCase, 'proxyCpu');
const vsFloor = (c: Case | undefined) => median(floorRatios(c));
const x = (n: number) => (Number.isNaN(n) ? '-' : `${n.toFixed(2)}x`);

const rows = cases.map((c) => [
  c.label,
  Math.round(stat(c, 'rps')),
  x(vsDirect(c)),
  stat(c, 'p50'),
  stat(c, 'p99'),
  us(stat(c, 'proxyCpu')),
  c.proxy ? x(vsFloor(c)) : '-',
  Math.round(stat(c, 'remoteCpu')),
  (c.measuredPerOperation ?? []).join(' + '),
  stat(c, 'remoteRequests').toFixed(2),
  c.samples.map((s) => Math.round(s.rps)).join(' / '),
  c.samples.map((s) => us(s.proxyCpu)).join(' / '),
  c.proxy ? floorRatios(c).map((r) => r.toFixed(2)).join(' / ') : '-',
  c.failures,
]);
const fixedRows = cases
  .filter((c) => c.fixed.length > 0)
  .map((c) => [
    c.label,
    p99Rate,
    Math.round(stat(c, 'rps', 'fixed')),
    stat(c, 'p50', 'fixed'),
    stat(c, 'p99', 'fixed'),
    c.fixed.map((s) => s.p99).join(' / '),
    us(stat(c, 'proxyCpu', 'fixed')),
    Math.round(stat(c, 'remoteCpu', 'fixed')),
  ]);

const totalFailures = cases.reduce((n, c) => n + c.failures, 0);
const cpuTarget = (c: Case | undefined, limit: number): Target[] =>
  c ? [{ name: `${c.label}: svc CPU per request <= ${limit}x the floor's`, measured: x(vsFloor(c)), pass: vsFloor(c) <= limit }] : [];
const aliases = byLabel(`${ALIASES} aliases of one remote field`);
const offCase = byLabel('fast path, JWT one token, metrics off');
const p99Ratio = stat(fast, 'p99', 'fixed') / stat(direct, 'p99', 'fixed');
const rateHeld = [direct, fast].every((c) => stat(c, 'rps', 'fixed') >= 0.95 * p99Rate);
const targetList: Target[] = [
  ...cpuTarget(fast, 1.5),
  ...cpuTarget(byLabel('customized remote (namespace + prefix)'), 2),
  ...cpuTarget(byLabel('one operation over two remotes'), 2),
  ...(fast
    ? [
        {
          // Only a verdict when both held the rate (95 %); otherwise the latencies are not at the same req/s.
          name: `p99 through svc-graphql <= 1.5x direct p99 at ${p99Rate} req/s (fixed rate, both holding it)`,
          measured:
            `${x(p99Ratio)}${rateHeld ? '' : ` (rate not held: ${Math.round(stat(direct, 'rps', 'fixed'))} / ${Math.round(stat(fast, 'rps', 'fixed'))} req/s)`}` +
            (floorCase && floorCase.fixed.length > 0 ? `; the pass-through floor at the same rate: ${x(stat(floorCase, 'p99', 'fixed') / stat(direct, 'p99', 'fixed'))}` : ''),
          pass: rateHeld && p99Ratio <= 1.5,
        },
      ]
    : []),
  ...(aliases
    ? [
        {
          // Under load the requests still in flight when a window closes reach the remote but are not
          // counted as answers (up to one per connection), hence "well under 2" rather than exactly 1.
          name: `${ALIASES} aliases: one request to the remote per operation (alone: exactly 1; per answer under load: < 2)`,
          measured: `${aliases.measuredPerOperation?.join(' + ')} / ${stat(aliases, 'remoteRequests').toFixed(2)}`,
          pass: aliases.measuredPerOperation?.[0] === 1 && aliases.measuredPerOperation[1] === 0 && stat(aliases, 'remoteRequests') < 2,
        },
      ]
    : []),
  ...(offCase && fast
    ? [
        {
          name: 'metrics on >= 0.97x metrics off (svc CPU per request off / on, per round, median)',
          measured: `${x(median(roundRatios(offCase, fast, 'proxyCpu')))} (req/s on / off: ${x(median(roundRatios(fast, offCase, 'rps')))})`,
          pass: median(roundRatios(offCase, fast, 'proxyCpu')) >= 0.97,
        },
      ]
    : []),
  {
    name: 'every operation reached each remote exactly as often as planned (one operation alone)',
    measured: cases.filter((c) => c.measuredPerOperation?.join() !== c.perOperation.join()).map((c) => c.label).join(', ') || 'all',
    pass: cases.every((c) => c.measuredPerOperation?.join() === c.perOperation.join()),
  },
  { name: 'no failed responses', measured: String(totalFailures), pass: totalFailures === 0 },
];
const comparison = before
  ? compareTwins(
      cases,
      (c) => c.samples.map((s) => ({ rps: s.rps, cpu: s.proxyCpu })),
      (c) => c.paired.map((s) => ({ rps: s.rps, cpu: s.proxyCpu })),
      0.97,
    )
  : undefined;
if (comparison) targetList.push(...comparison.targets);
const distinct = byLabel('fast path, JWT distinct RS256 tokens');
const notes = [
  metricsFlag ? '' : '- metrics on vs off: skipped, `svc-graphql serve --help` does not list `--disable-metrics`.',
  distinct && fast
    ? `- distinct RS256 tokens >= 0.85x bare Yoga (CPU ratio) is judged by \`pnpm bench auth\`; here a distinct RS256 token ` +
      `cost ${us(stat(distinct, 'proxyCpu'))} us of svc CPU per request, the reused token ${us(stat(fast, 'proxyCpu'))} us.`
    : '',
].filter((n) => n !== '');
console.log(
  [
    header(
      'proxy: svc-graphql vs the remote called directly and vs a bare node:http pass-through',
      config,
      'the sample remote and a generated remote (examples/sample-remotes, 10 types, prefix `g_`), the ' +
        'pass-through floor (bench/lib/passthrough-server.ts: `node:http`, reads the body, forwards it to the sample ' +
        'remote over a keep-alive agent, writes the answer back; no GraphQL) and svc-graphql (packages/server, ' +
        'embedded store, RS256 JWT mode, log level error) each in their own Node child process, the remotes added ' +
        'with `add_remote_schema` (plus `sample_customized`: the sample remote again with `root_fields_namespace: custom` ' +
        'and `type_names.prefix: C_`); autocannon in the parent sends `query Bench($id: ID!, $name: String) ' +
        '{ hello(name: $name) user(id: $id) { id name role posts { id title } } }` with different variables on every ' +
        'request (name n0, n1, ...); each answer must carry `hello` and `user`. Variants: the same selection under ' +
        '`custom`; the same plus `g_t3 { id name value parent { id } }` of the generated remote (two remotes); ' +
        `${ALIASES} aliases \`aN: hello(name: $name)\`, each checked. JWT: one RS256 token reused (cache hits), or ` +
        `a pool of ${POOL} pre-minted RS256 tokens used in order (every request a cache miss). ` +
        'proxy CPU = CPU time per answer of the floor or svc-graphql child; CPU vs floor = that / the floor\'s in the same ' +
        'round, median over the rounds; remote CPU = ' +
        'both remote children; remote requests = HTTP requests the remotes received for one operation sent alone ' +
        '(sample + generated) and per answer under load. Figures are medians over the rounds.' +
        (before ? ` Cases marked "(before)" run on the svc-graphql of BENCH_BEFORE (${before.benchDir}), right after their twin of this checkout.` : ''),
    ),
    '',
    formatTable(
      [
        'case',
        'req/s',
        'req/s vs direct',
        'p50 ms',
        'p99 ms',
        'proxy CPU us/req',
        'CPU vs floor',
        'remote CPU us/req',
        'remote requests (one op)',
        'remote requests per answer',
        'req/s per round',
        'proxy CPU per round',
        'CPU vs floor per round',
        'failures',
      ],
      rows,
    ),
    '',
    ...(fixedRows.length > 0
      ? [
          `Fixed rate (${p99Rate} req/s, half the fast path's median req/s unless BENCH_P99_RATE is set, open loop: requests ` +
            `leave on schedule over up to ${config.connections} keep-alive sockets, latency to the last byte in 0.1 ms; ` +
            'direct, the floor and the fast path alternate per round):',
          '',
          formatTable(['case', 'rate', 'req/s', 'p50 ms', 'p99 ms', 'p99 per round', 'proxy CPU us/req', 'remote CPU us/req'], fixedRows),
          '',
        ]
      : []),
    ...(comparison ? [comparison.table, ''] : []),
    targets(targetList),
    ...notes,
  ].join('\n'),
);
for (const c of cases) {
  if (c.failures > 0) console.log(`\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`);
}
process.exitCode = totalFailures > 0 ? 1 : 0;
