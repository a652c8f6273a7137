import { emptyDocument, registryEntries, type InconsistentObject, type MetadataDocument } from './document.js';
import { MetadataApiError, MetadataStoreError, MetadataStoreUnreachableError, StoreConflictError, storeFailure } from './errors.js';
import { toInconsistentObjects } from './inconsistency.js';
import { OPERATIONS, type Draft, type OperationContext } from './operations.js';
import { consoleLogger, DEFAULT_CONFLICT_RETRY_TIMEOUT_MS, type MetadataServiceOptions } from './service-options.js';
import { parseMetadataRequest, type OperationType } from './request.js';
import { createSerialQueue } from './store.js';
import { tracedMetadataRequest } from './tracing.js';
import { validateDocument } from './validation.js';

/** A metadata API answer: the HTTP status and the JSON body. */
export interface MetadataResponse {
  status: number;
  body: unknown;
}

/** The metadata document, its validation and persistence, driving the remote schema registry. */
export interface MetadataService {
  /**
   * Loads the stored document, plans and commits it. A remote that cannot be reached becomes an
   * inconsistent object (logged), not an error. Throws when the store cannot be read or holds an
   * invalid document: starting with an empty document would lose it at the next save.
   */
  init(): Promise<void>;
  /** Answers one parsed `/v1/metadata` request body. Never throws. */
  handle(body: unknown): Promise<MetadataResponse>;
  /** The metadata objects that are not part of the live schema now. */
  inconsistentObjects(): InconsistentObject[];
  isConsistent(): boolean;
  /** The version of the live document (`0` before anything was saved). */
  resourceVersion(): number;
  /**
   * `false` while the store is known to be unreachable (e.g. PostgreSQL is down or cut off):
   * metadata changes then answer 503 `the metadata store is unreachable`, while the live schema
   * and the read-only operations keep working from memory. `true` again once the store answers.
   * Always `true` for a store that has no such notion (the file store).
   */
  isStoreReachable(): boolean;
  /** The live document; read it, never change it (what a server's allow list and limits are built from). */
  document(): Readonly<MetadataDocument>;
  /**
   * Calls `listener` with the live document after every change of it: the first load, a change
   * made here, one adopted from another instance. Returns a function that stops the calls. A
   * listener that throws is logged and does not stop the others.
   */
  onDocumentChange(listener: (document: Readonly<MetadataDocument>) => void): () => void;
  /** Stops watching the store, cancels a pending reload, waits for the running operation and closes the store. */
  close(): Promise<void>;
}

/** Answered from the live state, without waiting for a change or a reload in progress. */
const READ_ONLY: ReadonlySet<OperationType> = new Set(['export_metadata', 'get_inconsistent_metadata']);

/** The shortest time between the end of one reload caused by store announcements and the start of the next. */
const RELOAD_COOLDOWN_MS = 250;

/** The longest pause between two attempts of a request that keeps losing the race to other instances. */
const MAX_CONFLICT_BACKOFF_MS = 100;

/**
 * Creates the metadata service. Operations run one at a time: each computes the next document,
 * plans it, saves it, and only then commits the plan and swaps the in-memory state, so a refused
 * or failed operation changes nothing, in memory or in the store. Reads of the live state
 * (`export_metadata`, `get_inconsistent_metadata`) do not wait for them: the state they read is
 * swapped in one step, and they must keep answering while a save waits on a database that is gone.
 */
export function createMetadataService(options: MetadataServiceOptions): MetadataService {
  const { registry, store } = options;
  if (registry === undefined || typeof registry.plan !== 'function') {
    throw new TypeError('createMetadataService: "registry" must be a remote schema registry');
  }
  if (store === undefined || typeof store.load !== 'function' || typeof store.save !== 'function') {
    throw new TypeError('createMetadataService: "store" must be a metadata store');
  }
  const logger = options.logger ?? consoleLogger;
  const remoteSchemaPermissions = options.remoteSchemaPermissions ?? false;
  if (typeof remoteSchemaPermissions !== 'boolean') {
    throw new TypeError(`createMetadataService: "remoteSchemaPermissions" must be a boolean, but got ${typeof remoteSchemaPermissions}`);
  }
  // Permissions accepted here but not enforced by the registry (or the other way) would be saved
  // and never applied: every role would see every remote.
  const enforced = registry.permissions != null;
  if (remoteSchemaPermissions !== enforced) {
    throw new TypeError(
      `createMetadataService: "remoteSchemaPermissions" is ${String(remoteSchemaPermissions)} but the registry's enableRemoteSchemaPermissions is ${String(enforced)}: they must agree`,
    );
  }
  const conflictRetryTimeoutMs = options.conflictRetryTimeoutMs ?? DEFAULT_CONFLICT_RETRY_TIMEOUT_MS;
  if (!Number.isSafeInteger(conflictRetryTimeoutMs) || conflictRetryTimeoutMs <= 0) {
    throw new TypeError(
      `createMetadataService: "conflictRetryTimeoutMs" must be a positive integer, but got ${String(conflictRetryTimeoutMs)}`,
    );
  }
  const serial = createSerialQueue();

  let document: MetadataDocument = emptyDocument();
  let version = 0;
  let initialized = false;
  let closed = false;
  let unwatch: (() => void) | undefined;
  /** A reload is due and has not started yet: it will see whatever is announced meanwhile. */
  let reloadDue = false;
  let reloading = false;
  let lastReloadEnded = Number.NEGATIVE_INFINITY;
  let reloadTimer: ReturnType<typeof setTimeout> | undefined;
  const listeners = new Set<(document: Readonly<MetadataDocument>) => void>();

  function announce(): void {
    for (const listener of listeners) {
      try {
        listener(document);
      } catch (error) {
        logger.error('a metadata change listener failed:', error);
      }
    }
  }

  /** The metadata objects of the live document that are not part of the live schema. */
  function liveInconsistencies(): InconsistentObject[] {
    return toInconsistentObjects(registry.problems(), document, remoteSchemaPermissions);
  }

  function logInconsistencies(): void {
    for (const object of liveInconsistencies()) {
      logger.warn(`inconsistent metadata: ${object.name}: ${object.reason}`);
    }
  }

  async function loadStored(): Promise<{ resourceVersion: number; metadata: MetadataDocument } | undefined> {
    const stored = await store.load();
    if (stored === undefined) return undefined;
    try {
      return { resourceVersion: stored.resourceVersion, metadata: validateDocument(stored.metadata, '$.metadata') };
    } catch (error) {
      if (error instanceof MetadataApiError) {
        const where = store.location === undefined ? 'stored metadata' : `metadata in ${store.location}`;
        throw new MetadataStoreError(`${where} is invalid at ${error.path}: ${error.message}`, { cause: error });
      }
      throw error;
    }
  }

  /** Adopts what another instance saved. */
  async function refresh(): Promise<void> {
    const stored = await loadStored();
    if (stored === undefined || stored.resourceVersion === version) return;
    const next = await registry.plan(registryEntries(stored.metadata, remoteSchemaPermissions));
    registry.commit(next);
    document = stored.metadata;
    version = stored.resourceVersion;
    announce();
    logger.info(`metadata reloaded from the store at resource version ${String(version)}`);
    logInconsistencies();
  }

  /**
   * Before a change is judged, adopts what other instances saved since this one last looked, so
   * that its checks (a name taken or missing, its `resource_version`) are those of the stored
   * document, not of a copy that may be behind (a store's announcements take a moment). Runs in the
   * change's turn in the queue. When the store is unreachable, the change is judged by the
   * document in memory: one that changes nothing is still answered, one that changes something
   * fails without waiting for a save that the store just failed to answer (the error returned). A
   * stored document that cannot be read for another reason (corrupt, invalid) refuses the change,
   * so that it is never saved over. Reads are answered from memory, which the store's
   * announcements keep current.
   */
  async function catchUp(): Promise<MetadataStoreUnreachableError | undefined> {
    if (store.isReachable?.() === false) return undefined;
    try {
      await refresh();
      return undefined;
    } catch (error) {
      if (!(error instanceof MetadataStoreUnreachableError)) throw error;
      logger.debug(`metadata request judged by the document in memory: ${error.message}`);
      return error;
    }
  }

  /**
   * Reloads after the store announced a change. A burst of announcements (many saves elsewhere, a
   * reconnect, the version check) costs the reload running now and at most one more: announcements
   * that arrive before a reload starts are all covered by it, and a reload starts at the earliest
   * RELOAD_COOLDOWN_MS after the previous one ended.
   */
  function requestReload(): void {
    if (closed || reloadDue) return;
    reloadDue = true;
    // A running reload starts the next one when it ends.
    if (!reloading) scheduleReload(lastReloadEnded + RELOAD_COOLDOWN_MS - Date.now());
  }

  function scheduleReload(delay: number): void {
    reloadTimer = setTimeout(() => {
      reloadTimer = undefined;
      void serial(async () => {
        reloadDue = false;
        reloading = true;
        try {
          if (!closed) await refresh();
        } finally {
          reloading = false;
          lastReloadEnded = Date.now();
          if (reloadDue && !closed) scheduleReload(RELOAD_COOLDOWN_MS);
        }
      }).catch((error: unknown) => {
        if (error instanceof MetadataStoreUnreachableError) {
          logger.warn(`cannot reload metadata changed by another instance: ${error.message}`);
        } else {
          logger.error('cannot reload metadata changed by another instance:', error);
        }
      });
    }, Math.max(0, delay));
    // Only ever waits for store announcements, which need open connections anyway.
    reloadTimer.unref();
  }

  function newDraft(): Draft {
    return { document, baseVersion: version, changed: false, plan: undefined, reload: new Set(), adopted: undefined };
  }

  async function execute(body: unknown, draft: Draft, depth = 0): Promise<unknown> {
    const request = parseMetadataRequest(body);
    if (request.resourceVersion !== undefined && request.resourceVersion !== draft.baseVersion) {
      throw new MetadataApiError(
        'conflict',
        `metadata resource version referenced (${String(request.resourceVersion)}) did not match current version (${String(draft.baseVersion)})`,
        '$',
      );
    }
    const context: OperationContext = {
      registry,
      remoteSchemaPermissions,
      draft,
      loadStored,
      depth,
      execute: (nested) => execute(nested, draft, depth + 1),
    };
    return OPERATIONS[request.type](request.args, context, request);
  }

  /** `unreachable`: the store did not answer the read just before; a change is not tried on it again. */
  async function apply(body: unknown, unreachable?: MetadataStoreUnreachableError): Promise<unknown> {
    const deadline = Date.now() + conflictRetryTimeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      const draft = newDraft();
      const result = await execute(body, draft);
      if (draft.changed) {
        if (unreachable) throw unreachable;
        const next = { resourceVersion: draft.baseVersion + 1, metadata: draft.document };
        try {
          await store.save(next, draft.baseVersion);
        } catch (error) {
          if (!(error instanceof StoreConflictError)) throw error;
          if (Date.now() >= deadline) {
            throw new MetadataApiError(
              'unexpected',
              `other instances kept changing the stored metadata for ${formatDuration(conflictRetryTimeoutMs)} ` +
                'while this request was applied; nothing was changed, try again',
              '$',
              { status: 503, cause: error },
            );
          }
          // Another instance saved first: adopt its document and run the request again on top of
          // it, as often as it takes, so that concurrent writers on many instances all succeed. A
          // request that named a resource_version gets its 409 from execute() instead.
          if (attempt > 0) await sleep(Math.random() * Math.min(MAX_CONFLICT_BACKOFF_MS, 2 ** attempt));
          await refresh();
          continue;
        }
        if (draft.plan !== undefined) registry.commit(draft.plan);
        document = next.metadata;
        version = next.resourceVersion;
        announce();
        logger.info(`metadata changed by ${describeRequest(body)}: resource version ${String(version)}`);
      } else {
        if (draft.plan !== undefined) registry.commit(draft.plan);
        if (draft.adopted !== undefined) {
          document = draft.adopted.metadata;
          version = draft.adopted.resourceVersion;
          announce();
        }
      }
      return result;
    }
  }

  /** Runs one request and turns every outcome into an answer. */
  async function answer(run: () => Promise<unknown>): Promise<MetadataResponse> {
    try {
      if (closed) throw new MetadataApiError('unexpected', 'the metadata service is closed', '$', { status: 503 });
      if (!initialized) throw new MetadataApiError('unexpected', 'the metadata service is not initialized', '$', { status: 503 });
      return { status: 200, body: await run() };
    } catch (caught) {
      let error = caught;
      if (error instanceof MetadataStoreError) {
        // Unreachable is a state of the world the client is told about (503), not a bug.
        if (error instanceof MetadataStoreUnreachableError) logger.warn(`metadata request refused: ${error.message}`);
        else logger.error('metadata request failed:', error);
        const answered = storeFailure(error);
        return { status: answered.status, body: answered.toBody() };
      }
      if (error instanceof MetadataApiError) {
        logger.debug(`metadata request refused: ${error.code} at ${error.path}: ${error.message}`);
        return { status: error.status, body: error.toBody() };
      }
      logger.error('metadata request failed:', error);
      return { status: 500, body: { error: 'internal error', path: '$', code: 'unexpected' } };
    }
  }

  return {
    init: () =>
      serial(async () => {
        if (initialized) return;
        const stored = await loadStored();
        if (stored !== undefined) {
          document = stored.metadata;
          version = stored.resourceVersion;
        }
        registry.commit(await registry.plan(registryEntries(document, remoteSchemaPermissions)));
        initialized = true;
        announce();
        const inconsistent = liveInconsistencies().length;
        logger.info(
          `metadata loaded${store.location === undefined ? '' : ` from ${store.location}`}: ` +
            `${String(document.remote_schemas.length)} remote schema(s), resource version ${String(version)}` +
            (inconsistent > 0 ? `, ${String(inconsistent)} inconsistent object(s)` : ''),
        );
        logInconsistencies();
        if (!remoteSchemaPermissions && document.remote_schemas.some((entry) => entry.permissions !== undefined)) {
          // Likely an imported document run without the flag: say so rather than serve it silently.
          logger.warn(
            'the metadata has remote schema permissions, but remote schema permissions are disabled: ' +
              'they are kept, not enforced, and every role sees whole remote schemas',
          );
        }
        unwatch = store.watch?.(requestReload);
      }),

    handle: (body) =>
      tracedMetadataRequest(body, () =>
        isReadOnly(body)
          ? answer(() => execute(body, newDraft()))
          : serial(() =>
              answer(async () => apply(body, await catchUp())),
            ),
      ),

    inconsistentObjects: liveInconsistencies,
    isConsistent: () => liveInconsistencies().length === 0,
    resourceVersion: () => version,
    isStoreReachable: () => store.isReachable?.() ?? true,
    document: () => document,
    onDocumentChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    close: async () => {
      if (closed) return;
      closed = true;
      unwatch?.();
      if (reloadTimer !== undefined) clearTimeout(reloadTimer);
      await serial(async () => undefined);
      await store.close();
    },
  };
}

/** A request that only reads, not inside `bulk`; anything unparsable takes the usual way to its 400. */
function isReadOnly(body: unknown): boolean {
  const { type } = (typeof body === 'object' && body !== null ? body : {}) as { type?: unknown };
  return typeof type === 'string' && READ_ONLY.has(type as OperationType);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `60 s`, `250 ms`. */
function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${String(ms / 1000)} s` : `${String(ms)} ms`;
}

/** `add_remote_schema "name"`, for logs; the body was validated before this is called. */
function describeRequest(body: unknown): string {
  const { type, args } = body as { type?: unknown; args?: { name?: unknown } };
  const name = args !== null && typeof args === 'object' && typeof args.name === 'string' ? ` "${args.name}"` : '';
  return `${String(type)}${name}`;
}
