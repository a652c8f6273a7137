import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from 'graphql-ws';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, parseCommandLine, type ServerOptions, type SvcGraphqlServer } from '../src/index.js';
import { MAX_JWT_RESULTS, ServerMetrics } from '../src/observability/metrics.js';

const ADMIN_SECRET = 'metrics-test-admin-secret';
const METRICS_SECRET = 'metrics-test-scrape-secret';
const ADMIN = { 'x-svc-admin-secret': ADMIN_SECRET };
const SCRAPE = { authorization: `Bearer ${METRICS_SECRET}` };
const NAMESPACE = 'https://svc-graphql.dev/jwt/claims';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const repository = join(dirname(fileURLToPath(import.meta.url)), '../../..');

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-metrics-'));
const servers: SvcGraphqlServer[] = [];
let remote: RunningRemote;
let jwks: Server;
let jwksUrl: string;
let jwksFetches = 0;
let signingKey: CryptoKey;
let otherKey: CryptoKey;

/** One sample of a scrape: its name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Reads the Prometheus text format (one sample a line; `#` lines are help and type). */
function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[label[1] as string] = label[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample named `name` with exactly `labels`; `undefined` when there is none. */
function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted)?.value;
}

/** Every sample named `name`, as `label=value,… → value` (sorted), for exact comparisons. */
function series(samples: readonly Sample[], name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sample of samples.filter((s) => s.name === name)) {
    out[Object.entries(sample.labels).sort().map(([k, v]) => `${k}=${v}`).join(',')] = sample.value;
  }
  return out;
}

async function start(options: ServerOptions): Promise<SvcGraphqlServer> {
  const server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, `metadata-${servers.length}.json`)}`,
    logger: quiet,
    ...options,
  });
  servers.push(server);
  return server;
}

function post(server: SvcGraphqlServer, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function metadata(server: SvcGraphqlServer, body: unknown): Promise<void> {
  const response = await post(server, '/v1/metadata', body, ADMIN);
  expect(response.status, await response.clone().text()).toBe(200);
}

async function graphql(
  server: SvcGraphqlServer,
  query: string,
  headers: Record<string, string> = ADMIN,
  operationName?: string,
): Promise<{ status: number; body: { data?: unknown; errors?: unknown[] } }> {
  const response = await post(server, '/v1/graphql', { query, ...(operationName !== undefined && { operationName }) }, headers);
  return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: unknown[] } };
}

async function scrape(server: SvcGraphqlServer, headers: Record<string, string> = SCRAPE): Promise<Sample[]> {
  const response = await fetch(`${server.url}/v1/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseScrape(await response.text());
}

function token(key: CryptoKey, expiresInSeconds: number): Promise<string> {
  return new SignJWT({ [NAMESPACE]: { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'], 'x-svc-user-id': 'user-4711' } })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
    .sign(key);
}

function wsClient(server: SvcGraphqlServer): Client {
  return createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers: ADMIN }, retryAttempts: 0, lazy: true });
}

/** Runs one graphql-ws operation to its end; the results it received. */
function wsRun(client: Client, query: string): Promise<Array<{ data?: unknown; errors?: unknown }>> {
  return new Promise((resolve, reject) => {
    const results: Array<{ data?: unknown; errors?: unknown }> = [];
    client.subscribe(
      { query },
      {
        next: (value) => results.push(value as { data?: unknown; errors?: unknown }),
        error: (error) => (Array.isArray(error) ? resolve([{ errors: error }]) : reject(error instanceof Error ? error : new Error(String(error)))),
        complete: () => resolve(results),
      },
    );
  });
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('condition not met within 5 s');
}

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = pair.privateKey as CryptoKey;
  otherKey = (await generateKeyPair('RS256')).privateKey as CryptoKey;
  const publicJwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createHttpServer((_request, response) => {
    jwksFetches++;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
    response.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const address = jwks.address();
  jwksUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/jwks.json`;
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await remote?.close();
  await new Promise<void>((resolve) => (jwks ? jwks.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /v1/metrics after known traffic', () => {
  let server: SvcGraphqlServer;
  let samples: Sample[];
  let text: string;

  beforeAll(async () => {
    server = await start({
      adminSecret: ADMIN_SECRET,
      jwtSecret: JSON.stringify({ jwk_url: jwksUrl, claims_namespace: NAMESPACE }),
      metricsSecret: METRICS_SECRET,
    });
    await metadata(server, { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url, timeout_seconds: 2 } } });
    // A second remote that is gone: an inconsistent object, kept by allow_inconsistent_metadata.
    await metadata(server, {
      type: 'replace_metadata',
      args: {
        allow_inconsistent_metadata: true,
        metadata: {
          version: 3,
          remote_schemas: [
            { name: 'sample', definition: { url: remote.url, timeout_seconds: 2 } },
            { name: 'gone', definition: { url: 'http://127.0.0.1:9/graphql', timeout_seconds: 1 } },
          ],
        },
      },
    });

    // HTTP: 3 queries that succeed (one named, one with a token), 1 with a remote error, 1 timed
    // out at the remote, 1 validation error, 1 syntax error, 1 mutation, 2 refused tokens.
    expect((await graphql(server, '{ hello }')).body).toEqual({ data: { hello: 'Hello, world!' } });
    expect((await graphql(server, 'query SecretOperationName { hello(name: "private-value") }', ADMIN, 'SecretOperationName')).body.data).toBeDefined();
    const userToken = await token(signingKey, 600);
    const asUser = await graphql(server, '{ hello }', { authorization: `Bearer ${userToken}` });
    expect(asUser.status).toBe(200);
    expect(asUser.body.errors).toBeUndefined();
    expect((await graphql(server, '{ boom }')).body.errors).toHaveLength(1);
    expect((await graphql(server, '{ slow(ms: 5000) }')).body.errors).toHaveLength(1);
    expect((await graphql(server, '{ nope }')).body.errors).toHaveLength(1);
    expect((await graphql(server, '{ hello ')).body.errors).toHaveLength(1);
    const added = await graphql(server, 'mutation { addMessage(input: { text: "hi" }) { id } }');
    expect(added.body.errors).toBeUndefined();
    expect((await graphql(server, '{ hello }', { authorization: `Bearer ${await token(signingKey, -600)}` })).status).toBe(401);
    expect((await graphql(server, '{ hello }', { authorization: `Bearer ${await token(otherKey, 600)}` })).status).toBe(401);

    // graphql-ws: a query, a subscription of 2 events, a validation error.
    const client = wsClient(server);
    expect(await wsRun(client, '{ hello }')).toEqual([{ data: { hello: 'Hello, world!' } }]);
    expect(await wsRun(client, 'subscription { countdown(from: 1, intervalMs: 1) }')).toEqual([
      { data: { countdown: 1 } },
      { data: { countdown: 0 } },
    ]);
    const refused = await wsRun(client, 'subscription { nope }');
    expect(refused[0]?.errors).toBeDefined();
    await client.dispose();
    await until(async () => valueOf(await scrape(server), 'svc_graphql_websocket_connections') === 0);

    const response = await fetch(`${server.url}/v1/metrics`, { headers: SCRAPE });
    text = await response.text();
    samples = parseScrape(text);
  });

  it('counts every GraphQL request and graphql-ws operation by operation type and status', () => {
    expect(series(samples, 'svc_graphql_requests_total')).toEqual({
      'operation_type=query,response_status=success': 4,
      'operation_type=query,response_status=failed': 3,
      'operation_type=mutation,response_status=success': 1,
      'operation_type=mutation,response_status=failed': 0,
      'operation_type=subscription,response_status=success': 1,
      'operation_type=subscription,response_status=failed': 1,
      // The syntax error and the two refused tokens.
      'operation_type=unknown,response_status=success': 0,
      'operation_type=unknown,response_status=failed': 3,
    });
  });

  it('times the execution of queries and mutations', () => {
    // 6 executed queries (HTTP 5, graphql-ws 1) and 1 mutation; the refused ones never executed.
    expect(valueOf(samples, 'svc_graphql_execution_time_seconds_count', { operation_type: 'query' })).toBe(6);
    expect(valueOf(samples, 'svc_graphql_execution_time_seconds_count', { operation_type: 'mutation' })).toBe(1);
    expect(valueOf(samples, 'svc_graphql_execution_time_seconds_bucket', { operation_type: 'query', le: '+Inf' })).toBe(6);
    // The timed-out query took at least the remote's timeout (2 s): it is in no bucket below 2.5 s.
    expect(valueOf(samples, 'svc_graphql_execution_time_seconds_sum', { operation_type: 'query' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'svc_graphql_execution_time_seconds_bucket', { operation_type: 'query', le: '1' })).toBeLessThanOrEqual(5);
    // Buckets are cumulative.
    const buckets = samples.filter((s) => s.name === 'svc_graphql_execution_time_seconds_bucket' && s.labels['operation_type'] === 'query');
    expect(buckets.map((s) => s.labels['le'])).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf']);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
  });

  it('counts the calls to each remote by outcome, with their durations', () => {
    expect(series(samples, 'svc_graphql_remote_requests_total')).toEqual({
      'outcome=ok,remote_schema=sample': 5,
      'outcome=error,remote_schema=sample': 1,
      'outcome=timeout,remote_schema=sample': 1,
    });
    expect(valueOf(samples, 'svc_graphql_remote_request_duration_seconds_count', { remote_schema: 'sample' })).toBe(7);
    expect(valueOf(samples, 'svc_graphql_remote_request_duration_seconds_sum', { remote_schema: 'sample' })).toBeGreaterThanOrEqual(2);
  });

  it('counts token verifications by result and JWKS fetches', () => {
    expect(series(samples, 'svc_graphql_jwt_verifications_total')).toEqual({
      'result=ok': 1,
      'result=JWTExpired': 1,
      'result=JWSInvalidSignature': 1,
    });
    expect(jwksFetches).toBe(1);
    expect(series(samples, 'svc_graphql_jwks_fetches_total')).toEqual({ 'outcome=ok': 1, 'outcome=error': 0 });
  });

  it('shows connections and subscriptions, schema swaps and the metadata gauges', () => {
    expect(valueOf(samples, 'svc_graphql_websocket_connections')).toBe(0);
    expect(valueOf(samples, 'svc_graphql_active_subscriptions')).toBe(0);
    // The start (no remote schema yet), add_remote_schema, replace_metadata.
    expect(valueOf(samples, 'svc_graphql_schema_swaps_total')).toBe(3);
    expect(valueOf(samples, 'svc_graphql_inconsistent_objects')).toBe(1);
    expect(valueOf(samples, 'svc_graphql_metadata_resource_version')).toBe(2);
  });

  it("includes prom-client's Node process metrics", () => {
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(samples.some((s) => s.name === name), name).toBe(true);
    }
  });

  it('uses only bounded label values: never an operation name, a variable, a user or a token', () => {
    expect(text).not.toContain('SecretOperationName');
    expect(text).not.toContain('private-value');
    expect(text).not.toContain('user-4711');
    expect(text).not.toContain('eyJ');
    const allowed: Record<string, Record<string, readonly string[] | RegExp>> = {
      svc_graphql_requests_total: { operation_type: ['query', 'mutation', 'subscription', 'unknown'], response_status: ['success', 'failed'] },
      svc_graphql_execution_time_seconds: { operation_type: ['query', 'mutation'], le: /^(\d+(\.\d+)?|\+Inf)$/ },
      svc_graphql_remote_requests_total: { remote_schema: ['sample'], outcome: ['ok', 'error', 'timeout'] },
      svc_graphql_remote_request_duration_seconds: { remote_schema: ['sample'], le: /^(\d+(\.\d+)?|\+Inf)$/ },
      svc_graphql_jwt_verifications_total: { result: /^[A-Za-z][A-Za-z0-9_-]*$/ },
      svc_graphql_jwks_fetches_total: { outcome: ['ok', 'error'] },
      svc_graphql_rejected_operations_total: { reason: ['allowlist', 'introspection', 'depth', 'nodes', 'batch', 'time', 'rate'] },
    };
    const own = samples.filter((s) => s.name.startsWith('svc_graphql_'));
    expect(own.length).toBeGreaterThan(0);
    for (const sample of own) {
      const base = sample.name.replace(/_(bucket|sum|count)$/, '');
      const rules = allowed[base] ?? allowed[sample.name] ?? {};
      for (const [label, value] of Object.entries(sample.labels)) {
        const rule = rules[label];
        expect(rule, `${sample.name} has label ${label}`).toBeDefined();
        if (rule instanceof RegExp) expect(value).toMatch(rule);
        else expect(rule).toContain(value);
      }
    }
  });

  it('references only series of this scrape in the example Grafana dashboard', () => {
    const dashboard = JSON.parse(readFileSync(join(repository, 'examples/observability/grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
    expect(exprs.length).toBeGreaterThan(5);
    const referenced = new Set(exprs.flatMap((expr) => [...expr.matchAll(/\b((?:svc_graphql|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1] as string)));
    for (const family of [
      'svc_graphql_requests_total',
      'svc_graphql_execution_time_seconds_bucket',
      'svc_graphql_remote_requests_total',
      'svc_graphql_remote_request_duration_seconds_bucket',
      'svc_graphql_jwt_verifications_total',
      'svc_graphql_websocket_connections',
    ]) {
      expect(referenced, `the dashboard shows ${family}`).toContain(family);
    }
    const scraped = new Set(samples.map((sample) => sample.name));
    for (const name of referenced) expect(scraped, `${name}, referenced by the dashboard`).toContain(name);
  });

  it('shows a running subscription and its WebSocket connection while they last', async () => {
    const client = wsClient(server);
    const received: unknown[] = [];
    const unsubscribe = client.subscribe({ query: 'subscription { messageAdded { id } }' }, { next: (value) => received.push(value), error: () => {}, complete: () => {} });
    await until(async () => valueOf(await scrape(server), 'svc_graphql_active_subscriptions') === 1);
    expect(valueOf(await scrape(server), 'svc_graphql_websocket_connections')).toBe(1);
    unsubscribe();
    await until(async () => valueOf(await scrape(server), 'svc_graphql_active_subscriptions') === 0);
    await client.dispose();
    await until(async () => valueOf(await scrape(server), 'svc_graphql_websocket_connections') === 0);
  });

  it('counts a subscription over HTTP (Server-Sent Events) while it runs', async () => {
    const before = valueOf(await scrape(server), 'svc_graphql_requests_total', { operation_type: 'subscription', response_status: 'success' }) ?? 0;
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...ADMIN },
      body: JSON.stringify({ query: 'subscription { messageAdded { id } }' }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    await until(async () => valueOf(await scrape(server), 'svc_graphql_active_subscriptions') === 1);
    expect(valueOf(await scrape(server), 'svc_graphql_requests_total', { operation_type: 'subscription', response_status: 'success' })).toBe(before + 1);
    controller.abort();
    await until(async () => valueOf(await scrape(server), 'svc_graphql_active_subscriptions') === 0);
  });
});

describe('series of remote schemas', () => {
  it('are dropped once their remote schema is removed from the metadata, and start from zero if it comes back', async () => {
    const server = await start({ adminSecret: ADMIN_SECRET });
    const other = { name: 'other', definition: { url: remote.url, customization: { root_fields_namespace: 'other' } } };
    await metadata(server, { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } });
    await metadata(server, { type: 'add_remote_schema', args: other });
    expect((await graphql(server, '{ hello other { hello } }')).body).toEqual({ data: { hello: 'Hello, world!', other: { hello: 'Hello, world!' } } });
    const remotesOf = (samples: Sample[]) =>
      [...new Set(samples.filter((sample) => sample.name.startsWith('svc_graphql_remote_request')).map((sample) => sample.labels['remote_schema']))].sort();
    expect(remotesOf(await scrape(server, ADMIN))).toEqual(['other', 'sample']);

    await metadata(server, { type: 'remove_remote_schema', args: { name: 'other' } });
    const after = await scrape(server, ADMIN);
    expect(remotesOf(after)).toEqual(['sample']);
    expect(valueOf(after, 'svc_graphql_remote_requests_total', { remote_schema: 'sample', outcome: 'ok' })).toBe(1);

    await metadata(server, { type: 'add_remote_schema', args: other });
    expect((await graphql(server, '{ other { hello } }')).body.errors).toBeUndefined();
    const back = await scrape(server, ADMIN);
    expect(valueOf(back, 'svc_graphql_remote_requests_total', { remote_schema: 'other', outcome: 'ok' })).toBe(1);
    expect(valueOf(back, 'svc_graphql_remote_request_duration_seconds_count', { remote_schema: 'other' })).toBe(1);
  });
});

describe('access to /v1/metrics', () => {
  it('asks for the metrics secret as a bearer token when one is set (not the admin secret)', async () => {
    const server = await start({ adminSecret: ADMIN_SECRET, metricsSecret: METRICS_SECRET });
    const get = (headers: Record<string, string>) => fetch(`${server.url}/v1/metrics`, { headers });
    expect((await get(SCRAPE)).status).toBe(200);
    expect((await get({ authorization: `bearer ${METRICS_SECRET}` })).status).toBe(200);

    const missing = await get({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await missing.json()).toEqual({
      error: 'Authorization: Bearer <metrics secret> required, but not found',
      path: '$',
      code: 'access-denied',
    });
    for (const headers of [
      { authorization: `Bearer ${METRICS_SECRET}x` },
      { authorization: `Bearer ${METRICS_SECRET.slice(0, -1)}` },
      { authorization: `Basic ${METRICS_SECRET}` },
      { authorization: METRICS_SECRET },
      { authorization: `Bearer ${ADMIN_SECRET}` },
    ]) {
      const wrong = await get(headers);
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toEqual({ error: 'invalid metrics secret', path: '$', code: 'access-denied' });
    }
    const admin = await get(ADMIN);
    expect(admin.status).toBe(401);
  });

  it('asks for the admin secret header without a metrics secret', async () => {
    const server = await start({ adminSecret: ADMIN_SECRET });
    const get = (headers: Record<string, string>) => fetch(`${server.url}/v1/metrics`, { headers });
    const ok = await get(ADMIN);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('# TYPE svc_graphql_requests_total counter');
    const missing = await get({});
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: 'x-svc-admin-secret required, but not found', path: '$', code: 'access-denied' });
    for (const headers of [{ 'x-svc-admin-secret': `${ADMIN_SECRET}!` }, { authorization: `Bearer ${ADMIN_SECRET}` }]) {
      const wrong = await get(headers);
      expect(wrong.status).toBe(401);
    }
    expect(await (await get({ 'x-svc-admin-secret': 'nope' })).json()).toEqual({
      error: 'invalid x-svc-admin-secret',
      path: '$',
      code: 'access-denied',
    });
  });

  it('is open without any secret; GET and HEAD only', async () => {
    const server = await start({});
    const ok = await fetch(`${server.url}/v1/metrics`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('svc_graphql_requests_total{operation_type="query",response_status="success"} 0');
    const head = await fetch(`${server.url}/v1/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const posted = await fetch(`${server.url}/v1/metrics`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 404 with metrics disabled, and GraphQL works as before', async () => {
    const server = await start({ disableMetrics: true, metricsSecret: METRICS_SECRET });
    expect((await fetch(`${server.url}/v1/metrics`, { headers: SCRAPE })).status).toBe(404);
    expect((await fetch(`${server.url}/v1/metrics`)).status).toBe(404);
    expect((await graphql(server, '{ no_queries_available }', {})).body).toEqual({ data: { no_queries_available: null } });
  });

  it('reads --metrics-secret and --disable-metrics (and their variables)', () => {
    const fromFlags = parseCommandLine(['serve', '--metrics-secret', 's3cret', '--disable-metrics'], {});
    expect(fromFlags).toMatchObject({ command: 'serve', config: { metricsSecret: 's3cret', disableMetrics: true } });
    const fromEnv = parseCommandLine(['serve'], { SVC_GRAPHQL_METRICS_SECRET: 'from-env', SVC_GRAPHQL_DISABLE_METRICS: 'false' });
    expect(fromEnv).toMatchObject({ config: { metricsSecret: 'from-env', disableMetrics: false } });
    expect(parseCommandLine(['serve'], {})).toMatchObject({ config: { disableMetrics: false } });
    expect(() => parseCommandLine(['serve'], { SVC_GRAPHQL_DISABLE_METRICS: 'yes' })).toThrow('expected "true" or "false", but got "yes"');
  });
});

describe('examples/observability', () => {
  it('the Prometheus scrape configuration sends the metrics secret as a bearer token to /v1/metrics', () => {
    const config = readFileSync(join(repository, 'examples/observability/prometheus.yml'), 'utf8');
    expect(config).toContain('metrics_path: /v1/metrics');
    expect(config).toMatch(/authorization:\n\s+type: Bearer\n\s+credentials_file: /);
  });
});

describe('label values stay bounded', () => {
  it('keeps remote_schema series only for the remotes of the live metadata, a call that ends after its remote left included', async () => {
    const metrics = new ServerMetrics();
    metrics.countRemoteRequest('early', 'ok', 0.01);
    metrics.countSchemaSwap(['a', 'b']);
    metrics.countRemoteRequest('a', 'ok', 0.01);
    metrics.countRemoteRequest('b', 'error', 0.01);
    metrics.countSchemaSwap(['a']);
    // b's call under way when b was removed ends now: no series comes back for it.
    metrics.countRemoteRequest('b', 'ok', 0.01);
    const scraped = parseScrape(await metrics.snapshot().metrics());
    expect(series(scraped, 'svc_graphql_remote_requests_total')).toEqual({ 'outcome=ok,remote_schema=a': 1, 'outcome=error,remote_schema=a': 0, 'outcome=timeout,remote_schema=a': 0 });
    expect(valueOf(scraped, 'svc_graphql_remote_request_duration_seconds_count', { remote_schema: 'b' })).toBeUndefined();
  });

  it('keeps at most MAX_JWT_RESULTS verification results (other included); past them, or not a short name: other', async () => {
    const metrics = new ServerMetrics();
    metrics.countJwtVerification('ok');
    metrics.countJwtVerification('JWSError JWSInvalidSignature');
    metrics.countJwtVerification('x'.repeat(100));
    for (let i = 0; i < 100; i++) metrics.countJwtVerification(`Reason${i}`);
    const results = series(parseScrape(await metrics.snapshot().metrics()), 'svc_graphql_jwt_verifications_total');
    expect(Object.keys(results)).toHaveLength(MAX_JWT_RESULTS);
    expect(results['result=ok']).toBe(1);
    expect(results['result=Reason0']).toBe(1);
    expect(results['result=Reason99']).toBeUndefined();
    // ok and other take 2 of the values: Reason0 … Reason29 are kept, the 70 others and the two
    // malformed ones are other.
    expect(results['result=other']).toBe(2 + 100 - (MAX_JWT_RESULTS - 2));
  });
});

describe('a JWKS endpoint that fails', () => {
  it('counts each failed fetch as outcome error, and the refused token by its result', async () => {
    let fetches = 0;
    const failing = createHttpServer((_request, response) => {
      fetches++;
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('down');
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const address = failing.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/jwks.json`;
      const server = await start({ adminSecret: ADMIN_SECRET, jwtSecret: JSON.stringify({ jwk_url: url, claims_namespace: NAMESPACE }) });
      const refused = await graphql(server, '{ __typename }', { authorization: `Bearer ${await token(signingKey, 600)}` });
      expect(refused.status).toBe(401);
      const samples = await scrape(server, ADMIN);
      const outcomes = series(samples, 'svc_graphql_jwks_fetches_total');
      // Each attempt the JWKS server answered is one error; none succeeded.
      expect(outcomes['outcome=ok']).toBe(0);
      // (a retry may have come between the scrape and this line)
      expect(outcomes['outcome=error']).toBeGreaterThanOrEqual(1);
      expect(outcomes['outcome=error']).toBeLessThanOrEqual(fetches);
      const results = series(samples, 'svc_graphql_jwt_verifications_total');
      expect(results['result=ok'] ?? 0).toBe(0);
      expect(Object.values(results).reduce((n, v) => n + v, 0)).toBe(1);
    } finally {
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    }
  });
});
