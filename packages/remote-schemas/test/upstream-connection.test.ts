import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema } from 'graphql-yoga';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { UpstreamConnection, type UpstreamSink } from '../src/upstream-connection.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What one subscription received, and a promise of its end. */
function recorder() {
  const events: unknown[] = [];
  let end: (outcome: { error?: unknown; complete?: true }) => void = () => {};
  const ended = new Promise<{ error?: unknown; complete?: true }>((resolve) => (end = resolve));
  const sink: UpstreamSink = {
    next: (value) => events.push(value),
    error: (error) => end({ error }),
    complete: () => end({ complete: true }),
  };
  return { events, ended, sink };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

const schema = createSchema<{ user: string }>({
  typeDefs: /* GraphQL */ `
    type Query {
      ok: Boolean
    }
    type Subscription {
      countdown(from: Int!): Int!
      forever: String!
      whoami: String!
    }
  `,
  resolvers: {
    Subscription: {
      countdown: {
        subscribe: async function* (_: unknown, { from }: { from: number }) {
          for (let i = from; i >= 0; i--) yield { countdown: i };
        },
      },
      forever: {
        subscribe: async function* () {
          for (;;) {
            yield { forever: 'tick' };
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        },
      },
      whoami: {
        subscribe: async function* (_: unknown, __: unknown, context: { user: string }) {
          yield { whoami: context.user };
        },
      },
    },
  },
});

/** A real graphql-ws server (graphql-ws's own `useServer`) that records what its clients did. */
async function graphqlWsServer() {
  const http = createServer();
  const wsServer = new WebSocketServer({ server: http, path: '/graphql' });
  const seen = { connections: 0, params: [] as unknown[], completed: [] as string[] };
  const disposable = useServer<{ headers?: Record<string, string> }>(
    {
      schema,
      context: (ctx) => ({ user: ctx.connectionParams?.headers?.['x-user'] ?? '' }),
      onConnect: (ctx) => {
        seen.connections++;
        seen.params.push(ctx.connectionParams);
        return true;
      },
      onComplete: (_ctx, id) => {
        seen.completed.push(id);
      },
    },
    wsServer,
  );
  cleanups.push(() => disposable.dispose());
  const url = await listen(http);
  return { url, seen, wsServer };
}

/** A bare graphql-transport-ws server scripted by `onMessage` (what a real server does is tested above). */
async function scriptedServer(onMessage: (socket: WebSocket, message: { type: string; id?: string; payload?: unknown }) => void) {
  const http = createServer();
  const wsServer = new WebSocketServer({ server: http });
  const sockets: WebSocket[] = [];
  wsServer.on('connection', (socket) => {
    sockets.push(socket);
    socket.on('message', (data) => onMessage(socket, JSON.parse(String(data)) as { type: string }));
  });
  cleanups.push(() => {
    for (const socket of wsServer.clients) socket.terminate();
    wsServer.close();
  });
  const url = await listen(http);
  return { url, sockets };
}

function connect(url: string, options: { timeoutMs?: number; maxPayload?: number } = {}) {
  const connection = new UpstreamConnection({
    url,
    connectionParams: { headers: { 'x-user': 'ada' } },
    maxPayload: options.maxPayload ?? 1024 * 1024,
    timeoutMs: options.timeoutMs ?? 5000,
  });
  cleanups.push(() => connection.dispose());
  return connection;
}

const payload = (query: string) => ({ query, variables: null, operationName: null });

/** A graphql-ws server and one connection to it carrying two subscriptions, each recorded. */
async function twoSubscriptions(first: string, second: string) {
  const remote = await graphqlWsServer();
  const connection = connect(remote.url);
  const one = recorder();
  const two = recorder();
  const firstId = connection.subscribe(payload(first), one.sink);
  connection.subscribe(payload(second), two.sink);
  return { remote, connection, one, two, firstId };
}

describe('an upstream graphql-ws connection, against graphql-ws server', () => {
  it('sends its connection_init payload, is acknowledged, and gets events until the remote completes', async () => {
    const { remote, connection, one: first, two: second } = await twoSubscriptions('subscription { countdown(from: 2) }', 'subscription { whoami }');
    expect(await first.ended).toEqual({ complete: true });
    expect(first.events).toEqual([{ data: { countdown: 2 } }, { data: { countdown: 1 } }, { data: { countdown: 0 } }]);
    expect(await second.ended).toEqual({ complete: true });
    expect(second.events).toEqual([{ data: { whoami: 'ada' } }]);
    // Both on one socket, initialised once with the headers.
    expect(remote.seen.connections).toBe(1);
    expect(remote.seen.params).toEqual([{ headers: { 'x-user': 'ada' } }]);
    expect(connection.size).toBe(0);
  });

  it('ends a subscription the remote refuses with its errors, and keeps the others', async () => {
    const { one: bad, two: good } = await twoSubscriptions('subscription { nope }', 'subscription { countdown(from: 0) }');
    const { error } = await bad.ended;
    expect(error).toEqual([expect.objectContaining({ message: 'Cannot query field "nope" on type "Subscription".' })]);
    expect(await good.ended).toEqual({ complete: true });
    expect(good.events).toEqual([{ data: { countdown: 0 } }]);
  });

  it('stops a subscription from its side with complete; the remote ends it and the others go on', async () => {
    const forever = 'subscription { forever }';
    const { remote, connection, one: stopped, two: kept, firstId: id } = await twoSubscriptions(forever, forever);
    await expect.poll(() => stopped.events.length > 0 && kept.events.length > 0).toBe(true);
    connection.stop(id);
    await expect.poll(() => remote.seen.completed).toEqual([id]);
    const before = kept.events.length;
    await expect.poll(() => kept.events.length).toBeGreaterThan(before + 1);
    expect(connection.size).toBe(1);
  });

  it('ends every subscription with the close code when the remote closes the connection', async () => {
    const forever = 'subscription { forever }';
    const { remote, connection, one, two } = await twoSubscriptions(forever, forever);
    await expect.poll(() => one.events.length > 0 && two.events.length > 0).toBe(true);
    for (const socket of remote.wsServer.clients) socket.close(4500, 'gone');
    expect(await one.ended).toEqual({ error: { code: 4500, reason: 'gone' } });
    expect(await two.ended).toEqual({ error: { code: 4500, reason: 'gone' } });
    expect(connection.closed).toBe(true);
  });

  it('fails with the socket error past maxPayload', async () => {
    const remote = await graphqlWsServer();
    const connection = connect(remote.url, { maxPayload: 10 });
    const one = recorder();
    connection.subscribe(payload('subscription { countdown(from: 1) }'), one.sink);
    const { error } = await one.ended;
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe('Max payload size exceeded');
  });

  it('completes what still runs when disposed, and closes the socket with 1000', async () => {
    const remote = await graphqlWsServer();
    const connection = connect(remote.url);
    const one = recorder();
    connection.subscribe(payload('subscription { forever }'), one.sink);
    await expect.poll(() => one.events.length).toBeGreaterThan(0);
    const [socket] = remote.wsServer.clients;
    const closed = new Promise<number>((resolve) => socket?.once('close', resolve));
    connection.dispose();
    expect(await one.ended).toEqual({ complete: true });
    expect(await closed).toBe(1000);
  });
});

describe('an upstream graphql-ws connection, the protocol around it', () => {
  it('answers a ping with a pong carrying its payload', async () => {
    const pongs: unknown[] = [];
    const remote = await scriptedServer((socket, message) => {
      if (message.type === 'connection_init') {
        socket.send(JSON.stringify({ type: 'connection_ack' }));
        socket.send(JSON.stringify({ type: 'ping', payload: { n: 1 } }));
      } else if (message.type === 'pong') {
        pongs.push(message);
      }
    });
    const connection = connect(remote.url);
    connection.subscribe(payload('subscription { forever }'), recorder().sink);
    await expect.poll(() => pongs).toEqual([{ type: 'pong', payload: { n: 1 } }]);
  });

  it('fails with 4504 when the remote does not acknowledge in time', async () => {
    const remote = await scriptedServer(() => {});
    const connection = connect(remote.url, { timeoutMs: 100 });
    const one = recorder();
    connection.subscribe(payload('subscription { forever }'), one.sink);
    expect(await one.ended).toEqual({ error: { code: 4504, reason: 'Connection acknowledgement timeout' } });
  });

  it('closes with 4400 on a message a server may not send first', async () => {
    const remote = await scriptedServer((socket, message) => {
      if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'next', id: '1', payload: { data: { forever: 1 } } }));
    });
    const connection = connect(remote.url);
    const one = recorder();
    connection.subscribe(payload('subscription { forever }'), one.sink);
    expect(await one.ended).toEqual({ error: { code: 4400, reason: 'First message cannot be of type next' } });
  });

  it('closes with 4400 on an event that is not a GraphQL result, whatever it holds', async () => {
    for (const bad of [{ errors: 'x' }, { data: null, errors: {} }, { data: 'str' }, { data: [1, 2] }, {}, [], 'text', 7]) {
      const remote = await scriptedServer((socket, message) => {
        if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
        if (message.type === 'subscribe') {
          // One good event first: the bad one comes on a subscription that runs.
          socket.send(JSON.stringify({ type: 'next', id: message.id, payload: { data: { forever: 1 } } }));
          socket.send(JSON.stringify({ type: 'next', id: message.id, payload: bad }));
        }
      });
      const connection = connect(remote.url);
      const one = recorder();
      connection.subscribe(payload('subscription { forever }'), one.sink);
      expect(await one.ended, JSON.stringify(bad)).toEqual({ error: { code: 4400, reason: 'Invalid message received' } });
      expect(one.events).toEqual([{ data: { forever: 1 } }]);
    }
  });

  it('connects again and subscribes again after a close with 1000 while subscriptions run', async () => {
    const subscribes: string[] = [];
    const remote = await scriptedServer((socket, message) => {
      if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
      if (message.type !== 'subscribe') return;
      subscribes.push(message.id ?? '');
      if (subscribes.length === 1) socket.close(1000);
      else socket.send(JSON.stringify({ type: 'next', id: message.id, payload: { data: { again: true } } }));
    });
    const connection = connect(remote.url);
    const one = recorder();
    connection.subscribe(payload('subscription { again }'), one.sink);
    await expect.poll(() => one.events).toEqual([{ data: { again: true } }]);
    expect(subscribes).toEqual(['1', '1']);
    expect(remote.sockets).toHaveLength(2);
  });

  it('fails a subscription when the remote cannot be reached', async () => {
    const http = createServer();
    const url = await listen(http);
    await new Promise((resolve) => http.close(resolve));
    const connection = connect(url);
    const one = recorder();
    connection.subscribe(payload('subscription { forever }'), one.sink);
    const { error } = await one.ended;
    expect(error).toBeInstanceOf(Error);
    expect(connection.closed).toBe(true);
  });
});
