import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionArgs } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema, createYoga, Repeater } from 'graphql-yoga';
import WebSocket, { WebSocketServer } from 'ws';
import { createGraphqlWsSession, useJwtSession, type Session, type SessionResolver } from '../../src/index.js';

const schema = createSchema<{ session?: Session }>({
  typeDefs: /* GraphQL */ `
    type Query {
      session: String
    }
    type Subscription {
      session: String
    }
  `,
  resolvers: {
    Query: { session: (_root, _args, context) => JSON.stringify(context.session ?? null) },
    Subscription: {
      session: {
        // One event with the session, then stay open until the client or the server ends it.
        subscribe: (_root, _args, context) =>
          new Repeater<string>(async (push, stop) => {
            await push(JSON.stringify(context.session ?? null));
            await stop;
          }),
        resolve: (value: string) => value,
      },
    },
  },
});

interface EnvelopedRoot {
  execute(args: ExecutionArgs): unknown;
  subscribe(args: ExecutionArgs): unknown;
}

/** Yoga over HTTP and graphql-ws on one server, wired the way the README tells embedders to. */
export async function startWsApp(resolver: SessionResolver): Promise<{ wsUrl: string; close(): Promise<void> }> {
  const yoga = createYoga({ schema, plugins: [useJwtSession({ resolver })], logging: false, graphiql: false });
  const server: Server = createServer(yoga);
  const wss = new WebSocketServer({ server, path: yoga.graphqlEndpoint });
  const wsSession = createGraphqlWsSession(resolver, { logger: { debug() {} } });
  useServer(
    {
      onConnect: (ctx) => wsSession.onConnect(ctx),
      onClose: (ctx) => wsSession.onClose(ctx),
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      onSubscribe: async (ctx, _id, params) => {
        const enveloped = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, socket: ctx.extra.socket, params, session: wsSession.getSession(ctx) });
        const document = enveloped.parse(params.query);
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors;
        return {
          schema: enveloped.schema,
          document,
          operationName: params.operationName ?? null,
          variableValues: params.variables ?? null,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe } satisfies EnvelopedRoot,
        };
      },
    },
    wss,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${port}${yoga.graphqlEndpoint}`,
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await yoga.dispose();
    },
  };
}

export interface TestWsClient {
  readonly client: Client;
  /** Resolves with the close code and reason when the socket closes. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Resolves when the server acknowledged `connection_init`. */
  readonly connected: Promise<void>;
}

/** A real graphql-ws client; `initHeaders` go into `connection_init` `payload.headers`. */
export function connect(wsUrl: string, initHeaders?: Record<string, string>, upgradeHeaders?: Record<string, string>): TestWsClient {
  let onClosed!: (value: { code: number; reason: string }) => void;
  let onConnected!: () => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  const connected = new Promise<void>((resolve) => (onConnected = resolve));
  class UpgradeHeadersWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers: upgradeHeaders ?? {} });
    }
  }
  const client = createClient({
    url: wsUrl,
    webSocketImpl: UpgradeHeadersWebSocket,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
    ...(initHeaders !== undefined && { connectionParams: { headers: initHeaders } }),
    on: {
      connected: () => onConnected(),
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: string };
        onClosed({ code, reason: String(reason) });
      },
    },
  });
  return { client, closed, connected };
}

/** Runs one operation to its first result. */
export function first(client: Client, query: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const iterator = client.iterate({ query });
    iterator.next().then((result) => {
      void iterator.return?.();
      resolve(result.value);
    }, reject);
  });
}
