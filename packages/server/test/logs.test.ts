import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { BIN, ROOT, cleanEnv, startServerProcess, type ServerProcess } from './utils/server-process.js';

/**
 * The real CLI with `--log-format json`: one http-log entry per request with exactly its fields,
 * `x-request-id` in and out and on to remotes, and nothing secret in the whole log.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-logs-'));

const KEY = 'logs-test-hs256-key-of-at-least-32-characters!';
const ADMIN_SECRET = 'admin-secret-never-logged-5f1c';
const COOKIE_VALUE = 'cookie-value-never-logged-9a7e';
const VARIABLE_VALUE = 'variable-value-never-logged-3b2d';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const HTTP_LOG_KEYS = [
  'latency_ms',
  'level',
  'method',
  'msg',
  'operation_name',
  'operation_type',
  'path',
  'remote_calls',
  'request_id',
  'role',
  'status',
  'time',
  'type',
].sort();

let remote: RunningRemote;
let server: ServerProcess;
let url: string;
let token: string;

beforeAll(async () => {
  remote = await startSampleRemote();
  token = await new SignJWT({
    'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'], 'x-svc-user-id': '7' },
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(KEY));
  server = await startServerProcess([
    'serve',
    '--server-port',
    '0',
    '--database-url',
    `file:${join(dir, 'metadata.json')}`,
    '--admin-secret',
    ADMIN_SECRET,
    '--jwt-secret',
    JSON.stringify({ type: 'HS256', key: KEY }),
    '--log-format',
    'json',
    // Every line the server can write at all is searched for secrets below.
    '--log-level',
    'debug',
  ]);
  url = server.url;
}, 60_000);

afterAll(async () => {
  if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One request over node:http, so that any header value (a tab, a Latin-1 byte) goes out as it is. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((done, fail) => {
    const req = httpRequest(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

const graphql = (body: unknown, headers: Record<string, string> = {}) =>
  send('POST', '/v1/graphql', { 'content-type': 'application/json', ...headers }, JSON.stringify(body));

const GREET = { query: 'query Greet($name: String) { hello(name: $name) }', variables: { name: VARIABLE_VALUE }, operationName: 'Greet' };

describe('logs and request ids (svc-graphql serve --log-format json)', () => {
  it('writes one http-log entry per request with exactly its fields, echoes and forwards x-request-id, and never logs a secret', async () => {
    const sent: Array<{ id: string; status: number; expect: Record<string, unknown> }> = [];
    const record = (response: { status: number; headers: Record<string, string | string[] | undefined> }, expected: Record<string, unknown>) => {
      const id = response.headers['x-request-id'];
      expect(typeof id).toBe('string');
      sent.push({ id: id as string, status: response.status, expect: expected });
      return id as string;
    };

    const added = await send(
      'POST',
      '/v1/metadata',
      { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
      JSON.stringify({
        type: 'add_remote_schema',
        args: { name: 'sample', definition: { url: remote.url, forward_client_headers: true } },
      }),
    );
    expect(added.status).toBe(200);
    record(added, { method: 'POST', path: '/v1/metadata', status: 200, operation_type: null, operation_name: null, role: null, remote_calls: 0 });

    // A token, a cookie, a variable and the client's own request id.
    remote.received.length = 0;
    const greeted = await graphql(GREET, {
      authorization: `Bearer ${token}`,
      cookie: `session=${COOKIE_VALUE}`,
      'x-request-id': 'client-request-id-42',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    expect(JSON.parse(greeted.body)).toEqual({ data: { hello: `Hello, ${VARIABLE_VALUE}!` } });
    expect(greeted.headers['x-request-id']).toBe('client-request-id-42');
    record(greeted, {
      method: 'POST',
      path: '/v1/graphql',
      status: 200,
      operation_type: 'query',
      operation_name: 'Greet',
      role: 'user',
      remote_calls: 1,
    });
    // The remote received the same id (and not a copy of some other header of the client's).
    expect(remote.received).toHaveLength(1);
    expect(remote.received[0]?.headers['x-request-id']).toBe('client-request-id-42');
    // Forwarded client headers pass (the cookie), the client's trace context does not: without
    // tracing there is no span of the server's to continue it with.
    expect(remote.received[0]?.headers['cookie']).toBe(`session=${COOKIE_VALUE}`);
    expect(remote.received[0]?.headers['traceparent']).toBeUndefined();

    // No id, one too long, one with a tab, one with a Latin-1 byte: a new UUID each time, sent on.
    for (const header of [undefined, 'x'.repeat(129), 'tab\there', 'caf\u00e9']) {
      remote.received.length = 0;
      const answered = await graphql(GREET, {
        'x-svc-admin-secret': ADMIN_SECRET,
        ...(header !== undefined && { 'x-request-id': header }),
      });
      expect(answered.status).toBe(200);
      const id = record(answered, {
        method: 'POST',
        path: '/v1/graphql',
        status: 200,
        operation_type: 'query',
        operation_name: 'Greet',
        role: 'admin',
        remote_calls: 1,
      });
      expect(id).toMatch(UUID);
      expect(remote.received[0]?.headers['x-request-id']).toBe(id);
    }
    // Exactly 128 printable characters (a space among them) are the client's.
    const longest = `${'a'.repeat(63)} ${'b'.repeat(64)}`;
    const kept = await graphql(GREET, { 'x-svc-admin-secret': ADMIN_SECRET, 'x-request-id': longest });
    expect(kept.headers['x-request-id']).toBe(longest);
    record(kept, { method: 'POST', path: '/v1/graphql', status: 200, operation_type: 'query', operation_name: 'Greet', role: 'admin', remote_calls: 1 });

    // A query over GET: the path is logged without its query string (which holds the variables).
    const params = new URLSearchParams({ query: GREET.query, variables: JSON.stringify(GREET.variables), operationName: 'Greet' });
    const viaGet = await send('GET', `/v1/graphql?${params.toString()}`, { authorization: `Bearer ${token}`, accept: 'application/json' });
    expect(viaGet.status).toBe(200);
    record(viaGet, { method: 'GET', path: '/v1/graphql', status: 200, operation_type: 'query', operation_name: 'Greet', role: 'user', remote_calls: 1 });

    // A mutation of two root fields of no remote; an anonymous query answered locally.
    const anonymous = await graphql({ query: '{ __typename }' }, { 'x-svc-admin-secret': ADMIN_SECRET });
    record(anonymous, { method: 'POST', path: '/v1/graphql', status: 200, operation_type: 'query', operation_name: null, role: 'admin', remote_calls: 0 });

    // Failures carry the id too: a bad token (401), a syntax error, a wrong admin secret, an unknown route.
    const badToken = await graphql(GREET, { authorization: `Bearer ${token.slice(0, -4)}AAAA` });
    expect(badToken.status).toBe(401);
    record(badToken, { method: 'POST', path: '/v1/graphql', status: 401, operation_type: null, operation_name: null, role: null, remote_calls: 0 });
    const syntax = await graphql({ query: 'query Broken {', variables: { name: VARIABLE_VALUE } }, { authorization: `Bearer ${token}` });
    expect(syntax.status).toBe(200);
    record(syntax, { method: 'POST', path: '/v1/graphql', status: 200, operation_type: null, operation_name: null, role: 'user', remote_calls: 0 });
    const wrongSecret = await graphql(GREET, { 'x-svc-admin-secret': `${ADMIN_SECRET}-wrong` });
    record(wrongSecret, {
      method: 'POST',
      path: '/v1/graphql',
      status: wrongSecret.status,
      operation_type: null,
      operation_name: null,
      role: null,
      remote_calls: 0,
    });
    expect(wrongSecret.status).toBeGreaterThanOrEqual(400);
    const missing = await send('GET', '/nowhere?token=abc', { cookie: `session=${COOKIE_VALUE}` });
    expect(missing.status).toBe(404);
    record(missing, { method: 'GET', path: '/nowhere', status: 404, operation_type: null, operation_name: null, role: null, remote_calls: 0 });
    const health = await send('GET', '/healthz', {});
    expect(health.body).toBe('OK');
    record(health, { method: 'GET', path: '/healthz', status: 200, operation_type: null, operation_name: null, role: null, remote_calls: 0 });

    // A subscription over graphql-ws: the upgrade's id reaches the remote in connection_init.
    const wsUrl = `${url.replace(/^http/, 'ws')}/v1/graphql`;
    const client = createClient({
      url: wsUrl,
      webSocketImpl: class extends WebSocket {
        constructor(address: string | URL, protocols?: string | string[]) {
          super(address, protocols, { headers: { 'x-request-id': 'ws-request-id-7' } });
        }
      },
      connectionParams: { headers: { 'x-svc-admin-secret': ADMIN_SECRET } },
      lazy: true,
      // One connection (one upgrade) for both operations below.
      lazyCloseTimeout: 10_000,
      retryAttempts: 0,
    });
    try {
      const values: unknown[] = [];
      for await (const result of client.iterate({ query: 'subscription { countdown(from: 1, intervalMs: 1) }' })) values.push(result);
      expect(values).toEqual([{ data: { countdown: 1 } }, { data: { countdown: 0 } }]);
      // A query over the socket reaches the remote over HTTP with the client's headers forwarded,
      // but never the client's own WebSocket handshake headers (nor in connection_init).
      const echoed: unknown[] = [];
      for await (const result of client.iterate({ query: '{ echoHeaders }' })) echoed.push(result);
      const forwarded = JSON.parse((echoed[0] as { data: { echoHeaders: string } }).data.echoHeaders) as Record<string, string>;
      expect(forwarded['x-request-id']).toBe('ws-request-id-7');
      expect(Object.keys(forwarded).filter((name) => name.startsWith('sec-websocket-'))).toEqual([]);
      expect(Object.keys(remote.connections.at(-1)?.headers ?? {}).filter((name) => name.startsWith('sec-websocket-'))).toEqual([]);
    } finally {
      await client.dispose();
    }
    expect(remote.connections.at(-1)?.headers['x-request-id']).toBe('ws-request-id-7');
    // The upgrade request is logged once, as answered (101); its operations are not requests.
    const upgradeEntry = (id: string, path: string, status: number) =>
      sent.push({ id, status, expect: { method: 'GET', path, status, operation_type: null, operation_name: null, role: null, remote_calls: 0 } });
    upgradeEntry('ws-request-id-7', '/v1/graphql', 101);

    // A connection whose token expires is closed with 4403; that is written to the log (debug), never to stdout.
    const expiring = await new SignJWT({
      'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'] },
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) + 2)
      .sign(new TextEncoder().encode(KEY));
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws', { headers: { 'x-request-id': 'ws-expiring-1' } });
    const closedWith = new Promise<[number, string]>((resolve) => socket.once('close', (code, reason) => resolve([code, String(reason)])));
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: { Authorization: `Bearer ${expiring}` } } })));
    expect(await closedWith).toEqual([4403, 'Forbidden: JWTExpired']);
    upgradeEntry('ws-expiring-1', '/v1/graphql', 101);

    // A client's protocol error (a message that is not JSON) closes it with 4400, logged at debug.
    const garbled = new WebSocket(wsUrl, 'graphql-transport-ws', { headers: { 'x-request-id': 'ws-garbled-1' } });
    const garbledClose = new Promise<[number, string]>((resolve) => garbled.once('close', (code, reason) => resolve([code, String(reason)])));
    garbled.once('open', () => garbled.send('not json'));
    expect(await garbledClose).toEqual([4400, 'Invalid message received']);
    upgradeEntry('ws-garbled-1', '/v1/graphql', 101);

    // Upgrades carry x-request-id too, accepted (101) or refused by the WebSocket server (400).
    const upgrade = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number | undefined; id: string | string[] | undefined }>((done, fail) => {
        const request = httpRequest(`${url}${path}`, {
          headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', ...headers },
        });
        request.on('upgrade', (response, socket) => {
          socket.destroy();
          done({ status: response.statusCode, id: response.headers['x-request-id'] });
        });
        request.on('response', (response) => {
          response.resume();
          done({ status: response.statusCode, id: response.headers['x-request-id'] });
        });
        request.on('error', fail);
        request.end();
      });
    const key = 'dGhlIHNhbXBsZSBub25jZQ==';
    expect(await upgrade('/v1/graphql', { 'sec-websocket-key': key, 'sec-websocket-protocol': 'graphql-transport-ws', 'x-request-id': 'up-1' })).toEqual({
      status: 101,
      id: 'up-1',
    });
    upgradeEntry('up-1', '/v1/graphql', 101);
    expect(await upgrade('/v1/graphql', { 'sec-websocket-key': 'not a key', 'x-request-id': 'up-2' })).toEqual({ status: 400, id: 'up-2' });
    upgradeEntry('up-2', '/v1/graphql', 400);
    expect(await upgrade('/elsewhere', { 'sec-websocket-key': key, 'x-request-id': 'up-3' })).toEqual({ status: 400, id: 'up-3' });
    upgradeEntry('up-3', '/elsewhere', 400);
    const generated = await upgrade('/elsewhere', { 'sec-websocket-key': key });
    expect(generated.status).toBe(400);
    expect(generated.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    upgradeEntry(generated.id as string, '/elsewhere', 400);

    // What Node's HTTP parser refuses (no handler runs) is answered with an id and logged too:
    // a malformed request line (400), headers over Node's limit (431).
    // The client keeps its side open: the server must close the connection for good (a write
    // after the answer is refused), not only half-close it, or each such client keeps a socket.
    const raw = (bytes: string) =>
      new Promise<{ answer: string; closed: boolean }>((done) => {
        const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(bytes));
        let answer = '';
        const poke = setInterval(() => socket.write('x'), 50);
        const gaveUp = setTimeout(() => finish(false), 3_000);
        const finish = (closed: boolean) => {
          clearInterval(poke);
          clearTimeout(gaveUp);
          socket.destroy();
          done({ answer, closed });
        };
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
        socket.on('error', () => finish(true));
        socket.on('close', () => finish(true));
      });
    for (const [bytes, status, reason] of [
      ['GARBAGE\r\n\r\n', 400, 'Bad Request'],
      [`GET /v1/graphql HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'Request Header Fields Too Large'],
    ] as const) {
      const { answer, closed } = await raw(bytes);
      expect(closed).toBe(true);
      expect(answer.startsWith(`HTTP/1.1 ${status} ${reason}\r\n`)).toBe(true);
      expect(answer).toMatch(/\r\nConnection: close\r\n/);
      const id = /\r\nx-request-id: ([^\r]+)\r\n/.exec(answer)?.[1];
      expect(id).toMatch(UUID);
      sent.push({ id: id as string, status, expect: { method: '', path: '', status, operation_type: null, operation_name: null, role: null, remote_calls: 0 } });
    }
    // Between two requests of a kept-alive connection (no response in flight): a request cut off
    // by the client's end is refused, and the server carries on.
    const cutOff = await new Promise<string>((done, fail) => {
      const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true }, () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nx-request-id: kept-alive-1\r\n\r\n'),
      );
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        if (answer.endsWith('\r\n\r\nOK')) socket.end('GET /heal');
      });
      socket.on('close', () => done(answer));
      socket.on('error', fail);
    });
    expect(cutOff.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    const second = cutOff.slice(cutOff.indexOf('\r\n\r\nOK') + 6);
    expect(second.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    const cutOffId = /\r\nx-request-id: ([^\r]+)\r\n/.exec(second)?.[1];
    expect(cutOffId).toMatch(UUID);
    sent.push({ id: 'kept-alive-1', status: 200, expect: { method: 'GET', path: '/healthz', status: 200 } });
    sent.push({ id: cutOffId as string, status: 400, expect: { method: '', path: '', status: 400 } });
    expect((await send('GET', '/healthz', { 'x-request-id': 'still-up' })).body).toBe('OK');
    sent.push({ id: 'still-up', status: 200, expect: { method: 'GET', path: '/healthz', status: 200 } });

    // A malformed chunk in a request already being handled: its own id, one entry with the 400.
    const chunked = await raw(
      `POST /v1/graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nx-svc-admin-secret: ${ADMIN_SECRET}\r\nx-request-id: bad-chunk-9\r\n\r\n5\r\n{"que\r\nzz\r\n`,
    );
    expect(chunked.closed).toBe(true);
    expect(chunked.answer.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    expect(chunked.answer).toContain('\r\nx-request-id: bad-chunk-9\r\n');
    sent.push({ id: 'bad-chunk-9', status: 400, expect: { method: 'POST', path: '/v1/graphql', status: 400 } });

    // A client's malformed requests: 400 each, and nothing logged as the server's failure (the
    // variables of a GET that are not JSON hold the client's values: never logged).
    const badGet = await send('GET', `/v1/graphql?query=${encodeURIComponent('{ __typename }')}&variables=${encodeURIComponent(`{${VARIABLE_VALUE}`)}`, {
      'x-svc-admin-secret': ADMIN_SECRET,
      'x-request-id': 'bad-variables-1',
    });
    expect({ status: badGet.status, body: JSON.parse(badGet.body) as unknown }).toEqual({
      status: 400,
      body: { errors: [{ message: 'the "variables" parameter of the request is not JSON', extensions: { code: 'BAD_REQUEST', path: '$' } }] },
    });
    sent.push({ id: 'bad-variables-1', status: 400, expect: { method: 'GET', path: '/v1/graphql', status: 400 } });
    const badPost = await send('POST', '/v1/graphql', { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET, 'x-request-id': 'bad-body-1' }, '[1,2]');
    expect(badPost.status).toBe(200);
    sent.push({ id: 'bad-body-1', status: 200, expect: { method: 'POST', path: '/v1/graphql', status: 200 } });

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    // Every line is one JSON object with level (a name), time (ISO 8601), type and msg.
    const lines = server.stderr().split('\n').filter((line) => line !== '');
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const entry of entries) {
      expect(['debug', 'info', 'warn', 'error']).toContain(entry['level']);
      expect(entry['time']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(typeof entry['type']).toBe('string');
      expect(typeof entry['msg']).toBe('string');
    }
    expect(entries.some((entry) => entry['type'] === 'server' && String(entry['msg']).startsWith('serving GraphQL at'))).toBe(true);
    expect(entries.some((entry) => entry['level'] === 'debug' && String(entry['msg']).includes('token expired'))).toBe(true);
    expect(entries.some((entry) => entry['level'] === 'debug' && entry['msg'] === 'WebSocket closed with 4400: Invalid message received')).toBe(true);
    // A client's malformed request is not a failure of the server.
    expect(entries.filter((entry) => entry['level'] === 'error').map((entry) => entry['msg'])).toEqual([]);
    // stdout holds the listening line alone.
    expect(server.stdout().split('\n').filter((line) => line !== '')).toHaveLength(1);

    // One http-log entry per HTTP request (WebSocket upgrades included), in order, exact fields.
    const httpLogs = entries.filter((entry) => entry['type'] === 'http-log');
    expect(httpLogs).toHaveLength(sent.length);
    for (const [index, entry] of httpLogs.entries()) {
      const expected = sent[index]!;
      expect(Object.keys(entry).sort()).toEqual(HTTP_LOG_KEYS);
      expect(entry).toMatchObject({ level: 'info', request_id: expected.id, ...expected.expect });
      expect(typeof entry['latency_ms']).toBe('number');
      expect(entry['latency_ms'] as number).toBeGreaterThanOrEqual(0);
    }

    // Nothing secret anywhere: the token (or its signature), the admin secret, the cookie, a variable's value.
    const everything = `${server.stdout()}\n${server.stderr()}`;
    for (const secret of [token, token.split('.')[2] as string, ADMIN_SECRET, COOKIE_VALUE, VARIABLE_VALUE, KEY]) {
      expect(everything).not.toContain(secret);
    }
  }, 60_000);
});

describe('text log format', () => {
  it('is the default and writes the http-log entry as key=value', async () => {
    const text = await startServerProcess(['serve', '--server-port', '0', '--database-url', `file:${join(dir, 'text.json')}`]);
    const answer = await fetch(`${text.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'text id' },
      body: JSON.stringify({ query: 'query Q { no_queries_available }' }),
    });
    expect(answer.headers.get('x-request-id')).toBe('text id');
    text.child.kill('SIGTERM');
    expect(await text.exited).toBe(0);
    const err = text.stderr();
    expect(err).toMatch(/^\S+Z info serving GraphQL at /m);
    expect(err).toMatch(
      /^\d{4}-\d{2}-\d{2}T\S+Z info http-log POST \/v1\/graphql 200 request_id="text id" method=POST path=\/v1\/graphql status=200 latency_ms=[\d.]+ operation_type=query operation_name=Q role=admin remote_calls=0$/m,
    );
  }, 60_000);

  it('refuses an unknown format, naming the flag or the variable', async () => {
    const run = (args: string[], env: NodeJS.ProcessEnv) =>
      new Promise<{ code: number | null; err: string }>((done) => {
        const bad = spawn(process.execPath, ['--import', 'tsx', BIN, 'serve', '--server-port', '0', ...args], { cwd: ROOT, env });
        let err = '';
        bad.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        bad.on('exit', (code) => done({ code, err }));
      });
    const [flag, variable] = await Promise.all([
      run(['--log-format', 'yaml'], cleanEnv()),
      run([], { ...cleanEnv(), SVC_GRAPHQL_LOG_FORMAT: 'xml' }),
    ]);
    expect(flag).toEqual({ code: 1, err: 'Fatal error: --log-format: expected one of text, json, but got "yaml"\n' });
    expect(variable).toEqual({ code: 1, err: 'Fatal error: SVC_GRAPHQL_LOG_FORMAT: expected one of text, json, but got "xml"\n' });
  }, 60_000);
});
