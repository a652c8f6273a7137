import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileMetadataStore, MetadataStoreError, StoreConflictError, type MetadataDocument } from '../src/index.js';
import { temporaryDirectory } from './utils/metadata-server.js';

const documentWith = (...names: string[]): MetadataDocument => ({
  version: 3,
  remote_schemas: names.map((name) => ({ name, definition: { url: `http://${name}.test/graphql` } })),
});

let directory: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  directory = await temporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

describe('createFileMetadataStore', () => {
  it('loads nothing before the first save', async () => {
    const store = createFileMetadataStore({ path: `${directory.path}/metadata.json` });
    expect(await store.load()).toBeUndefined();
  });

  it('creates the parent directories and stores {resource_version, metadata}', async () => {
    const path = `${directory.path}/a/b/metadata.json`;
    const store = createFileMetadataStore({ path });
    await store.save({ resourceVersion: 1, metadata: documentWith('a') }, 0);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ resource_version: 1, metadata: documentWith('a') });
    expect(await store.load()).toEqual({ resourceVersion: 1, metadata: documentWith('a') });
    expect(await readdir(`${directory.path}/a/b`)).toEqual(['metadata.json']);
  });

  it('refuses a save from a stale version with StoreConflictError and keeps the file', async () => {
    const path = `${directory.path}/metadata.json`;
    const store = createFileMetadataStore({ path });
    await store.save({ resourceVersion: 1, metadata: documentWith('a') }, 0);
    const before = await readFile(path, 'utf8');
    const error = await store.save({ resourceVersion: 1, metadata: documentWith('b') }, 0).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreConflictError);
    expect(error).toMatchObject({ expectedResourceVersion: 0, actualResourceVersion: 1 });
    expect(await readFile(path, 'utf8')).toBe(before);
  });

  it('sees a version written by another store over the same file', async () => {
    const path = `${directory.path}/metadata.json`;
    await createFileMetadataStore({ path }).save({ resourceVersion: 1, metadata: documentWith('a') }, 0);
    const other = createFileMetadataStore({ path });
    await expect(other.save({ resourceVersion: 1, metadata: documentWith('b') }, 0)).rejects.toBeInstanceOf(StoreConflictError);
    await other.save({ resourceVersion: 2, metadata: documentWith('b') }, 1);
    expect((await other.load())?.resourceVersion).toBe(2);
  });

  it.each([
    ['text that is not JSON', '{"resource_version": 1, "metadata": {', /is corrupt: /],
    ['JSON without the envelope', '{"version": 3, "remote_schemas": []}', /is corrupt: expected \{"resource_version"/],
    ['a negative version', '{"resource_version": -1, "metadata": {}}', /is corrupt/],
    ['an empty file', '', /is corrupt/],
  ])('reports %s as MetadataStoreError naming the file, and never replaces it', async (_title, content, message) => {
    const path = `${directory.path}/metadata.json`;
    await writeFile(path, content);
    const store = createFileMetadataStore({ path });
    const error = await store.load().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MetadataStoreError);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toMatch(message);
    await expect(store.save({ resourceVersion: 1, metadata: documentWith('a') }, 0)).rejects.toBeInstanceOf(MetadataStoreError);
    expect(await readFile(path, 'utf8')).toBe(content);
  });

  it('reports a file it cannot read (a directory) naming it', async () => {
    const path = `${directory.path}/metadata.json`;
    await mkdir(path);
    await expect(createFileMetadataStore({ path }).load()).rejects.toThrow(`cannot read metadata file ${path}`);
  });

  it('refuses at load a location under a regular file, naming the file', async () => {
    await writeFile(`${directory.path}/plain`, 'not a directory');
    const path = `${directory.path}/plain/metadata.json`;
    const store = createFileMetadataStore({ path });
    const error = await store.load().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MetadataStoreError);
    expect((error as Error).message).toMatch(new RegExp(`^cannot (read|write) metadata file ${path}: `));
  });

  it.runIf(process.platform === 'linux')('refuses at load a directory that can never be created, instead of hanging later', async () => {
    const store = createFileMetadataStore({ path: '/proc/svc-graphql-nonexistent/metadata.json' });
    const error = await store.load().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MetadataStoreError);
    expect((error as Error).message).toMatch(/^cannot write metadata file \/proc\/svc-graphql-nonexistent\/metadata.json: /);
    await expect(store.save({ resourceVersion: 1, metadata: documentWith('a') }, 0)).rejects.toBeInstanceOf(MetadataStoreError);
  });

  it('lets exactly one of two stores over one file replace a version, however they interleave', async () => {
    const path = `${directory.path}/metadata.json`;
    const [first, second] = [createFileMetadataStore({ path }), createFileMetadataStore({ path })];
    for (let version = 0; version < 10; version += 1) {
      const results = await Promise.allSettled([
        first.save({ resourceVersion: version + 1, metadata: documentWith(`first${String(version)}`) }, version),
        second.save({ resourceVersion: version + 1, metadata: documentWith(`second${String(version)}`) }, version),
      ]);
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((result) => result.status === 'rejected');
      expect(rejected?.status === 'rejected' && rejected.reason).toBeInstanceOf(StoreConflictError);
    }
    expect((await first.load())?.resourceVersion).toBe(10);
    expect(await readdir(directory.path)).toEqual(['metadata.json']);
  });

  it('takes over a lock left by a process that is gone', async () => {
    const path = `${directory.path}/metadata.json`;
    const gone = spawnSync(process.execPath, ['-e', '']);
    await writeFile(`${path}.lock`, `${String(gone.pid)} left-over`);
    await createFileMetadataStore({ path }).save({ resourceVersion: 1, metadata: documentWith('a') }, 0);
    expect(JSON.parse(await readFile(path, 'utf8')).resource_version).toBe(1);
    expect(await readdir(directory.path)).toEqual(['metadata.json']);
  });

  it('refuses an empty path at creation', () => {
    expect(() => createFileMetadataStore({ path: '' })).toThrow('createFileMetadataStore: "path" must be a non-empty string');
  });

  it('leaves a loadable file when killed with SIGKILL during 50 rapid adds', { timeout: 60_000 }, async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const script = fileURLToPath(new URL('./fixtures/rapid-adds.ts', import.meta.url));
    for (const killAfter of [3, 17, 31]) {
      const path = `${directory.path}/kill-${String(killAfter)}/metadata.json`;
      const child = spawn(process.execPath, ['--import', 'tsx', script, path], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        child.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString().split('\n').filter((line) => line.startsWith('saved')).length;
          // Kill while the next adds are being written, not after the last one.
          if (seen >= killAfter) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.on('exit', () => reject(new Error(`child exited before ${String(killAfter)} saves: ${stderr}`)));
      });
      expect(await exited).toBe('SIGKILL');
      const stored = await createFileMetadataStore({ path }).load();
      expect(stored).toBeDefined();
      expect(stored?.resourceVersion).toBeGreaterThanOrEqual(killAfter);
      expect(stored?.resourceVersion).toBeLessThan(50);
      expect(stored?.metadata.remote_schemas.map((entry) => entry.name)).toEqual(
        Array.from({ length: stored?.resourceVersion ?? 0 }, (_, index) => `r${String(index)}`),
      );
    }
  });
});
