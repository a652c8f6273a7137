// Server module: the svc-graphql reference server (packages/server) in its own child process.
import type { StartedServer } from './child-protocol.js';

export interface SvcServerOptions {
  /** `file:PATH` of the embedded metadata store. */
  readonly databaseUrl: string;
  readonly adminSecret: string;
  /** SPEC 2.1 JWT config. */
  readonly jwtSecret: { readonly type: string; readonly key: string };
}

/** The part of `@svc-graphql/server` used here. */
interface ServerModule {
  createServer(options: {
    port: number;
    databaseUrl: string;
    adminSecret: string;
    jwtSecret: object;
    logLevel: 'error';
  }): Promise<{ url: string; close(): Promise<void> }>;
}

export async function start(raw: unknown): Promise<StartedServer> {
  const options = raw as SvcServerOptions;
  // By path: bench/ is not a workspace package, so the package name does not resolve from here.
  const specifier = '../../packages/server/src/index.js';
  const { createServer } = (await import(specifier)) as ServerModule;
  const server = await createServer({
    port: 0,
    databaseUrl: options.databaseUrl,
    adminSecret: options.adminSecret,
    jwtSecret: options.jwtSecret,
    logLevel: 'error',
  });
  return { url: server.url, close: () => server.close() };
}
