import type { MetadataStore } from './store.js';
import type { RemoteSchemaRegistry } from './registry.js';

/*
 * What `createMetadataService()` needs. Kept apart from the route options (options.ts), which name
 * the service itself: service.ts and options.ts both import this module and never each other.
 */

/** The logger shape Yoga and every svc-graphql package accept. */
export interface MetadataLogger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

export interface MetadataServiceOptions {
  /** The remote schema registry the metadata drives (`createRemoteSchemaRegistry()`). */
  registry: RemoteSchemaRegistry;
  /** Where the document is kept: `createFileMetadataStore()` or `createPostgresMetadataStore()`. */
  store: MetadataStore;
  /**
   * Remote schema permissions (`--enable-remote-schema-permissions`); must agree with the
   * registry's `enableRemoteSchemaPermissions`. On: `add_remote_schema_permissions` is allowed,
   * permissions are handed to the registry, and those it refuses are inconsistent objects. Off:
   * `add_remote_schema_permissions` answers `constraint-violation`; permissions given through
   * `replace_metadata` are kept and exported, but neither validated nor handed to the registry.
   * @default false
   */
  remoteSchemaPermissions?: boolean;
  /**
   * Receives inconsistent objects at start (`warn`), refused operations (`debug`) and failures
   * (`error`).
   * @default warnings and errors to the console
   */
  logger?: MetadataLogger;
  /**
   * How long a change without `resource_version` keeps trying when other instances save first.
   * Each time, the service adopts the stored document and applies the change again on top of it,
   * so concurrent writers all succeed; past this time the request is answered 503 `unexpected`
   * and nothing is changed. (A request with `resource_version` is answered 409 `conflict` at
   * once when that version is no longer the stored one.)
   * @default 60000 (60 s)
   */
  conflictRetryTimeoutMs?: number;
}

export const DEFAULT_CONFLICT_RETRY_TIMEOUT_MS = 60_000;

export const consoleLogger: MetadataLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (...args) => {
    console.warn(...args);
  },
  error: (...args) => {
    console.error(...args);
  },
};
