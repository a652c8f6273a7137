// `pnpm bench edge`: what the server's protections against hostile input cost, next to a normal
// proxied query, in one run.
//
// Child processes: the sample remote, svc-graphql (embedded store, JWT mode, every limit at its
// default, `--cors-domain *`) with that remote added, a second svc-graphql with a list of origins
// (for the CORS case that matches an origin), and this process generating load. Every request
// carries the same HS256 token (a cache hit in the session plugin). Hostile documents differ on
// every request, so none is answered from Yoga's parse cache (which keeps failed parses too).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, startChild, type ChildServer } from './lib/child.js';
import { readConfig, warmupFor } from './lib/config.js';
import { bodyOfSize, countTokens, fragmentChain, manyTokens, nestedText } from './lib/edge-payloads.js';
import { runEdgeLoad, type EdgeCheck, type EdgeLoadResult, type EdgeRequest } from './lib/edge-load.js';
import { ADMIN_SECRET, startSampleGateway } from './lib/gateway.js';
import { describeFailures } from './lib/load.js';
import { metadataOrThrow } from './lib/metadata.js';
import { header, mib, progress, targets, type Target } from './lib/report.js';
import { formatTable, median, round } from './lib/table.js';

const config = readConfig();

/** The server's defaults (packages/server): body 2 MiB, 15,000 tokens, 256 levels. */
const MAX_BODY = 2 * 2 ** 20;
const MAX_TOKENS = 15_000;
const MAX_DEPTH = 256;
const LISTED_DOMAINS = 'https://app.example.com,https://*.example.org';
const LISTED_ORIGIN = 'https://shop.example.org';

const QUERY = /* GraphQL */ `
  query Bench($id: ID!, $name: String) {
    hello(name: $name)
    user(id: $id) { id name role posts { id title } }
  }
`;
const normalBody = (i: number): string =>
  JSON.stringify({ query: QUERY, operationName: 'Bench', variables: { id: String((i % 3) + 1), name: `n${i}` } });

function parseJson(body: string): Record<string, unknown> | string {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : `not an object: ${body.slice(0, 160)}`;
  } catch {
    return `not JSON: ${body.slice(0, 160)}`;
  }
}

/** 200 with `hello` and `user` from the remote, no errors; `extra` checks the headers. */
function served(extra?: (headers: Readonly<Record<string, string>>) => string | undefined): EdgeCheck {
  return (status, body, headers) => {
    if (status !== 200) return `HTTP ${status}: ${body.slice(0, 160)}`;
    const parsed = parseJson(body);
    if (typeof parsed === 'string') return parsed;
    if ('errors' in parsed) return `errors: ${JSON.stringify(parsed['errors']).slice(0, 200)}`;
    const data = parsed['data'] as Record<string, unknown> | null | undefined;
    const hello = data?.['hello'];
    const user = data?.['user'] as { id?: unknown } | null | undefined;
    if (typeof hello !== 'string' || !hello.startsWith('Hello, n')) return `hello was ${JSON.stringify(hello)}`;
    if (!user || typeof user.id !== 'string') return `user was ${JSON.stringify(user)}`;
    return extra?.(headers);
  };
}

/** The same JSON value, whatever the order of object members. */
function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Exactly `status` and `{ errors: [{ message, extensions: { code, path: '$' } }] }`, nothing else. */
function refused(
  status: number,
  code: string,
  message: string,
  extra?: (headers: Readonly<Record<string, string>>) => string | undefined,
): EdgeCheck {
  const expected = { errors: [{ message, extensions: { code, path: '$' } }] };
  return (got, body, headers) => {
    if (got !== status) return `HTTP ${got} instead of ${status}: ${body.slice(0, 160)}`;
    const parsed = parseJson(body);
    if (typeof parsed === 'string') return parsed;
    if (!sameJson(parsed, expected)) return `unexpected answer ${status}: ${body.slice(0, 200)}`;
    return extra?.(headers);
  };
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  svcCpu: number;
  remoteCpu: number;
  rss: number;
}

interface Case {
  readonly label: string;
  /** Which svc child answers it. */
  readonly svc: 'main' | 'listed';
  readonly request: (i: number) => EdgeRequest;
  readonly check: EdgeCheck;
  /** Shown below the table. */
  readonly note: string;
  cursor: number;
  failures: number;
  responses: number;
  closedByServer: number;
  readonly reasons: Map<string, number>;
  readonly samples: Sample[];
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-edge-'));
const children: ChildServer[] = [];
const cases: Case[] = [];
try {
  const { remote, svc, jwt } = await startSampleGateway('edge', dir, config, children);
  const listed = await startChild(
    'edge-svc-listed',
    'lib/svc-server.ts',
    { databaseUrl: `file:${join(dir, 'metadata-listed.json')}`, adminSecret: ADMIN_SECRET, jwtSecret: jwt.config, corsDomain: LISTED_DOMAINS },
    config,
  );
  children.push(listed);
  await metadataOrThrow(listed.url, ADMIN_SECRET, 'add_remote_schema', { name: 'sample', definition: { url: remote.url } });

  const auth = { authorization: `Bearer ${jwt.token}` };
  const big = bodyOfSize(3 * 2 ** 20);
  const tokens = manyTokens(20_000);
  const fragments = fragmentChain(300);
  const nested = nestedText(3_000);
  const tooDeep = `the operation is nested too deeply: more than ${MAX_DEPTH} levels`;
  // A body a little over the limit (up to 8 times) is read and thrown away, so the client reads
  // its 413 on a connection that stays open; one declared far over it is not read: the
  // connection is closed after the answer.
  const tooLargeDrained = refused(413, 'payload-too-large', `request body is larger than ${MAX_BODY} bytes`, (h) =>
    h['connection'] !== 'close' ? undefined : 'connection header was close',
  );
  const tooLargeClosed = refused(413, 'payload-too-large', `request body is larger than ${MAX_BODY} bytes`, (h) =>
    h['connection'] === 'close' ? undefined : `connection header was ${h['connection']}`,
  );
  const farOver = String(32 * 2 ** 20);
  const kib = (b: Buffer) => `${round(b.length / 1024, 1)} KiB`;

  const newCase = (c: Omit<Case, 'cursor' | 'failures' | 'responses' | 'closedByServer' | 'reasons' | 'samples'>): Case => ({
    ...c,
    cursor: 0,
    failures: 0,
    responses: 0,
    closedByServer: 0,
    reasons: new Map(),
    samples: [],
  });
  cases.push(
    newCase({
      label: 'normal query (baseline)',
      svc: 'main',
      request: (i) => ({ headers: auth, body: normalBody(i) }),
      check: served(),
      note: `the proxied query of bench proxy, ${normalBody(0).length} bytes, forwarded to the remote`,
    }),
    newCase({
      label: 'same + Origin (cors *)',
      svc: 'main',
      request: (i) => ({ headers: { ...auth, origin: 'https://app.example.com' }, body: normalBody(i) }),
      check: served((h) => (h['access-control-allow-origin'] === '*' ? undefined : `access-control-allow-origin was ${h['access-control-allow-origin']}`)),
      note: '`Origin: https://app.example.com`; the answer must carry `Access-Control-Allow-Origin: *`',
    }),
    newCase({
      label: 'same + listed Origin (2nd svc)',
      svc: 'listed',
      request: (i) => ({ headers: { ...auth, origin: LISTED_ORIGIN }, body: normalBody(i) }),
      check: served((h) =>
        h['access-control-allow-origin'] === LISTED_ORIGIN && h['access-control-allow-credentials'] === 'true' && /\borigin\b/i.test(h['vary'] ?? '')
          ? undefined
          : `CORS headers were ${JSON.stringify([h['access-control-allow-origin'], h['access-control-allow-credentials'], h['vary']])}`,
      ),
      note:
        `a second svc-graphql child started with \`--cors-domain ${LISTED_DOMAINS}\`, \`Origin: ${LISTED_ORIGIN}\` ` +
        '(matches the wildcard entry, after the first one was tried); the answer must reflect the origin with ' +
        '`Access-Control-Allow-Credentials: true` and `Vary: Origin`. Its ratios compare two processes, so they carry their drift too',
    }),
    newCase({
      label: '3 MiB body (413, read)',
      svc: 'main',
      request: () => ({ headers: auth, body: big }),
      check: tooLargeDrained,
      note:
        `${big.length} bytes with Content-Length, one Buffer built once; 413 \`payload-too-large\` expected on a ` +
        'connection that stays open: the server reads the rest of the body and throws it away (never buffered), so ' +
        'the server CPU includes reading 3 MiB',
    }),
    newCase({
      label: '32 MiB declared, no body (413)',
      svc: 'main',
      request: () => ({ headers: { ...auth, 'content-length': farOver }, body: '' }),
      check: tooLargeClosed,
      note:
        `\`Content-Length: ${farOver}\` (more than 8 times the limit) and no body: 413 and \`Connection: close\` ` +
        'expected, nothing read; after that answer the client opens a new connection, so the figures include a TCP connect',
    }),
    newCase({
      label: '20,000 tokens (400)',
      svc: 'main',
      request: (i) => ({ headers: auth, body: tokens.fill(i) }),
      check: refused(400, 'validation-failed', `the operation has more than ${MAX_TOKENS} tokens`),
      note: `\`{ t<n> a a … }\`, ${await countTokens(tokens.buffer)} tokens, ${kib(tokens.buffer)}; 400 \`validation-failed\` expected`,
    }),
    newCase({
      label: '300 levels via fragments (400)',
      svc: 'main',
      request: (i) => ({ headers: auth, body: fragments.fill(i) }),
      check: refused(400, 'validation-failed', tooDeep),
      note:
        `\`query Q<n> { ...F1 }\` and 299 fragments \`fragment Fi on Query { ...F(i+1) }\` (the last \`{ __typename }\`), ` +
        `one level each in the text, 300 with the fragments written out; ${await countTokens(fragments.buffer)} tokens, ${kib(fragments.buffer)}; 400 expected`,
    }),
    newCase({
      label: '3,000 levels in the text (400)',
      svc: 'main',
      request: (i) => ({ headers: auth, body: nested.fill(i) }),
      check: refused(400, 'validation-failed', tooDeep),
      note: `\`{t<n>{a{a{a … }}}\` 3,000 levels, ${kib(nested.buffer)}; 400 expected`,
    }),
  );

  const svcOf = (c: Case): ChildServer => (c.svc === 'main' ? svc : listed);
  const loadOf = (c: Case) => {
    const target = svcOf(c);
    return (duration: number) =>
      runEdgeLoad({ url: `${target.url}/v1/graphql`, connections: config.connections, duration, request: c.request, check: c.check }, c.cursor);
  };
  const keepFailures = (c: Case, outcome: EdgeLoadResult): void => {
    c.cursor = outcome.requestsBuilt;
    c.failures += outcome.failures;
    for (const [reason, n] of outcome.reasons) c.reasons.set(reason, (c.reasons.get(reason) ?? 0) + n);
  };
  // One unmeasured pass over every case first: otherwise round 1's baseline, the first load the
  // server sees, still pays for the JIT and heap growth that every later case finds done.
  for (const c of cases) {
    const warm = await loadOf(c)(config.warmup);
    keepFailures(c, warm);
    progress(`[warm-up] ${c.label}: ${Math.round(warm.rps)} req/s, failures ${warm.failures}`);
  }
  for (let r = 1; r <= config.rounds; r++) {
    for (const c of cases) {
      const target = svcOf(c);
      const load = loadOf(c);
      // Only to reopen connections and refill caches: the warm-up pass above did the rest.
      const warm = await load(warmupFor(config, 2));
      keepFailures(c, warm);
      const [svcBefore, remoteBefore] = await Promise.all([target.stats(), remote.stats()]);
      const res = await load(config.duration);
      const [svcAfter, remoteAfter] = await Promise.all([target.stats(), remote.stats()]);
      keepFailures(c, res);
      c.responses += res.responses;
      c.closedByServer += res.closedByServer;
      const svcCpu = cpuMicros(svcBefore, svcAfter) / Math.max(1, res.responses);
      c.samples.push({
        rps: res.rps,
        p50: res.p50,
        p99: res.p99,
        svcCpu,
        remoteCpu: cpuMicros(remoteBefore, remoteAfter) / Math.max(1, res.responses),
        rss: svcAfter.rss,
      });
      progress(
        `[round ${r}/${config.rounds}] ${c.label}: ${Math.round(res.rps)} req/s, p99 ${res.p99} ms, ` +
          `svc ${Math.round(svcCpu)} us/req, failures ${warm.failures + res.failures}`,
      );
    }
  }
} finally {
  await Promise.all(children.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
}

type Key = keyof Sample;
const stat = (c: Case, key: Key): number => median(c.samples.map((s) => s[key]));
const baseline = cases[0];
if (!baseline) throw new Error('no cases ran');
const baseRps = stat(baseline, 'rps');
const baseCpu = stat(baseline, 'svcCpu');
const cpuRatio = (c: Case): number => stat(c, 'svcCpu') / baseCpu;
const rows = cases.map((c) => [
  c.label,
  Math.round(stat(c, 'rps')),
  `${(stat(c, 'rps') / baseRps).toFixed(2)}x`,
  stat(c, 'p50'),
  stat(c, 'p99'),
  Math.round(stat(c, 'svcCpu')),
  `${cpuRatio(c).toFixed(2)}x`,
  // Each round's ratio against the same round's baseline: less exposed to slow drift of the machine.
  c.samples.map((s, i) => (s.svcCpu / (baseline.samples[i]?.svcCpu ?? Number.NaN)).toFixed(2)).join(' / '),
  Math.round(stat(c, 'remoteCpu')),
  mib(stat(c, 'rss')),
  c.failures,
]);
const totalFailures = cases.reduce((n, c) => n + c.failures, 0);
const targetList: Target[] = cases.slice(1).map((c, i) =>
  i < 2
    ? { name: `${c.label}: svc CPU per request within 10 % of the baseline's`, measured: `${cpuRatio(c).toFixed(2)}x`, pass: Math.abs(cpuRatio(c) - 1) <= 0.1 }
    : { name: `${c.label}: svc CPU per request <= the baseline's`, measured: `${cpuRatio(c).toFixed(2)}x`, pass: cpuRatio(c) <= 1 },
);
targetList.push({ name: 'no failed responses (exact status, code and message; CORS headers)', measured: String(totalFailures), pass: totalFailures === 0 });

console.log(
  [
    header(
      'edge: refusing hostile requests vs serving a normal one',
      config,
      'the sample remote (examples/sample-remotes) and svc-graphql (packages/server, embedded store, JWT mode, ' +
        'default limits: body 2 MiB, 15,000 tokens, 256 levels; `--cors-domain *`; log level error) each in their own ' +
        'Node child process, the remote added with `add_remote_schema`; autocannon in the parent; every request carries ' +
        'one HS256 token (cache hits). Hostile documents carry the request number, so no two are the same text and ' +
        "none is answered from Yoga's parse cache. Every response is checked: the baseline and CORS cases must be 200 " +
        'with `hello` and `user` from the remote and the CORS headers; the refusals must be exactly the status and ' +
        '`{ errors: [{ message, extensions: { code, path } }] }` below. svc CPU = the svc-graphql child\'s CPU time ' +
        '(user + system) per answer during the measured window; "/ baseline" = that divided by the normal query\'s ' +
        '(below 1 = cheaper); remote CPU likewise (about 0 when nothing was forwarded); svc RSS after the window. ' +
        'p50/p99 cover every answer (autocannon records non-2xx latencies too). Warm-up: one unmeasured pass of ' +
        `${config.warmup} s per case before round 1 (so round 1's baseline does not pay the JIT for all), then 0.5 s ` +
        'before every measurement; warm-up answers are checked too. After an answer with `Connection: close` the ' +
        'client opens a new connection for its next request (bench/lib/edge-load.ts).',
    ),
    '',
    formatTable(
      ['case', 'req/s', 'req/s ratio', 'p50 ms', 'p99 ms', 'svc CPU us/req', 'svc CPU / baseline', 'CPU / baseline per round', 'remote CPU us/req', 'svc RSS MiB', 'failures'],
      rows,
    ),
    '',
    'Requests:',
    ...cases.map((c) => `- ${c.label}: ${c.note}.`),
    ...cases
      .filter((c) => c.closedByServer > 0)
      .map((c) => `- ${c.label}: ${c.closedByServer} of ${c.responses} measured answers carried \`Connection: close\`.`),
    '',
    targets(targetList),
  ].join('\n'),
);
for (const c of cases) {
  if (c.failures > 0) console.log(`\nfailures of ${c.label}:\n${describeFailures(c.reasons)}`);
}
process.exitCode = totalFailures > 0 ? 1 : 0;
