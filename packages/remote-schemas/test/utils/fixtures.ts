import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getIntrospectionQuery, graphqlSync, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { createSampleSchema } from '@svc-graphql/sample-remotes';
import type { Logger } from '../../src/index.js';

/** A logger that keeps what it is told, for tests that look at it (and quiet ones). */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (...args: unknown[]) => {
    lines.push(`${level} ${args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ')}`);
  };
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

/** The sample remote's introspection result, to be broken on purpose. */
export function sampleIntrospection(): IntrospectionQuery {
  const result = graphqlSync({ schema: createSampleSchema('fixture'), source: getIntrospectionQuery() });
  return structuredClone(result.data) as unknown as IntrospectionQuery;
}

export interface StubServer {
  url: string;
  requests: number;
  close(): Promise<void>;
}

/** An HTTP server that answers every request with `handler` (a remote that misbehaves). */
export async function startStub(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<StubServer> {
  const stub = { url: '', requests: 0, close: async () => {} };
  const server = createServer((req, res) => {
    stub.requests++;
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  stub.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return stub;
}

export function json(body: unknown, status = 200) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

/** A free port right now (the server that held it is closed again). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface StubRemote {
  url: string;
  /** The operations other than introspection, in arrival order, with the connection they came on. */
  operations: Array<{ query: string; connection: number; requestOnConnection: number }>;
  /** TCP connections accepted so far. */
  connections(): number;
  /** The most TCP connections open at once so far. */
  mostOpenAtOnce(): number;
  close(): Promise<void>;
}

export interface StubRequest {
  body: { query: string; variables?: unknown; operationName?: string };
  /** 1 for the first request on its TCP connection, 2 for the next one, and so on. */
  requestOnConnection: number;
  req: IncomingMessage;
  res: ServerResponse;
  /** Answers the operation as the schema would. */
  answer(): void;
}

/**
 * A raw `node:http` remote: it answers introspection from `schema` (the sample schema by default)
 * and hands every other operation, read in full, to `handler`, which may misbehave at will. Other
 * requests (a WebSocket upgrade among them) get 400 unless `onOtherRequest` answers them.
 */
export async function startStubRemote(
  handler: (request: StubRequest) => void,
  options: { schema?: GraphQLSchema; onOtherRequest?: (req: IncomingMessage, res: ServerResponse) => void } = {},
): Promise<StubRemote> {
  const schema = options.schema ?? createSampleSchema('stub');
  const operations: StubRemote['operations'] = [];
  const perSocket = new WeakMap<Socket, { id: number; requests: number }>();
  let accepted = 0;
  let open = 0;
  let most = 0;
  const server = createServer((req, res) => {
    const socket = perSocket.get(req.socket);
    if (!socket) throw new Error('unknown socket');
    socket.requests++;
    if (req.method !== 'POST') {
      // Node 20 hands an unanswered WebSocket upgrade to the request handler.
      if (options.onOtherRequest) options.onOtherRequest(req, res);
      else res.writeHead(400).end();
      return;
    }
    const requestOnConnection = socket.requests;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as StubRequest['body'];
      if (body.query.includes('__schema')) {
        json(graphqlSync({ schema, source: body.query }))(req, res);
        return;
      }
      operations.push({ query: body.query, connection: socket.id, requestOnConnection });
      const answer = () =>
        json(graphqlSync({ schema, source: body.query, variableValues: body.variables as Record<string, unknown> | undefined }))(req, res);
      handler({ body, requestOnConnection, req, res, answer });
    });
  });
  server.on('connection', (socket: Socket) => {
    perSocket.set(socket, { id: ++accepted, requests: 0 });
    open++;
    most = Math.max(most, open);
    socket.once('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    operations,
    connections: () => accepted,
    mostOpenAtOnce: () => most,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits until `condition` holds (at most `ms`); answers whether it does. */
export async function waitFor(condition: () => boolean, ms = 2000): Promise<boolean> {
  for (let waited = 0; waited < ms && !condition(); waited += 10) await new Promise((r) => setTimeout(r, 10));
  return condition();
}
