/**
 * The PostgreSQL store when the database goes away and comes back: one instance reaches the real
 * database through a TCP proxy the test cuts and restores, another reaches it directly.
 */
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresMetadataStore, type MetadataStore, type PostgresMetadataStoreOptions } from '../src/index.js';
import { addNamespaced, databaseUrl, freshSchema, startInstance, until, type Instance } from './utils/instance.js';
import { startTcpProxy, type TcpProxy } from './utils/tcp-proxy.js';

if (databaseUrl === undefined) console.warn('PostgreSQL outage tests skipped: TEST_DATABASE_URL is not set');

const unreachable = { status: 503, body: { error: 'the metadata store is unreachable', path: '$', code: 'unexpected' } };
const success = { status: 200, body: { message: 'success' } };

describe.skipIf(databaseUrl === undefined)('a PostgreSQL store that loses the database', () => {
  const url = databaseUrl ?? '';
  let remote: RunningRemote;
  let proxy: TcpProxy;
  let schema: ReturnType<typeof freshSchema>;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'outage' });
  });
  afterAll(async () => {
    await remote.close();
  });
  beforeEach(async () => {
    const target = new URL(url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    schema = freshSchema();
  });
  afterEach(async () => {
    proxy.restore();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await proxy.close();
    await schema.drop();
  });

  const store = (options: Partial<PostgresMetadataStoreOptions> & { throughProxy?: boolean } = {}): MetadataStore => {
    const { throughProxy = false, ...rest } = options;
    const created = createPostgresMetadataStore({ connectionString: throughProxy ? proxy.rewrite(url) : url, schema: schema.name, ...rest });
    return created;
  };
  const start = async (metadataStore: MetadataStore): Promise<Instance> => {
    const instance = await startInstance(metadataStore);
    cleanups.push(() => instance.close());
    return instance;
  };
  const names = async (instance: Instance) =>
    ((await instance.server.post({ type: 'export_metadata', args: {} })).body.remote_schemas as Array<{ name: string }>).map(
      (entry) => entry.name,
    );

  it('answers writes 503 while cut off, keeps serving from memory, and catches up by itself once the database is back', async () => {
    const [cutOff, direct] = [await start(store({ throughProxy: true })), await start(store())];
    expect(await cutOff.server.post(addNamespaced('one', remote.url))).toEqual(success);
    await until(() => direct.service.resourceVersion() === 1, 'the direct instance to adopt version 1');
    expect(cutOff.service.isStoreReachable()).toBe(true);

    proxy.cut();
    const started = Date.now();
    expect(await cutOff.server.post(addNamespaced('two', remote.url))).toEqual(unreachable);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(cutOff.service.isStoreReachable()).toBe(false);
    // Nothing changed, and everything that only reads still answers.
    expect(cutOff.service.resourceVersion()).toBe(1);
    expect(await names(cutOff)).toEqual(['one']);
    expect(await cutOff.server.post({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
      status: 200,
      body: { is_consistent: true, inconsistent_objects: [] },
    });
    expect(Object.keys(cutOff.registry.schema.getQueryType()?.getFields() ?? {})).toEqual(['one']);
    // A change inside bulk is refused the same way.
    expect(await cutOff.server.post({ type: 'bulk', args: [{ type: 'remove_remote_schema', args: { name: 'one' } }] })).toEqual(unreachable);

    // The other instance changes the metadata meanwhile.
    expect(await direct.server.post(addNamespaced('three', remote.url))).toEqual(success);

    proxy.restore();
    await until(
      () => cutOff.service.resourceVersion() === 2 && cutOff.service.isStoreReachable(),
      'the cut-off instance to catch up and be reachable again',
      5000,
    );
    expect(await names(cutOff)).toEqual(['one', 'three']);
    expect(Object.keys(cutOff.registry.schema.getQueryType()?.getFields() ?? {}).sort()).toEqual(['one', 'three']);
    expect(await cutOff.server.post(addNamespaced('two', remote.url))).toEqual(success);
    await until(() => direct.service.resourceVersion() === 3, 'the direct instance to adopt version 3');
  });

  it('finds a change that was never announced through the version check', async () => {
    const watcher = await start(store({ versionCheckIntervalMs: 100 }));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Written behind the store's back: no NOTIFY, as when a notification was lost.
      await client.query(`UPDATE "${schema.name}"."metadata" SET resource_version = 1, metadata = $1::json WHERE id = 1`, [
        JSON.stringify({ version: 3, remote_schemas: [{ name: 'quiet', definition: { url: remote.url, forward_client_headers: false, timeout_seconds: 60 } }] }),
      ]);
    } finally {
      await client.end();
    }
    await until(() => watcher.service.resourceVersion() === 1, 'the version check to find version 1', 2000);
    expect(await names(watcher)).toEqual(['quiet']);
  });

  it('reloads at most twice more for a burst of 50 notifications', async () => {
    const real = store();
    let loads = 0;
    const counting: MetadataStore = {
      ...real,
      load: () => {
        loads += 1;
        return real.load();
      },
    };
    await start(counting);
    // init() loads once, and once more when LISTEN is in place.
    await until(() => loads === 2, 'the load that follows LISTEN');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = loads;

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Payloads differ: PostgreSQL merges equal notifications of one transaction.
      await client.query(
        Array.from({ length: 50 }, (_, index) => `SELECT pg_notify('${schema.name}_metadata_changed', '${String(index)}');`).join('\n'),
      );
    } finally {
      await client.end();
    }
    await until(() => loads > before, 'a reload');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(loads - before).toBeGreaterThanOrEqual(1);
    expect(loads - before).toBeLessThanOrEqual(3);
  });

  it('reports the store unreachable while its LISTEN connection is down, and reachable once it listens again', async () => {
    const instance = await start(store({ throughProxy: true }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(instance.service.isStoreReachable()).toBe(true);
    proxy.cut();
    await until(() => !instance.service.isStoreReachable(), 'the store to be reported unreachable', 2000);
    proxy.restore();
    await until(() => instance.service.isStoreReachable(), 'the store to be reported reachable again', 5000);
  });
});
