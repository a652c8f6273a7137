/**
 * Validation of query collections, the allow list, introspection options and API limits, in the
 * style of validation.ts: every refusal names the JSON path of the offending value, unknown keys
 * are refused, and `null` counts as "not given" for optional fields.
 */
import { GraphQLError, Kind, parse } from 'graphql';
import { MetadataApiError, type MetadataErrorCode } from './errors.js';
import {
  ADMIN_ROLE,
  MAX_COUNT_LIMIT,
  MAX_REQUESTS_PER_MINUTE,
  MAX_TIME_LIMIT_SECONDS,
  QUERY_COLLECTION_BOUNDS,
  type AllowlistEntryMetadata,
  type ApiLimitOption,
  type ApiLimitsMetadata,
  type CollectionQuery,
  type IntrospectionOptionsMetadata,
  type LockdownMetadata,
  type QueryCollectionMetadata,
  type RateLimitConfig,
  type RateLimitOption,
} from './lockdown-document.js';
import { childPath, expectBoolean, expectObject, optional, rejectUnknownKeys, required, validateComment, validateName } from './validation.js';

function invalid(path: string, message: string, code: MetadataErrorCode = 'invalid-params'): MetadataApiError {
  return new MetadataApiError(code, message, path);
}

function expectArray(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(path, 'expected an array');
  return value;
}

/** `query collection with name "<n>" …`, Hasura's wording. */
export function collectionMessage(name: string, what: string): string {
  return `query collection with name "${name}" ${what}`;
}

/** `query with name "<q>" … collection "<c>"`, Hasura's wording. */
export function collectionQueryMessage(query: string, what: string, collection: string): string {
  return `query with name "${query}" ${what} collection "${collection}"`;
}

/**
 * A collection query's text: a GraphQL document of operations and fragments, at most
 * `maxQueryLength` characters. It is parsed (refused with `parse-failed`, naming the query), never
 * checked against a schema: collections may name fields of remotes added later.
 */
export function validateQueryText(value: unknown, path: string, queryName: string): string {
  if (typeof value !== 'string') throw invalid(path, 'expected a string');
  const { maxQueryLength } = QUERY_COLLECTION_BOUNDS;
  if (value.length > maxQueryLength) {
    throw invalid(path, `query "${queryName}" is longer than ${String(maxQueryLength)} characters`);
  }
  // Every change validates the whole stored document again: a text parsed once is not parsed again.
  if (validTexts.has(value)) return value;
  let document;
  try {
    document = parse(value, { noLocation: true });
  } catch (error) {
    // graphql-js recurses as deep as the document nests; a stack exhausted by it is a refusal too.
    const reason = error instanceof GraphQLError ? error.message : error instanceof RangeError ? 'nested too deeply' : String(error);
    throw invalid(path, `query "${queryName}" is not a valid GraphQL document: ${reason}`, 'parse-failed');
  }
  let operations = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) operations += 1;
    else if (definition.kind !== Kind.FRAGMENT_DEFINITION) {
      throw invalid(path, `query "${queryName}" must hold only operations and fragments, not a ${definition.kind}`, 'parse-failed');
    }
  }
  if (operations === 0) throw invalid(path, `query "${queryName}" holds no operation`, 'parse-failed');
  rememberValid(value);
  return value;
}

/**
 * Query texts found valid (the check depends on the text alone), up to as many queries and
 * characters as all collections may hold together; past that, the set starts again.
 */
const validTexts = new Set<string>();
let validCharacters = 0;

function rememberValid(text: string): void {
  const { maxTotalQueries, maxTotalQueryLength } = QUERY_COLLECTION_BOUNDS;
  if (validTexts.size >= maxTotalQueries || validCharacters + text.length > maxTotalQueryLength) {
    validTexts.clear();
    validCharacters = 0;
  }
  validTexts.add(text);
  validCharacters += text.length;
}

export function validateCollectionQuery(value: unknown, path: string): CollectionQuery {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['name', 'query'], path);
  const name = validateName(required(object, 'name', path), childPath(path, 'name'));
  const query = validateQueryText(required(object, 'query', path), childPath(path, 'query'), name);
  return { name, query };
}

/** A collection's `definition`: `{queries: [{name, query}]}`, names distinct. */
export function validateCollectionDefinition(value: unknown, path: string, collection: string): { queries: CollectionQuery[] } {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['queries'], path);
  const listPath = childPath(path, 'queries');
  const list = expectArray(required(object, 'queries', path), listPath);
  const { maxQueriesPerCollection } = QUERY_COLLECTION_BOUNDS;
  if (list.length > maxQueriesPerCollection) {
    throw invalid(listPath, `a query collection holds at most ${String(maxQueriesPerCollection)} queries`);
  }
  const names = new Set<string>();
  const queries = list.map((item, index) => {
    const query = validateCollectionQuery(item, childPath(listPath, index));
    if (names.has(query.name)) {
      throw invalid(childPath(childPath(listPath, index), 'name'), collectionQueryMessage(query.name, 'already exists in', collection), 'already-exists');
    }
    names.add(query.name);
    return query;
  });
  return { queries };
}

/** `{name, definition, comment?}`, as `create_query_collection` takes it and a document holds it. */
export function validateQueryCollection(value: unknown, path: string): QueryCollectionMetadata {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['name', 'definition', 'comment'], path);
  const name = validateName(required(object, 'name', path), childPath(path, 'name'));
  const definition = validateCollectionDefinition(required(object, 'definition', path), childPath(path, 'definition'), name);
  const collection: QueryCollectionMetadata = { name, definition };
  const comment = validateComment(object['comment'], childPath(path, 'comment'));
  if (comment !== undefined) collection.comment = comment;
  return collection;
}

/**
 * An allow-list scope: `{global: true}` (returned as `undefined`, the default) or
 * `{global: false, roles: [...]}` with at least one role, each once.
 */
export function validateScope(value: unknown, path: string): AllowlistEntryMetadata['scope'] {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['global', 'roles'], path);
  const global = expectBoolean(required(object, 'global', path), childPath(path, 'global'));
  const roles = optional(object, 'roles');
  if (global) {
    if (roles !== undefined) throw invalid(childPath(path, 'roles'), 'roles are not allowed when global is true');
    return undefined;
  }
  const rolesPath = childPath(path, 'roles');
  const list = validateRoleList(required(object, 'roles', path), rolesPath);
  if (list.length === 0) throw invalid(rolesPath, 'expected at least one role when global is false');
  return { global: false, roles: list };
}

/** Role names, each once. */
function validateRoleList(value: unknown, path: string): string[] {
  const seen = new Set<string>();
  return expectArray(value, path).map((item, index) => {
    const role = validateName(item, childPath(path, index));
    if (seen.has(role)) throw invalid(childPath(path, index), `role "${role}" is listed more than once`);
    seen.add(role);
    return role;
  });
}

export function validateAllowlistEntry(value: unknown, path: string): AllowlistEntryMetadata {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['collection', 'scope'], path);
  const collection = validateName(required(object, 'collection', path), childPath(path, 'collection'));
  const scopeValue = optional(object, 'scope');
  const scope = scopeValue === undefined ? undefined : validateScope(scopeValue, childPath(path, 'scope'));
  return scope === undefined ? { collection } : { collection, scope };
}

/** `{disabled_for_roles: [...]}`; `undefined` when no role is listed (the setting is then left out). */
export function validateIntrospectionOptions(value: unknown, path: string): IntrospectionOptionsMetadata | undefined {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['disabled_for_roles'], path);
  const roles = validateRoleList(required(object, 'disabled_for_roles', path), childPath(path, 'disabled_for_roles'));
  return roles.length === 0 ? undefined : { disabled_for_roles: roles };
}

function positiveInteger(value: unknown, path: string, max: number, unit = ''): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(path, `expected a positive integer${unit} of at most ${String(max)}`);
  }
  return value;
}

/**
 * `{global?, per_role?}` of `T`. `per_role` names roles other than admin (never limited), and is
 * returned as a plain object built without assignments (a role named `__proto__` stays a key).
 */
function validateLimitOption<T>(value: unknown, path: string, validateValue: (value: unknown, path: string) => T): { global?: T; per_role?: Record<string, T> } {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['global', 'per_role'], path);
  const result: { global?: T; per_role?: Record<string, T> } = {};
  const global = optional(object, 'global');
  if (global !== undefined) result.global = validateValue(global, childPath(path, 'global'));
  const perRole = optional(object, 'per_role');
  if (perRole !== undefined) {
    const perRolePath = childPath(path, 'per_role');
    const entries = Object.entries(expectObject(perRole, perRolePath)).map(([role, limit]): [string, T] => {
      const rolePath = childPath(perRolePath, role);
      validateName(role, rolePath);
      if (role === ADMIN_ROLE) throw invalid(rolePath, 'the admin role is never limited');
      return [role, validateValue(limit, rolePath)];
    });
    result.per_role = Object.fromEntries(entries);
  }
  return result;
}

const SESSION_VARIABLE = /^x-svc-/i;

function validateUniqueParams(value: unknown, path: string): NonNullable<RateLimitConfig['unique_params']> {
  const expected = 'expected "IP" or a list of session variable names (x-svc-…)';
  if (typeof value === 'string') {
    if (value.toLowerCase() !== 'ip') throw invalid(path, expected);
    return 'IP';
  }
  if (!Array.isArray(value)) throw invalid(path, expected);
  const seen = new Set<string>();
  return value.map((item, index) => {
    const itemPath = childPath(path, index);
    const name = validateName(item, itemPath);
    if (!SESSION_VARIABLE.test(name)) throw invalid(itemPath, `"${name}" is not a session variable name (x-svc-…)`);
    const lower = name.toLowerCase();
    // The role is always part of the count; naming it again would count nothing more.
    if (lower === 'x-svc-role') throw invalid(itemPath, 'x-svc-role cannot be a unique parameter: requests are always counted per role');
    if (seen.has(lower)) throw invalid(itemPath, `"${name}" is listed more than once (names are matched case-insensitively)`);
    seen.add(lower);
    return name;
  });
}

function validateRateLimitConfig(value: unknown, path: string): RateLimitConfig {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['max_reqs_per_min', 'unique_params'], path);
  const config: RateLimitConfig = {
    max_reqs_per_min: positiveInteger(required(object, 'max_reqs_per_min', path), childPath(path, 'max_reqs_per_min'), MAX_REQUESTS_PER_MINUTE),
  };
  const uniqueParams = optional(object, 'unique_params');
  if (uniqueParams !== undefined) config.unique_params = validateUniqueParams(uniqueParams, childPath(path, 'unique_params'));
  return config;
}

const COUNT_LIMITS = ['depth_limit', 'node_limit', 'batch_limit'] as const;

/**
 * `set_api_limits`'s arguments, as a document keeps them (`api_limits`): `disabled`, the four
 * numeric limits and `rate_limit`. `undefined` when nothing is set (the setting is then left out).
 */
export function validateApiLimits(value: unknown, path: string): ApiLimitsMetadata | undefined {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['disabled', ...COUNT_LIMITS, 'time_limit', 'rate_limit'], path);
  const limits: ApiLimitsMetadata = {};
  const disabled = optional(object, 'disabled');
  if (disabled !== undefined) limits.disabled = expectBoolean(disabled, childPath(path, 'disabled'));
  for (const key of ['depth_limit', 'node_limit', 'time_limit', 'batch_limit'] as const) {
    const option = optional(object, key);
    if (option === undefined) continue;
    const isTime = key === 'time_limit';
    limits[key] = validateLimitOption<number>(option, childPath(path, key), (limit, limitPath) =>
      positiveInteger(limit, limitPath, isTime ? MAX_TIME_LIMIT_SECONDS : MAX_COUNT_LIMIT, isTime ? ' (seconds)' : ''),
    ) satisfies ApiLimitOption;
  }
  const rate = optional(object, 'rate_limit');
  if (rate !== undefined) {
    limits.rate_limit = validateLimitOption(rate, childPath(path, 'rate_limit'), validateRateLimitConfig) satisfies RateLimitOption;
  }
  const empty = Object.keys(limits).length === 0 || (Object.keys(limits).length === 1 && limits.disabled === false);
  return empty ? undefined : limits;
}

/** The bounds that hold for all collections of a document together. */
/**
 * The queries of a collection and their length, counted once per collection object: documents are
 * never changed once made (an operation replaces a collection it changes), so a `bulk` of thousands
 * of steps does not count every stored query again at each step.
 */
const collectionTotals = new WeakMap<QueryCollectionMetadata, { queries: number; length: number }>();

function totalsOf(collection: QueryCollectionMetadata): { queries: number; length: number } {
  let totals = collectionTotals.get(collection);
  if (totals === undefined) {
    let length = 0;
    for (const query of collection.definition.queries) length += query.query.length;
    totals = { queries: collection.definition.queries.length, length };
    collectionTotals.set(collection, totals);
  }
  return totals;
}

export function checkCollectionBounds(collections: readonly QueryCollectionMetadata[], path: string): void {
  const { maxCollections, maxTotalQueries, maxTotalQueryLength } = QUERY_COLLECTION_BOUNDS;
  if (collections.length > maxCollections) throw invalid(path, `the metadata holds at most ${String(maxCollections)} query collections`);
  let queries = 0;
  let length = 0;
  for (const collection of collections) {
    const totals = totalsOf(collection);
    queries += totals.queries;
    length += totals.length;
  }
  if (queries > maxTotalQueries) throw invalid(path, `the query collections hold at most ${String(maxTotalQueries)} queries together`);
  if (length > maxTotalQueryLength) {
    throw invalid(path, `the queries of all collections hold at most ${String(maxTotalQueryLength)} characters together`);
  }
}

/**
 * The lock-down parts of a whole document (`replace_metadata`, a stored document): collections
 * named once, allow-list entries naming existing collections, each once.
 */
export function validateLockdownMetadata(object: Record<string, unknown>, path: string): LockdownMetadata {
  const parts: LockdownMetadata = {};
  const collectionsValue = optional(object, 'query_collections');
  const names = new Set<string>();
  if (collectionsValue !== undefined) {
    const listPath = childPath(path, 'query_collections');
    const collections = expectArray(collectionsValue, listPath).map((item, index) => {
      const collection = validateQueryCollection(item, childPath(listPath, index));
      if (names.has(collection.name)) {
        throw invalid(childPath(childPath(listPath, index), 'name'), collectionMessage(collection.name, 'already exists'), 'already-exists');
      }
      names.add(collection.name);
      return collection;
    });
    checkCollectionBounds(collections, listPath);
    if (collections.length > 0) parts.query_collections = collections;
  }
  const allowlistValue = optional(object, 'allowlist');
  if (allowlistValue !== undefined) {
    const listPath = childPath(path, 'allowlist');
    const listed = new Set<string>();
    const entries = expectArray(allowlistValue, listPath).map((item, index) => {
      const entryPath = childPath(listPath, index);
      const entry = validateAllowlistEntry(item, entryPath);
      if (!names.has(entry.collection)) {
        throw invalid(childPath(entryPath, 'collection'), collectionMessage(entry.collection, 'does not exist'), 'not-exists');
      }
      if (listed.has(entry.collection)) {
        throw invalid(childPath(entryPath, 'collection'), `collection "${entry.collection}" already exists in the allowlist`, 'already-exists');
      }
      listed.add(entry.collection);
      return entry;
    });
    if (entries.length > 0) parts.allowlist = entries;
  }
  const limits = optional(object, 'api_limits');
  if (limits !== undefined) {
    const validated = validateApiLimits(limits, childPath(path, 'api_limits'));
    if (validated !== undefined) parts.api_limits = validated;
  }
  const introspection = optional(object, 'graphql_schema_introspection');
  if (introspection !== undefined) {
    const validated = validateIntrospectionOptions(introspection, childPath(path, 'graphql_schema_introspection'));
    if (validated !== undefined) parts.graphql_schema_introspection = validated;
  }
  return parts;
}
