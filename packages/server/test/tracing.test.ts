import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { BIN, ROOT } from './utils/server-process.js';

/**
 * The real CLI exporting to a real OTLP/HTTP receiver on 127.0.0.1 (a small HTTP server here that
 * decodes the exporter's JSON payloads): the span tree of a request through a remote, the
 * `traceparent` the remote received, a client's `traceparent` continued, metadata operation spans,
 * JWKS fetch spans (from jwt-session, which must share the server's OpenTelemetry API), and the spans buffered until a graceful stop sent before the process ends.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-tracing-'));
const ADMIN_SECRET = 'tracing-test-admin-secret';
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>;
  status?: { code?: number };
}
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  scope: string;
  service: string | undefined;
}

const spans: ReceivedSpan[] = [];
const exports: Array<{ path: string; contentType: string | undefined }> = [];
let receiver: Server;
let jwks: Server;
let signingKey: CryptoKey;
let remote: RunningRemote;
let child: ChildProcessWithoutNullStreams;
let url: string;
let stderr = '';
let exited: Promise<number | null>;

function valueOf(value: OtlpValue): string | number | boolean | undefined {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.boolValue;
}

function attributesOf(list: Array<{ key: string; value: OtlpValue }> | undefined): Record<string, string | number | boolean | undefined> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

/** An OTLP/HTTP trace receiver taking the JSON encoding (ids are hex strings in it). */
function startReceiver(): Promise<Server> {
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports.push({ path: request.url ?? '', contentType: request.headers['content-type'] });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: Array<{ key: string; value: OtlpValue }> };
          scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }>;
        }>;
      };
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              scope: scopeSpans.scope?.name ?? '',
              service: typeof service === 'string' ? service : undefined,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

beforeAll(async () => {
  receiver = await startReceiver();
  remote = await startSampleRemote();
  // A JWKS endpoint for the server's JWT configuration: its fetches must be traced too.
  const pair = await generateKeyPair('RS256');
  signingKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createHttpServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done));
  const jwkUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('SVC_GRAPHQL_') && !key.startsWith('OTEL_')) env[key] = value;
  }
  env['OTEL_EXPORTER_OTLP_ENDPOINT'] = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  // Nothing is sent on a timer during the test: the spans reach the receiver only because a
  // graceful stop sends what is buffered.
  env['OTEL_BSP_SCHEDULE_DELAY'] = '600000';
  child = spawn(
    process.execPath,
    [
      ...['--import', 'tsx', BIN, 'serve', '--server-port', '0', '--database-url', `file:${join(dir, 'metadata.json')}`],
      ...['--admin-secret', ADMIN_SECRET, '--jwt-secret', JSON.stringify({ jwk_url: jwkUrl })],
    ],
    { cwd: ROOT, env },
  );
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  exited = new Promise((done) => child.on('exit', done));
  url = await listeningUrl(child, () => stderr);
}, 60_000);

/** The URL a `svc-graphql serve` child says it listens on; its log for the error if it exits first. */
function listeningUrl(server: ChildProcessWithoutNullStreams, log: () => string): Promise<string> {
  return new Promise<string>((done, fail) => {
    let stdout = '';
    server.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^svc-graphql listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) done(match[1] as string);
    });
    server.on('exit', (code) => fail(new Error(`exited with ${code}: ${log()}`)));
  });
}

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await remote?.close();
  await new Promise((done) => receiver?.close(done));
  await new Promise((done) => jwks?.close(done));
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, ...headers },
    body: JSON.stringify(body),
  });

describe('traces over OTLP/HTTP (svc-graphql serve with OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('exports the span tree of a request through a remote, sends traceparent to the remote and continues a client traceparent', async () => {
    const added = await post('/v1/metadata', { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } });
    expect(added.status).toBe(200);

    // A request without a trace of its own: a new trace.
    remote.received.length = 0;
    const first = await post('/v1/graphql', { query: 'query Greet { hello(name: "trace") }', operationName: 'Greet' });
    expect(await first.json()).toEqual({ data: { hello: 'Hello, trace!' } });
    expect(remote.received).toHaveLength(1);
    const firstParent = TRACEPARENT.exec(remote.received[0]?.headers['traceparent'] ?? '');
    expect(firstParent).not.toBeNull();

    // A client's traceparent: continued (same trace id, the client's span as the parent).
    const clientTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpanId = '00f067aa0ba902b7';
    remote.received.length = 0;
    const second = await post(
      '/v1/graphql',
      { query: 'mutation { addMessage(input: { text: "traced" }) { text } }' },
      { traceparent: `00-${clientTraceId}-${clientSpanId}-01` },
    );
    expect(second.status).toBe(200);
    expect(remote.received).toHaveLength(1);
    const secondParent = TRACEPARENT.exec(remote.received[0]?.headers['traceparent'] ?? '');
    expect(secondParent?.[1]).toBe(clientTraceId);
    // The remote's parent is the server's own client span, never the client's span copied through.
    expect(secondParent?.[2]).not.toBe(clientSpanId);

    // A token verified with a key of the JWKS, which the server fetched.
    const token = await new SignJWT({ 'https://svc-graphql.dev/jwt/claims': { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(signingKey);
    const withToken = await fetch(`${url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(await withToken.json()).toEqual({ data: { __typename: 'Query' } });

    // Nothing exported yet (a batch every 10 minutes): the graceful stop sends it all.
    expect(spans).toEqual([]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    expect(exports.length).toBeGreaterThan(0);
    for (const sent of exports) {
      expect(sent.path).toBe('/v1/traces');
      expect(sent.contentType).toMatch(/^application\/json/);
    }
    for (const span of spans) expect(span.service).toBe('svc-graphql');

    // 1. The first request: SERVER span -> CLIENT span, one trace, the remote got the client span.
    const [firstTraceId, firstClientSpanId] = [firstParent?.[1], firstParent?.[2]];
    const firstTrace = spans.filter((span) => span.traceId === firstTraceId);
    const server1 = firstTrace.find((span) => span.kind === SPAN_KIND_SERVER);
    const client1 = firstTrace.find((span) => span.kind === SPAN_KIND_CLIENT);
    expect(firstTrace).toHaveLength(2);
    expect(server1).toMatchObject({
      name: 'POST /v1/graphql',
      parentSpanId: undefined,
      scope: '@svc-graphql/server',
      attributes: {
        'graphql.operation.type': 'query',
        'graphql.operation.name': 'Greet',
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'url.path': '/v1/graphql',
      },
    });
    expect(client1).toMatchObject({
      name: 'remote_schema sample',
      spanId: firstClientSpanId,
      parentSpanId: server1?.spanId,
      scope: '@svc-graphql/remote-schemas',
      attributes: {
        'svc_graphql.remote_schema': 'sample',
        'http.request.method': 'POST',
        'server.address': '127.0.0.1',
        'http.response.status_code': 200,
      },
    });

    // 2. The continued trace: the SERVER span's parent is the client's span.
    const secondTrace = spans.filter((span) => span.traceId === clientTraceId);
    expect(secondTrace).toHaveLength(2);
    const server2 = secondTrace.find((span) => span.kind === SPAN_KIND_SERVER);
    const client2 = secondTrace.find((span) => span.kind === SPAN_KIND_CLIENT);
    expect(server2).toMatchObject({ parentSpanId: clientSpanId, attributes: { 'graphql.operation.type': 'mutation' } });
    expect(server2?.attributes['graphql.operation.name']).toBeUndefined();
    expect(client2).toMatchObject({ spanId: secondParent?.[2], parentSpanId: server2?.spanId, name: 'remote_schema sample' });

    // 3. The metadata operation: its span, and the remote's introspection as its child.
    const metadata = spans.find((span) => span.name === 'metadata add_remote_schema');
    expect(metadata).toMatchObject({ scope: '@svc-graphql/metadata-api', attributes: { 'svc_graphql.metadata.status': 200 } });
    const introspection = spans.filter((span) => span.parentSpanId === metadata?.spanId);
    expect(introspection).toHaveLength(1);
    expect(introspection[0]).toMatchObject({ kind: SPAN_KIND_CLIENT, name: 'remote_schema sample', traceId: metadata?.traceId });

    // 4. The JWKS fetch: a client span of jwt-session.
    const fetches = spans.filter((span) => span.name === 'jwks.fetch');
    expect(fetches.length).toBeGreaterThanOrEqual(1);
    for (const fetched of fetches) {
      expect(fetched).toMatchObject({ kind: SPAN_KIND_CLIENT, scope: '@svc-graphql/jwt-session', attributes: { 'url.full': expect.stringMatching(/\/jwks\.json$/) } });
    }
  }, 60_000);

  it('resolves one copy of @opentelemetry/api for every package: a second copy would not see the SDK the server registers', () => {
    const resolved = new Set<string>();
    for (const name of ['jwt-session', 'remote-schemas', 'metadata-api', 'server']) {
      const manifest = join(ROOT, 'packages', name, 'package.json');
      const declared = (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
      expect(declared['@opentelemetry/api'], name).toBeDefined();
      resolved.add(createRequire(manifest).resolve('@opentelemetry/api'));
    }
    expect([...resolved]).toHaveLength(1);
  });
});

describe('a trace receiver that refuses the export', () => {
  it('is one warning with the error under `error` in the JSON log, not the SDK\'s JSON in the message', async () => {
    const refusing = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(400, { 'content-type': 'text/plain' });
        response.end('no');
      });
    });
    await new Promise<void>((done) => refusing.listen(0, '127.0.0.1', done));
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('SVC_GRAPHQL_') && !key.startsWith('OTEL_')) env[key] = value;
    }
    env['OTEL_EXPORTER_OTLP_ENDPOINT'] = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    env['OTEL_BSP_SCHEDULE_DELAY'] = '100';
    const server = spawn(
      process.execPath,
      ['--import', 'tsx', BIN, 'serve', '--server-port', '0', '--database-url', `file:${join(dir, 'refused.json')}`, '--admin-secret', ADMIN_SECRET, '--log-format', 'json'],
      { cwd: ROOT, env },
    );
    let log = '';
    server.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    try {
      const listening = await listeningUrl(server, () => log);
      // A traced request: its span is exported, and refused.
      const answered = await fetch(`${listening}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
        body: '{"query":"{ __typename }"}',
      });
      expect(await answered.json()).toEqual({ data: { __typename: 'Query' } });
      const failed = () => log.split('\n').filter((line) => line.includes('sending traces failed'));
      await expect.poll(failed, { timeout: 20_000 }).not.toEqual([]);
      const entry = JSON.parse(failed()[0]!) as { level: string; msg: string; error?: { name?: unknown; message?: unknown } };
      expect(entry.level).toBe('warn');
      expect(typeof entry.error?.message).toBe('string');
      expect(entry.msg).not.toContain('"stack"');
    } finally {
      server.kill('SIGKILL');
      await new Promise((done) => refusing.close(done));
    }
  }, 40_000);
});
