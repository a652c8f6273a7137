import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileMetadataStore, createPostgresMetadataStore, type MetadataStore } from '@svc-graphql/metadata-api';
import { InvalidValueError } from './errors.js';

export const DEFAULT_DATABASE_URL = 'file:./.svc-graphql/metadata.json';

/** Where `--database-url` points. */
export type StoreLocation = { kind: 'file'; path: string } | { kind: 'postgres'; connectionString: string };

/**
 * Reads a database URL: `file:PATH` (also `file:///abs`), `postgres://…` or `postgresql://…`.
 * Throws an {@link InvalidValueError} whose message says what is wrong (the password hidden).
 */
export function parseDatabaseUrl(url: string): StoreLocation {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { kind: 'postgres', connectionString: url };
  if (url.startsWith('file:')) {
    const path = url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length);
    if (path !== '') return { kind: 'file', path: resolvePath(path) };
  }
  throw new InvalidValueError(`expected file:PATH, postgres://… or postgresql://…, but got "${redactUrl(url)}"`);
}

/** Hides a password in a connection string, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@');
}

/** The metadata store a (checked) database URL names. Opening it connects nothing yet. */
export function openStore(databaseUrl: string, onWarning: (message: string) => void): MetadataStore {
  const location = parseDatabaseUrl(databaseUrl);
  return location.kind === 'postgres'
    ? createPostgresMetadataStore({ connectionString: location.connectionString, onWarning })
    : createFileMetadataStore({ path: location.path });
}
