import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeTransport } from '../src/transport.js';

/**
 * A remote that answers the first request of every connection and drops the connection on the
 * next one, as a server does whose keep-alive timeout fires just as the client reuses the socket.
 */
let server: Server;
let url: string;
const answered: string[] = [];
beforeAll(async () => {
  const perSocket = new WeakMap<Socket, number>();
  server = createServer((req, res) => {
    const count = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, count);
    if (count > 1) {
      req.socket.destroy();
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      answered.push(body);
      res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' });
      res.end(JSON.stringify({ data: { n: answered.length } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the default transport', () => {
  it('sends a request once more when the remote drops a kept-alive connection', async () => {
    const transport = nodeTransport();
    try {
      const first = await transport.post(url, { 'content-type': 'application/json' }, '{"query":"1"}', 5000);
      const second = await transport.post(url, { 'content-type': 'application/json' }, '{"query":"2"}', 5000);
      expect([first, second]).toEqual([
        { status: 200, text: '{"data":{"n":1}}' },
        { status: 200, text: '{"data":{"n":2}}' },
      ]);
      expect(answered).toEqual(['{"query":"1"}', '{"query":"2"}']);
    } finally {
      transport.dispose();
    }
  });

  it('gives up after the timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const transport = nodeTransport();
    try {
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      await expect(transport.post(silentUrl, {}, '{}', 100)).rejects.toThrow('no answer within 100 ms');
    } finally {
      transport.dispose();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
