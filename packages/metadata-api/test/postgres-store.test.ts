import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createMetadataService,
  createPostgresMetadataStore,
  MetadataStoreError,
  MetadataStoreUnreachableError,
  StoreConflictError,
  type MetadataDocument,
  type MetadataStore,
} from '../src/index.js';
import { createFakeRegistry } from './utils/fake-registry.js';
import { A, B, REMOTES } from './utils/fixture.js';
import { silentLogger } from './utils/metadata-server.js';

const databaseUrl = process.env['TEST_DATABASE_URL'];
if (databaseUrl === undefined) console.warn('PostgreSQL metadata store tests skipped: TEST_DATABASE_URL is not set');

const documentWith = (...names: string[]): MetadataDocument => ({
  version: 3,
  remote_schemas: names.map((name) => ({ name, definition: { url: `http://${name}.test/graphql`, timeout_seconds: 60, forward_client_headers: false } })),
});

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(databaseUrl === undefined)('createPostgresMetadataStore', () => {
  const url = databaseUrl ?? '';
  let schema: string;
  const opened: MetadataStore[] = [];
  const open = () => {
    const store = createPostgresMetadataStore({ connectionString: url, schema });
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    schema = `metadata_test_${randomBytes(6).toString('hex')}`;
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  it('creates its schema and table and loads nothing before the first save', async () => {
    expect(await open().load()).toBeUndefined();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
    await client.end();
    expect(rows).toEqual([{ table_name: 'metadata' }]);
  });

  it('saves and loads the document with its version, keeping key order', async () => {
    const store = open();
    await store.save({ resourceVersion: 1, metadata: documentWith('b', 'a') }, 0);
    const loaded = await store.load();
    expect(loaded).toEqual({ resourceVersion: 1, metadata: documentWith('b', 'a') });
    expect(JSON.stringify(loaded?.metadata)).toBe(JSON.stringify(documentWith('b', 'a')));
  });

  it('refuses a save from a stale version with StoreConflictError and keeps the row', async () => {
    const store = open();
    await store.save({ resourceVersion: 1, metadata: documentWith('a') }, 0);
    await expect(store.save({ resourceVersion: 1, metadata: documentWith('b') }, 0)).rejects.toBeInstanceOf(StoreConflictError);
    expect(await store.load()).toEqual({ resourceVersion: 1, metadata: documentWith('a') });
  });

  it('lets exactly one of two instances win a race on the same version', async () => {
    const [first, second] = [open(), open()];
    await first.load();
    const results = await Promise.allSettled([
      first.save({ resourceVersion: 1, metadata: documentWith('a') }, 0),
      second.save({ resourceVersion: 1, metadata: documentWith('b') }, 0),
    ]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((result) => result.status === 'rejected');
    expect(rejected?.status === 'rejected' && rejected.reason).toBeInstanceOf(StoreConflictError);
  });

  it('tells every watching instance about a change with NOTIFY', async () => {
    const [writer, watcher] = [open(), open()];
    let changes = 0;
    const unwatch = watcher.watch?.(() => (changes += 1));
    await watcher.load();
    // LISTEN is set up in the background: write until the watcher hears one.
    let version = 0;
    await until(async () => {
      await writer.save({ resourceVersion: version + 1, metadata: documentWith(`r${String(version)}`) }, version);
      version += 1;
      return changes > 0;
    }, 'a notification');
    unwatch?.();
  });

  it('listens again after its LISTEN connection is dropped, and reports the change it may have missed', async () => {
    const [writer, watcher] = [open(), open()];
    let changes = 0;
    watcher.watch?.(() => (changes += 1));
    let version = 0;
    await until(async () => {
      await writer.save({ resourceVersion: version + 1, metadata: documentWith(`r${String(version)}`) }, version);
      version += 1;
      return changes > 0;
    }, 'a first notification');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const { rows } = await admin.query(
      "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query = $1",
      [`LISTEN "${schema}_metadata_changed"`],
    );
    await admin.end();
    expect(rows).toEqual([{ done: true }]);
    const before = changes;
    await writer.save({ resourceVersion: version + 1, metadata: documentWith('after') }, version);
    await until(() => changes > before, 'a notification after the connection was dropped');
  });

  it('calls a watcher once LISTEN is in place, so a change saved before that is not missed', async () => {
    const store = open();
    await store.load();
    let calls = 0;
    store.watch?.(() => {
      calls += 1;
    });
    await until(() => calls === 1, 'the watcher to be called once listening');
  });

  it('lets a second service follow the first through watch()', async () => {
    const registries = [createFakeRegistry(REMOTES), createFakeRegistry(REMOTES)] as const;
    const services = registries.map((registry) => createMetadataService({ registry, store: open(), logger: silentLogger }));
    await Promise.all(services.map((service) => service.init()));
    const [first, second] = services as [typeof services[0], typeof services[0]];
    const fieldsOf = (index: 0 | 1) => Object.keys(registries[index].schema.getQueryType()?.getFields() ?? {});
    expect(await first.handle({ type: 'add_remote_schema', args: { name: 'a', definition: { url: A } } })).toEqual({
      status: 200,
      body: { message: 'success' },
    });
    await until(() => second.resourceVersion() === 1, 'the second service to adopt version 1');
    expect(fieldsOf(1)).toEqual(['a']);
    // The second service writes on top of what it adopted; the first follows in turn.
    expect((await second.handle({ type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } })).status).toBe(200);
    await until(() => first.resourceVersion() === 2, 'the first service to adopt version 2');
    expect(fieldsOf(0)).toEqual(['a', 'b']);
    expect((await first.handle({ type: 'export_metadata', args: {} })).body).toEqual(
      (await second.handle({ type: 'export_metadata', args: {} })).body,
    );
  });

  it('names the database without its password', () => {
    const store = createPostgresMetadataStore({ connectionString: 'postgres://user:secret@db.example:5432/app', schema: 'x' });
    opened.push(store);
    expect(store.location).toBe('postgres://user@db.example:5432/app (table x.metadata)');
  });
});

describe('createPostgresMetadataStore without a database', () => {
  it('refuses a schema that is not a plain identifier', () => {
    expect(() => createPostgresMetadataStore({ connectionString: 'postgres://localhost/x', schema: 'a"; DROP' })).toThrow(
      'createPostgresMetadataStore: "schema" must be a plain SQL identifier, but got "a\\"; DROP"',
    );
  });

  it('reports a database that cannot be reached as MetadataStoreUnreachableError, and itself as unreachable', async () => {
    const store = createPostgresMetadataStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
    expect(store.isReachable?.()).toBe(true);
    const error = await store.load().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MetadataStoreUnreachableError);
    expect(error).toBeInstanceOf(MetadataStoreError);
    expect((error as Error).message).toMatch(/^cannot prepare the metadata table: /);
    expect(store.isReachable?.()).toBe(false);
    await store.close();
  });

  it('refuses a versionCheckIntervalMs that is not a positive integer', () => {
    expect(() => createPostgresMetadataStore({ connectionString: 'postgres://localhost/x', versionCheckIntervalMs: 0 })).toThrow(
      'createPostgresMetadataStore: "versionCheckIntervalMs" must be a positive integer, but got 0',
    );
  });
});
