export { useMetadataApi } from './plugin.js';
export { createMetadataService } from './service.js';
export type { MetadataResponse, MetadataService } from './service.js';
export { createFileMetadataStore } from './file-store.js';
export type { FileMetadataStoreOptions } from './file-store.js';
export { createPostgresMetadataStore } from './postgres-store.js';
export type { PostgresMetadataStoreOptions } from './postgres-store.js';
export type { MetadataStore, StoredMetadata } from './store.js';
export { MetadataApiError, MetadataStoreError, MetadataStoreUnreachableError, StoreConflictError } from './errors.js';
export type { MetadataErrorBody, MetadataErrorCode } from './errors.js';
export { DEFAULT_CONFLICT_RETRY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_METADATA_PATH } from './options.js';
export type {
  MetadataApiOptions,
  MetadataAuthenticationError,
  MetadataIdentity,
  MetadataLogger,
  MetadataServiceOptions,
} from './options.js';
export type {
  InconsistentObject,
  MetadataDocument,
  RemoteSchemaMetadata,
  RemoteSchemaPermissionMetadata,
} from './document.js';
export { MAX_REQUESTS_PER_MINUTE, QUERY_COLLECTION_BOUNDS } from './lockdown-document.js';
export type {
  AllowlistEntryMetadata,
  AllowlistScope,
  ApiLimitOption,
  ApiLimitsMetadata,
  CollectionQuery,
  IntrospectionOptionsMetadata,
  LockdownMetadata,
  QueryCollectionMetadata,
  RateLimitConfig,
  RateLimitOption,
} from './lockdown-document.js';
