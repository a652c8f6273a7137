import pg from 'pg';
import { MetadataStoreError, StoreConflictError } from './errors.js';
import type { MetadataStore, StoredMetadata } from './store.js';

export interface PostgresMetadataStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  connectionString: string;
  /**
   * The schema holding the `metadata` table; created when missing.
   * @default 'svc_graphql'
   */
  schema?: string;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const RELISTEN_DELAY_MS = 1000;

/**
 * The shared store: one row of `<schema>.metadata` (`resource_version`, the document as `json` so
 * key order survives). `save()` is a compare-and-set inside a transaction that locks the row, and
 * announces the change with `NOTIFY`, so every instance sharing the database hears it through
 * `watch()` and reloads.
 */
export function createPostgresMetadataStore(options: PostgresMetadataStoreOptions): MetadataStore {
  if (typeof options.connectionString !== 'string' || options.connectionString === '') {
    throw new TypeError('createPostgresMetadataStore: "connectionString" must be a non-empty string');
  }
  const schema = options.schema ?? 'svc_graphql';
  if (!SCHEMA_NAME.test(schema)) {
    throw new TypeError(`createPostgresMetadataStore: "schema" must be a plain SQL identifier, but got ${JSON.stringify(schema)}`);
  }
  const table = `"${schema}"."metadata"`;
  const channel = `${schema}_metadata_changed`;
  // A database that does not answer must not hang start-up: give up on a connection after 10 s.
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 4, connectionTimeoutMillis: 10_000 });
  // An idle client that loses its connection must not crash the process; the next query reports it.
  pool.on('error', () => undefined);

  let ready: Promise<void> | undefined;
  function ensureTable(): Promise<void> {
    ready ??= (async () => {
      const client = await pool.connect();
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
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      ready = undefined;
      throw wrap('cannot prepare the metadata table', error);
    });
    return ready;
  }

  const listeners = new Set<() => void>();
  let listener: pg.Client | undefined;
  let listening: Promise<void> | undefined;
  let relisten: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  function notifyAll(): void {
    for (const onChange of listeners) onChange();
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
      const client = new pg.Client({ connectionString: options.connectionString, connectionTimeoutMillis: 10_000 });
      client.on('error', () => undefined);
      client.on('notification', (message) => {
        if (message.channel === channel) notifyAll();
      });
      client.on('end', () => {
        if (listener !== client) return;
        listener = undefined;
        listening = undefined;
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
      // Changes saved while no connection was listening were not announced to us: after a
      // reconnect, and also the first time, since the caller loaded before LISTEN took effect.
      notifyAll();
    })().catch((error: unknown) => {
      listening = undefined;
      // Without LISTEN this instance only sees other instances' changes at reload_metadata or on
      // its next save, so keep trying.
      process.emitWarning(wrap('cannot listen for metadata changes', error));
      scheduleRelisten();
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
        const row = result.rows[0];
        if (row === undefined || row.metadata === null || typeof row.metadata !== 'object') return undefined;
        return { resourceVersion: Number(row.resource_version), metadata: row.metadata as StoredMetadata['metadata'] };
      } catch (error) {
        throw wrap('cannot load metadata', error);
      }
    },

    async save(document, expectedResourceVersion) {
      await ensureTable();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw wrap('cannot save metadata', error);
      }
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
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (error instanceof StoreConflictError) throw error;
        throw wrap('cannot save metadata', error);
      } finally {
        client.release();
      }
    },

    watch(onChange) {
      listeners.add(onChange);
      listen();
      return () => {
        listeners.delete(onChange);
      };
    },

    async close() {
      closed = true;
      listeners.clear();
      if (relisten !== undefined) clearTimeout(relisten);
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

function wrap(what: string, error: unknown): MetadataStoreError {
  return new MetadataStoreError(`${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
