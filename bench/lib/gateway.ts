import { join } from 'node:path';
import { startChild, type ChildServer } from './child.js';
import type { BenchConfig } from './config.js';
import { hs256UserToken, type JwtSetup } from './jwt.js';
import { metadataOrThrow } from './metadata.js';
import type { SvcServerOptions } from './svc-server.js';

export const ADMIN_SECRET = 'bench-admin-secret-0123456789';

export interface SampleGateway {
  /** The sample remote, in its own child process. */
  remote: ChildServer;
  /** svc-graphql (embedded store under `dir`, JWT mode) with the remote added as `sample`. */
  svc: ChildServer;
  /** The JWT configuration of `svc` and a user token for it. */
  jwt: JwtSetup;
}

/**
 * svc-graphql in a child process (embedded store `dir/<label>.json`, JWT mode with `jwt`), the
 * remotes of `remotes` (name -> URL) added through the metadata API. `module` is the server module
 * to start: this checkout's, or another's (BENCH_BEFORE, lib/before.ts).
 */
export async function startSvc(
  label: string,
  dir: string,
  config: BenchConfig,
  jwt: JwtSetup['config'],
  remotes: Record<string, string>,
  extra: Partial<SvcServerOptions> = {},
  module = 'lib/svc-server.ts',
): Promise<ChildServer> {
  const options: SvcServerOptions = {
    databaseUrl: `file:${join(dir, `${label}.json`)}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: jwt,
    ...extra,
  };
  const svc = await startChild(label, module, options, config);
  try {
    for (const [name, url] of Object.entries(remotes)) {
      await metadataOrThrow(svc.url, ADMIN_SECRET, 'add_remote_schema', { name, definition: { url } });
    }
  } catch (error) {
    await svc.close();
    throw error;
  }
  return svc;
}

/**
 * The setup proxy, swap and edge share: the sample remote and svc-graphql, each in a child process,
 * and the remote added through the metadata API (one HS256 token unless `jwt` is given). Children
 * are pushed onto `children` as they start, so the caller stops them even when a later step fails.
 */
export async function startSampleGateway(
  name: string,
  dir: string,
  config: BenchConfig,
  children: ChildServer[],
  jwt?: JwtSetup,
): Promise<SampleGateway> {
  const session = jwt ?? (await hs256UserToken());
  const remote = await startChild(`${name}-remote`, 'lib/remote-server.ts', { kind: 'sample' }, config);
  children.push(remote);
  const svc = await startSvc(`${name}-svc`, dir, config, session.config, { sample: remote.url });
  children.push(svc);
  return { remote, svc, jwt: session };
}
