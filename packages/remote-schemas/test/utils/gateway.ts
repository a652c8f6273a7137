import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createYoga, type Plugin } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { createClient, type Client } from 'graphql-ws';
import WebSocket, { WebSocketServer } from 'ws';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { useRemoteSchemas } from '../../src/plugin.js';
import type { RemoteSchemaRegistry } from '../../src/types.js';
import type { ForwardedSession } from '../../src/options.js';

interface Enveloped {
  execute(args: ExecutionArgs): OperationResult;
  subscribe(args: ExecutionArgs): OperationResult;
}
type OperationResult = Promise<AsyncGenerator<ExecutionResult> | AsyncIterable<ExecutionResult> | ExecutionResult>;

export interface Gateway {
  url: string;
  wsUrl: string;
  /** POSTs a GraphQL request; answers status and parsed body. */
  post(body: { query: string; variables?: unknown; operationName?: string }, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  wsClient(connectionParams?: Record<string, unknown>): Client;
  close(): Promise<void>;
}

/**
 * The registry's `getSession` for this gateway when the schema is chosen per session: the session
 * of a graphql-ws context, or of the HTTP request's `x-test-session` header before the context is
 * built (as the server finds the JWT of a request).
 */
export function testGetSession(context: unknown): ForwardedSession | undefined {
  const { session, request } = (context ?? {}) as { session?: ForwardedSession; request?: Request };
  if (session) return { ...session, variables: session.variables ?? {} };
  const raw = request?.headers.get('x-test-session');
  if (!raw) return undefined;
  const parsed = JSON.parse(raw) as ForwardedSession;
  return { ...parsed, variables: parsed.variables ?? {} };
}

/**
 * A Yoga server over HTTP and graphql-ws that serves `registry` with `useRemoteSchemas`, as the
 * reference server does. The session comes from the `x-test-session` header (JSON), or from the
 * `session` connection parameter over WebSocket, standing in for the JWT plugin.
 */
export async function startGateway(registry: RemoteSchemaRegistry, plugins: Plugin[] = []): Promise<Gateway> {
  const yoga = createYoga({
    graphqlEndpoint: '/v1/graphql',
    logging: false,
    landingPage: false,
    maskedErrors: true,
    plugins: [useRemoteSchemas(registry), ...plugins],
    context: ({ request, params }: { request: Request; params: unknown }) => {
      const raw = request.headers.get('x-test-session');
      return raw ? { session: JSON.parse(raw) as unknown, params } : { params };
    },
  });
  const server = createServer(yoga);
  const wss = new WebSocketServer({ server, path: '/v1/graphql' });
  const wsServer = useServer(
    {
      // The enveloped functions travel in rootValue (as in Yoga's graphql-ws example).
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onSubscribe: async (ctx, _id, payload) => {
        const session = ctx.connectionParams?.['session'];
        const request = new Request('http://gateway.test/v1/graphql', {
          headers: { 'user-agent': 'ws-test', ...((ctx.connectionParams?.['headers'] as Record<string, string> | undefined) ?? {}) },
        });
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          request,
          params: payload,
          ...(session ? { session } : {}),
        });
        const args = {
          schema,
          operationName: payload.operationName,
          document: parse(payload.query),
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        if (errors.length) return errors;
        return args as unknown as ExecutionArgs;
      },
    },
    wss,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/v1/graphql`;
  const clients: Client[] = [];
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}/v1/graphql`,
    async post(body, headers = {}) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    },
    wsClient(connectionParams) {
      const client = createClient({
        url: `ws://127.0.0.1:${port}/v1/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        ...(connectionParams ? { connectionParams } : {}),
      });
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.dispose()));
      for (const socket of wss.clients) socket.terminate();
      await wsServer.dispose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
