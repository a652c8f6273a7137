import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type ServerOptions, type SvcGraphqlServer } from '../src/index.js';

/**
 * Subscriptions through a remote schema for many users at once: each with a JWT session of its
 * own, each subscription with that session upstream, through the real server and a real remote.
 * Past `--max-subscriptions-per-remote` a subscription is refused with an error of its own; a
 * client that stops reading is closed with 1013 and its upstream subscriptions released.
 */

const ADMIN_SECRET = 'remote-subscriptions-test-admin-secret';
const KEY = 'remote-subscriptions-test-key-of-32-characters-at-least';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-remote-subscriptions-'));
let remote: RunningRemote;
const servers: SvcGraphqlServer[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.dispose()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(name: string, options: ServerOptions = {}): Promise<SvcGraphqlServer> {
  const server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, `${name}.json`)}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: { type: 'HS256', key: KEY },
    logger: quiet,
    ...options,
  });
  servers.push(server);
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } }),
  });
  expect(await response.json()).toEqual({ message: 'success' });
  return server;
}

function token(userId: string): Promise<string> {
  return new SignJWT({
    'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'], 'x-svc-user-id': userId },
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(KEY));
}

async function userClient(server: SvcGraphqlServer, userId: string): Promise<Client> {
  const client = createClient({
    url: server.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { headers: { authorization: `Bearer ${await token(userId)}` } },
    retryAttempts: 0,
  });
  clients.push(client);
  return client;
}

async function waitFor(check: () => boolean, ms = 15_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

async function metrics(server: SvcGraphqlServer): Promise<string> {
  const response = await fetch(`${server.url}/v1/metrics`, { headers: { 'x-svc-admin-secret': ADMIN_SECRET } });
  return response.text();
}

function addMessage(text: string): Promise<Response> {
  return fetch(remote.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation($text: String!) { addMessage(input: { text: $text }) { id } }', variables: { text } }),
  });
}

const MESSAGES = 'subscription { messageAdded { text } }';
const HEADERS = 'subscription { echoHeaders }';

describe('subscriptions of many users', () => {
  it('serve 150 users with two subscriptions each, each with its own session upstream, none refused', async () => {
    const server = await start('many-users');
    const users = Array.from({ length: 150 }, (_, i) => `user-${i}`);
    const subscribed = remote.subscribed.length;
    const opened = await Promise.all(
      users.map(async (userId) => {
        const client = await userClient(server, userId);
        const messages = client.iterate({ query: MESSAGES });
        const headers = client.iterate({ query: HEADERS });
        return { userId, messages, firstMessage: messages.next(), headers: headers.next() };
      }),
    );
    // Every subscription reached the remote: one connection per user, carrying both of its subscriptions.
    expect(await waitFor(() => remote.subscribed.length - subscribed >= 300)).toBe(true);
    expect(remote.openSockets()).toBe(150);
    for (const { userId, headers } of opened) {
      const step = await headers;
      expect(step.done).toBe(false);
      const echoed = JSON.parse((step.value as { data: { echoHeaders: string } }).data.echoHeaders) as Record<string, string>;
      expect(echoed['x-svc-user-id']).toBe(userId);
      expect(echoed['x-svc-role']).toBe('user');
    }
    expect(await addMessage('to everyone')).toHaveProperty('status', 200);
    for (const { firstMessage } of opened) {
      expect(await firstMessage).toEqual({ done: false, value: { data: { messageAdded: { text: 'to everyone' } } } });
    }
    expect(await metrics(server)).not.toContain('svc_graphql_remote_subscriptions_refused_total{');
    for (const { messages } of opened) await messages.return?.();
    expect(await waitFor(() => remote.openSockets() === 0)).toBe(true);
  });
});

describe('--max-subscriptions-per-remote', () => {
  it('refuses a subscription past it with its own error, counted, and keeps the others', async () => {
    const server = await start('bound', { maxSubscriptionsPerRemote: 2 });
    const subscribed = remote.subscribed.length;
    const a = (await userClient(server, 'a')).iterate({ query: MESSAGES });
    const b = (await userClient(server, 'b')).iterate({ query: MESSAGES });
    const [firstA, firstB] = [a.next(), b.next()];
    expect(await waitFor(() => remote.subscribed.length - subscribed === 2)).toBe(true);
    const c = (await userClient(server, 'c')).iterate({ query: MESSAGES });
    expect(await c.next()).toEqual({
      done: false,
      value: { errors: [{ message: 'too many subscriptions to remote schema "sample"', extensions: { code: 'remote-schema-error', path: '$' } }] },
    });
    expect(await c.next()).toEqual({ done: true, value: undefined });
    expect(await metrics(server)).toContain('svc_graphql_remote_subscriptions_refused_total{remote_schema="sample"} 1');
    await addMessage('kept');
    for (const first of [firstA, firstB]) expect(await first).toEqual({ done: false, value: { data: { messageAdded: { text: 'kept' } } } });
    await a.return?.();
    await b.return?.();
  });
});

describe('a client that stops reading', () => {
  it('is closed with 1013 once more than 1 MiB waits for it, and its upstream subscription is released', async () => {
    const server = await start('slow');
    const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    const acked = new Promise<void>((resolve) => socket.once('message', () => resolve()));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: { authorization: `Bearer ${await token('slow')}` } } }));
    await acked;
    const subscribed = remote.subscribed.length;
    const sockets = remote.openSockets();
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: MESSAGES } }));
    expect(await waitFor(() => remote.subscribed.length > subscribed)).toBe(true);
    expect(remote.openSockets()).toBe(sockets + 1);
    socket.pause();
    // Far more than the kernel's buffers hold: the rest waits in the server.
    const text = 'x'.repeat(512 * 1024);
    for (let i = 0; i < 64 && remote.openSockets() > sockets; i++) await addMessage(text);
    expect(await waitFor(() => remote.openSockets() === sockets)).toBe(true);
    expect(await metrics(server)).toContain('svc_graphql_websocket_slow_client_closes_total 1');
    socket.resume();
    expect(await closed).toBe(1013);
  });

  it('over an event stream (SSE) ends once more than 1 MiB of events waits for it, and its upstream subscription is released', async () => {
    const server = await start('slow-sse');
    const sockets = remote.openSockets();
    const subscribed = remote.subscribed.length;
    const url = new URL(`${server.url}/v1/graphql`);
    const request = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${await token('slow-sse')}` },
    });
    const response = new Promise<IncomingMessage>((resolve) => request.once('response', resolve));
    request.end(JSON.stringify({ query: MESSAGES }));
    const stream = await response;
    expect(stream.statusCode).toBe(200);
    expect(await waitFor(() => remote.subscribed.length > subscribed)).toBe(true);
    stream.pause();
    const text = 'x'.repeat(512 * 1024);
    for (let i = 0; i < 64 && remote.openSockets() > sockets; i++) await addMessage(text);
    expect(await waitFor(() => remote.openSockets() === sockets)).toBe(true);
    // What it reads once it reads again ends with the error saying why, then the stream ends.
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (body += chunk));
    stream.resume();
    await new Promise((resolve) => stream.once('end', resolve));
    expect(body).toContain('the subscription fell too far behind remote schema');
  });
});
