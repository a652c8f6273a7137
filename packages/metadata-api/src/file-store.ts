import { randomBytes } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { link, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { MetadataStoreError, StoreConflictError } from './errors.js';
import { createSerialQueue, type MetadataStore, type StoredMetadata } from './store.js';
import { isObject } from './validation.js';

export interface FileMetadataStoreOptions {
  /** The JSON file holding the document. Its directory is created when missing. */
  path: string;
}

/** How long a save waits for another writer's lock before giving up. */
const LOCK_WAIT_MS = 10_000;
/** How often a watched file store looks whether another process saved the document. */
const WATCH_INTERVAL_MS = 1_000;
/** A lock this old is left over (its owner was killed, or its pid now names another process): no save takes that long. */
const STALE_LOCK_MS = 30_000;

/**
 * The embedded store: one JSON file `{"resource_version": n, "metadata": {…}}`.
 *
 * Writes go to a temporary file in the same directory, which is fsynced and then renamed over the
 * document (and the directory fsynced), so a crash at any moment leaves either the old or the new
 * document, never a torn one. A file that cannot be parsed is reported, never overwritten: it may be
 * the only copy of someone's metadata.
 *
 * `save()` is a compare-and-set under a lock file (`<file>.lock`, holding the owner's pid), so two
 * stores over one file, in one process or in two, never both replace the same version.
 */
export function createFileMetadataStore(options: FileMetadataStoreOptions): MetadataStore {
  if (typeof options.path !== 'string' || options.path === '') {
    throw new TypeError('createFileMetadataStore: "path" must be a non-empty string');
  }
  const path = resolve(options.path);
  const directory = dirname(path);
  const serial = createSerialQueue();

  async function read(): Promise<StoredMetadata | undefined> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new MetadataStoreError(`cannot read metadata file ${path}: ${(error as Error).message}`, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new MetadataStoreError(`metadata file ${path} is corrupt: ${(error as Error).message}`, { cause: error });
    }
    const resourceVersion = isObject(parsed) ? parsed['resource_version'] : undefined;
    const metadata = isObject(parsed) ? parsed['metadata'] : undefined;
    if (typeof resourceVersion !== 'number' || !Number.isSafeInteger(resourceVersion) || resourceVersion < 0 || !isObject(metadata)) {
      throw new MetadataStoreError(
        `metadata file ${path} is corrupt: expected {"resource_version": <non-negative integer>, "metadata": {…}}`,
      );
    }
    // The service validates the document itself; the store only vouches for the envelope.
    return { resourceVersion, metadata: metadata as unknown as StoredMetadata['metadata'] };
  }

  const temporaryName = () => resolve(directory, `.${basename(path)}.${String(process.pid)}.${randomBytes(6).toString('hex')}.tmp`);

  /**
   * Checked once, at the first load: a store that cannot be written would otherwise accept the
   * server's start and fail only at the first metadata change.
   */
  let writable: Promise<void> | undefined;
  function checkWritable(): Promise<void> {
    writable ??= (async () => {
      const probe = temporaryName();
      try {
        await ensureDirectory(directory);
        const handle = await open(probe, 'wx', 0o600);
        await handle.close();
        await unlink(probe);
      } catch (error) {
        writable = undefined;
        throw new MetadataStoreError(`cannot write metadata file ${path}: ${(error as Error).message}`, { cause: error });
      }
    })();
    return writable;
  }

  async function write(document: StoredMetadata): Promise<void> {
    const temporary = temporaryName();
    const text = `${JSON.stringify({ resource_version: document.resourceVersion, metadata: document.metadata }, null, 2)}\n`;
    try {
      await ensureDirectory(directory);
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, path);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw new MetadataStoreError(`cannot write metadata file ${path}: ${(error as Error).message}`, { cause: error });
    }
    await syncDirectory(directory);
  }

  const lockPath = `${path}.lock`;

  /**
   * Takes the lock file, waiting while another writer holds it. The lock is created complete (a
   * temporary file holding `<pid> <nonce>`, hard-linked into place), so it is never seen empty.
   */
  async function lock(): Promise<() => Promise<void>> {
    const token = `${String(process.pid)} ${randomBytes(6).toString('hex')}`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      const temporary = temporaryName();
      try {
        await ensureDirectory(directory);
        await writeFile(temporary, token, { flag: 'wx', mode: 0o600 });
        await link(temporary, lockPath);
        return async () => {
          // Only our own lock: had it been taken as stale, removing it would free another writer's.
          if ((await readFile(lockPath, 'utf8').catch(() => undefined)) === token) await unlink(lockPath).catch(() => undefined);
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new MetadataStoreError(`cannot lock metadata file ${path}: ${(error as Error).message}`, { cause: error });
        }
      } finally {
        await unlink(temporary).catch(() => undefined);
      }
      const holder = await readLock();
      if (holder !== undefined && isStale(holder)) {
        // Two writers may both find the same stale lock; the owner check at release keeps the
        // later one from freeing the earlier one's new lock, and that race needs a crash first.
        await unlink(lockPath).catch(() => undefined);
        continue;
      }
      if (Date.now() >= deadline) {
        const owner = holder === undefined ? '' : ` by process ${String(holder.pid)}`;
        throw new MetadataStoreError(
          `cannot save metadata file ${path}: ${lockPath} is held${owner}; remove it if no svc-graphql process uses this file`,
        );
      }
      await sleep(5 + Math.random() * 20);
    }
  }

  async function readLock(): Promise<{ pid: number; modifiedMs: number } | undefined> {
    try {
      const [text, info] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath)]);
      return { pid: Number.parseInt(text, 10), modifiedMs: info.mtimeMs };
    } catch {
      return undefined; // released meanwhile: try again
    }
  }

  /**
   * Another process (or store) sharing the file: its saves are noticed by the directory's change
   * events where the platform has them (a save renames a new file over the document), and by a
   * look at the file's identity every `WATCH_INTERVAL_MS` in any case. Listeners load and compare
   * versions themselves; a change of our own is announced too, which costs them one load.
   */
  const watchers = new Set<() => void>();
  let poll: ReturnType<typeof setInterval> | undefined;
  let events: FSWatcher | undefined;
  let seen: string | undefined;
  const announce = () => {
    for (const listener of watchers) listener();
  };
  const identity = () =>
    stat(path).then(
      (info) => `${String(info.ino)}:${String(info.size)}:${String(info.mtimeMs)}`,
      () => 'none',
    );
  function startWatching(): void {
    if (poll !== undefined) return;
    void identity().then((first) => (seen ??= first));
    poll = setInterval(() => {
      void identity().then((now) => {
        if (seen !== undefined && now !== seen) announce();
        seen = now;
      });
    }, WATCH_INTERVAL_MS);
    // Watching serves a running server; it must not keep a process alive on its own.
    poll.unref();
    try {
      events = watch(directory, { persistent: false }, (_event, name) => {
        if (name === null || name === basename(path)) announce();
      });
      // A directory removed or unreadable later: the look every interval remains.
      events.on('error', () => {
        events?.close();
        events = undefined;
      });
    } catch {
      events = undefined;
    }
  }
  function stopWatching(): void {
    if (poll !== undefined) clearInterval(poll);
    poll = undefined;
    events?.close();
    events = undefined;
    seen = undefined;
  }

  return {
    location: path,
    load: () =>
      serial(async () => {
        const stored = await read();
        await checkWritable();
        return stored;
      }),
    save: (document, expectedResourceVersion) =>
      serial(async () => {
        const unlock = await lock();
        try {
          // Re-read rather than trust memory: another store or process may have written the file.
          const current = await read();
          const actual = current?.resourceVersion ?? 0;
          if (actual !== expectedResourceVersion) throw new StoreConflictError(expectedResourceVersion, actual);
          await write(document);
        } finally {
          await unlock();
        }
      }),
    watch(onChange) {
      watchers.add(onChange);
      startWatching();
      return () => {
        watchers.delete(onChange);
        if (watchers.size === 0) stopWatching();
      };
    },
    close: async () => {
      watchers.clear();
      stopWatching();
      await serial(async () => undefined);
    },
  };
}

/** Left behind by a process that is gone, or too old to belong to a save still running. */
function isStale(holder: { pid: number; modifiedMs: number }): boolean {
  if (Date.now() - holder.modifiedMs > STALE_LOCK_MS) return true;
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: alive, under another user.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Makes the rename durable. Some platforms cannot open a directory; the rename is still atomic there. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch {
    // Not supported here (e.g. Windows): nothing more can be done.
  } finally {
    await handle?.close();
  }
}

/**
 * `mkdir -p` that walks up to the nearest existing ancestor first. Node's own recursive mkdir can
 * spin forever on paths it can never create (e.g. under /proc), hanging every later write.
 */
async function ensureDirectory(directory: string): Promise<void> {
  const missing: string[] = [];
  for (let current = directory; ; current = dirname(current)) {
    try {
      if ((await stat(current)).isDirectory()) break;
      throw new Error(`${current} is not a directory`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
      missing.push(current);
    }
  }
  for (const level of missing.reverse()) {
    try {
      await mkdir(level);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
