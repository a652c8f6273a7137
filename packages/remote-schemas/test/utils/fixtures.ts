import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getIntrospectionQuery, graphqlSync, type IntrospectionQuery } from 'graphql';
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
