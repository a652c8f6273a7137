/**
 * The metadata operations of `POST /v1/metadata`. Each works on a {@link Draft}: it computes the next
 * document, asks the registry to plan it, and either refuses (throwing a `MetadataApiError`, the
 * draft untouched) or records the new document and plan. Nothing here saves or commits: the
 * service does that once the whole request (a `bulk` included) has succeeded.
 */
import { cloneDocument, type MetadataDocument, type RemoteSchemaMetadata } from './document.js';
import { redactEnvironment } from './environment.js';
import { MetadataApiError } from './errors.js';
import { toInconsistentObjects } from './inconsistency.js';
import type { RegistryPlan, RemoteSchemaProblem, RemoteSchemaRegistry } from './registry.js';
import type { MetadataRequest, OperationType } from './request.js';
import type { StoredMetadata } from './store.js';
import {
  childPath,
  expectBoolean,
  expectObject,
  optional,
  rejectUnknownKeys,
  required,
  validateComment,
  validateDefinition,
  validateDocument,
  validateName,
  type JsonObject,
} from './validation.js';

/** The state a request works on until it is saved and committed. */
export interface Draft {
  document: MetadataDocument;
  /** The resource version the request started from. */
  baseVersion: number;
  /** The document differs from the stored one and must be saved. */
  changed: boolean;
  /** The plan to commit, when an operation produced one. */
  plan: RegistryPlan | undefined;
  /** Remotes to introspect again in every later plan of this request. */
  reload: Set<string> | 'all';
  /** A newer stored document picked up by `reload_metadata`. */
  adopted: StoredMetadata | undefined;
}

export interface OperationContext {
  registry: RemoteSchemaRegistry;
  loadStored(): Promise<StoredMetadata | undefined>;
  remoteSchemaPermissions: boolean;
  draft: Draft;
  /** How many `bulk` operations enclose this one. */
  depth: number;
  /** Runs one nested request (for `bulk`), its errors relative to `$`. */
  execute(body: unknown): Promise<unknown>;
}

const SUCCESS = { message: 'success' } as const;
const ARGS = '$.args';

type Operation = (args: unknown, context: OperationContext, request: MetadataRequest) => Promise<unknown>;

function args(value: unknown, allowed: readonly string[]): JsonObject {
  const object = expectObject(value, ARGS);
  rejectUnknownKeys(object, allowed, ARGS);
  return object;
}

/** Operations without arguments accept `{}`, `null` or nothing. */
function noArgs(value: unknown): void {
  if (value === undefined || value === null) return;
  args(value, []);
}

function find(document: MetadataDocument, name: string): RemoteSchemaMetadata | undefined {
  return document.remote_schemas.find((entry) => entry.name === name);
}

async function plan(context: OperationContext, document: MetadataDocument): Promise<RegistryPlan> {
  const { reload } = context.draft;
  const entries = document.remote_schemas.map(({ name, definition }) => ({ name, definition }));
  return context.registry.plan(entries, { reload: reload === 'all' ? 'all' : [...reload] });
}

function accept(context: OperationContext, document: MetadataDocument, next: RegistryPlan, changed: boolean): void {
  context.draft.document = document;
  context.draft.plan = next;
  context.draft.changed ||= changed;
}

/** The problems that count for the draft: of its plan, or of the live state when it has none. */
function currentProblems(context: OperationContext): readonly RemoteSchemaProblem[] {
  return context.draft.plan?.problems ?? context.registry.problems();
}

/** Refuses the entry with its problem, if it has one; the message may quote values read from the environment. */
function refuseProblem(problem: RemoteSchemaProblem | undefined, entry: RemoteSchemaMetadata): void {
  if (problem !== undefined) throw new MetadataApiError(problem.code, redactEnvironment(problem.message, entry.definition), ARGS);
}

function remoteSchemaArgs(value: unknown): RemoteSchemaMetadata {
  const object = args(value, ['name', 'definition', 'comment']);
  const name = validateName(required(object, 'name', ARGS), childPath(ARGS, 'name'));
  const definition = validateDefinition(required(object, 'definition', ARGS), childPath(ARGS, 'definition'));
  const entry: RemoteSchemaMetadata = { name, definition };
  const comment = validateComment(object['comment'], childPath(ARGS, 'comment'));
  if (comment !== undefined) entry.comment = comment;
  return entry;
}

function nameArg(value: unknown, allowed: readonly string[] = ['name']): { name: string; object: JsonObject } {
  const object = args(value, allowed);
  return { name: validateName(required(object, 'name', ARGS), childPath(ARGS, 'name')), object };
}

const addRemoteSchema: Operation = async (value, context) => {
  const entry = remoteSchemaArgs(value);
  const { document } = context.draft;
  if (find(document, entry.name) !== undefined) {
    throw new MetadataApiError('already-exists', `remote schema with name "${entry.name}" already exists`, ARGS);
  }
  const next = cloneDocument(document);
  next.remote_schemas.push(entry);
  const candidate = await plan(context, next);
  refuseProblem(candidate.problems.find((problem) => problem.name === entry.name), entry);
  accept(context, next, candidate, true);
  return SUCCESS;
};

const updateRemoteSchema: Operation = async (value, context) => {
  const entry = remoteSchemaArgs(value);
  const { document } = context.draft;
  const index = document.remote_schemas.findIndex((existing) => existing.name === entry.name);
  const existing = document.remote_schemas[index];
  if (existing === undefined) {
    throw new MetadataApiError('not-exists', `remote schema with name "${entry.name}" doesn't exist`, ARGS);
  }
  // Permissions belong to the remote, not to its definition: an update keeps them.
  if (existing.permissions !== undefined) entry.permissions = structuredClone(existing.permissions);
  const next = cloneDocument(document);
  next.remote_schemas[index] = entry;
  const candidate = await plan(context, next);
  refuseProblem(candidate.problems.find((problem) => problem.name === entry.name), entry);
  accept(context, next, candidate, true);
  return SUCCESS;
};

const removeRemoteSchema: Operation = async (value, context) => {
  const { name, object } = nameArg(value, ['name', 'cascade']);
  const cascadeValue = optional(object, 'cascade');
  const cascade = cascadeValue === undefined ? false : expectBoolean(cascadeValue, childPath(ARGS, 'cascade'));
  const { document } = context.draft;
  const existing = find(document, name);
  if (existing === undefined) throw new MetadataApiError('not-exists', 'no such remote schema', ARGS);
  const dependents = (existing.permissions ?? []).map(
    (permission) => `remote_schema_permission ${permission.role} on remote_schema ${name}`,
  );
  if (dependents.length > 0 && !cascade) {
    throw new MetadataApiError(
      'dependency-error',
      `cannot drop due to the following dependent objects: ${dependents.join(', ')}`,
      ARGS,
    );
  }
  const next = cloneDocument(document);
  next.remote_schemas = next.remote_schemas.filter((entry) => entry.name !== name);
  accept(context, next, await plan(context, next), true);
  return SUCCESS;
};

const reloadRemoteSchema: Operation = async (value, context) => {
  const { name } = nameArg(value);
  const { draft } = context;
  if (find(draft.document, name) === undefined) {
    throw new MetadataApiError('not-exists', `remote schema with name "${name}" does not exist`, ARGS);
  }
  if (draft.reload !== 'all') draft.reload.add(name);
  // A remote that is down now becomes inconsistent (and is retried); reloading itself succeeds.
  accept(context, draft.document, await plan(context, draft.document), false);
  return SUCCESS;
};

const introspectRemoteSchema: Operation = async (value, context) => {
  const { name } = nameArg(value);
  const entry = find(context.draft.document, name);
  if (entry === undefined) {
    throw new MetadataApiError('not-exists', `remote schema with name "${name}" does not exist`, ARGS);
  }
  try {
    return await context.registry.introspect(name);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new MetadataApiError('remote-schema-error', redactEnvironment(message, entry.definition), ARGS);
  }
};

const addRemoteSchemaPermissions: Operation = async (_value, context) => {
  if (!context.remoteSchemaPermissions) {
    throw new MetadataApiError(
      'constraint-violation',
      'remote schema permissions can only be added when remote schema permissions are enabled',
      ARGS,
    );
  }
  throw new MetadataApiError('not-supported', 'remote schema permissions are not supported yet', ARGS);
};

const dropRemoteSchemaPermissions: Operation = async () => {
  throw new MetadataApiError('not-supported', 'remote schema permissions are not supported yet', ARGS);
};

const exportMetadata: Operation = async (value, context, request) => {
  noArgs(value);
  const { draft } = context;
  const metadata = cloneDocument(draft.document);
  if (request.version !== 2) return metadata;
  return { resource_version: draft.baseVersion + (draft.changed ? 1 : 0), metadata };
};

const replaceMetadata: Operation = async (value, context) => {
  const object = expectObject(value, ARGS);
  // `{allow_inconsistent_metadata, metadata}` is told apart from a bare document by its `metadata` key.
  const wrapped = Object.hasOwn(object, 'metadata');
  let allowInconsistent = false;
  let document: MetadataDocument;
  if (wrapped) {
    rejectUnknownKeys(object, ['allow_inconsistent_metadata', 'metadata'], ARGS);
    const allow = optional(object, 'allow_inconsistent_metadata');
    if (allow !== undefined) allowInconsistent = expectBoolean(allow, childPath(ARGS, 'allow_inconsistent_metadata'));
    document = validateDocument(object['metadata'], childPath(ARGS, 'metadata'));
  } else {
    document = validateDocument(object, ARGS);
  }
  if (context.remoteSchemaPermissions) {
    // With permissions enabled a client expects them enforced; until they are, storing them would
    // silently give every role the whole remote schema.
    const index = document.remote_schemas.findIndex((entry) => (entry.permissions?.length ?? 0) > 0);
    if (index !== -1) {
      const base = wrapped ? childPath(ARGS, 'metadata') : ARGS;
      throw new MetadataApiError(
        'not-supported',
        'remote schema permissions are not supported yet',
        childPath(childPath(childPath(base, 'remote_schemas'), index), 'permissions'),
      );
    }
  }
  const candidate = await plan(context, document);
  const inconsistent = toInconsistentObjects(candidate.problems, document);
  if (inconsistent.length > 0 && !allowInconsistent) {
    throw new MetadataApiError('unexpected', 'cannot continue due to inconsistent metadata', ARGS);
  }
  const changed = JSON.stringify(document) !== JSON.stringify(context.draft.document);
  accept(context, document, candidate, changed);
  return wrapped ? { is_consistent: inconsistent.length === 0, inconsistent_objects: inconsistent } : SUCCESS;
};

const reloadMetadata: Operation = async (value, context) => {
  const object = value === undefined || value === null ? {} : args(value, ['reload_remote_schemas', 'reload_sources', 'recreate_event_triggers']);
  const which = optional(object, 'reload_remote_schemas') ?? true;
  const { draft } = context;
  if (which === true) {
    draft.reload = 'all';
  } else if (Array.isArray(which)) {
    const path = childPath(ARGS, 'reload_remote_schemas');
    which.forEach((name, index) => {
      const valid = validateName(name, childPath(path, index));
      if (draft.reload !== 'all') draft.reload.add(valid);
    });
  } else if (which !== false) {
    throw new MetadataApiError('invalid-params', 'expected a boolean or a list of remote schema names', childPath(ARGS, 'reload_remote_schemas'));
  }
  // Like Hasura, reload the document itself too: another instance may have changed the store.
  if (!draft.changed) {
    const stored = await context.loadStored();
    if (stored !== undefined && stored.resourceVersion !== draft.baseVersion) {
      const document = validateDocument(stored.metadata, '$');
      draft.adopted = { resourceVersion: stored.resourceVersion, metadata: document };
      draft.baseVersion = stored.resourceVersion;
      draft.document = document;
    }
  }
  const candidate = await plan(context, draft.document);
  accept(context, draft.document, candidate, false);
  const inconsistent = toInconsistentObjects(candidate.problems, draft.document);
  return inconsistent.length === 0
    ? { message: 'success', is_consistent: true }
    : { message: 'success', is_consistent: false, inconsistent_objects: inconsistent };
};

const getInconsistentMetadata: Operation = async (value, context) => {
  noArgs(value);
  const inconsistent = toInconsistentObjects(currentProblems(context), context.draft.document);
  return { is_consistent: inconsistent.length === 0, inconsistent_objects: inconsistent };
};

const dropInconsistentMetadata: Operation = async (value, context) => {
  noArgs(value);
  const { document } = context.draft;
  const names = new Set(toInconsistentObjects(currentProblems(context), document).map((object) => object.name));
  if (names.size === 0) return SUCCESS;
  const next = cloneDocument(document);
  next.remote_schemas = next.remote_schemas.filter((entry) => !names.has(`remote_schema ${entry.name}`));
  accept(context, next, await plan(context, next), true);
  return SUCCESS;
};

/** Deeper nesting of `bulk` is refused: it has no use, and unbounded recursion would exhaust the stack. */
export const MAX_BULK_DEPTH = 8;

const bulk: Operation = async (value, context) => {
  if (!Array.isArray(value)) throw new MetadataApiError('invalid-params', 'expected an array', ARGS);
  if (context.depth >= MAX_BULK_DEPTH) {
    throw new MetadataApiError('invalid-params', `bulk operations can be nested at most ${String(MAX_BULK_DEPTH)} deep`, ARGS);
  }
  const results: unknown[] = [];
  for (const [index, item] of value.entries()) {
    try {
      results.push(await context.execute(item));
    } catch (error) {
      throw error instanceof MetadataApiError ? error.rebase(childPath(ARGS, index)) : error;
    }
  }
  return results;
};

export const OPERATIONS: Record<OperationType, Operation> = {
  add_remote_schema: addRemoteSchema,
  update_remote_schema: updateRemoteSchema,
  remove_remote_schema: removeRemoteSchema,
  reload_remote_schema: reloadRemoteSchema,
  introspect_remote_schema: introspectRemoteSchema,
  add_remote_schema_permissions: addRemoteSchemaPermissions,
  drop_remote_schema_permissions: dropRemoteSchemaPermissions,
  export_metadata: exportMetadata,
  replace_metadata: replaceMetadata,
  reload_metadata: reloadMetadata,
  get_inconsistent_metadata: getInconsistentMetadata,
  drop_inconsistent_metadata: dropInconsistentMetadata,
  bulk,
};
