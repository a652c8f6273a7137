// `pnpm bench permissions`: what remote schema permissions cost.
//
// (a) Requests: the same query as a role whose grant has one session preset, through svc-graphql
//     with permissions on, next to the same server with permissions off, side by side in one run
//     (also: two roles in turn, and admin on both). The sample remote and the two servers each run
//     in their own child process; this process only generates load and checks every response.
//     Cases are interleaved round by round, figures are medians; then the main comparisons again as
//     many short alternating windows, which cancel slow drift of a shared machine.
// (b) Building role schemas: the schemas of 10, 100 and 1,000 roles on a 1,000-type remote, built
//     with the registry of packages/remote-schemas in a fresh child process per measurement
//     (bench/lib/permissions-build.ts, --expose-gc), time and heap per role.
// (c) Checking answers: a role whose grant narrows nothing the query selects next to one whose
//     grant hides a runtime type and an enum value it selects (bench/lib/permissions-answers.ts),
//     and with BENCH_BEFORE the first role on the code before as well.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { SignJWT } from 'jose';
import { CASE_COLUMNS, PAIR_COLUMNS, caseRow, caseRunner, newCase, pairRow, pairsNote, stat, type Case, type PairResult } from './lib/cases.js';
import { benchDir, startChild, type ChildServer } from './lib/child.js';
import { readConfig } from './lib/config.js';
import { ADMIN_SECRET } from './lib/gateway.js';
import { CLAIMS_NAMESPACE } from './lib/jwt.js';
import { describeFailures, graphqlData, type ResponseCheck } from './lib/load.js';
import { loadAverage } from './lib/machine.js';
import { metadataOrThrow } from './lib/metadata.js';
import { runAnswers, type AnswersPart } from './lib/permissions-answers.js';
import type { BuildRequest, BuildResult, GrantShape } from './lib/permissions-build.js';
import type { SvcServerOptions as PermissionsServerOptions } from './lib/svc-server.js';
import { header, progress, targets, type Target } from './lib/report.js';
import { formatTable, median, round } from './lib/table.js';

const config = readConfig();

function list(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
/** BENCH_ROLE_COUNTS: how many roles' schemas are built, each count in its own process. */
const ROLE_COUNTS = list('BENCH_ROLE_COUNTS', '10,100,1000').map(Number);
/** BENCH_GRANTS: the grant shapes of (b), `small` and/or `full` (see bench/lib/permissions-build.ts). */
const GRANTS = list('BENCH_GRANTS', 'small,full') as GrantShape[];
/** BENCH_PART: `requests`, `answers` or `build` runs only that part. */
const PART = process.env['BENCH_PART'] ?? 'all';
/** BENCH_BEFORE: a checkout of the code before a change (installed), measured beside this one in (c). */
const BEFORE = process.env['BENCH_BEFORE'] || undefined;
const REMOTE_TYPES = 1000;
const WARMUP_ROLES = 10;

if (ROLE_COUNTS.some((n) => !Number.isSafeInteger(n) || n <= 0)) throw new TypeError('BENCH_ROLE_COUNTS must list positive integers');
if (GRANTS.some((g) => g !== 'small' && g !== 'full')) throw new TypeError('BENCH_GRANTS must list small and/or full');
if (!['all', 'requests', 'answers', 'build'].includes(PART)) throw new TypeError('BENCH_PART must be requests, answers or build');

// ---------------------------------------------------------------------------------------------
// (a) requests

/** The role's grant on the sample remote: what the query needs, `hello`'s argument preset from the session. */
const GRANT = /* GraphQL */ `
  enum Role { ADMIN EDITOR VIEWER }
  type Post { id: ID! title: String! }
  type User { id: ID! name: String! role: Role! posts: [Post!]! }
  type Query {
    hello(name: String @preset(value: "x-svc-user-name")): String!
    user(id: ID!): User
  }
`;
/** The same grant without the preset: what a role schema costs without presets. */
const GRANT_WITHOUT_PRESET = GRANT.replace(' @preset(value: "x-svc-user-name")', '');
const QUERY = 'query Bench($id: ID!) { hello user(id: $id) { id name role posts { id title } } }';
const USER_NAME = 'bench';

function answerCheck(hello: string): ResponseCheck {
  return graphqlData((data) => {
    if (data['hello'] !== hello) return `hello was ${JSON.stringify(data['hello'])}`;
    const user = data['user'] as { id?: unknown; posts?: unknown } | null | undefined;
    if (!user || typeof user.id !== 'string' || !Array.isArray(user.posts)) return `user was ${JSON.stringify(user)}`;
    return undefined;
  });
}

/** BENCH_PAIRS: alternating window pairs per comparison (0: none); BENCH_PAIR_SECONDS: each window's length. */
const PAIRS = Math.round(Number(process.env['BENCH_PAIRS'] ?? 20));
const PAIR_SECONDS = Number(process.env['BENCH_PAIR_SECONDS'] ?? 1);
const pairs: PairResult[] = [];
const body = (i: number) => JSON.stringify({ query: QUERY, operationName: 'Bench', variables: { id: String((i % 3) + 1) } });

async function graphqlOnce(server: ChildServer, headers: Record<string, string>, query: string, variables?: object): Promise<string> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return `${response.status} ${await response.text()}`;
}

/** Throws unless `actual` is `expected`: a case that does not do what its label says measures nothing. */
function expectAnswer(what: string, actual: string, expected: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${expected}\nbut got ${actual}`);
}

const requestCases: Case[] = [];
async function runRequests(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-permissions-'));
  const children: ChildServer[] = [];
  try {
    const key = randomBytes(48).toString('base64url');
    const jwtSecret = { type: 'HS256', key } as const;
    const mint = (role: string) =>
      new SignJWT({
        [CLAIMS_NAMESPACE]: { 'x-svc-allowed-roles': [role], 'x-svc-default-role': role, 'x-svc-user-name': USER_NAME },
      })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('bench-user')
        .setIssuedAt()
        .setExpirationTime('6h')
        .sign(new TextEncoder().encode(key));
    const token = await mint('user');
    const otherToken = await mint('user2');
    const viewerToken = await mint('viewer');

    const remote = await startChild('permissions-remote', 'lib/remote-server.ts', { kind: 'sample' }, config);
    children.push(remote);
    const svc = async (enableRemoteSchemaPermissions: boolean): Promise<ChildServer> => {
      const name = enableRemoteSchemaPermissions ? 'on' : 'off';
      const options: PermissionsServerOptions = {
        databaseUrl: `file:${join(dir, `metadata-${name}.json`)}`,
        adminSecret: ADMIN_SECRET,
        jwtSecret,
        enableRemoteSchemaPermissions,
      };
      const child = await startChild(`permissions-svc-${name}`, 'lib/svc-server.ts', options, config);
      children.push(child);
      await metadataOrThrow(child.url, ADMIN_SECRET, 'add_remote_schema', { name: 'sample', definition: { url: remote.url } });
      return child;
    };
    const off = await svc(false);
    const on = await svc(true);
    for (const [role, schema] of [
      ['user', GRANT],
      ['user2', GRANT],
      ['viewer', GRANT_WITHOUT_PRESET],
    ] as const) {
      await metadataOrThrow(on.url, ADMIN_SECRET, 'add_remote_schema_permissions', { remote_schema: 'sample', role, definition: { schema } });
    }

    const bearer = { authorization: `Bearer ${token}` };
    const otherBearer = { authorization: `Bearer ${otherToken}` };
    const viewerBearer = { authorization: `Bearer ${viewerToken}` };
    const admin = { 'x-svc-admin-secret': ADMIN_SECRET };
    // Each case does what its label says: the role's schema and preset on one server, none on the other.
    const user1 = '{"id":"1","name":"Ada","role":"ADMIN","posts":[{"id":"p1","title":"Hello world"}]}';
    expectAnswer('permissions on, role user', await graphqlOnce(on, bearer, QUERY, { id: '1' }), `200 {"data":{"hello":"Hello, ${USER_NAME}!","user":${user1}}}`);
    expectAnswer('permissions off, role user', await graphqlOnce(off, bearer, QUERY, { id: '1' }), `200 {"data":{"hello":"Hello, world!","user":${user1}}}`);
    expectAnswer(
      'permissions on, role user, preset argument',
      await graphqlOnce(on, bearer, '{ hello(name: "x") }'),
      '200 {"errors":[{"message":"Unknown argument \\"name\\" on field \\"Query.hello\\".","locations":[{"line":1,"column":9}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}',
    );
    expectAnswer(
      'permissions off, role user, preset argument',
      await graphqlOnce(off, bearer, '{ hello(name: "x") }'),
      '200 {"data":{"hello":"Hello, x!"}}',
    );
    expectAnswer('permissions on, role user2', await graphqlOnce(on, otherBearer, QUERY, { id: '1' }), `200 {"data":{"hello":"Hello, ${USER_NAME}!","user":${user1}}}`);
    expectAnswer('permissions on, role viewer', await graphqlOnce(on, viewerBearer, QUERY, { id: '1' }), `200 {"data":{"hello":"Hello, world!","user":${user1}}}`);
    expectAnswer('permissions on, role viewer, users', await graphqlOnce(on, viewerBearer, '{ users { id } }'),
      '200 {"errors":[{"message":"Cannot query field \\"users\\" on type \\"Query\\". Did you mean \\"user\\"?","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}');
    expectAnswer('permissions on, admin', await graphqlOnce(on, admin, '{ hello(name: "x") }'), '200 {"data":{"hello":"Hello, x!"}}');

    requestCases.push(
      newCase('permissions off, token (role user)', off, [bearer], answerCheck('Hello, world!'), body),
      newCase('permissions on, token (role user: grant, one session preset)', on, [bearer], answerCheck(`Hello, ${USER_NAME}!`), body),
      newCase('permissions on, token (role viewer: the same grant without the preset)', on, [viewerBearer], answerCheck('Hello, world!'), body),
      newCase('permissions on, tokens of roles user and user2 in turn (same grant)', on, [bearer, otherBearer], answerCheck(`Hello, ${USER_NAME}!`), body),
      newCase('permissions off, admin secret', off, [admin], answerCheck('Hello, world!'), body),
      newCase('permissions on, admin secret (the whole schema)', on, [admin], answerCheck('Hello, world!'), body),
    );

    const runner = caseRunner(config, remote);
    await runner.rounds(requestCases);
    // Alternating short windows: the main comparisons again, many times over.
    const [offToken, onToken, onViewer, onTwoRoles] = requestCases;
    for (const [base, other] of [
      [offToken, onToken],
      [offToken, onViewer],
      [offToken, onTwoRoles],
    ] as const) {
      if (!base || !other || PAIRS === 0) continue;
      pairs.push(await runner.alternate(base, other, PAIRS, PAIR_SECONDS));
    }
  } finally {
    await Promise.all(children.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// (b) building role schemas

/** BENCH_BUILD_HEAP_MB: `--max-old-space-size` of the build processes (default: Node's own limit). */
const BUILD_HEAP_MB = process.env['BENCH_BUILD_HEAP_MB'];

/** A build process that died (out of memory, say) instead of printing its result. */
interface BuildFailure {
  readonly shape: GrantShape;
  readonly roles: number;
  readonly error: string;
}

const defaultHeapLimit = getHeapStatistics().heap_size_limit;
/** The heap limit of the build processes, in MiB. */
const buildHeapLimitMiB = BUILD_HEAP_MB === undefined ? Math.round(defaultHeapLimit / 2 ** 20) : Number(BUILD_HEAP_MB);

function buildInChild(request: BuildRequest): Promise<BuildResult | BuildFailure> {
  const args = ['--import', 'tsx', '--expose-gc'];
  if (BUILD_HEAP_MB !== undefined) args.push(`--max-old-space-size=${Number(BUILD_HEAP_MB)}`);
  args.push(join(benchDir, 'lib', 'permissions-build.ts'), JSON.stringify(request));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: join(benchDir, '..'),
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      process.stderr.write(chunk);
      err = (err + chunk).slice(-20_000);
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code !== 0) {
        const oom = err.includes('heap out of memory');
        const error = oom
          ? `out of memory (V8 heap limit ${buildHeapLimitMiB} MiB)`
          : `exited with ${code ?? signal}: ${err.trim().split('\n').slice(-3).join(' ')}`;
        resolve({ shape: request.shape, roles: request.roles, error });
        return;
      }
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as BuildResult);
      } catch (error) {
        reject(new Error(`permissions-build printed no result: ${out.slice(0, 400)}`, { cause: error }));
      }
    });
  });
}

const builds: (BuildResult | BuildFailure)[] = [];
let buildLoad = { start: Number.NaN, end: Number.NaN };
async function runBuilds(): Promise<void> {
  buildLoad = { start: loadAverage(), end: Number.NaN };
  const remote = await startChild('permissions-generated', 'lib/remote-server.ts', { kind: 'generated', types: REMOTE_TYPES, prefix: '' }, config);
  try {
    for (const shape of GRANTS) {
      for (const roles of ROLE_COUNTS) {
        const started = performance.now();
        const result = await buildInChild({ remoteUrl: remote.url, types: REMOTE_TYPES, prefix: '', shape, roles, warmupRoles: WARMUP_ROLES });
        builds.push(result);
        const seconds = round((performance.now() - started) / 1000, 1);
        progress(
          'error' in result
            ? `[build] ${shape} grants, ${roles} roles: FAILED, ${result.error} (${seconds} s)`
            : `[build] ${shape} grants, ${roles} roles: ${round(result.buildMs / roles, 2)} ms/role, ` +
                `${round(result.heapBytes / roles / 2 ** 20, 3)} MiB/role, ${result.problems.length} problems (${seconds} s)`,
        );
      }
    }
  } finally {
    await remote.close();
    buildLoad.end = loadAverage();
  }
}

// ---------------------------------------------------------------------------------------------

const startedAt = performance.now();
/** The header of (a), made when (a) ends (it prints the load average at that time). */
let requestsHeader = '';
if (PART === 'all' || PART === 'requests') {
  await runRequests();
  requestsHeader = header(
    'permissions (a): a role with a grant and a session preset vs permissions off',
    config,
    'the sample remote (examples/sample-remotes) and two svc-graphql servers (packages/server, embedded store, JWT mode, ' +
      'log level error), one with `enableRemoteSchemaPermissions` and one without, each in its own Node child process; both ' +
      'add the remote with `add_remote_schema`, the first also `add_remote_schema_permissions` for role `user` (enum Role, ' +
      'Post { id title }, User { id name role posts }, `hello(name: String @preset(value: "x-svc-user-name"))`, `user(id)`). ' +
      `autocannon in the parent sends \`${QUERY}\` (id 1, 2, 3 in turn) with one HS256 token of role \`user\` carrying ` +
      `\`x-svc-user-name: ${USER_NAME}\` (cache hits), or the admin secret. Every answer is checked: \`hello\` must be ` +
      `"Hello, ${USER_NAME}!" with permissions on (the preset was sent to the remote) and "Hello, world!" without, and ` +
      '`user` must come back. Before the load, each server is checked to serve what its label says (the role cannot pass ' +
      "`name` with permissions on, can without; admin can). Role `viewer` has the same grant without the preset " +
      '(its schema is a role schema all the same: the cost of a role schema without presets). The two-role case grants ' +
      'role `user2` the same as `user`, and its ' +
      'requests alternate between a token of each role, so the server switches between two role schemas (Envelop ' +
      '`setSchema`) as they interleave. Ratios: each permissions-on case / the permissions-off case ' +
      'with the same credentials (viewer and two roles: / permissions off with the `user` token, the same query); ' +
      'CPU ratio = off CPU per request / on CPU per request (below 1: on costs more). ' +
      "svc and remote CPU: the child processes' CPU time per request during the measured window.",
  );
}
let answers: AnswersPart | undefined;
if (PART === 'all' || PART === 'answers') answers = await runAnswers(config, BEFORE, PAIRS, PAIR_SECONDS);
if (PART === 'all' || PART === 'build') await runBuilds();
const minutes = round((performance.now() - startedAt) / 60_000, 1);

const targetList: Target[] = [];
const sections: string[] = [];

if (requestCases.length > 0) {
  const [offToken, onToken, onViewer, onTwoRoles, offAdmin, onAdmin] = requestCases;
  // Each case against the same server's counterpart with permissions off, by the same credentials.
  const baselineOf = (c: Case): Case | undefined =>
    c === onToken || c === onViewer || c === onTwoRoles ? offToken : c === onAdmin ? offAdmin : undefined;
  const rows = requestCases.map((c) => caseRow(c, baselineOf(c)));
  if (offToken && onToken) {
    const ratio = stat(onToken, 'rps') / stat(offToken, 'rps');
    const cpuRatio = stat(offToken, 'svcCpu') / stat(onToken, 'svcCpu');
    targetList.push({ name: 'role with a grant and a session preset >= 0.95x permissions off (req/s)', measured: `${ratio.toFixed(3)}x`, pass: ratio >= 0.95 });
    targetList.push({ name: 'the same by svc CPU per request (off / on)', measured: `${cpuRatio.toFixed(3)}x`, pass: cpuRatio >= 0.95 });
  }
  const pairRows = pairs.map(pairRow);
  const tokenPair = pairs.find((p) => p.other === onToken);
  if (tokenPair) {
    const rps = median(tokenPair.rps);
    const cpu = median(tokenPair.cpu);
    targetList.push({ name: 'role with a grant and a session preset >= 0.95x permissions off (alternating windows, req/s)', measured: `${rps.toFixed(3)}x`, pass: rps >= 0.95 });
    targetList.push({ name: 'the same by svc CPU per request (alternating windows)', measured: `${cpu.toFixed(3)}x`, pass: cpu >= 0.95 });
  }
  const failures = requestCases.reduce((n, c) => n + c.failures, 0);
  targetList.push({ name: 'no failed responses (rounds and windows)', measured: String(failures), pass: failures === 0 });
  sections.push(
    requestsHeader,
    '',
    formatTable(CASE_COLUMNS, rows),
  );
  if (pairRows.length > 0) {
    sections.push('', pairsNote(PAIRS, PAIR_SECONDS), '', formatTable(PAIR_COLUMNS, pairRows));
  }
  for (const c of requestCases) {
    if (c.failures > 0) sections.push(`\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`);
  }
}

if (answers) {
  sections.push('', answers.section);
  targetList.push(...answers.targets);
}

if (builds.length > 0) {
  const mib = (bytes: number) => bytes / 2 ** 20;
  const done = builds.filter((b): b is BuildResult => !('error' in b));
  const failed = builds.filter((b): b is BuildFailure => 'error' in b);
  const rows = builds.map((b) => {
    if ('error' in b) return [b.shape, b.roles, `FAILED: ${b.error}`, ...Array<string>(13).fill('-')];
    return [
      b.shape,
      b.roles,
      round(b.grantTypes, 1),
      b.sdlChars,
      `${round(b.planBareMs, 0)} / ${round(b.planMs, 0)}`,
      round(mib(b.permissionsHeapBytes) / b.roles, 3),
      round(b.buildMs, 0),
      round(b.buildMs / b.roles, 2),
      `${round(b.buildMsPerRole.median, 2)} / ${round(b.buildMsPerRole.p99, 2)} / ${round(b.buildMsPerRole.max, 1)}`,
      round(b.buildCpuMs / b.roles, 2),
      round(b.gcMs, 0),
      round(mib(b.heapBytes), 1),
      round(mib(b.heapBytes) / b.roles, 3),
      round(mib(b.rssBytes), 0),
      round(b.lookupUs, 1),
      b.problems.length,
    ];
  });
  for (const shape of GRANTS) {
    const ofShape = done.filter((b) => b.shape === shape).sort((x, y) => x.roles - y.roles);
    const missing = failed.filter((b) => b.shape === shape);
    for (const f of missing) {
      targetList.push({ name: `${shape} grants, ${f.roles} roles: built at all`, measured: f.error, pass: false });
    }
    const first = ofShape[0];
    const last = ofShape[ofShape.length - 1];
    if (!first || !last) continue;
    const worst = Math.max(...ofShape.map((b) => b.buildMs / b.roles));
    const counts = ofShape.map((b) => b.roles).join(', ');
    targetList.push({ name: `${shape} grants: under 50 ms per role (wall) at ${counts} roles`, measured: `${round(worst, 2)} ms per role at worst`, pass: worst < 50 });
    if (first !== last) {
      const time = last.buildMs / last.roles / (first.buildMs / first.roles);
      const memory = last.heapBytes / last.roles / (first.heapBytes / first.roles);
      targetList.push({
        name: `${shape} grants: linear in time (ms per role at ${last.roles} roles <= 1.5x at ${first.roles})`,
        measured: `${time.toFixed(2)}x`,
        pass: time <= 1.5,
      });
      targetList.push({
        name: `${shape} grants: linear in memory (MiB per role at ${last.roles} roles <= 1.5x at ${first.roles})`,
        measured: `${memory.toFixed(2)}x`,
        pass: memory <= 1.5,
      });
    }
  }
  const problems = done.flatMap((b) => b.problems.map((p) => `${b.shape}, ${b.roles} roles: ${p}`));
  targetList.push({ name: 'every role built got its own schema, its grant, and kept it (no eviction)', measured: String(problems.length), pass: problems.length === 0 });
  sections.push(
    '',
    [
      `## permissions (b): building role schemas on a ${REMOTE_TYPES.toLocaleString('en')}-type remote`,
      '',
      `Load average (1 min) when this part started / ended: ${buildLoad.start} / ${buildLoad.end}. ` +
        `V8 heap limit of the build processes: ${buildHeapLimitMiB} MiB${BUILD_HEAP_MB === undefined ? " (Node's default here)" : ''}.`,
      `Method: the generated remote (examples/sample-remotes \`startGeneratedRemote\`, ${REMOTE_TYPES} object types \`T<i>\` ` +
        '{ id name value parent } and one root field `t<i>` each) in a child process; every row measured in a fresh Node ' +
        `process (\`node --import tsx --expose-gc${BUILD_HEAP_MB === undefined ? '' : ` --max-old-space-size=${BUILD_HEAP_MB}`}\`, ` +
        'NODE_ENV=production, bench/lib/permissions-build.ts) holding a registry of packages/remote-schemas with ' +
        '`enableRemoteSchemaPermissions` and `maxRoleSchemas` = the number of roles, so none is evicted. The process first ' +
        `builds ${WARMUP_ROLES} roles of the same shape in a registry of its own (JIT warm-up, then disposed), times ` +
        '`plan()` of the remote alone and with the N permissions (each one checked against the remote; "plan ms" shows ' +
        'both, both include introspecting the remote), commits, then calls `schemaFor({ role })` once per role in turn, ' +
        "each building that role's schema (timed one by one and in all; CPU = the process's CPU time over the builds, " +
        'GC helper threads included), then once more per role ("lookup": it must return the same schema, or the role ' +
        "counts as a problem; each role must also have its own schema with exactly its grant's root fields). Heap = heap " +
        'used after two forced GCs with the N schemas held minus before the first was built; "permissions MiB" = heap the ' +
        'registry holds after plan and commit with the N permissions minus with none, per permission; GC ms = what V8 ' +
        'reported (PerformanceObserver `gc`) during the builds; RSS after the builds. Grants: `small` = 10 root fields per ' +
        'role (a different ten each) and the types they reach through `parent`; `full` = every type and root field but ' +
        'one field (`value` of a different type per role), the largest role schema this remote allows, sharing nothing ' +
        'with the public schema. One measurement per row (no rounds).',
      '',
      formatTable(
        [
          'grant',
          'roles',
          'types per grant',
          'SDL chars',
          'plan ms (none / N permissions)',
          'permissions MiB each',
          'build ms',
          'ms per role',
          'per role median / p99 / max ms',
          'CPU ms per role',
          'GC ms',
          'heap MiB',
          'MiB per role',
          'RSS MiB',
          'lookup us',
          'problems',
        ],
        rows,
      ),
      ...(problems.length > 0 ? ['', 'problems:', ...problems.slice(0, 20).map((p) => `- ${p}`)] : []),
    ].join('\n'),
  );
}

console.log([sections.join('\n'), '', targets(targetList), '', `The run took ${minutes} min.`].join('\n'));
const failed =
  requestCases.reduce((n, c) => n + c.failures, 0) +
  (answers?.failures ?? 0) +
  builds.reduce((n, b) => n + ('error' in b ? 1 : b.problems.length), 0);
process.exitCode = failed > 0 ? 1 : 0;
