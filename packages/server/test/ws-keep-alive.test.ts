import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeServer } from 'graphql-ws';
import { createSchema } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { serveGraphqlWs, type SocketExtra } from '../src/ws/graphql-ws.js';

const http = createServer();
const wsServer = new WebSocketServer({ server: http });
let url: string;

beforeAll(async () => {
  const schema = createSchema({ typeDefs: 'type Query { ok: Boolean }' });
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  // A socket that has not answered by the next sweep is terminated: 250 ms leaves this process's own
  // clients time to answer even on a busy machine.
  serveGraphqlWs(wsServer, makeServer<Record<string, unknown>, SocketExtra>({ schema }), { logger: silent, keepAliveMs: 250 });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const socket of wsServer.clients) socket.terminate();
  await new Promise((resolve) => wsServer.close(resolve));
  await new Promise((resolve) => http.close(resolve));
});

function open(options: { autoPong: boolean }): Promise<{ socket: WebSocket; pings: () => number; closed: Promise<number> }> {
  const socket = new WebSocket(url, 'graphql-transport-ws', options);
  let pings = 0;
  socket.on('ping', () => pings++);
  const closed = new Promise<number>((resolve) => socket.once('close', resolve));
  return new Promise((resolve) => socket.once('open', () => resolve({ socket, pings: () => pings, closed })));
}

describe('keep-alive of graphql-ws sockets', () => {
  it('terminates a socket that does not answer its ping, and keeps pinging one that does', async () => {
    const answering = await open({ autoPong: true });
    const silent = await open({ autoPong: false });
    // Terminated without a close frame: the client sees 1006.
    expect(await silent.closed).toBe(1006);
    await expect.poll(() => answering.pings()).toBeGreaterThanOrEqual(3);
    expect(answering.socket.readyState).toBe(WebSocket.OPEN);
    answering.socket.close();
  });

  it('pings every socket of a server with more clients than one turn of the event loop pings', async () => {
    // 600 sockets: the sweep goes through them 256 at a time, one turn each; the last ones are
    // pinged too, and a silent one past the first slices is still terminated.
    const clients = await Promise.all(Array.from({ length: 599 }, () => open({ autoPong: true })));
    const silent = await open({ autoPong: false });
    try {
      expect(await silent.closed).toBe(1006);
      await expect.poll(() => clients.every((client) => client.pings() >= 2), { timeout: 20_000 }).toBe(true);
      expect(clients.every((client) => client.socket.readyState === WebSocket.OPEN)).toBe(true);
    } finally {
      for (const client of clients) client.socket.close();
    }
  }, 30_000);
});
