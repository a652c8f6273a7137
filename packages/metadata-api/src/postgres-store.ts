import pg from 'pg';
import { isConnectionFailure, MetadataStoreError, MetadataStoreUnreachableError, StoreConflictError } from './errors.js';
import type { MetadataStore, StoredMetadata } from './store.js';

export interface PostgresMetadataStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  connectionString: string;
  /**
   * The schema holding the `metadata` table; created when missing.
   * @default 'svc_graphql'
   */
  schema?: string;
  /**
   * How often a store that is watched asks the database for the stored version, besides `LISTEN`:
   * a notification sent while this instance was cut off is never delivered, and a connection that
   * died silently delivers none. A new version is reported to the watchers; a query that gets
   * through marks the store reachable again.
   * @default 5000
   */
  versionCheckIntervalMs?: number;
  /**
   * Where the store reports that it lost (or cannot open) its `LISTEN` connection, once per outage.
   * @default `process.emitWarning`
   */
  onWarning?: (message: string) => void;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const RELISTEN_DELAY_MS = 1000;
const DEFAULT_VERSION_CHECK_INTERVAL_MS = 5000;

/** Settings of every connection, pooled or listening. */
const CONNECTION_SETTINGS = {
  // A database that does not answer must not hang start-up, nor a request.
  connectionTimeoutMillis: 10_000,
  // Probe a connection after 10 s of silence: a peer that vanished (host down, a NAT or firewall
  // that forgot the connection) is then noticed by the OS instead of being waited on for hours.
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
  // Enforced by the server: a save stuck behind a lock or a slow statement gives up.
  statement_timeout: 10_000,
  lock_timeout: 10_000,
  // A transaction whose client vanished gives its row lock back instead of blocking every other
  // instance's save until the server notices the dead connection.
  idle_in_transaction_session_timeout: 10_000,
  // Enforced here: no answer 5 s after the server would have cancelled the statement itself means
  // the network is gone. The pool discards a connection released with that error.
  query_timeout: 15_000,
} satisfies pg.ClientConfig;

/**
 * The shared store: one row of `<schema>.metadata` (`resource_version`, the document as `json` so
 * key order survives). `save()` is a compare-and-set inside a transaction that locks the row, and
 * announces the change with `NOTIFY`, so every instance sharing the database hears it through
 * `watch()` and reloads. A watched store also checks the version every `versionCheckIntervalMs`,
 * and opens its `LISTEN` connection again when it drops: an instance cut off from the database
 * catches up by itself once it is back.
 *
 * Failures to connect, lost connections and unanswered queries are thrown as
 * `MetadataStoreUnreachableError` and make `isReachable()` false until the database answers again.
 */
export function createPostgresMetadataStore(options: PostgresMetadataStoreOptions): MetadataStore {
  if (typeof options.connectionString !== 'string' || options.connectionString === '') {
    throw new TypeError('createPostgresMetadataStore: "connectionString" must be a non-empty string');
  }
  const schema = options.schema ?? 'svc_graphql';
  if (!SCHEMA_NAME.test(schema)) {
    throw new TypeError(`createPostgresMetadataStore: "schema" must be a plain SQL identifier, but got ${JSON.stringify(schema)}`);
  }
  const versionCheckIntervalMs = options.versionCheckIntervalMs ?? DEFAULT_VERSION_CHECK_INTERVAL_MS;
  if (!Number.isSafeInteger(versionCheckIntervalMs) || versionCheckIntervalMs <= 0) {
    throw new TypeError(
      `createPostgresMetadataStore: "versionCheckIntervalMs" must be a positive integer, but got ${String(versionCheckIntervalMs)}`,
    );
  }
  const table = `"${schema}"."metadata"`;
  const channel = `${schema}_metadata_changed`;
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 4, ...CONNECTION_SETTINGS });
  // An idle client that loses its connection must not crash the process; the next query reports it.
  pool.on('error', () => undefined);

  /** The last attempt to reach the database failed for want of a connection. */
  let cutOff = false;
  /** Watched, and the `LISTEN` connection is down (it is being opened again). */
  let listenerDown = false;
  /** The version last loaded or saved here: the version check reports anything else. */
  let knownVersion: number | undefined;

  /** Any answer from the database, an error included, shows that it can be reached. */
  function answered(): void {
    cutOff = false;
  }

  function failure(what: string, error: unknown): MetadataStoreError {
    const reason = error instanceof Error ? error.message : String(error);
    if (isConnectionFailure(error)) {
      cutOff = true;
      return new MetadataStoreUnreachableError(`${what}: ${reason}`, { cause: error });
    }
    answered();
    return new MetadataStoreError(`${what}: ${reason}`, { cause: error });
  }

  let ready: Promise<void> | undefined;
  function ensureTable(): Promise<void> {
    ready ??= (async () => {
      const client = await pool.connect();
      let broken: unknown;
      try {
        // Serialize the DDL of instances starting at once: CREATE ... IF NOT EXISTS can still race.
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${table} (
             id integer PRIMARY KEY CHECK (id = 1),
             resource_version bigint NOT NULL,
             metadata json
           )`,
        );
        await client.query(`INSERT INTO ${table} (id, resource_version, metadata) VALUES (1, 0, NULL) ON CONFLICT (id) DO NOTHING`);
        await client.query('COMMIT');
        answered();
      } catch (error) {
        if (isConnectionFailure(error)) broken = error;
        else await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        releaseClient(client, broken);
      }
    })().catch((error: unknown) => {
      ready = undefined;
      throw failure('cannot prepare the metadata table', error);
    });
    return ready;
  }

  const listeners = new Set<() => void>();
  let listener: pg.Client | undefined;
  let listening: Promise<void> | undefined;
  let relisten: ReturnType<typeof setTimeout> | undefined;
  let versionCheck: ReturnType<typeof setInterval> | undefined;
  let checking: Promise<void> | undefined;
  let closed = false;
  const warn = options.onWarning ?? ((message: string) => process.emitWarning(message));

  function notifyAll(): void {
    for (const onChange of listeners) onChange();
  }

  /** Reports the first failure of a run; a database that stays down is retried quietly. */
  function listenerFailed(error: unknown): void {
    if (!listenerDown) warn(failure('cannot listen for metadata changes', error).message);
    listenerDown = true;
  }

  /** A dropped LISTEN connection (database restart, network) is opened again after a pause. */
  function scheduleRelisten(): void {
    if (closed || listeners.size === 0 || relisten !== undefined) return;
    relisten = setTimeout(() => {
      relisten = undefined;
      listen();
    }, RELISTEN_DELAY_MS);
    relisten.unref();
  }

  function listen(): void {
    listening ??= (async () => {
      const client = new pg.Client({ connectionString: options.connectionString, ...CONNECTION_SETTINGS });
      let lost: unknown = new Error('Connection terminated unexpectedly');
      client.on('error', (error) => {
        lost = error;
      });
      client.on('notification', (message) => {
        if (message.channel === channel) notifyAll();
      });
      client.on('end', () => {
        if (listener !== client) return;
        listener = undefined;
        listening = undefined;
        if (!closed) listenerFailed(lost);
        scheduleRelisten();
      });
      try {
        await client.connect();
        await client.query(`LISTEN "${channel}"`);
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      if (closed) {
        await client.end().catch(() => undefined);
        return;
      }
      listener = client;
      listenerDown = false;
      answered();
      // Changes saved while no connection was listening were not announced to us: after a
      // reconnect, and also the first time, since the caller loaded before LISTEN took effect.
      notifyAll();
    })().catch((error: unknown) => {
      listening = undefined;
      // Without LISTEN this instance sees other instances' changes only through the version
      // check, at reload_metadata or on its next save, so keep trying.
      listenerFailed(error);
      scheduleRelisten();
    });
  }

  /** One version check at a time: a check that hangs on a dead network must not pile up more. */
  function checkVersion(): void {
    if (closed || checking !== undefined) return;
    checking = (async () => {
      try {
        await ensureTable();
        const result = await pool.query<{ resource_version: string }>(`SELECT resource_version FROM ${table} WHERE id = 1`);
        answered();
        const version = Number(result.rows[0]?.resource_version ?? 0);
        if (version !== knownVersion) notifyAll();
      } catch (error) {
        // Recorded for isReachable(); the next check tries again.
        failure('cannot check the metadata version', error);
      }
    })().finally(() => {
      checking = undefined;
    });
  }

  return {
    location: `${describeDatabase(options.connectionString)} (table ${schema}.metadata)`,
    async load() {
      await ensureTable();
      try {
        const result = await pool.query<{ resource_version: string; metadata: unknown }>(
          `SELECT resource_version, metadata FROM ${table} WHERE id = 1`,
        );
        answered();
        const row = result.rows[0];
        knownVersion = Number(row?.resource_version ?? 0);
        if (row === undefined || row.metadata === null || typeof row.metadata !== 'object') return undefined;
        return { resourceVersion: knownVersion, metadata: row.metadata as StoredMetadata['metadata'] };
      } catch (error) {
        throw failure('cannot load metadata', error);
      }
    },

    async save(document, expectedResourceVersion) {
      await ensureTable();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw failure('cannot save metadata', error);
      }
      let broken: unknown;
      try {
        await client.query('BEGIN');
        const current = await client.query<{ resource_version: string }>(
          `SELECT resource_version FROM ${table} WHERE id = 1 FOR UPDATE`,
        );
        const actual = Number(current.rows[0]?.resource_version ?? 0);
        if (actual !== expectedResourceVersion) throw new StoreConflictError(expectedResourceVersion, actual);
        await client.query(`UPDATE ${table} SET resource_version = $1, metadata = $2::json WHERE id = 1`, [
          document.resourceVersion,
          JSON.stringify(document.metadata),
        ]);
        // Delivered at commit, and only if the transaction commits.
        await client.query('SELECT pg_notify($1, $2)', [channel, String(document.resourceVersion)]);
        // A connection lost during COMMIT leaves its outcome unknown: the version check or the
        // next save finds out, since the stored version then tells.
        await client.query('COMMIT');
        answered();
        knownVersion = document.resourceVersion;
      } catch (error) {
        if (isConnectionFailure(error)) {
          broken = error;
        } else {
          await client.query('ROLLBACK').catch(() => undefined);
        }
        if (error instanceof StoreConflictError) {
          answered();
          knownVersion = error.actualResourceVersion;
          throw error;
        }
        throw failure('cannot save metadata', error);
      } finally {
        releaseClient(client, broken);
      }
    },

    watch(onChange) {
      listeners.add(onChange);
      listen();
      if (versionCheck === undefined) {
        versionCheck = setInterval(checkVersion, versionCheckIntervalMs);
        // The check serves open connections; it must not keep a process alive on its own.
        versionCheck.unref();
      }
      return () => {
        listeners.delete(onChange);
        if (listeners.size === 0 && versionCheck !== undefined) {
          clearInterval(versionCheck);
          versionCheck = undefined;
        }
      };
    },

    isReachable: () => !cutOff && !(listeners.size > 0 && listenerDown),

    async close() {
      closed = true;
      listeners.clear();
      if (relisten !== undefined) clearTimeout(relisten);
      if (versionCheck !== undefined) clearInterval(versionCheck);
      await checking;
      await listening;
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
      await pool.end();
    },
  };
}

function describeDatabase(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    url.password = '';
    return url.toString();
  } catch {
    return 'the PostgreSQL database';
  }
}

/** A connection that failed goes away rather than back to the pool, where the next save would meet it. */
function releaseClient(client: pg.PoolClient, broken: unknown): void {
  client.release(broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
}
