/**
 * The parts of the metadata document that lock a production endpoint down: query collections, the
 * allow list, introspection options and API limits, in Hasura's shapes. Each part is left out of
 * the document (and of `export_metadata`) while it is not set.
 */

/** One named GraphQL document of a query collection. */
export interface CollectionQuery {
  name: string;
  /** The document as written (parsed when stored, never checked against a schema). */
  query: string;
}

/** One entry of `query_collections`. */
export interface QueryCollectionMetadata {
  name: string;
  definition: { queries: CollectionQuery[] };
  comment?: string;
}

/** Which roles an allow-listed collection is for. */
export type AllowlistScope = { global: true } | { global: false; roles: string[] };

/** One entry of `allowlist`. The default scope (`{global: true}`) is left out. */
export interface AllowlistEntryMetadata {
  collection: string;
  scope?: { global: false; roles: string[] };
}

/** `graphql_schema_introspection`. */
export interface IntrospectionOptionsMetadata {
  disabled_for_roles: string[];
}

/** A numeric limit for every role (`global`) and per role (`per_role`, which wins). */
export interface ApiLimitOption {
  global?: number;
  per_role?: Record<string, number>;
}

/** How many operations a minute, and for what: the client IP, or the values of session variables. */
export interface RateLimitConfig {
  max_reqs_per_min: number;
  /** `"IP"`, or session variable names; left out, the count is per role alone. */
  unique_params?: 'IP' | string[];
}

export interface RateLimitOption {
  global?: RateLimitConfig;
  per_role?: Record<string, RateLimitConfig>;
}

/** `api_limits`, as `set_api_limits` sets it. */
export interface ApiLimitsMetadata {
  disabled?: boolean;
  depth_limit?: ApiLimitOption;
  node_limit?: ApiLimitOption;
  time_limit?: ApiLimitOption;
  batch_limit?: ApiLimitOption;
  rate_limit?: RateLimitOption;
}

/** The lock-down parts of a document; each present only when set. */
export interface LockdownMetadata {
  query_collections?: QueryCollectionMetadata[];
  allowlist?: AllowlistEntryMetadata[];
  api_limits?: ApiLimitsMetadata;
  graphql_schema_introspection?: IntrospectionOptionsMetadata;
}

/** Lock-down parts being changed: a part set to `undefined` is left out. */
export type LockdownParts = { [K in keyof LockdownMetadata]?: LockdownMetadata[K] | undefined };

/** Their keys, in the order a document shows them (Hasura's order). */
export const LOCKDOWN_KEYS = ['query_collections', 'allowlist', 'api_limits', 'graphql_schema_introspection'] as const;

/**
 * Bounds on what query collections may hold, so that the document (loaded whole by every instance)
 * and the allow list built from it stay small enough to load in a moment. Real collections are far
 * below them.
 */
export const QUERY_COLLECTION_BOUNDS = {
  /** Characters of one query's text. */
  maxQueryLength: 131_072,
  /** Queries in one collection. */
  maxQueriesPerCollection: 10_000,
  /** Collections in the document. */
  maxCollections: 10_000,
  /** Queries of all collections together. */
  maxTotalQueries: 100_000,
  /** Characters of the text of all queries together (64 MiB). */
  maxTotalQueryLength: 67_108_864,
} as const;

/** The largest `max_reqs_per_min`: each request of the last minute is remembered, so this bounds memory per client. */
export const MAX_REQUESTS_PER_MINUTE = 1_000_000;

/** The largest depth, node and batch limit (anything above is no limit in practice). */
export const MAX_COUNT_LIMIT = 1_000_000_000;

/** The largest `time_limit` in seconds: the longest delay a timer honours. */
export const MAX_TIME_LIMIT_SECONDS = 2_147_483;

/** The role that is never limited. */
export const ADMIN_ROLE = 'admin';

/**
 * Rebuilds `document` with its lock-down parts replaced by `parts` (each left out when undefined),
 * keys in the order export shows them: whatever comes before them first, then these.
 */
export function withLockdownParts<T extends object>(document: T, parts: LockdownParts): T {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) {
    if (!(LOCKDOWN_KEYS as readonly string[]).includes(key)) result[key] = value;
  }
  for (const key of LOCKDOWN_KEYS) {
    if (parts[key] !== undefined) result[key] = parts[key];
  }
  return result as T;
}

/** The lock-down parts of a document. */
export function lockdownParts(document: LockdownMetadata): LockdownMetadata {
  const parts: LockdownMetadata = {};
  for (const key of LOCKDOWN_KEYS) {
    if (document[key] !== undefined) (parts as Record<string, unknown>)[key] = document[key];
  }
  return parts;
}
