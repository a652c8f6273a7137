import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { createServer, type SvcGraphqlServer } from '../src/index.js';

/*
 * The WebSocket transport as a client meets it: what a refused handshake is answered with (as the
 * `ws` library words it, plus the request id and one http-log entry), and how a connection ends
 * when its client does something wrong (the close code, and nothing above debug in the logs).
 */

const ADMIN_SECRET = 'ws-transport-secret';
const MAX_MESSAGE_BYTES = 4096;
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-ws-transport-'));

interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  args: unknown[];
}
const lines: LogLine[] = [];
const logger = {
  debug: (...args: unknown[]) => lines.push({ level: 'debug', args }),
  info: (...args: unknown[]) => lines.push({ level: 'info', args }),
  warn: (...args: unknown[]) => lines.push({ level: 'warn', args }),
  error: (...args: unknown[]) => lines.push({ level: 'error', args }),
};

let server: SvcGraphqlServer;
beforeAll(async () => {
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    maxRequestBodySize: MAX_MESSAGE_BYTES,
    logger,
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Refusal {
  status: number | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function upgrade(path: string, headers: Record<string, string>, method = 'GET'): Promise<Refusal> {
  return new Promise((done, fail) => {
    const request = httpRequest(`${server.url}${path}`, {
      method,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      done({ status: response.statusCode, headers: response.headers, body: '' });
    });
    request.on('response', (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => done({ status: response.statusCode, headers: response.headers, body }));
    });
    request.on('error', fail);
    request.end();
  });
}

/** The http-log entries (a plain logger gets them as `info('http-log', fields)`) of one request id. */
function httpLogOf(id: string): Array<Record<string, unknown>> {
  return lines
    .filter((line) => line.level === 'info' && line.args[0] === 'http-log')
    .map((line) => line.args[1] as Record<string, unknown>)
    .filter((fields) => fields['request_id'] === id);
}

/** Opens a graphql-ws connection as the admin and waits for its acknowledgement. */
async function acknowledged(): Promise<WebSocket> {
  const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
  await new Promise<void>((done, fail) => {
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: { 'x-svc-admin-secret': ADMIN_SECRET } } })));
    socket.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack') done();
    });
    socket.once('error', fail);
  });
  return socket;
}

function closeOf(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((done) => socket.once('close', (code, reason) => done({ code, reason: reason.toString() })));
}

describe('a refused WebSocket handshake', () => {
  it.each([
    ['another method', '/v1/graphql', {}, 'POST', 405, 'Invalid HTTP method'],
    ['a bad key', '/v1/graphql', { 'sec-websocket-key': 'not a key' }, 'GET', 400, 'Missing or invalid Sec-WebSocket-Key header'],
    ['an unknown version', '/v1/graphql', { 'sec-websocket-version': '12' }, 'GET', 400, 'Missing or invalid Sec-WebSocket-Version header'],
    ['another path', '/v1/elsewhere', {}, 'GET', 400, 'Bad Request'],
  ] as const)('for %s is answered as ws words it, with its x-request-id and one http-log entry', async (label, path, headers, method, status, body) => {
    const id = `refused: ${label}`;
    const answer = await upgrade(path, { ...headers, 'x-request-id': id }, method);
    expect({ status: answer.status, body: answer.body, id: answer.headers['x-request-id'], type: answer.headers['content-type'] }).toEqual({
      status,
      body,
      id,
      type: 'text/html',
    });
    if ('sec-websocket-version' in headers) expect(answer.headers['sec-websocket-version']).toBe('13, 8');
    expect(httpLogOf(id)).toEqual([expect.objectContaining({ request_id: id, method, path, status, remote_calls: 0 })]);
  });

  it('is not the fate of a good one: 101 with its id, logged once', async () => {
    const answer = await upgrade('/v1/graphql', { 'sec-websocket-protocol': 'graphql-transport-ws', 'x-request-id': 'accepted-101' });
    expect({ status: answer.status, id: answer.headers['x-request-id'], protocol: answer.headers['sec-websocket-protocol'] }).toEqual({
      status: 101,
      id: 'accepted-101',
      protocol: 'graphql-transport-ws',
    });
    expect(httpLogOf('accepted-101')).toEqual([expect.objectContaining({ status: 101 })]);
  });
});

describe('a client that breaks the protocol', () => {
  it('is closed with 4400 for a message only a server may send, and the server logs nothing above debug', async () => {
    const consoleError = vi.spyOn(console, 'error');
    const before = lines.length;
    try {
      for (const message of [
        { type: 'next', id: '1', payload: { data: { a: 1 } } },
        { type: 'connection_ack' },
        { type: 'error', id: '1', payload: [{ message: 'from the client' }] },
      ]) {
        const socket = await acknowledged();
        const closed = closeOf(socket);
        socket.send(JSON.stringify(message));
        expect(await closed, message.type).toEqual({ code: 4400, reason: 'Invalid message received' });
      }
      expect(consoleError).not.toHaveBeenCalled();
      expect(lines.slice(before).filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
    } finally {
      consoleError.mockRestore();
    }
  });

  it('is closed with 1009 for a message over the size limit, logged at debug only, and the server goes on', async () => {
    const consoleError = vi.spyOn(console, 'error');
    const before = lines.length;
    try {
      const socket = await acknowledged();
      const closed = closeOf(socket);
      socket.send(JSON.stringify({ type: 'ping', payload: { pad: 'x'.repeat(MAX_MESSAGE_BYTES) } }));
      expect((await closed).code).toBe(1009);
      const logged = lines.slice(before);
      expect(logged.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
      expect(logged.some((line) => line.level === 'debug' && String(line.args[0]).startsWith('WebSocket closed for a protocol error of the client'))).toBe(true);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
    const again = await acknowledged();
    const closed = closeOf(again);
    again.close(1000);
    expect((await closed).code).toBe(1000);
  });

  it('keeps a connection whose pings and subscriptions are right', async () => {
    const socket = await acknowledged();
    const answers: unknown[] = [];
    socket.on('message', (data) => answers.push(JSON.parse(String(data))));
    socket.send(JSON.stringify({ type: 'ping' }));
    socket.send(JSON.stringify({ type: 'subscribe', id: 'q', payload: { query: '{ no_queries_available }' } }));
    await vi.waitFor(() => expect(answers).toContainEqual({ id: 'q', type: 'complete' }));
    expect(answers).toEqual([{ type: 'pong' }, { id: 'q', type: 'next', payload: { data: { no_queries_available: null } } }, { id: 'q', type: 'complete' }]);
    const closed = closeOf(socket);
    socket.close(1000);
    expect((await closed).code).toBe(1000);
  });
});
