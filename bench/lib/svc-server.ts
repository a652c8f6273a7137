// Server module: the svc-graphql reference server (packages/server) in its own child process.
// By path: bench/ is not a workspace package, so the package name does not resolve from here.
import { createServer } from '../../packages/server/src/index.js';
import type { StartedServer } from './child-protocol.js';

export interface SvcServerOptions {
  /** `file:PATH` of the embedded metadata store. */
  readonly databaseUrl: string;
  readonly adminSecret: string;
  /** The JWT configuration. */
  readonly jwtSecret: { readonly type: string; readonly key: string };
  /** `--cors-domain` (bench edge); the server's default when absent. */
  readonly corsDomain?: string;
  /** `--enable-remote-schema-permissions` (bench permissions); off when absent. */
  readonly enableRemoteSchemaPermissions?: boolean;
  /**
   * `--disable-metrics` (bench proxy, metrics on vs off). Passed only when set: the benchmark first
   * checks that `svc-graphql serve --help` lists the flag, so a server without it is never told.
   */
  readonly disableMetrics?: boolean;
  /** `--enable-allowlist` (bench lockdown); off when absent. */
  readonly enableAllowlist?: boolean;
  /** `--rate-limit-redis-url` (bench lockdown); each instance counts alone when absent. */
  readonly rateLimitRedisUrl?: string;
}

export async function start(raw: unknown): Promise<StartedServer> {
  const options = raw as SvcServerOptions;
  const server = await createServer({
    port: 0,
    databaseUrl: options.databaseUrl,
    adminSecret: options.adminSecret,
    jwtSecret: options.jwtSecret,
    ...(options.corsDomain !== undefined && { corsDomain: options.corsDomain }),
    ...(options.enableRemoteSchemaPermissions !== undefined && { enableRemoteSchemaPermissions: options.enableRemoteSchemaPermissions }),
    ...(options.disableMetrics === true && { disableMetrics: true }),
    ...(options.enableAllowlist === true && { enableAllowlist: true }),
    ...(options.rateLimitRedisUrl !== undefined && { rateLimitRedisUrl: options.rateLimitRedisUrl }),
    // BENCH_SVC_LOG=warn shows why a remote call failed (the server logs it as a warning).
    logLevel: process.env['BENCH_SVC_LOG'] === 'warn' ? 'warn' : 'error',
  });
  return { url: server.url, close: () => server.close() };
}
