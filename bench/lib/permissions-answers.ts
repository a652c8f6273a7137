// `pnpm bench permissions`, part (c): what checking a role's answers costs. The same query as a
// role whose grant narrows nothing it selects (only its keys checked) and as a role whose grant hides a
// runtime type of the interface and the union and an enum value it selects (every such place
// checked), side by side on one server; with BENCH_BEFORE, also the first role on the code before.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SignJWT } from 'jose';
import { buildSchema, parse } from 'graphql';
import { directoryTypeDefs } from '../../examples/sample-remotes/src/index.js';
import { guardAnswer } from '../../packages/remote-schemas/src/permissions/answer-check.js';
import { answerPlanFor } from '../../packages/remote-schemas/src/permissions/answer-plan.js';
import { validateRoleSchema } from '../../packages/remote-schemas/src/permissions/validate.js';
import { CASE_COLUMNS, PAIR_COLUMNS, caseRow, caseRunner, newCase, pairRow, pairsNote, stat, type Case, type PairResult } from './cases.js';
import { startChild, type ChildServer } from './child.js';
import type { BenchConfig } from './config.js';
import { ADMIN_SECRET } from './gateway.js';
import { CLAIMS_NAMESPACE } from './jwt.js';
import { describeFailures, graphqlData } from './load.js';
import { metadataOrThrow } from './metadata.js';
import { header, type Target } from './report.js';
import type { SvcServerOptions } from './svc-server.js';
import { formatTable, median } from './table.js';

/** Everything the query selects, every type and value: nothing to check. */
const WIDE = /* GraphQL */ `
  interface Node { id: ID! }
  enum Role { ADMIN EDITOR VIEWER }
  enum Visibility { PUBLIC PRIVATE }
  type User implements Node { id: ID! name: String! role: Role! roles: [Role!]! follows: [Node!]! latest: Node }
  type Post implements Node { id: ID! title: String! visibility: Visibility! }
  type Secret implements Node { id: ID! code: String! }
  union SearchResult = User | Post | Secret
  type Query { user(id: ID!): User search(term: String): [SearchResult!]! }
`;
/** The same without `Secret` and `ADMIN`: `Node`, `SearchResult` and `Role` are checked wherever the query selects them. */
const NARROW = WIDE.replace('type Secret implements Node { id: ID! code: String! }', '')
  .replace('union SearchResult = User | Post | Secret', 'union SearchResult = User | Post')
  .replace('enum Role { ADMIN EDITOR VIEWER }', 'enum Role { EDITOR VIEWER }');

/** Users 2 and 3 of the directory remote: nothing they answer is hidden from the narrow role, so both roles get the same answer. */
const QUERY =
  'query Bench($a: ID!, $b: ID!) { a: user(id: $a) { ...U } b: user(id: $b) { ...U } ' +
  'search(term: "Grace") { __typename ... on User { id name } ... on Post { id title } } } ' +
  'fragment U on User { id name role roles follows { __typename id ... on User { name } ... on Post { title visibility } } latest { id } }';
const VARIABLES = { a: 'u2', b: 'u3' };
const ANSWER =
  '{"a":{"id":"u2","name":"Grace","role":"EDITOR","roles":["VIEWER","EDITOR"],"follows":[{"__typename":"Post","id":"p1","title":"Hello world","visibility":"PUBLIC"},' +
  '{"__typename":"User","id":"u1","name":"Ada"}],"latest":{"id":"p1"}},"b":{"id":"u3","name":"Linus","role":"VIEWER","roles":["VIEWER"],"follows":[],' +
  '"latest":{"id":"u2"}},"search":[{"__typename":"User","id":"u2","name":"Grace"}]}';

/**
 * The check alone, in this process: microseconds per answer to parse the remote's answer (as the
 * server does) and check it for the narrow role, minus parsing it alone; batches of 1,000 in turn,
 * for `seconds`, the median of each. The answer is the remote's, with the `__typename` the gateway
 * asks in `latest`.
 */
function checkCostMicros(seconds: number): { parse: number; check: number } {
  const remote = buildSchema(directoryTypeDefs);
  const validation = validateRoleSchema(remote, NARROW, { sessionVariablePrefix: 'x-svc-' });
  if (!validation.ok) throw new Error(validation.message);
  const plan = answerPlanFor(parse(QUERY), 'Bench', validation.grant, remote);
  if (!plan) throw new Error('the narrow role has nothing to check');
  const guard = { grant: validation.grant, remote, plan };
  const text = JSON.stringify({
    data: JSON.parse(ANSWER.replace('"latest":{"id":"p1"}', '"latest":{"id":"p1","svc_typename":"Post"}').replace('"latest":{"id":"u2"}', '"latest":{"id":"u2","svc_typename":"User"}')) as unknown,
  });
  if (JSON.stringify(guardAnswer(guard, JSON.parse(text) as object)) !== `{"data":${ANSWER}}`) throw new Error('the check changed an answer it should keep');
  const batch = (work: () => void) => {
    const started = process.cpuUsage();
    for (let i = 0; i < 1000; i++) work();
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1000;
  };
  const parsed: number[] = [];
  const checked: number[] = [];
  for (const end = performance.now() + seconds * 1000; performance.now() < end; ) {
    parsed.push(batch(() => JSON.parse(text)));
    checked.push(batch(() => guardAnswer(guard, JSON.parse(text) as object)));
  }
  return { parse: median(parsed), check: median(checked) - median(parsed) };
}

export interface AnswersPart {
  readonly section: string;
  readonly targets: Target[];
  readonly failures: number;
}

async function graphqlOnce(server: ChildServer, headers: Record<string, string>, query: string, variables?: object): Promise<string> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return `${response.status} ${await response.text()}`;
}

function expectAnswer(what: string, actual: string, expected: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${expected}\nbut got ${actual}`);
}

/** `before`: a checkout of the code before (BENCH_BEFORE), or undefined. */
export async function runAnswers(config: BenchConfig, before: string | undefined, pairs: number, pairSeconds: number): Promise<AnswersPart> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-answers-'));
  const children: ChildServer[] = [];
  try {
    const key = randomBytes(48).toString('base64url');
    const jwtSecret = { type: 'HS256', key } as const;
    const bearer = async (role: string) => ({
      authorization: `Bearer ${await new SignJWT({ [CLAIMS_NAMESPACE]: { 'x-svc-allowed-roles': [role], 'x-svc-default-role': role } })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('6h')
        .sign(new TextEncoder().encode(key))}`,
    });
    const wide = await bearer('wide');
    const narrow = await bearer('narrow');
    const remote = await startChild('answers-remote', 'lib/remote-server.ts', { kind: 'directory' }, config);
    children.push(remote);
    const svc = async (name: string, checkout?: string): Promise<ChildServer> => {
      const options: SvcServerOptions = {
        databaseUrl: `file:${join(dir, `metadata-${name}.json`)}`,
        adminSecret: ADMIN_SECRET,
        jwtSecret,
        enableRemoteSchemaPermissions: true,
      };
      // The code before runs its own checkout's server module.
      const module = checkout === undefined ? 'lib/svc-server.ts' : resolve(checkout, 'bench/lib/svc-server.ts');
      const child = await startChild(`answers-svc-${name}`, module, options, config);
      children.push(child);
      await metadataOrThrow(child.url, ADMIN_SECRET, 'add_remote_schema', { name: 'directory', definition: { url: remote.url } });
      for (const [role, schema] of [['wide', WIDE], ['narrow', NARROW]] as const) {
        await metadataOrThrow(child.url, ADMIN_SECRET, 'add_remote_schema_permissions', { remote_schema: 'directory', role, definition: { schema } });
      }
      return child;
    };
    const after = await svc('after');
    const previous = before === undefined ? undefined : await svc('before', before);

    // Each case does what its label says: the narrow role is answered its part, the wide role all.
    const probe = '{ user(id: "u1") { roles follows { __typename } } }';
    expectAnswer('after, wide role', await graphqlOnce(after, wide, probe), '200 {"data":{"user":{"roles":["VIEWER","EDITOR","ADMIN"],"follows":[{"__typename":"User"},{"__typename":"Secret"},{"__typename":"Post"},{"__typename":"User"}]}}}');
    expectAnswer('after, narrow role', await graphqlOnce(after, narrow, probe), '200 {"data":{"user":{"roles":["VIEWER","EDITOR"],"follows":[{"__typename":"User"},{"__typename":"Post"},{"__typename":"User"}]}}}');
    for (const [label, server, headers] of [
      ['after, wide role', after, wide],
      ['after, narrow role', after, narrow],
      ...(previous ? ([['before, wide role', previous, wide]] as const) : []),
    ] as const) {
      expectAnswer(`${label}, the measured query`, await graphqlOnce(server, headers, QUERY, VARIABLES), `200 {"data":${ANSWER}}`);
    }

    const check = graphqlData((data) => (JSON.stringify(data) === ANSWER ? undefined : `answered ${JSON.stringify(data).slice(0, 200)}`));
    const body = () => JSON.stringify({ query: QUERY, operationName: 'Bench', variables: VARIABLES });
    const wideBefore = previous ? newCase('code before, role wide (its grant narrows nothing the query selects)', previous, [wide], check, body) : undefined;
    const wideAfter = newCase('role wide: only keys checked', after, [wide], check, body);
    const narrowAfter = newCase('role narrow: Node, SearchResult and Role checked', after, [narrow], check, body);
    const cases: Case[] = [...(wideBefore ? [wideBefore] : []), wideAfter, narrowAfter];

    const runner = caseRunner(config, remote);
    await runner.rounds(cases);
    const pairResults: PairResult[] = [];
    if (pairs > 0) {
      if (wideBefore) pairResults.push(await runner.alternate(wideBefore, wideAfter, pairs, pairSeconds));
      pairResults.push(await runner.alternate(wideAfter, narrowAfter, pairs, pairSeconds));
    }

    const alone = checkCostMicros(config.duration);
    const targets: Target[] = [];
    const atLeast = (name: string, value: number, min: number) => targets.push({ name, measured: `${value.toFixed(3)}x`, pass: value >= min });
    const afterPair = pairResults.find((p) => p.other === narrowAfter);
    const beforePair = pairResults.find((p) => p.base === wideBefore);
    if (wideBefore) {
      atLeast('role whose grant narrows nothing it selects >= 0.97x the code before (req/s)', stat(wideAfter, 'rps') / stat(wideBefore, 'rps'), 0.97);
      atLeast('the same by svc CPU per request (before / after)', stat(wideBefore, 'svcCpu') / stat(wideAfter, 'svcCpu'), 0.97);
      if (beforePair) atLeast('the same, alternating windows (CPU)', median(beforePair.cpu), 0.97);
    }
    // At most 1.15x the CPU of the wide role: its CPU / the checked role's >= 1 / 1.15.
    atLeast('role whose hidden types and values are checked: CPU per request <= 1.15x the wide role (ratio >= 0.870)', stat(wideAfter, 'svcCpu') / stat(narrowAfter, 'svcCpu'), 1 / 1.15);
    atLeast('the same by req/s (ratio >= 0.870)', stat(narrowAfter, 'rps') / stat(wideAfter, 'rps'), 1 / 1.15);
    if (afterPair) atLeast('the same, alternating windows (CPU, ratio >= 0.870)', median(afterPair.cpu), 1 / 1.15);
    const failures = cases.reduce((n, c) => n + c.failures, 0);
    targets.push({ name: 'no failed responses in (c)', measured: String(failures), pass: failures === 0 });

    const baseOf = (c: Case) => (c === wideAfter ? wideBefore : c === narrowAfter ? wideAfter : undefined);
    const section = [
      header(
        "permissions (c): checking a role's answers",
        config,
        'the directory remote (examples/sample-remotes `startDirectoryRemote`: interface Node and union SearchResult of User, ' +
          'Post and Secret, enum Role) and svc-graphql (packages/server, embedded store, JWT mode, permissions on), each in its ' +
          "own child process. Role `wide` is granted every type and value the query selects (its grant narrows nothing it selects: " +
          'only the keys of its answers are checked); role `narrow` the same without `Secret` and without `ADMIN`, so that `follows: [Node!]!`, ' +
          '`latest: Node`, `search: [SearchResult!]!`, `role: Role!` and `roles: [Role!]!` are checked in every answer (and the ' +
          'document sent asks `__typename` in `latest`, where the client does not). ' +
          `autocannon sends \`${QUERY}\` with ${JSON.stringify(VARIABLES)}: nothing in that answer is hidden from either role, so ` +
          'both get the same answer, checked on every response; before the load, a probe checks that the narrow role is ' +
          'answered its part and the wide role everything.' +
          (before === undefined
            ? ' BENCH_BEFORE unset: the code before is not measured.'
            : ` BENCH_BEFORE: the server of another checkout (${before}) runs the code before, with the same grants.`) +
          ' Ratios: the wide role / the code before; the narrow role / the wide role.',
      ),
      '',
      formatTable(CASE_COLUMNS, cases.map((c) => caseRow(c, baseOf(c)))),
      ...(pairResults.length > 0 ? ['', pairsNote(pairs, pairSeconds), '', formatTable(PAIR_COLUMNS, pairResults.map(pairRow))] : []),
      '',
      `The check alone, in the benchmark's process (${config.duration} s of batches of 1,000 in turn, medians): ` +
        `${alone.check.toFixed(1)} us per answer on top of the ${alone.parse.toFixed(1)} us JSON.parse of the remote's answer takes; ` +
        `${((100 * alone.check) / stat(narrowAfter, 'svcCpu')).toFixed(1)}% of the narrow role's server CPU per request above.`,
      ...cases.filter((c) => c.failures > 0).map((c) => `\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`),
    ].join('\n');
    return { section, targets, failures };
  } finally {
    await Promise.all(children.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}
