import { join } from 'node:path';
import { startChild, type ChildServer } from './child.js';
import type { BenchConfig } from './config.js';
import { hs256UserToken, type Hs256 } from './jwt.js';
import { metadataOrThrow } from './metadata.js';

export const ADMIN_SECRET = 'bench-admin-secret-0123456789';

export interface SampleGateway {
  /** The sample remote, in its own child process. */
  remote: ChildServer;
  /** svc-graphql (embedded store under `dir`, JWT mode) with the remote added as `sample`. */
  svc: ChildServer;
  /** The JWT configuration of `svc` and a user token for it. */
  jwt: Hs256;
}

/**
 * The setup proxy and swap share: the sample remote and svc-graphql, each in a child process,
 * and the remote added through the metadata API. Children are pushed onto `children` as they
 * start, so the caller stops them even when a later step fails.
 */
export async function startSampleGateway(
  name: string,
  dir: string,
  config: BenchConfig,
  children: ChildServer[],
): Promise<SampleGateway> {
  const jwt = await hs256UserToken();
  const remote = await startChild(`${name}-remote`, 'lib/remote-server.ts', { kind: 'sample' }, config);
  children.push(remote);
  const svc = await startChild(
    `${name}-svc`,
    'lib/svc-server.ts',
    { databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, jwtSecret: jwt.config },
    config,
  );
  children.push(svc);
  await metadataOrThrow(svc.url, ADMIN_SECRET, 'add_remote_schema', { name: 'sample', definition: { url: remote.url } });
  return { remote, svc, jwt };
}
