// `pnpm bench joins`: remote relationships. 50 orders each joined to its user on another remote
// (and two levels, orders → user → organization), svc-graphql side by side with a gateway built
// with @graphql-tools/stitch (batch delegation over batched subschemas) on the same remotes, and
// with svc-graphql's own fast path for the orders alone. Every server runs in its own child
// process; the figure is the gateway's CPU time per answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, startChild, type ChildServer } from './lib/child.js';
import { readConfig, warmupFor } from './lib/config.js';
import { ADMIN_SECRET, startSvc } from './lib/gateway.js';
import { hs256UserToken } from './lib/jwt.js';
import { describeFailures, graphqlData, runLoad, type ResponseCheck } from './lib/load.js';
import { metadataOrThrow } from './lib/metadata.js';
import { header, progress, targets, type Target } from './lib/report.js';
import { formatTable, median } from './lib/table.js';

const config = readConfig();
const ROWS = 50;
/** BENCH_ONLY: a regular expression on the case labels (the ratios need their pairs). */
const only = new RegExp(process.env['BENCH_ONLY'] ?? '.', 'i');

const ORDERS = `query Bench($offset: Int) { orders(first: ${ROWS}, offset: $offset) { id total } }`;
const JOIN = (field: string) => `query Bench($offset: Int) { orders(first: ${ROWS}, offset: $offset) { id total ${field} { id name } } }`;
const TWO_LEVELS = `query Bench($offset: Int) { orders(first: ${ROWS}, offset: $offset) { id user { id name org { name } } } }`;
/** A different window of orders on every request: different users, nothing answered twice alike. */
const variables = (i: number) => ({ offset: (i * 7) % 900 });

/** The sample data (examples/sample-remotes/src/commerce-schemas.ts): order n's user, user n's organization. */
const userOf = (order: number): number | null => (order % 97 === 0 ? null : ((order - 1) % 40) + 1);
const orgOf = (user: number): number | null => (user % 7 === 0 ? null : (user % 10) + 1);

type Order = { id: string; total: number; [field: string]: unknown };
const orderRows = (data: Record<string, unknown>): Order[] | string => {
  const orders = data['orders'];
  return Array.isArray(orders) && orders.length === ROWS ? (orders as Order[]) : `orders were ${JSON.stringify(orders)?.slice(0, 120)}`;
};
const checkOrders = graphqlData((data) => {
  const orders = orderRows(data);
  return typeof orders === 'string' ? orders : undefined;
});
const checkJoin = (field: string, levels: 1 | 2): ResponseCheck =>
  graphqlData((data) => {
    const orders = orderRows(data);
    if (typeof orders === 'string') return orders;
    for (const order of orders) {
      const expected = userOf(Number(order.id));
      const user = order[field] as { id: string; name: string; org?: { name: string } | null } | null;
      if (expected === null ? user !== null : user?.id !== String(expected) || user.name !== `User ${expected}`) {
        return `order ${order.id}: ${field} was ${JSON.stringify(user)}`;
      }
      if (levels === 2 && user !== null && expected !== null) {
        const org = orgOf(expected);
        if (org === null ? user.org !== null : user.org?.name !== `Org ${org}`) return `user ${expected}: org was ${JSON.stringify(user.org)}`;
      }
    }
    return undefined;
  });

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time per answer of the gateway (svc-graphql or the stitched gateway). */
  gatewayCpu: number;
  /** HTTP requests the remotes received per answer, `[orders, users, orgs]`. */
  remoteRequests: number[];
}

interface Case {
  readonly label: string;
  readonly gateway: ChildServer;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly query: string;
  readonly check: ResponseCheck;
  /** Requests `[orders, users, orgs]` must receive for one operation. */
  readonly perOperation: readonly number[];
  measuredPerOperation?: number[];
  cursor: number;
  failures: number;
  readonly reasons: Map<string, number>;
  readonly samples: Sample[];
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-joins-'));
const children: ChildServer[] = [];
const cases: Case[] = [];
let remotes: ChildServer[] = [];
/** For each number of rows, the requests one two-level operation made each remote receive. */
const twoLevelCounts: Array<[number, number[]]> = [];
const us = (n: number) => (Number.isNaN(n) ? '-' : String(Math.round(n)));

const requestCounts = async (): Promise<number[]> => (await Promise.all(remotes.map((r) => r.stats()))).map((s) => s.requests ?? 0);

/** Sends one operation alone; answers what each remote received for it (and records a wrong answer). */
async function alone(c: Case, query = c.query): Promise<number[]> {
  const before = await requestCounts();
  const response = await fetch(c.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...c.headers },
    body: JSON.stringify({ query, operationName: 'Bench', variables: variables(c.cursor++) }),
  });
  const body = await response.text();
  if (query === c.query) {
    const bad = c.check(response.status, body);
    if (bad !== undefined) {
      c.failures += 1;
      c.reasons.set(`single operation: ${bad}`, 1);
    }
  }
  const after = await requestCounts();
  return after.map((n, i) => n - (before[i] ?? 0));
}

async function measure(c: Case, round: number): Promise<Sample> {
  const load = (duration: number) =>
    runLoad(
      {
        url: c.url,
        connections: config.connections,
        duration,
        check: c.check,
        request: (i) => ({ headers: c.headers, body: JSON.stringify({ query: c.query, operationName: 'Bench', variables: variables(i) }) }),
      },
      c.cursor,
    );
  const watched = [...remotes, c.gateway];
  const warm = await load(warmupFor(config, round));
  c.cursor = warm.requestsBuilt;
  const before = await Promise.all(watched.map((s) => s.stats()));
  const started = process.hrtime.bigint() / 1000n; // the clock of V8's CPU profiles, for profile-summary.ts
  const res = await load(config.duration);
  const ended = process.hrtime.bigint() / 1000n;
  const after = await Promise.all(watched.map((s) => s.stats()));
  c.cursor = res.requestsBuilt;
  for (const outcome of [warm, res]) {
    c.failures += outcome.failures;
    for (const [reason, n] of outcome.reasons) c.reasons.set(reason, (c.reasons.get(reason) ?? 0) + n);
  }
  const perAnswer = (n: number) => n / Math.max(1, res.responses);
  const gateway = remotes.length;
  const sample: Sample = {
    rps: res.rps,
    p50: res.p50,
    p99: res.p99,
    // A round without answers has no CPU per answer (not its whole CPU time as if one answer).
    gatewayCpu: res.responses > 0 ? perAnswer(cpuMicros(before[gateway]!, after[gateway]!)) : Number.NaN,
    remoteRequests: remotes.map((_, i) => perAnswer((after[i]?.requests ?? 0) - (before[i]?.requests ?? 0))),
  };
  progress(
    `[round ${round}/${config.rounds}] ${c.label}: ${Math.round(res.rps)} req/s, p99 ${res.p99} ms, ` +
      `gateway CPU ${us(sample.gatewayCpu)} us, failures ${warm.failures + res.failures}` +
      (config.cpuProf ? ` (profile window ${started}-${ended})` : ''),
  );
  return sample;
}

try {
  const jwt = await hs256UserToken();
  const [orders, users, orgs] = await Promise.all(
    (['orders', 'users', 'orgs'] as const).map((schema) => startChild(`joins-${schema}`, 'lib/remote-server.ts', { kind: 'commerce', schema }, config)),
  );
  children.push(orders!, users!, orgs!);
  remotes = [orders!, users!, orgs!];
  const svc = await startSvc('joins-svc', dir, config, jwt.config, { orders: orders!.url, users: users!.url, orgs: orgs!.url });
  children.push(svc);
  const relationship = (remote: string, type: string, name: string, definition: object) =>
    metadataOrThrow(svc.url, ADMIN_SECRET, 'create_remote_schema_remote_relationship', { remote_schema: remote, type_name: type, name, definition });
  await relationship('orders', 'Order', 'user', {
    to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { user: { arguments: { id: '$userId' } } } },
  });
  await relationship('orders', 'Order', 'buyer', {
    to_remote_schema: {
      remote_schema: 'users',
      lhs_fields: ['userId'],
      remote_field: { usersByIds: { arguments: { ids: '$userId' } } },
      batch: { argument: 'ids', match_field: 'id' },
    },
  });
  await relationship('users', 'User', 'org', {
    to_remote_schema: { remote_schema: 'orgs', lhs_fields: ['orgId'], remote_field: { org: { arguments: { id: '$orgId' } } } },
  });
  const stitch = await startChild('joins-stitch', 'lib/stitch-gateway.ts', { orders: orders!.url, users: users!.url, orgs: orgs!.url }, config);
  children.push(stitch);

  const token = { authorization: `Bearer ${jwt.token}` };
  const newCase = (label: string, gateway: ChildServer, query: string, check: ResponseCheck, perOperation: number[]): Case => ({
    label,
    gateway,
    url: gateway === svc ? `${svc.url}/v1/graphql` : `${stitch.url}/graphql`,
    headers: gateway === svc ? token : {},
    query,
    check,
    perOperation,
    cursor: 0,
    failures: 0,
    reasons: new Map(),
    samples: [],
  });
  cases.push(
    newCase('svc-graphql: orders alone (fast path)', svc, ORDERS, checkOrders, [1, 0, 0]),
    newCase('svc-graphql: orders + user (one alias per key)', svc, JOIN('user'), checkJoin('user', 1), [1, 1, 0]),
    newCase('svc-graphql: orders + user (batch option)', svc, JOIN('buyer'), checkJoin('buyer', 1), [1, 1, 0]),
    newCase('stitch: orders + user (batch delegation)', stitch, JOIN('user'), checkJoin('user', 1), [1, 1, 0]),
    newCase('svc-graphql: orders + user + org (two levels)', svc, TWO_LEVELS, checkJoin('user', 2), [1, 1, 1]),
    newCase('stitch: orders + user + org (two levels)', stitch, TWO_LEVELS, checkJoin('user', 2), [1, 1, 1]),
  );
  cases.splice(0, cases.length, ...cases.filter((c) => only.test(c.label)));
  for (const c of cases) c.measuredPerOperation = await alone(c);
  const twoLevels = cases.find((c) => c.label.startsWith('svc-graphql: orders + user + org'));
  for (const rows of twoLevels ? [5, 200, 1000] : []) {
    twoLevelCounts.push([rows, await alone(twoLevels!, TWO_LEVELS.replace(`first: ${ROWS}`, `first: ${rows}`))]);
  }
  for (let r = 1; r <= config.rounds; r++) {
    for (const c of cases) c.samples.push(await measure(c, r));
  }
} finally {
  await Promise.all(children.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
}

const measured = (values: number[]) => values.filter((n) => Number.isFinite(n));
const stat = (c: Case | undefined, key: 'rps' | 'p50' | 'p99' | 'gatewayCpu'): number => (c ? median(measured(c.samples.map((s) => s[key]))) : Number.NaN);
const byLabel = (prefix: string) => cases.find((c) => c.label.startsWith(prefix));
/** Per round: `a`'s CPU / `b`'s in the same round, median (neighbours in time, less exposed to the machine's drift). */
const cpuRatio = (a: Case | undefined, b: Case | undefined): number =>
  // Rounds in which either side answered nothing are left out; none left: no figure.
  a && b ? median(measured(a.samples.map((s, i) => s.gatewayCpu / (b.samples[i]?.gatewayCpu ?? Number.NaN)))) : Number.NaN;
const x = (n: number) => (Number.isNaN(n) ? 'no round where both answered' : `${n.toFixed(2)}x`);

const fastPath = byLabel('svc-graphql: orders alone');
const svcJoin = byLabel('svc-graphql: orders + user (one alias');
const svcBatch = byLabel('svc-graphql: orders + user (batch');
const stitchJoin = byLabel('stitch: orders + user (batch');
const svcTwo = byLabel('svc-graphql: orders + user + org');
const stitchTwo = byLabel('stitch: orders + user + org');

const rows = cases.map((c) => [
  c.label,
  Math.round(stat(c, 'rps')),
  stat(c, 'p50'),
  stat(c, 'p99'),
  us(stat(c, 'gatewayCpu')),
  (c.measuredPerOperation ?? []).join(' + '),
  remotes.map((_, i) => median(c.samples.map((s) => s.remoteRequests[i] ?? 0)).toFixed(2)).join(' + '),
  c.samples.map((s) => us(s.gatewayCpu)).join(' / '),
  c.failures,
]);
const totalFailures = cases.reduce((n, c) => n + c.failures, 0);
const targetList: Target[] = [
  {
    name: 'svc-graphql join CPU per request <= 0.5x the stitched gateway\'s (orders + user, per round, median)',
    measured: `${x(cpuRatio(svcJoin, stitchJoin))} (batch option: ${x(cpuRatio(svcBatch, stitchJoin))})`,
    pass: cpuRatio(svcJoin, stitchJoin) <= 0.5,
  },
  {
    name: 'svc-graphql join CPU per request <= 2x its fast path for the orders alone',
    measured: `${x(cpuRatio(svcJoin, fastPath))} (batch option: ${x(cpuRatio(svcBatch, fastPath))})`,
    pass: cpuRatio(svcJoin, fastPath) <= 2,
  },
  {
    name: 'each operation alone reached each remote exactly as planned (orders + users + orgs)',
    measured: cases.filter((c) => c.measuredPerOperation?.join() !== c.perOperation.join()).map((c) => c.label).join(', ') || 'all',
    pass: cases.every((c) => c.measuredPerOperation?.join() === c.perOperation.join()),
  },
  ...(svcTwo
    ? [
        {
          name: 'two levels: 3 upstream requests whatever the number of rows (one operation alone)',
          measured: twoLevelCounts.map(([n, counts]) => `${n} rows: ${counts.join(' + ')}`).join('; '),
          pass: twoLevelCounts.every(([, counts]) => counts.join() === '1,1,1'),
        },
      ]
    : []),
  { name: 'no failed responses', measured: String(totalFailures), pass: totalFailures === 0 },
];
console.log(
  [
    header(
      'joins: remote relationships, svc-graphql vs @graphql-tools/stitch',
      config,
      'the orders, users and organizations remotes (examples/sample-remotes, commerce schemas), svc-graphql ' +
        '(packages/server, embedded store, HS256 JWT mode, one token, log level error) with the relationships ' +
        '`Order.user` (users `user(id: $userId)`, one alias per distinct key), `Order.buyer` (users `usersByIds`, ' +
        '`batch` matched by `id`) and `User.org` (orgs `org(id: $orgId)`), and a gateway built with ' +
        '@graphql-tools/stitch (bench/lib/stitch-gateway.ts: `Order.user` and `User.org` resolved with ' +
        '`batchDelegateToSchema` and `argsFromKeys` over `usersByIds` / `orgs`, subschemas with `batch: true`, ' +
        'executors of @graphql-tools/executor-http, served by Yoga), each in its own Node child process. autocannon ' +
        `sends \`orders(first: ${ROWS}, offset: $offset) { id total user { id name } }\` (two levels: \`{ id user { id name org { name } } }\`) ` +
        'with a different offset on every request (40 distinct users in every window); every answer is checked ' +
        'order by order against the sample data. gateway CPU = CPU time per answer of the gateway child; ratios per ' +
        'round, median over the rounds; remote requests = HTTP requests each remote received for one operation ' +
        'sent alone, and per answer under load (orders + users + orgs).',
    ),
    '',
    formatTable(
      ['case', 'req/s', 'p50 ms', 'p99 ms', 'gateway CPU us/req', 'remote requests (one op)', 'remote requests per answer', 'gateway CPU per round', 'failures'],
      rows,
    ),
    '',
    `svc-graphql two levels vs stitch two levels, CPU per request: ${x(cpuRatio(svcTwo, stitchTwo))}.`,
    '',
    targets(targetList),
  ].join('\n'),
);
for (const c of cases) {
  if (c.failures > 0) console.log(`\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`);
}
process.exitCode = totalFailures > 0 ? 1 : 0;
