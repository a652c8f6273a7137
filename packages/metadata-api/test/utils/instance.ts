import { randomBytes } from 'node:crypto';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import pg from 'pg';
import { createMetadataService, type MetadataService, type MetadataServiceOptions, type MetadataStore } from '../../src/index.js';
import { silentLogger, startMetadataServer, type RunningMetadataServer } from './metadata-server.js';

export const databaseUrl = process.env['TEST_DATABASE_URL'];

/** One svc-graphql instance as far as metadata goes: a real registry, a service over `store`, a Yoga server. */
export interface Instance {
  registry: RemoteSchemaRegistry;
  service: MetadataService;
  server: RunningMetadataServer;
  close(): Promise<void>;
}

export async function startInstance(
  store: MetadataStore,
  options: Partial<Omit<MetadataServiceOptions, 'registry' | 'store'>> = {},
): Promise<Instance> {
  const registry = createRemoteSchemaRegistry({ logger: silentLogger, retry: false });
  const service = createMetadataService({ registry, store, logger: silentLogger, ...options });
  await service.init();
  const server = await startMetadataServer({ service, logger: silentLogger });
  return {
    registry,
    service,
    server,
    async close() {
      await server.close();
      await service.close();
      await registry.dispose();
    },
  };
}

/** A schema name no other test run uses; dropped by the returned function. */
export function freshSchema(): { name: string; drop(): Promise<void> } {
  const name = `metadata_test_${randomBytes(6).toString('hex')}`;
  return {
    name,
    async drop() {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      await client.end();
    },
  };
}

/** Polls `check` every 25 ms until it holds, for at most `ms`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out after ${String(ms)} ms waiting for ${what}`);
}

/** `add_remote_schema` of `name` against `url`, under its own namespace and type prefix so that any number fit together. */
export function addNamespaced(name: string, url: string) {
  return {
    type: 'add_remote_schema',
    args: { name, definition: { url, customization: { root_fields_namespace: name, type_names: { prefix: `${name}_` } } } },
  };
}
