import type { LockdownMetadata } from './lockdown-document.js';
import type { RemoteRelationshipDefinition, RemoteSchemaDefinition, RemoteSchemaEntry } from './registry.js';

/** A role-based schema of a remote (`add_remote_schema_permissions`). */
export interface RemoteSchemaPermissionMetadata {
  role: string;
  definition: { schema: string };
  comment?: string;
}

/** One remote relationship of a type (`create_remote_schema_remote_relationship`), kept as written. */
export interface RemoteRelationshipMetadata {
  name: string;
  definition: RemoteRelationshipDefinition;
}

/** The relationships of one type of a remote, as Hasura exports them. */
export interface TypeRelationshipsMetadata {
  /** The remote's own name of the type. */
  type_name: string;
  relationships: RemoteRelationshipMetadata[];
}

/** One entry of `remote_schemas` in the metadata document. */
export interface RemoteSchemaMetadata {
  name: string;
  /** Stored normalized: `forward_client_headers` and `timeout_seconds` always present. */
  definition: RemoteSchemaDefinition;
  comment?: string;
  permissions?: RemoteSchemaPermissionMetadata[];
  /** Only when there is one. */
  remote_relationships?: TypeRelationshipsMetadata[];
}

/**
 * The metadata document as `export_metadata` shows it and the stores keep it; the lock-down parts
 * (query collections, allow list, API limits, introspection options) follow `remote_schemas`.
 */
export interface MetadataDocument extends LockdownMetadata {
  version: 3;
  remote_schemas: RemoteSchemaMetadata[];
}

/** One metadata object that is not part of the live schema, in Hasura's shape. */
export interface InconsistentObject {
  type: 'remote_schema' | 'remote_schema_permission' | 'remote_schema_remote_relationship';
  name: string;
  reason: string;
  definition: unknown;
  message?: string;
}

export function emptyDocument(): MetadataDocument {
  return { version: 3, remote_schemas: [] };
}

/** Documents are plain JSON; a deep copy keeps callers from mutating the live state. */
export function cloneDocument(document: MetadataDocument): MetadataDocument {
  return structuredClone(document);
}

/**
 * What the registry is asked to plan for a document. Permissions are handed over only while they
 * are enabled: otherwise they are kept in the document and exported, but neither validated nor
 * enforced.
 */
export function registryEntries(document: MetadataDocument, permissionsEnabled: boolean): RemoteSchemaEntry[] {
  return document.remote_schemas.map(({ name, definition, permissions, remote_relationships: relationships }) => {
    const entry: RemoteSchemaEntry =
      permissionsEnabled && permissions !== undefined
        ? { name, definition, permissions: permissions.map(({ role, definition: { schema } }) => ({ role, schema })) }
        : { name, definition };
    if (relationships === undefined) return entry;
    return {
      ...entry,
      relationships: relationships.flatMap(({ type_name, relationships: list }) =>
        list.map((relationship) => ({ type_name, name: relationship.name, definition: relationship.definition })),
      ),
    };
  });
}

export const INCONSISTENT_PREFIX = 'Inconsistent object: ';

/** `reason` always starts with `Inconsistent object: `; registry messages may already carry it. */
export function inconsistentReason(message: string): string {
  return message.startsWith(INCONSISTENT_PREFIX) ? message : INCONSISTENT_PREFIX + message;
}
