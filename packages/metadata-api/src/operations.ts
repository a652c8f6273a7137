/**
 * The metadata operations of `POST /v1/metadata`. Each works on a {@link Draft}: it computes the next
 * document, asks the registry to plan it, and either refuses (throwing a `MetadataApiError`, the
 * draft untouched) or records the new document and plan. Nothing here saves or commits: the
 * service does that once the whole request (a `bulk` included) has succeeded.
 */
import {
  cloneDocument,
  type MetadataDocument,
  type RemoteSchemaMetadata,
  type RemoteSchemaPermissionMetadata,
} from './document.js';
import { redactEnvironment } from './environment.js';
import { MetadataApiError } from './errors.js';
import { permissionObjectName, relationshipObjectName, remoteSchemaObjectName } from './inconsistency.js';
import {
  createRemoteSchemaRemoteRelationship,
  deleteRemoteSchemaRemoteRelationship,
  relationshipRefName,
  relationshipsTargeting,
  updateRemoteSchemaRemoteRelationship,
  withoutRelationships,
} from './relationship-operations.js';
import type { RegistryPlan, RemoteSchemaProblem, RemoteSchemaRegistry } from './registry.js';
import type { OperationType } from './request.js';
import {
  ARGS,
  SUCCESS,
  accept,
  args,
  byCodePoints,
  currentProblems,
  find,
  inconsistentObjects,
  noArgs,
  plan,
  refuseProblem,
  remoteProblem,
  type Operation,
} from './operation-kit.js';
import { LOCKDOWN_OPERATIONS } from './lockdown-operations.js';
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
  validatePermissionDefinition,
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
  /** Whether permissions are validated and enforced (`--enable-remote-schema-permissions`). */
  remoteSchemaPermissions: boolean;
  draft: Draft;
  /** How many `bulk` operations enclose this one. */
  depth: number;
  /** Runs one nested request (for `bulk`), its errors relative to `$`. */
  execute(body: unknown): Promise<unknown>;
}

/** The role that always sees everything; no permission can be defined for it. */
const ADMIN_ROLE = 'admin';

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
  refuseProblem(remoteProblem(candidate, entry.name), entry);
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
  // Permissions and relationships belong to the remote, not to its definition: an update keeps
  // them, and the plan validates them again against what the remote serves now.
  if (existing.permissions !== undefined) entry.permissions = structuredClone(existing.permissions);
  if (existing.remote_relationships !== undefined) entry.remote_relationships = structuredClone(existing.remote_relationships);
  const next = cloneDocument(document);
  next.remote_schemas[index] = entry;
  const before = currentProblems(context);
  const candidate = await plan(context, next);
  refuseProblem(remoteProblem(candidate, entry.name) ?? clashWithOthers(before, candidate, entry.name), entry);
  accept(context, next, candidate, true);
  // Dependents that no longer fit do not fail the update: they are left out of the schema (a
  // permission's role sees nothing of this remote) and reported, as get_inconsistent_metadata
  // reports them: its permissions and relationships, and the relationships that target it.
  const targeting = new Set(relationshipsTargeting(next, entry.name).map(relationshipRefName));
  const dependents = [
    ...inconsistentObjects(context, candidate.problems, { version: 3, remote_schemas: [entry] }),
    ...inconsistentObjects(context, candidate.problems, next).filter((object) => targeting.has(object.name)),
  ];
  return dependents.length === 0 ? SUCCESS : { ...SUCCESS, inconsistent_objects: dependents };
};

/**
 * A problem of another remote itself (not of its permissions or relationships) that the update of
 * `name` brought: a root field or type that now clashes. Remotes are stitched in document order, so
 * the clash is found at whichever comes later; an update is refused for it as an add is, instead
 * of taking a healthy remote out of the schema.
 */
function clashWithOthers(before: readonly RemoteSchemaProblem[], after: RegistryPlan, name: string): RemoteSchemaProblem | undefined {
  const known = new Set(before.filter(isRemoteLevel).map((problem) => `${problem.name}\n${problem.message}`));
  return after.problems.find((problem) => isRemoteLevel(problem) && problem.name !== name && !known.has(`${problem.name}\n${problem.message}`));
}

function isRemoteLevel(problem: RemoteSchemaProblem): boolean {
  return problem.role === undefined && problem.relationship === undefined;
}

const removeRemoteSchema: Operation = async (value, context) => {
  const { name, object } = nameArg(value, ['name', 'cascade']);
  const cascadeValue = optional(object, 'cascade');
  const cascade = cascadeValue === undefined ? false : expectBoolean(cascadeValue, childPath(ARGS, 'cascade'));
  const { document } = context.draft;
  const existing = find(document, name);
  if (existing === undefined) throw new MetadataApiError('not-exists', 'no such remote schema', ARGS);
  // Its permissions, and the relationships of other remotes that target it (its own relationships
  // go with it); sorted as Hasura lists dependent objects, whatever their order in the document.
  const targeting = relationshipsTargeting(document, name);
  const dependents = [
    ...(existing.permissions ?? []).map((permission) => permissionObjectName(name, permission.role)),
    ...targeting.map(relationshipRefName),
  ].sort(byCodePoints);
  if (dependents.length > 0 && !cascade) {
    throw new MetadataApiError(
      'dependency-error',
      `cannot drop due to the following dependent objects: ${dependents.join(', ')}`,
      ARGS,
    );
  }
  const next = cloneDocument(document);
  next.remote_schemas = next.remote_schemas.filter((entry) => entry.name !== name);
  const dropped = new Set(targeting.map(relationshipRefName));
  for (const entry of next.remote_schemas) {
    withoutRelationships(entry, (type, relationship) => dropped.has(relationshipObjectName(entry.name, type, relationship.name)));
  }
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

function permissionArgs(value: unknown): { remote: string; permission: RemoteSchemaPermissionMetadata } {
  const object = args(value, ['remote_schema', 'role', 'definition', 'comment']);
  const remote = validateName(required(object, 'remote_schema', ARGS), childPath(ARGS, 'remote_schema'));
  const role = validateName(required(object, 'role', ARGS), childPath(ARGS, 'role'));
  const definition = validatePermissionDefinition(required(object, 'definition', ARGS), childPath(ARGS, 'definition'));
  const permission: RemoteSchemaPermissionMetadata = { role, definition };
  const comment = validateComment(object['comment'], childPath(ARGS, 'comment'));
  if (comment !== undefined) permission.comment = comment;
  return { remote, permission };
}

/** The remote a permission call names; messages as Hasura's. */
function findPermissionRemote(document: MetadataDocument, remote: string): { index: number; entry: RemoteSchemaMetadata } {
  const index = document.remote_schemas.findIndex((entry) => entry.name === remote);
  const entry = document.remote_schemas[index];
  if (entry === undefined) throw new MetadataApiError('not-exists', `remote schema "${remote}" doesn't exist`, ARGS);
  return { index, entry };
}

/** `permissions for role: "<r>" for remote schema:"<n>" <what>`, Hasura's wording to the letter. */
function permissionMessage(remote: string, role: string, what: string): string {
  return `permissions for role: "${role}" for remote schema:"${remote}" ${what}`;
}

const addRemoteSchemaPermissions: Operation = async (value, context) => {
  const { remote, permission } = permissionArgs(value);
  if (!context.remoteSchemaPermissions) {
    throw new MetadataApiError(
      'constraint-violation',
      'remote schema permissions can only be added when remote schema permissions are enabled',
      ARGS,
    );
  }
  // Admin always sees the whole remote; a permission for it would be a promise never kept.
  if (permission.role === ADMIN_ROLE) {
    throw new MetadataApiError('constraint-violation', 'cannot define permission for admin role', ARGS);
  }
  const { document } = context.draft;
  const { index, entry } = findPermissionRemote(document, remote);
  if (entry.permissions?.some((existing) => existing.role === permission.role)) {
    throw new MetadataApiError('already-exists', permissionMessage(remote, permission.role, 'already exists'), ARGS);
  }
  const next = cloneDocument(document);
  const target = next.remote_schemas[index] as RemoteSchemaMetadata;
  target.permissions = [...(target.permissions ?? []), permission];
  const candidate = await plan(context, next);
  // A remote that cannot be loaded cannot check the permission: refuse rather than store it unchecked.
  refuseProblem(remoteProblem(candidate, remote), entry);
  const problem = candidate.problems.find((other) => other.name === remote && other.role === permission.role);
  if (problem !== undefined) throw new MetadataApiError(problem.code, redactEnvironment(problem.message, entry.definition), ARGS);
  accept(context, next, candidate, true);
  return SUCCESS;
};

const dropRemoteSchemaPermissions: Operation = async (value, context) => {
  const object = args(value, ['remote_schema', 'role']);
  const remote = validateName(required(object, 'remote_schema', ARGS), childPath(ARGS, 'remote_schema'));
  const role = validateName(required(object, 'role', ARGS), childPath(ARGS, 'role'));
  const { document } = context.draft;
  const { index, entry } = findPermissionRemote(document, remote);
  if (!entry.permissions?.some((existing) => existing.role === role)) {
    throw new MetadataApiError('not-exists', permissionMessage(remote, role, "doesn't exist"), ARGS);
  }
  const next = cloneDocument(document);
  withoutPermissions(next.remote_schemas[index] as RemoteSchemaMetadata, (permission) => permission.role === role);
  accept(context, next, await plan(context, next), true);
  return SUCCESS;
};

/** Removes the matching permissions; the key goes when none is left, as export shows it only when set. */
function withoutPermissions(entry: RemoteSchemaMetadata, drop: (permission: RemoteSchemaPermissionMetadata) => boolean): void {
  const kept = (entry.permissions ?? []).filter((permission) => !drop(permission));
  if (kept.length > 0) entry.permissions = kept;
  else delete entry.permissions;
}

const exportMetadata: Operation = async (value, context, request) => {
  noArgs(value);
  const { draft } = context;
  const metadata = cloneDocument(draft.document);
  if (request.version !== 2) return metadata;
  return { resource_version: draft.baseVersion + (draft.changed ? 1 : 0), metadata };
};

/** A permission for admin, who always sees everything, is refused in a whole document as by add_remote_schema_permissions. */
function refuseAdminPermissions(document: MetadataDocument, path: string): void {
  document.remote_schemas.forEach((entry, index) => {
    const at = (entry.permissions ?? []).findIndex((permission) => permission.role === ADMIN_ROLE);
    if (at === -1) return;
    const permissionPath = childPath(childPath(childPath(childPath(path, 'remote_schemas'), index), 'permissions'), at);
    throw new MetadataApiError('constraint-violation', 'cannot define permission for admin role', childPath(permissionPath, 'role'));
  });
}

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
  refuseAdminPermissions(document, wrapped ? childPath(ARGS, 'metadata') : ARGS);
  const candidate = await plan(context, document);
  const inconsistent = inconsistentObjects(context, candidate.problems, document);
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
  const inconsistent = inconsistentObjects(context, candidate.problems, draft.document);
  return inconsistent.length === 0
    ? { message: 'success', is_consistent: true }
    : { message: 'success', is_consistent: false, inconsistent_objects: inconsistent };
};

const getInconsistentMetadata: Operation = async (value, context) => {
  noArgs(value);
  const inconsistent = inconsistentObjects(context, currentProblems(context), context.draft.document);
  return { is_consistent: inconsistent.length === 0, inconsistent_objects: inconsistent };
};

const dropInconsistentMetadata: Operation = async (value, context) => {
  noArgs(value);
  const { document } = context.draft;
  const names = new Set(inconsistentObjects(context, currentProblems(context), document).map((object) => object.name));
  if (names.size === 0) return SUCCESS;
  const next = cloneDocument(document);
  // A remote goes with its permissions; of a consistent remote, only its inconsistent permissions go.
  next.remote_schemas = next.remote_schemas.filter((entry) => !names.has(remoteSchemaObjectName(entry.name)));
  for (const entry of next.remote_schemas) {
    withoutPermissions(entry, (permission) => names.has(permissionObjectName(entry.name, permission.role)));
    withoutRelationships(entry, (type, relationship) => names.has(relationshipObjectName(entry.name, type, relationship.name)));
  }
  accept(context, next, await plan(context, next), true);
  return SUCCESS;
};

/** How long the steps of a `bulk` may hold the event loop before it lets other work through, in milliseconds. */
const BULK_SLICE_MS = 20;

/** Deeper nesting of `bulk` is refused: it has no use, and unbounded recursion would exhaust the stack. */
export const MAX_BULK_DEPTH = 8;

const bulk: Operation = async (value, context) => {
  if (!Array.isArray(value)) throw new MetadataApiError('invalid-params', 'expected an array', ARGS);
  if (context.depth >= MAX_BULK_DEPTH) {
    throw new MetadataApiError('invalid-params', `bulk operations can be nested at most ${String(MAX_BULK_DEPTH)} deep`, ARGS);
  }
  const results: unknown[] = [];
  let turn = performance.now();
  for (const [index, item] of value.entries()) {
    // A bulk of thousands of steps lets the server's other requests through now and then.
    if (performance.now() - turn > BULK_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
      turn = performance.now();
    }
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
  create_remote_schema_remote_relationship: createRemoteSchemaRemoteRelationship,
  update_remote_schema_remote_relationship: updateRemoteSchemaRemoteRelationship,
  delete_remote_schema_remote_relationship: deleteRemoteSchemaRemoteRelationship,
  export_metadata: exportMetadata,
  replace_metadata: replaceMetadata,
  reload_metadata: reloadMetadata,
  get_inconsistent_metadata: getInconsistentMetadata,
  drop_inconsistent_metadata: dropInconsistentMetadata,
  bulk,
  ...LOCKDOWN_OPERATIONS,
};
