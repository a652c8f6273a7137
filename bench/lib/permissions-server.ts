// Server module: svc-graphql (packages/server) with remote schema permissions on or off, in its
// own child process. bench/lib/svc-server.ts without the flag is the server the other benchmarks run.
import { createServer } from '../../packages/server/src/index.js';
import type { StartedServer } from './child-protocol.js';

export interface PermissionsServerOptions {
  /** `file:PATH` of the embedded metadata store. */
  readonly databaseUrl: string;
  readonly adminSecret: string;
  /** The JWT configuration. */
  readonly jwtSecret: { readonly type: string; readonly key: string };
  readonly enableRemoteSchemaPermissions: boolean;
}

export async function start(raw: unknown): Promise<StartedServer> {
  const options = raw as PermissionsServerOptions;
  const server = await createServer({
    port: 0,
    databaseUrl: options.databaseUrl,
    adminSecret: options.adminSecret,
    jwtSecret: options.jwtSecret,
    enableRemoteSchemaPermissions: options.enableRemoteSchemaPermissions,
    logLevel: process.env['BENCH_SVC_LOG'] === 'warn' ? 'warn' : 'error',
  });
  return { url: server.url, close: () => server.close() };
}
