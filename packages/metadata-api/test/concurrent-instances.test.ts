/**
 * Several instances writing the same metadata at once, each with its own real registry over one
 * real store (one PostgreSQL schema, or one file), against a real remote. The remote's schema is
 * small on purpose: every attempt composes all the remotes added so far, and this is about the
 * store, not about composition.
 */
import { startGeneratedRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFileMetadataStore, createPostgresMetadataStore, type MetadataStore } from '../src/index.js';
import { addNamespaced, databaseUrl, freshSchema, startInstance, until, type Instance } from './utils/instance.js';
import { temporaryDirectory } from './utils/metadata-server.js';

if (databaseUrl === undefined) console.warn('PostgreSQL concurrent instance tests skipped: TEST_DATABASE_URL is not set');

const WRITES_PER_INSTANCE = 20;

let remote: RunningRemote;
beforeAll(async () => {
  remote = await startGeneratedRemote({ types: 1 });
});
afterAll(async () => {
  await remote.close();
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(store: MetadataStore): Promise<Instance> {
  const instance = await startInstance(store);
  cleanups.push(() => instance.close());
  return instance;
}

/** Which stores two instances can share: a factory of stores over the same place. */
const stores: Array<[string, boolean, () => Promise<() => MetadataStore>]> = [
  [
    'PostgreSQL',
    databaseUrl !== undefined,
    async () => {
      const schema = freshSchema();
      cleanups.push(() => schema.drop());
      return () => createPostgresMetadataStore({ connectionString: databaseUrl ?? '', schema: schema.name });
    },
  ],
  [
    'one file',
    true,
    async () => {
      const directory = await temporaryDirectory();
      cleanups.push(() => directory.remove());
      return () => createFileMetadataStore({ path: `${directory.path}/metadata.json` });
    },
  ],
];

async function loadWith(open: () => MetadataStore) {
  const store = open();
  try {
    return await store.load();
  } finally {
    await store.close();
  }
}

/** Adopts what the other instance saved, without introspecting every remote again. */
const reloaded = async (instance: Instance) =>
  (await instance.server.post({ type: 'reload_metadata', args: { reload_remote_schemas: false } })).status === 200;

const exportedNames = async (instance: Instance): Promise<string[]> => {
  const { body } = await instance.server.post({ type: 'export_metadata', args: {} });
  return (body.remote_schemas as Array<{ name: string }>).map((entry) => entry.name).sort();
};

describe.each(stores)('two instances over %s', (_title, available, sharedStore) => {
  it.runIf(available)(`apply ${String(WRITES_PER_INSTANCE)} concurrent writes each: every answer is 200 and no change is lost`, { timeout: 60_000 }, async () => {
    const open = await sharedStore();
    const [first, second] = await Promise.all([start(open()), start(open())]);
    const names = (prefix: string) => Array.from({ length: WRITES_PER_INSTANCE }, (_, index) => `${prefix}${String(index)}`);
    const results = await Promise.all([
      ...names('a').map((name) => first.server.post(addNamespaced(name, remote.url))),
      ...names('b').map((name) => second.server.post(addNamespaced(name, remote.url))),
    ]);
    expect(results.filter((result) => result.status !== 200)).toEqual([]);
    const expected = [...names('a'), ...names('b')].sort();
    // Each instance holds every change once it adopted the other's last one.
    const total = 2 * WRITES_PER_INSTANCE;
    await until(async () => (await reloaded(first)) && first.service.resourceVersion() === total, 'the first instance to reach the last version');
    await until(async () => (await reloaded(second)) && second.service.resourceVersion() === total, 'the second instance to reach the last version');
    expect(await exportedNames(first)).toEqual(expected);
    expect(await exportedNames(second)).toEqual(expected);
    expect((await loadWith(open))?.resourceVersion).toBe(total);
  });

  it.runIf(available)('answer 409 to every request whose resource_version moved: of twenty writes naming one version, one succeeds', { timeout: 30_000 }, async () => {
    const open = await sharedStore();
    const [first, second] = await Promise.all([start(open()), start(open())]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => {
        const instance = index % 2 === 0 ? first : second;
        return instance.server.post({ ...addNamespaced(`v${String(index)}`, remote.url), resource_version: 0 });
      }),
    );
    const refused = results.filter((result) => result.status !== 200);
    expect(results.filter((result) => result.status === 200)).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const { status, body } of refused) {
      expect(status).toBe(409);
      expect(body).toEqual({
        error: 'metadata resource version referenced (0) did not match current version (1)',
        path: '$',
        code: 'conflict',
      });
    }
    const stored = await loadWith(open);
    expect(stored?.resourceVersion).toBe(1);
    expect(stored?.metadata.remote_schemas).toHaveLength(1);
  });

  it.runIf(available)("judge each request by the stored document, not a copy behind the other instance's writes, and catch up unasked", { timeout: 30_000 }, async () => {
    const open = await sharedStore();
    const [first, second] = await Promise.all([start(open()), start(open())]);
    expect((await first.server.post(addNamespaced('x', remote.url))).status).toBe(200);
    // At once, without a reload: the second instance knows x, and version 1 is the current one.
    expect(await second.server.post({ type: 'remove_remote_schema', args: { name: 'x' }, resource_version: 1 })).toEqual({
      status: 200,
      body: { message: 'success' },
    });
    // The first instance adds x again at once (its change is judged by the stored document), and
    // the second refuses to add the name that is taken again.
    expect((await first.server.post(addNamespaced('x', remote.url))).status).toBe(200);
    const taken = await second.server.post(addNamespaced('x', remote.url));
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ code: 'already-exists' });
    // A stale resource_version is still a conflict, against the stored version.
    expect((await second.server.post({ type: 'remove_remote_schema', args: { name: 'x' }, resource_version: 2 })).body).toEqual({
      error: 'metadata resource version referenced (2) did not match current version (3)',
      path: '$',
      code: 'conflict',
    });
    // Unasked: the other instance adopts a change (and serves its schema) within a few seconds,
    // and its reads (answered from memory) show it.
    expect((await first.server.post(addNamespaced('y', remote.url))).status).toBe(200);
    await until(() => second.service.resourceVersion() === 4, 'the second instance to adopt version 4 by itself');
    expect(second.registry.schema.getQueryType()?.getFields()['y']).toBeDefined();
    const exported = await second.server.post({ type: 'export_metadata', version: 2, args: {} });
    expect(exported.body).toMatchObject({ resource_version: 4 });
    expect((exported.body as { metadata: { remote_schemas: Array<{ name: string }> } }).metadata.remote_schemas.map((r) => r.name)).toEqual(['x', 'y']);
  });
});
