import { createFileMetadataStore, createMetadataService, type MetadataService } from '../../src/index.js';
import { createFakeRegistry, type FakeRegistry } from './fake-registry.js';
import { silentLogger, startMetadataServer, temporaryDirectory, type RunningMetadataServer } from './metadata-server.js';

export const A = 'http://a.test/graphql';
export const B = 'http://b.test/graphql';
/** Serves a root field `a` again: clashes with remote A. */
export const CLASH = 'http://clash.test/graphql';
/** No SDL behind it: behaves like a remote that is down. */
export const DOWN = 'http://down.test/graphql';

export const REMOTES = {
  [A]: 'type Query { a: String }',
  [B]: 'type Query { b: String }',
  [CLASH]: 'type Query { a: Int }',
};

export interface Fixture {
  registry: FakeRegistry;
  service: MetadataService;
  server: RunningMetadataServer;
  directory: string;
  file: string;
  close(): Promise<void>;
}

/** A metadata server over a file store in a fresh directory and a fake registry. */
export async function startFixture(options: { remoteSchemaPermissions?: boolean; maxBodyBytes?: number } = {}): Promise<Fixture> {
  const directory = await temporaryDirectory();
  const file = `${directory.path}/metadata.json`;
  const registry = createFakeRegistry(REMOTES, { permissions: options.remoteSchemaPermissions === true });
  const store = createFileMetadataStore({ path: file });
  const service = createMetadataService({
    registry,
    store,
    logger: silentLogger,
    ...(options.remoteSchemaPermissions === undefined ? {} : { remoteSchemaPermissions: options.remoteSchemaPermissions }),
  });
  await service.init();
  const server = await startMetadataServer({
    service,
    logger: silentLogger,
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
  });
  return {
    registry,
    service,
    server,
    directory: directory.path,
    file,
    async close() {
      await server.close();
      await service.close();
      await directory.remove();
    },
  };
}

/** The names of the live schema's root query fields. */
export function rootFields(registry: FakeRegistry): string[] {
  return Object.keys(registry.schema.getQueryType()?.getFields() ?? {});
}
