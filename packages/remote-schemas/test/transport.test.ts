import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchTransport, nodeTransport, RemoteCallAbortedError } from '../src/transport.js';

const limits = { maxResponseBytes: 1024 * 1024, maxSocketsPerRemote: 8 };

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
    const transport = nodeTransport(limits);
    try {
      const first = await transport.post(url, { 'content-type': 'application/json' }, '{"query":"1"}', 5000, true);
      const second = await transport.post(url, { 'content-type': 'application/json' }, '{"query":"2"}', 5000, true);
      expect([first, second]).toEqual([
        { status: 200, text: '{"data":{"n":1}}' },
        { status: 200, text: '{"data":{"n":2}}' },
      ]);
      expect(answered).toEqual(['{"query":"1"}', '{"query":"2"}']);
    } finally {
      transport.dispose();
    }
  });

  it('never sends again a request that may not be resent', async () => {
    const transport = nodeTransport(limits);
    answered.length = 0;
    try {
      await transport.post(url, {}, '{"query":"1"}', 5000, false);
      await expect(transport.post(url, {}, '{"mutation":"2"}', 5000, false)).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(answered).toEqual(['{"query":"1"}']);
    } finally {
      transport.dispose();
    }
  });

  it('does not send a query again once a byte of the answer arrived', async () => {
    const requests: number[] = [];
    const perSocket = new WeakMap<Socket, number>();
    const partial = createServer((req, res) => {
      const count = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, count);
      requests.push(count);
      req.resume();
      req.on('end', () => {
        if (count === 1) {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{}}');
          return;
        }
        // Half a status line, then the connection is gone.
        req.socket.end('HTTP/1.1 20');
      });
    });
    await new Promise<void>((resolve) => partial.listen(0, '127.0.0.1', resolve));
    const transport = nodeTransport(limits);
    try {
      const partialUrl = `http://127.0.0.1:${(partial.address() as AddressInfo).port}/`;
      await transport.post(partialUrl, {}, '{}', 5000, true);
      await expect(transport.post(partialUrl, {}, '{}', 5000, true)).rejects.toThrow();
      expect(requests).toEqual([1, 2]);
    } finally {
      transport.dispose();
      partial.closeAllConnections();
      await new Promise((resolve) => partial.close(resolve));
    }
  });

  it('gives up after the timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const transport = nodeTransport(limits);
    try {
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      await expect(transport.post(silentUrl, {}, '{}', 100, true)).rejects.toThrow('no answer within 100 ms');
    } finally {
      transport.dispose();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('an aborted operation', () => {
  /** A remote that never answers, and tells when the connection of a request it holds closes. */
  async function holdingRemote(): Promise<{ url: string; received: () => number; closed: Promise<void>; close: () => Promise<void> }> {
    let received = 0;
    let closedOne!: () => void;
    const closed = new Promise<void>((resolve) => (closedOne = resolve));
    const holding = createServer((req) => {
      received++;
      req.socket.once('close', closedOne);
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(holding.address() as AddressInfo).port}/`,
      received: () => received,
      closed,
      close: async () => {
        holding.closeAllConnections();
        await new Promise((resolve) => holding.close(resolve));
      },
    };
  }

  for (const [name, make] of [
    ['the default transport', () => nodeTransport(limits)],
    ['a fetch transport', () => fetchTransport(fetch, limits)],
  ] as const) {
    it(`${name} abandons its call and closes the connection`, async () => {
      const remote = await holdingRemote();
      const transport = make();
      try {
        const controller = new AbortController();
        const call = transport.post(remote.url, {}, '{}', 60_000, true, controller.signal);
        while (remote.received() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        const reason = new Error('out of time');
        controller.abort(reason);
        const error = await call.then(() => undefined, (thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(RemoteCallAbortedError);
        expect((error as Error).cause).toBe(reason);
        // The remote sees the connection of the request it holds close: nothing waits for its answer.
        await remote.closed;
        // A call of an operation aborted already is never sent.
        await expect(transport.post(remote.url, {}, '{}', 60_000, true, controller.signal)).rejects.toBeInstanceOf(RemoteCallAbortedError);
        expect(remote.received()).toBe(1);
      } finally {
        transport.dispose();
        await remote.close();
      }
    });
  }
});
