// Server module: the pass-through floor of `pnpm bench proxy`, a bare `node:http` proxy without any
// GraphQL. It reads the request body, forwards it over a keep-alive agent to the remote, and writes
// the remote's answer back: what any Node proxy has to pay per request at least.
import { Agent, request } from 'node:http';
import type { StartedServer } from './child-protocol.js';
import { listen } from './http.js';

export interface PassthroughOptions {
  /** The remote's GraphQL endpoint, e.g. http://127.0.0.1:41234/graphql */
  readonly target: string;
}

export async function start(raw: unknown): Promise<StartedServer> {
  const target = new URL((raw as PassthroughOptions).target);
  const agent = new Agent({ keepAlive: true });
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const out = Buffer.concat(parts);
            res.writeHead(answer.statusCode ?? 502, {
              'content-type': answer.headers['content-type'] ?? 'application/json',
              'content-length': out.length,
            });
            res.end(out);
          });
        },
      );
      upstream.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(error.message);
      });
      upstream.end(body);
    });
  });
  return {
    url: server.url,
    close: async () => {
      await server.close();
      agent.destroy();
    },
  };
}
