/**
 * The metadata operations on query collections, the allow list, introspection options and API
 * limits. None of them changes the GraphQL schema, so none asks the registry for a plan: each
 * computes the next document on the draft (or refuses, the draft untouched), and the service saves
 * it with the rest of the request.
 */
import type { MetadataDocument } from './document.js';
import { MetadataApiError } from './errors.js';
import {
  lockdownParts,
  QUERY_COLLECTION_BOUNDS,
  withLockdownParts,
  type AllowlistEntryMetadata, type LockdownParts, type QueryCollectionMetadata } from './lockdown-document.js';
import {
  checkCollectionBounds,
  collectionMessage,
  collectionQueryMessage,
  validateApiLimits,
  validateCollectionDefinition,
  validateIntrospectionOptions,
  validateQueryText,
  validateScope,
} from './lockdown-validation.js';
import type { OperationContext } from './operations.js';
import { childPath, expectBoolean, expectObject, optional, rejectUnknownKeys, required, validateComment, validateName, type JsonObject } from './validation.js';

export const LOCKDOWN_OPERATION_TYPES = [
  'create_query_collection',
  'rename_query_collection',
  'drop_query_collection',
  'add_query_to_collection',
  'drop_query_from_collection',
  'add_collection_to_allowlist',
  'drop_collection_from_allowlist',
  'update_scope_of_collection_in_allowlist',
  'set_graphql_schema_introspection_options',
  'set_api_limits',
  'remove_api_limits',
] as const;

type LockdownOperationType = (typeof LOCKDOWN_OPERATION_TYPES)[number];
type Operation = (args: unknown, context: OperationContext) => Promise<unknown>;

const SUCCESS = { message: 'success' } as const;
const ARGS = '$.args';

function args(value: unknown, allowed: readonly string[]): JsonObject {
  const object = expectObject(value, ARGS);
  rejectUnknownKeys(object, allowed, ARGS);
  return object;
}

function nameAt(object: JsonObject, key: string): string {
  return validateName(required(object, key, ARGS), childPath(ARGS, key));
}

/**
 * The draft's lock-down parts, for an operation to build the next ones from. Documents are never
 * changed once made (every operation builds its next document beside the draft), so the parts
 * are shared, not copied: an operation replaces a list, collection or entry it changes with a new
 * one and leaves the old one as it is. (A copy of the whole document per operation made a `bulk`
 * of thousands of collection steps take quadratic time: 4,000 took about 45 s.)
 */
function parts(context: OperationContext): LockdownParts {
  return { ...lockdownParts(context.draft.document) };
}

/**
 * Records the next document. `changes`: the operation changed what it was asked to (it returns
 * before committing when there is nothing to do); without it, `changed` only when a part differs
 * (the same introspection options or limits set again change nothing): a part still the draft's
 * own object is unchanged, the others are compared.
 */
function commit(context: OperationContext, next: LockdownParts, changes = false): typeof SUCCESS {
  const { draft } = context;
  const document: MetadataDocument = withLockdownParts(draft.document, {
    ...next,
    ...(next.query_collections?.length === 0 && { query_collections: undefined }),
    ...(next.allowlist?.length === 0 && { allowlist: undefined }),
  });
  const before = lockdownParts(draft.document);
  const after = lockdownParts(document);
  const differs = (key: keyof LockdownParts) => before[key] !== after[key] && JSON.stringify(before[key]) !== JSON.stringify(after[key]);
  if (changes || differs('query_collections') || differs('allowlist') || differs('graphql_schema_introspection') || differs('api_limits')) {
    draft.document = document;
    draft.changed = true;
  }
  return SUCCESS;
}

/** `collections` with the one named `name` replaced by `change(it)` (a new array; the others shared). */
function replaceCollection(
  collections: readonly QueryCollectionMetadata[],
  name: string,
  change: (collection: QueryCollectionMetadata) => QueryCollectionMetadata,
): QueryCollectionMetadata[] {
  return collections.map((collection) => (collection.name === name ? change(collection) : collection));
}

/** `collection` with `queries` in its definition (a new object). */
function withQueries(collection: QueryCollectionMetadata, queries: QueryCollectionMetadata['definition']['queries']): QueryCollectionMetadata {
  return { ...collection, definition: { ...collection.definition, queries } };
}

function findCollection(next: LockdownParts, name: string, path: string): QueryCollectionMetadata {
  const collection = next.query_collections?.find((candidate) => candidate.name === name);
  if (collection === undefined) throw new MetadataApiError('not-exists', collectionMessage(name, 'does not exist'), path);
  return collection;
}

function findAllowlistEntry(next: LockdownParts, name: string, path: string): { entry: AllowlistEntryMetadata; index: number } {
  const index = next.allowlist?.findIndex((entry) => entry.collection === name) ?? -1;
  const entry = next.allowlist?.[index];
  if (entry === undefined) throw new MetadataApiError('not-exists', `collection "${name}" doesn't exist in the allowlist`, path);
  return { entry, index };
}

function scopeArg(object: JsonObject): AllowlistEntryMetadata['scope'] {
  const value = optional(object, 'scope');
  return value === undefined ? undefined : validateScope(value, childPath(ARGS, 'scope'));
}

function sameScope(left: AllowlistEntryMetadata['scope'], right: AllowlistEntryMetadata['scope']): boolean {
  if (left === undefined || right === undefined) return left === right;
  return left.roles.length === right.roles.length && left.roles.every((role) => right.roles.includes(role));
}

const createQueryCollection: Operation = async (value, context) => {
  const object = args(value, ['name', 'comment', 'definition']);
  const name = nameAt(object, 'name');
  const next = parts(context);
  if (next.query_collections?.some((collection) => collection.name === name)) {
    throw new MetadataApiError('already-exists', collectionMessage(name, 'already exists'), childPath(ARGS, 'name'));
  }
  const collection: QueryCollectionMetadata = {
    name,
    definition: validateCollectionDefinition(required(object, 'definition', ARGS), childPath(ARGS, 'definition'), name),
  };
  const comment = validateComment(object['comment'], childPath(ARGS, 'comment'));
  if (comment !== undefined) collection.comment = comment;
  next.query_collections = [...(next.query_collections ?? []), collection];
  checkCollectionBounds(next.query_collections, ARGS);
  return commit(context, next, true);
};

const renameQueryCollection: Operation = async (value, context) => {
  const object = args(value, ['name', 'new_name']);
  const name = nameAt(object, 'name');
  const newName = nameAt(object, 'new_name');
  const next = parts(context);
  const collection = findCollection(next, name, childPath(ARGS, 'name'));
  if (newName === name) return SUCCESS;
  if (next.query_collections?.some((candidate) => candidate.name === newName)) {
    throw new MetadataApiError('already-exists', collectionMessage(newName, 'already exists'), childPath(ARGS, 'new_name'));
  }
  next.query_collections = replaceCollection(next.query_collections ?? [], collection.name, (old) => ({ ...old, name: newName }));
  // The allow list follows the collection: it must never name a collection that is gone.
  if (next.allowlist?.some((entry) => entry.collection === name)) {
    next.allowlist = next.allowlist.map((entry) => (entry.collection === name ? { ...entry, collection: newName } : entry));
  }
  return commit(context, next, true);
};

const dropQueryCollection: Operation = async (value, context) => {
  const object = args(value, ['collection', 'cascade']);
  const name = nameAt(object, 'collection');
  const cascadeValue = optional(object, 'cascade');
  const cascade = cascadeValue === undefined ? false : expectBoolean(cascadeValue, childPath(ARGS, 'cascade'));
  const next = parts(context);
  const path = childPath(ARGS, 'collection');
  findCollection(next, name, path);
  if (next.allowlist?.some((entry) => entry.collection === name)) {
    if (!cascade) {
      throw new MetadataApiError(
        'dependency-error',
        `${collectionMessage(name, 'is present in the allowlist; cannot proceed to drop.')} please use cascade to confirm you wish to drop it from the allowlist as well`,
        path,
      );
    }
    next.allowlist = next.allowlist.filter((entry) => entry.collection !== name);
  }
  next.query_collections = next.query_collections?.filter((collection) => collection.name !== name);
  return commit(context, next, true);
};

const addQueryToCollection: Operation = async (value, context) => {
  const object = args(value, ['collection_name', 'query_name', 'query']);
  const name = nameAt(object, 'collection_name');
  const queryName = nameAt(object, 'query_name');
  const next = parts(context);
  const collection = findCollection(next, name, childPath(ARGS, 'collection_name'));
  if (collection.definition.queries.some((query) => query.name === queryName)) {
    throw new MetadataApiError('already-exists', collectionQueryMessage(queryName, 'already exists in', name), childPath(ARGS, 'query_name'));
  }
  const query = validateQueryText(required(object, 'query', ARGS), childPath(ARGS, 'query'), queryName);
  const { maxQueriesPerCollection } = QUERY_COLLECTION_BOUNDS;
  if (collection.definition.queries.length >= maxQueriesPerCollection) {
    throw new MetadataApiError('invalid-params', `a query collection holds at most ${String(maxQueriesPerCollection)} queries`, ARGS);
  }
  next.query_collections = replaceCollection(next.query_collections ?? [], name, (old) =>
    withQueries(old, [...old.definition.queries, { name: queryName, query }]),
  );
  checkCollectionBounds(next.query_collections, ARGS);
  return commit(context, next, true);
};

const dropQueryFromCollection: Operation = async (value, context) => {
  const object = args(value, ['collection_name', 'query_name']);
  const name = nameAt(object, 'collection_name');
  const queryName = nameAt(object, 'query_name');
  const next = parts(context);
  const collection = findCollection(next, name, childPath(ARGS, 'collection_name'));
  const queries = collection.definition.queries.filter((query) => query.name !== queryName);
  if (queries.length === collection.definition.queries.length) {
    throw new MetadataApiError('not-exists', collectionQueryMessage(queryName, 'not found in', name), childPath(ARGS, 'query_name'));
  }
  next.query_collections = replaceCollection(next.query_collections ?? [], name, (old) => withQueries(old, queries));
  return commit(context, next, true);
};

const addCollectionToAllowlist: Operation = async (value, context) => {
  const object = args(value, ['collection', 'scope']);
  const name = nameAt(object, 'collection');
  const scope = scopeArg(object);
  const next = parts(context);
  findCollection(next, name, childPath(ARGS, 'collection'));
  const existing = next.allowlist?.find((entry) => entry.collection === name);
  if (existing !== undefined) {
    if (sameScope(existing.scope, scope)) return SUCCESS;
    throw new MetadataApiError(
      'already-exists',
      `collection "${name}" already exists in the allowlist with another scope; to change its scope, use update_scope_of_collection_in_allowlist`,
      childPath(ARGS, 'collection'),
    );
  }
  next.allowlist = [...(next.allowlist ?? []), scope === undefined ? { collection: name } : { collection: name, scope }];
  return commit(context, next, true);
};

const dropCollectionFromAllowlist: Operation = async (value, context) => {
  const object = args(value, ['collection']);
  const name = nameAt(object, 'collection');
  const next = parts(context);
  const path = childPath(ARGS, 'collection');
  findCollection(next, name, path);
  const { index } = findAllowlistEntry(next, name, path);
  next.allowlist = next.allowlist?.filter((_, position) => position !== index);
  return commit(context, next, true);
};

const updateScopeOfCollectionInAllowlist: Operation = async (value, context) => {
  const object = args(value, ['collection', 'scope']);
  const name = nameAt(object, 'collection');
  required(object, 'scope', ARGS);
  const scope = scopeArg(object);
  const next = parts(context);
  const path = childPath(ARGS, 'collection');
  findCollection(next, name, path);
  const { entry: existing, index } = findAllowlistEntry(next, name, path);
  if (sameScope(existing.scope, scope)) return SUCCESS;
  const entry: AllowlistEntryMetadata = scope === undefined ? { collection: name } : { collection: name, scope };
  next.allowlist = next.allowlist?.map((other, position) => (position === index ? entry : other));
  return commit(context, next, true);
};

const setIntrospectionOptions: Operation = async (value, context) => {
  const next = parts(context);
  next.graphql_schema_introspection = validateIntrospectionOptions(value, ARGS);
  return commit(context, next);
};

const setApiLimits: Operation = async (value, context) => {
  const next = parts(context);
  // The whole setting is replaced, as in Hasura.
  next.api_limits = validateApiLimits(value, ARGS);
  return commit(context, next);
};

const removeApiLimits: Operation = async (value, context) => {
  if (value !== undefined && value !== null) args(value, []);
  const next = parts(context);
  delete next.api_limits;
  return commit(context, next);
};

export const LOCKDOWN_OPERATIONS: Record<LockdownOperationType, Operation> = {
  create_query_collection: createQueryCollection,
  rename_query_collection: renameQueryCollection,
  drop_query_collection: dropQueryCollection,
  add_query_to_collection: addQueryToCollection,
  drop_query_from_collection: dropQueryFromCollection,
  add_collection_to_allowlist: addCollectionToAllowlist,
  drop_collection_from_allowlist: dropCollectionFromAllowlist,
  update_scope_of_collection_in_allowlist: updateScopeOfCollectionInAllowlist,
  set_graphql_schema_introspection_options: setIntrospectionOptions,
  set_api_limits: setApiLimits,
  remove_api_limits: removeApiLimits,
};
