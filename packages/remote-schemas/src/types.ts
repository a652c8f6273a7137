import type { ExecutionResult, GraphQLSchema } from 'graphql';
import type { ForwardedSession, Logger } from './options.js';
import type { RemoteRelationship } from './relationships/types.js';

/** A header sent to the remote: a literal value, or one read from the environment at call time. */
export type RemoteSchemaHeader =
  | { name: string; value: string }
  | { name: string; value_from_env: string };

export interface TypeNamesCustomization {
  prefix?: string;
  suffix?: string;
  /** Original type name -> new name. Wins over prefix/suffix. */
  mapping?: Record<string, string>;
}

export interface FieldNamesCustomization {
  /** The original (remote) name of the type whose fields are renamed. */
  parent_type: string;
  prefix?: string;
  suffix?: string;
  mapping?: Record<string, string>;
}

export interface RemoteSchemaCustomization {
  root_fields_namespace?: string;
  type_names?: TypeNamesCustomization;
  field_names?: FieldNamesCustomization[];
}

/** A remote schema's definition as stored in metadata (defaults not filled in). */
export interface RemoteSchemaDefinition {
  url?: string;
  url_from_env?: string;
  headers?: RemoteSchemaHeader[];
  /** @default false */
  forward_client_headers?: boolean;
  /** @default 60 */
  timeout_seconds?: number;
  customization?: RemoteSchemaCustomization;
}

/** The part of a remote one role may use: a subset of the remote's SDL, with `@preset` directives. */
export interface RemoteSchemaPermission {
  role: string;
  /** GraphQL SDL in the remote's own names (before customization), as written by the user. */
  schema: string;
}

export interface RemoteSchemaEntry {
  name: string;
  definition: RemoteSchemaDefinition;
  /** Role-based schemas; used only when the registry enables remote schema permissions. */
  permissions?: readonly RemoteSchemaPermission[];
  /** Fields added to this remote's object types whose values come from remotes (see `RemoteRelationship`). */
  relationships?: readonly RemoteRelationship[];
}

/** Stable codes; the metadata API maps them to HTTP 400 bodies. */
export type RemoteSchemaErrorCode = 'remote-schema-error' | 'invalid-params' | 'invalid-configuration' | 'validation-failed';

/**
 * Why one remote, or one role's permission on it (`role` set), could not be part of a schema. A
 * permission that cannot be enforced never widens access: that role sees nothing of that remote.
 */
export interface RemoteSchemaProblem {
  name: string;
  /** Set for a problem of the permission of this role on remote `name`. */
  role?: string;
  /** Set for a problem of a relationship of remote `name`: its type (the remote's own name) and name. */
  relationship?: { type_name: string; name: string };
  code: RemoteSchemaErrorCode;
  /** The part of the remote's definition at fault, when one is (keys and indexes from the definition). */
  field?: ReadonlyArray<string | number>;
  /**
   * Human-readable, e.g. `Inconsistent object: Duplicate remote field 'user'`, or for a permission
   * `validation for the given role-based schema failed because …`.
   */
  message: string;
}

/** A candidate state computed by `plan()`: nothing is live until `commit()`. */
export interface RegistryPlan {
  readonly schema: GraphQLSchema;
  /** Remotes of the desired state that could not be included, in the order given. */
  readonly problems: readonly RemoteSchemaProblem[];
}

export interface PlanOptions {
  /**
   * Remotes to introspect again even when their definition did not change (`reload_remote_schema`,
   * `reload_metadata`). `'all'` reloads every remote. Remotes whose definition changed, and remotes
   * not loaded yet, are always introspected.
   */
  reload?: Iterable<string> | 'all';
}

/**
 * What serving a registry with remote schema permissions needs besides `schemaFor`: how to find a
 * request's session before its schema is chosen.
 */
export interface RegistryPermissions {
  /**
   * The session of a request, from the context Envelop's `onEnveloped` sees (before the GraphQL
   * context is built): the registry's `getSession` option. `undefined`: no session (served the
   * live schema, as admin is).
   */
  getSession(context: unknown): ForwardedSession | undefined;
}

/**
 * The registry of remote schemas. An embedding app may hand `useRemoteSchemas` a wrapper of one (a
 * `Proxy`, a decorator that logs): every member below is read through the object given, none is
 * looked up by the object's identity, so a wrapper that passes them on is served exactly as the
 * registry it wraps.
 */
export interface RemoteSchemaRegistry {
  /** The live schema (local schema + every consistent remote): what admin sees. */
  readonly schema: GraphQLSchema;
  /**
   * Remote schema permissions, when the registry enforces them (`enableRemoteSchemaPermissions`):
   * then `useRemoteSchemas` chooses each request's schema with `schemaFor(permissions.getSession(context))`
   * and refuses a request of a role that does not run on its role's schema. `null`: permissions
   * are off, every request is served the live schema. `useRemoteSchemas` and
   * `remoteOperationRunner` refuse with a `TypeError` an object on which this member is missing
   * (a wrapper that forgot it): they never serve a registry as if its permissions were off.
   */
  readonly permissions: RegistryPermissions | null;
  /** The registry's `logger`: `useRemoteSchemas` logs through it too. */
  readonly logger: Logger;
  /**
   * The schema a session is served. Without remote schema permissions (or for admin, or without a
   * session), the live schema. With them, the role's own schema: the local schema and, of each
   * remote, only what a consistent permission of that role grants (nothing of a remote without
   * one), preset arguments and input fields left out. Built lazily per role from the live state
   * and kept in a bounded cache until the next swap; a request keeps the schema it started with.
   */
  schemaFor(session: { role: string; isAdmin?: boolean } | undefined): GraphQLSchema;
  /** Called after every swap of the live schema (commit or a background retry that succeeded). */
  onSchemaChange(listener: (schema: GraphQLSchema) => void): () => void;
  /**
   * Computes the schema for the desired list of remotes, in order; a remote that clashes with an
   * earlier one (or the local schema) is reported as a problem with `invalid-configuration`.
   * Never changes the live state.
   */
  plan(desired: readonly RemoteSchemaEntry[], options?: PlanOptions): Promise<RegistryPlan>;
  /** Makes a plan live: swaps the schema; remotes whose problem is `remote-schema-error` are retried in the background. */
  commit(plan: RegistryPlan): void;
  /** Remotes of the live state that are not part of the schema, with the reason. */
  problems(): readonly RemoteSchemaProblem[];
  /** The raw introspection result of a remote of the live state (`introspect_remote_schema`). */
  introspect(name: string): Promise<ExecutionResult>;
  dispose(): Promise<void>;
}
