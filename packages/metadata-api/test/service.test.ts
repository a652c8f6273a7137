import { readFile, stat, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileMetadataStore, createMetadataService, MetadataStoreError, MetadataStoreUnreachableError, StoreConflictError } from '../src/index.js';
import { createFakeRegistry } from './utils/fake-registry.js';
import { A, B, CLASH, DOWN, REMOTES, rootFields, startFixture, type Fixture } from './utils/fixture.js';
import { silentLogger, temporaryDirectory, type MetadataResult } from './utils/metadata-server.js';

let fixture: Fixture;
beforeEach(async () => {
  fixture = await startFixture();
});
afterEach(async () => {
  await fixture.close();
});

const addA = { type: 'add_remote_schema', args: { name: 'a', definition: { url: A } } };

describe('a failed operation changes nothing', () => {
  it('leaves the file byte for byte unchanged and the schema as it was', async () => {
    expect((await fixture.server.post(addA)).status).toBe(200);
    const before = await readFile(fixture.file, 'utf8');
    const modified = (await stat(fixture.file)).mtimeMs;
    const refused: unknown[] = [
      { type: 'add_remote_schema', args: { name: 'clash', definition: { url: CLASH } } },
      { type: 'add_remote_schema', args: { name: 'down', definition: { url: DOWN } } },
      { type: 'add_remote_schema', args: { name: 'a', definition: { url: B } } },
      { type: 'add_remote_schema', args: { name: 'b', definition: { url: B, timeout_seconds: -5 } } },
      { type: 'add_remote_schema', resource_version: 7, args: { name: 'b', definition: { url: B } } },
      { type: 'update_remote_schema', args: { name: 'a', definition: { url: DOWN } } },
      { type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'down', definition: { url: DOWN } }] } },
      { type: 'bulk', args: [{ type: 'remove_remote_schema', args: { name: 'a' } }, { type: 'remove_remote_schema', args: { name: 'a' } }] },
    ];
    for (const body of refused) {
      const { status } = await fixture.server.post(body);
      expect([400, 409]).toContain(status);
    }
    expect(await readFile(fixture.file, 'utf8')).toBe(before);
    expect((await stat(fixture.file)).mtimeMs).toBe(modified);
    expect(rootFields(fixture.registry)).toEqual(['a']);
    expect(fixture.service.resourceVersion()).toBe(1);
  });

  it('does not commit when the store cannot save, and answers 500', async () => {
    const registry = createFakeRegistry(REMOTES);
    const failing = {
      load: async () => undefined,
      save: async () => {
        throw new MetadataStoreError('cannot write metadata file /nowhere: disk full');
      },
      close: async () => undefined,
    };
    const service = createMetadataService({ registry, store: failing, logger: silentLogger });
    await service.init();
    expect(await service.handle(addA)).toEqual({
      status: 500,
      body: { error: 'cannot write metadata file /nowhere: disk full', path: '$', code: 'unexpected' },
    });
    expect(rootFields(registry)).toEqual(['no_queries_available']);
    expect(service.resourceVersion()).toBe(0);
    await service.close();
  });
});

describe('a store that stops answering', () => {
  it('answers a change 503 after the read it could not answer, without waiting for a save too', async () => {
    const registry = createFakeRegistry(REMOTES);
    let answering = true;
    const saves: number[] = [];
    const stalled = {
      load: async () => {
        // A database that hangs: the read gives up after its timeout, as unreachable.
        if (!answering) throw new MetadataStoreUnreachableError('cannot load metadata: Query read timeout');
        return undefined;
      },
      save: async (document: { resourceVersion: number }) => {
        saves.push(document.resourceVersion);
      },
      close: async () => undefined,
    };
    const service = createMetadataService({ registry, store: stalled, logger: silentLogger });
    await service.init();
    expect((await service.handle(addA)).status).toBe(200);
    expect(saves).toEqual([1]);
    answering = false;
    expect(await service.handle({ type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } })).toEqual({
      status: 503,
      body: { error: 'the metadata store is unreachable', path: '$', code: 'unexpected' },
    });
    // Not tried again on the store that just failed to answer; nothing changed.
    expect(saves).toEqual([1]);
    expect(rootFields(registry)).toEqual(['a']);
    // A request that changes nothing is still answered, from memory.
    expect((await service.handle({ type: 'export_metadata', args: {} })).status).toBe(200);
    await service.close();
  });
});

describe('persistence across restarts', () => {
  it('keeps metadata: a new service over the same file serves the same document', async () => {
    await fixture.server.post(addA);
    await fixture.server.post({ type: 'add_remote_schema', args: { name: 'b', definition: { url: B, timeout_seconds: 3 }, comment: 'bee' } });
    const exported = (await fixture.server.post({ type: 'export_metadata', version: 2, args: {} })).body;

    const registry = createFakeRegistry(REMOTES);
    const restarted = createMetadataService({ registry, store: createFileMetadataStore({ path: fixture.file }), logger: silentLogger });
    await restarted.init();
    expect(await restarted.handle({ type: 'export_metadata', version: 2, args: {} })).toEqual({ status: 200, body: exported });
    expect(rootFields(registry)).toEqual(['a', 'b']);
    expect(restarted.resourceVersion()).toBe(2);
    await restarted.close();
  });

  it('starts with a remote that is down as an inconsistent object and logs it', async () => {
    await fixture.server.post(addA);
    const registry = createFakeRegistry({});
    const warnings: unknown[][] = [];
    const logger = { ...silentLogger, warn: (...args: unknown[]) => warnings.push(args) };
    const restarted = createMetadataService({ registry, store: createFileMetadataStore({ path: fixture.file }), logger });
    await restarted.init();
    expect(restarted.isConsistent()).toBe(false);
    expect(restarted.inconsistentObjects().map((object) => object.name)).toEqual(['remote_schema a']);
    expect(warnings).toEqual([[`inconsistent metadata: remote_schema a: Inconsistent object: HTTP exception occurred while sending the request to "${A}"`]]);
    await restarted.close();
  });

  describe('with remote schema permissions stored', () => {
    const permissions = [{ role: 'user', definition: { schema: 'type Query { a: String }' } }];
    const restart = async (remoteSchemaPermissions: boolean) => {
      await fixture.server.post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'a', definition: { url: A }, permissions }] } });
      const registry = createFakeRegistry(REMOTES, { permissions: remoteSchemaPermissions });
      registry.permissionProblems.set('a/user', 'validation for the given role-based schema failed because field "a" is not what it was');
      const warnings: unknown[][] = [];
      const logger = { ...silentLogger, warn: (...args: unknown[]) => warnings.push(args) };
      const service = createMetadataService({ registry, store: createFileMetadataStore({ path: fixture.file }), logger, remoteSchemaPermissions });
      await service.init();
      await service.close();
      return { registry, service, warnings };
    };

    it('hands them to the registry when enabled, and logs those it refuses', async () => {
      const { registry, service, warnings } = await restart(true);
      expect(registry.planned[0]?.[0]?.permissions).toEqual([{ role: 'user', schema: 'type Query { a: String }' }]);
      expect(service.inconsistentObjects().map((object) => object.name)).toEqual(['remote_schema_permission user on remote_schema a']);
      expect(warnings).toEqual([
        [
          'inconsistent metadata: remote_schema_permission user on remote_schema a: Inconsistent object: ' +
            'validation for the given role-based schema failed because field "a" is not what it was',
        ],
      ]);
    });

    it('keeps them without handing them to the registry when disabled, and warns that they are not enforced', async () => {
      const { registry, service, warnings } = await restart(false);
      expect(registry.planned[0]?.[0]).not.toHaveProperty('permissions');
      expect(service.isConsistent()).toBe(true);
      expect(warnings).toEqual([
        [
          'the metadata has remote schema permissions, but remote schema permissions are disabled: ' +
            'they are kept, not enforced, and every role sees whole remote schemas',
        ],
      ]);
    });
  });

  it('refuses to start on a corrupt file, naming it, and leaves it as it is', async () => {
    const directory = await temporaryDirectory();
    const path = `${directory.path}/metadata.json`;
    await writeFile(path, '{"resource_version": 3, "metadata": {"version": 3, "remote_sch');
    const service = createMetadataService({ registry: createFakeRegistry(), store: createFileMetadataStore({ path }), logger: silentLogger });
    await expect(service.init()).rejects.toThrow(`metadata file ${path} is corrupt`);
    expect(await readFile(path, 'utf8')).toBe('{"resource_version": 3, "metadata": {"version": 3, "remote_sch');
    await directory.remove();
  });

  it('refuses to start on a stored document that is invalid, naming the file and the field', async () => {
    const directory = await temporaryDirectory();
    const path = `${directory.path}/metadata.json`;
    const content = JSON.stringify({ resource_version: 1, metadata: { version: 3, remote_schemas: [{ name: 'a', definition: { url: 'ftp://x' } }] } });
    await writeFile(path, content);
    const service = createMetadataService({ registry: createFakeRegistry(), store: createFileMetadataStore({ path }), logger: silentLogger });
    await expect(service.init()).rejects.toThrow(
      `metadata in ${path} is invalid at $.metadata.remote_schemas[0].definition.url: expected an http or https URL`,
    );
    expect(await readFile(path, 'utf8')).toBe(content);
    await directory.remove();
  });

  it('refuses a change while the stored document is invalid, and never saves over it', async () => {
    const directory = await temporaryDirectory();
    const path = `${directory.path}/metadata.json`;
    const registry = createFakeRegistry();
    registry.remotes.set('http://one.test/graphql', 'type Query { one: String }');
    const service = createMetadataService({ registry, store: createFileMetadataStore({ path }), logger: silentLogger });
    await service.init();
    const added = await service.handle({ type: 'add_remote_schema', args: { name: 'one', definition: { url: 'http://one.test/graphql' } } });
    expect(added.status).toBe(200);
    // Edited by hand at the same version: an entry that is not valid.
    const edited = JSON.stringify({
      resource_version: 1,
      metadata: { version: 3, remote_schemas: [{ name: 'one', definition: { url: 'http://one.test/graphql' } }, { name: 'handmade', definition: { url: 'ftp://x' } }] },
    });
    await writeFile(path, edited);
    const removed = await service.handle({ type: 'remove_remote_schema', args: { name: 'one' } });
    expect(removed.status).toBe(500);
    expect(await readFile(path, 'utf8')).toBe(edited);
    await service.close();
    await directory.remove();
  });
});

describe('concurrency', () => {
  it('applies 20 concurrent adds one at a time: all are present', async () => {
    const registry = fixture.registry;
    const bodies = Array.from({ length: 20 }, (_, index) => {
      registry.remotes.set(`http://c${String(index)}.test/graphql`, `type Query { c${String(index)}: String }`);
      return { type: 'add_remote_schema', args: { name: `c${String(index)}`, definition: { url: `http://c${String(index)}.test/graphql` } } };
    });
    const results: MetadataResult[] = await Promise.all(bodies.map((body) => fixture.server.post(body)));
    expect(results.map((result) => result.status)).toEqual(Array.from({ length: 20 }, () => 200));
    const exported = (await fixture.server.post({ type: 'export_metadata', version: 2, args: {} })).body;
    expect(exported.resource_version).toBe(20);
    expect(exported.metadata.remote_schemas.map((entry: { name: string }) => entry.name).sort()).toEqual(
      bodies.map((body) => body.args.name).sort(),
    );
    expect(rootFields(registry)).toHaveLength(20);
    const stored = JSON.parse(await readFile(fixture.file, 'utf8'));
    expect(stored.resource_version).toBe(20);
    expect(stored.metadata).toEqual(exported.metadata);
  });

  it('lets two services share one file: the later writer adopts the earlier one and retries', async () => {
    const otherRegistry = createFakeRegistry(REMOTES);
    const other = createMetadataService({ registry: otherRegistry, store: createFileMetadataStore({ path: fixture.file }), logger: silentLogger });
    await other.init();
    expect((await fixture.server.post(addA)).status).toBe(200);
    expect(await other.handle({ type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } })).toEqual({
      status: 200,
      body: { message: 'success' },
    });
    expect(rootFields(otherRegistry)).toEqual(['a', 'b']);
    const stored = JSON.parse(await readFile(fixture.file, 'utf8'));
    expect(stored.resource_version).toBe(2);
    expect(stored.metadata.remote_schemas.map((entry: { name: string }) => entry.name)).toEqual(['a', 'b']);
    // The first service sees the other's change at reload_metadata.
    expect(await fixture.server.post({ type: 'reload_metadata', args: {} })).toEqual({
      status: 200,
      body: { message: 'success', is_consistent: true },
    });
    expect(rootFields(fixture.registry)).toEqual(['a', 'b']);
    expect(fixture.service.resourceVersion()).toBe(2);
    await other.close();
  });

  it('answers 409 instead of retrying when the request named the resource_version another writer replaced', async () => {
    const other = createMetadataService({ registry: createFakeRegistry(REMOTES), store: createFileMetadataStore({ path: fixture.file }), logger: silentLogger });
    await other.init();
    await fixture.server.post(addA);
    expect(await other.handle({ type: 'add_remote_schema', resource_version: 0, args: { name: 'b', definition: { url: B } } })).toEqual({
      status: 409,
      body: { error: 'metadata resource version referenced (0) did not match current version (1)', path: '$', code: 'conflict' },
    });
    await other.close();
  });
});

describe('reads while a change waits on the store', () => {
  it('answers export_metadata and get_inconsistent_metadata at once, with the state before the change', async () => {
    let release: () => void = () => undefined;
    const saved = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store = { load: async () => undefined, save: () => saved, close: async () => undefined };
    const service = createMetadataService({ registry: createFakeRegistry(REMOTES), store, logger: silentLogger });
    await service.init();
    const change = service.handle(addA);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await service.handle({ type: 'export_metadata', version: 2, args: {} })).toEqual({
      status: 200,
      body: { resource_version: 0, metadata: { version: 3, remote_schemas: [] } },
    });
    expect(await service.handle({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
      status: 200,
      body: { is_consistent: true, inconsistent_objects: [] },
    });
    release();
    expect(await change).toEqual({ status: 200, body: { message: 'success' } });
    expect((await service.handle({ type: 'export_metadata', version: 2, args: {} })).body).toMatchObject({ resource_version: 1 });
    await service.close();
  });
});

describe('a store that keeps refusing saves', () => {
  it('keeps trying until conflictRetryTimeoutMs, then answers 503 and commits nothing', async () => {
    const registry = createFakeRegistry(REMOTES);
    let saves = 0;
    const store = {
      load: async () => undefined,
      save: async (_document: unknown, expected: number) => {
        saves += 1;
        throw new StoreConflictError(expected, 99);
      },
      close: async () => undefined,
    };
    const service = createMetadataService({ registry, store, logger: silentLogger, conflictRetryTimeoutMs: 300 });
    await service.init();
    const started = Date.now();
    expect(await service.handle(addA)).toEqual({
      status: 503,
      body: {
        error: 'other instances kept changing the stored metadata for 300 ms while this request was applied; nothing was changed, try again',
        path: '$',
        code: 'unexpected',
      },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    // Far more than the three retries a fixed budget allowed.
    expect(saves).toBeGreaterThan(4);
    expect(rootFields(registry)).toEqual(['no_queries_available']);
    expect(service.resourceVersion()).toBe(0);
    await service.close();
  });

  it('refuses a conflictRetryTimeoutMs that is not a positive integer', () => {
    expect(() => createMetadataService({ registry: createFakeRegistry(), store: createFileMetadataStore({ path: '/tmp/unused.json' }), conflictRetryTimeoutMs: 0 })).toThrow(
      'createMetadataService: "conflictRetryTimeoutMs" must be a positive integer, but got 0',
    );
  });
});

describe('service lifecycle', () => {
  it('answers 503 before init and after close', async () => {
    const service = createMetadataService({ registry: createFakeRegistry(), store: createFileMetadataStore({ path: `${fixture.directory}/other.json` }), logger: silentLogger });
    expect(await service.handle({ type: 'export_metadata', args: {} })).toEqual({
      status: 503,
      body: { error: 'the metadata service is not initialized', path: '$', code: 'unexpected' },
    });
    await service.init();
    await service.close();
    expect((await service.handle({ type: 'export_metadata', args: {} })).status).toBe(503);
  });

  it('refuses options without a registry or a store', () => {
    const store = createFileMetadataStore({ path: '/tmp/unused.json' });
    expect(() => createMetadataService({ registry: undefined as never, store })).toThrow('"registry" must be a remote schema registry');
    expect(() => createMetadataService({ registry: createFakeRegistry(), store: {} as never })).toThrow('"store" must be a metadata store');
  });
});
