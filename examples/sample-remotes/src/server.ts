import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GraphQLSchema } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { SampleContext } from './sample-schema.js';

export interface StartOptions {
  /** @default 0 (any free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
}

/** One HTTP request as the remote received it. */
export interface ReceivedRequest {
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The GraphQL parameters: `{ query, variables, operationName, extensions }`. */
  body: unknown;
}

export interface RunningRemote {
  /** `http://HOST:PORT/graphql` */
  url: string;
  /** `ws://HOST:PORT/graphql` (subprotocol `graphql-transport-ws`) */
  wsUrl: string;
  /** Every GraphQL request received over HTTP, oldest first (tests may empty it). */
  received: ReceivedRequest[];
  /** The `connection_init` `payload.headers` of every WebSocket connection, oldest first. */
  connections: Array<{ headers: Record<string, string> }>;
  /** The payload of every graphql-ws `subscribe` message (`{ query, variables, operationName }`), oldest first. */
  subscribed: unknown[];
  /** Number of WebSocket connections open right now. */
  openSockets(): number;
  close(): Promise<void>;
}

function lowerCaseKeys(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (input && typeof input === 'object') {
    for (const [key, value] of Object.entries(input)) out[key.toLowerCase()] = String(value);
  }
  return out;
}

/** Serves `schema` over HTTP (Yoga) and graphql-ws on one port at `/graphql`. */
export async function startSchemaServer(schema: GraphQLSchema, options: StartOptions = {}): Promise<RunningRemote> {
  const received: ReceivedRequest[] = [];
  const connections: Array<{ headers: Record<string, string> }> = [];
  const subscribed: unknown[] = [];
  const yoga = createYoga<Record<string, unknown>, SampleContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    context: ({ request }) => ({ receivedHeaders: Object.fromEntries(request.headers) }),
    plugins: [
      {
        onParams({ params, request }) {
          received.push({ headers: Object.fromEntries(request.headers), body: params });
        },
      },
    ],
  });
  const server: Server = createServer(yoga);
  const wss = new WebSocketServer({ server, path: '/graphql' });
  const wsServer = useServer<Record<string, unknown>>(
    {
      schema,
      context: (ctx) => ({ receivedHeaders: lowerCaseKeys(ctx.connectionParams?.['headers']) }),
      onConnect: (ctx) => {
        connections.push({ headers: lowerCaseKeys(ctx.connectionParams?.['headers']) });
        return true;
      },
      onSubscribe: (_ctx, _id, payload) => {
        subscribed.push(payload);
      },
    },
    wss,
  );
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl}:${port}/graphql`,
    wsUrl: `ws://${hostForUrl}:${port}/graphql`,
    received,
    connections,
    subscribed,
    openSockets: () => wss.clients.size,
    close() {
      closed ??= (async () => {
        for (const socket of wss.clients) socket.terminate();
        await wsServer.dispose();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closed;
    },
  };
}
