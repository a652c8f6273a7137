import type { MetadataDocument } from './document.js';

/** A metadata document together with the version every change increments. */
export interface StoredMetadata {
  resourceVersion: number;
  metadata: MetadataDocument;
}

/**
 * Where the metadata document lives. Implementations: {@link createFileMetadataStore} (the
 * embedded default) and {@link createPostgresMetadataStore} (shared by many instances).
 */
export interface MetadataStore {
  /** Where the document lives, for messages (a file path, a database without its password). */
  readonly location?: string;
  /** The stored document, or `undefined` when nothing was ever saved. Throws `MetadataStoreError` when unreadable. */
  load(): Promise<StoredMetadata | undefined>;
  /**
   * Replaces the stored document, only if the stored version is still `expectedResourceVersion`
   * (`0` when nothing is stored); otherwise throws `StoreConflictError` and changes nothing.
   * Either the whole new document is stored or the old one stays.
   */
  save(document: StoredMetadata, expectedResourceVersion: number): Promise<void>;
  /**
   * Calls `onChange` when another writer may have changed the document (the caller loads and
   * compares versions); returns an unsubscribe function.
   */
  watch?(onChange: () => void): () => void;
  /**
   * `false` while the store knows it cannot reach its backend: the last attempt failed to connect
   * or lost its connection, or the connection `watch()` listens on is down. `true` again once it
   * got through. Stores without a remote backend leave it out (always reachable).
   */
  isReachable?(): boolean;
  close(): Promise<void>;
}

/** Runs tasks one after another; a failed task does not stop the ones queued after it. */
export function createSerialQueue(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}
