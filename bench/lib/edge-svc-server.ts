// Server module: svc-graphql (packages/server) in its own child process, as svc-server.ts, plus a
// `corsDomain` setting (the list of origins browsers may use). Every other option keeps its default,
// the request limits included.
import { createServer } from '../../packages/server/src/index.js';
import type { StartedServer } from './child-protocol.js';
import type { SvcServerOptions } from './svc-server.js';

export interface EdgeSvcServerOptions extends SvcServerOptions {
  /** `--cors-domain`: `*` or comma-separated origins. */
  readonly corsDomain: string;
}

export async function start(raw: unknown): Promise<StartedServer> {
  const options = raw as EdgeSvcServerOptions;
  const server = await createServer({
    port: 0,
    databaseUrl: options.databaseUrl,
    adminSecret: options.adminSecret,
    jwtSecret: options.jwtSecret,
    corsDomain: options.corsDomain,
    logLevel: process.env['BENCH_SVC_LOG'] === 'warn' ? 'warn' : 'error',
  });
  return { url: server.url, close: () => server.close() };
}
