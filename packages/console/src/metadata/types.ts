/** The metadata document and its parts, as `export_metadata` shows them. */

export interface RemoteSchemaHeader {
  name: string;
  value?: string;
  value_from_env?: string;
}

export interface NameCustomization {
  prefix?: string;
  suffix?: string;
  mapping?: Record<string, string>;
}

export interface FieldNamesCustomization extends NameCustomization {
  parent_type: string;
}

export interface RemoteSchemaCustomization {
  root_fields_namespace?: string;
  type_names?: NameCustomization;
  field_names?: FieldNamesCustomization[];
}

export interface RemoteSchemaDefinition {
  url?: string;
  url_from_env?: string;
  headers?: RemoteSchemaHeader[];
  forward_client_headers?: boolean;
  timeout_seconds?: number;
  customization?: RemoteSchemaCustomization;
}

export interface RemoteSchemaPermission {
  role: string;
  definition: { schema: string };
  comment?: string;
}

export interface RemoteSchemaMetadata {
  name: string;
  definition: RemoteSchemaDefinition;
  comment?: string;
  permissions?: RemoteSchemaPermission[];
  /** Kept as the server exports it; the console does not edit relationships yet. */
  remote_relationships?: unknown[];
}

export interface MetadataDocument {
  version: number;
  remote_schemas: RemoteSchemaMetadata[];
  [key: string]: unknown;
}

/** An object of the document that is not part of the schema, with the server's reason. */
export interface InconsistentObject {
  type: string;
  name: string;
  reason: string;
  definition?: unknown;
  message?: unknown;
}

export interface ConsistencyReport {
  is_consistent: boolean;
  inconsistent_objects?: InconsistentObject[];
}

/** The inconsistency of one remote schema itself, if it has one. */
export function remoteInconsistency(objects: readonly InconsistentObject[], name: string): InconsistentObject | undefined {
  return objects.find((object) => object.type === 'remote_schema' && object.name === `remote_schema ${name}`);
}

/** The inconsistent objects that belong to one remote schema (its permissions, its relationships). */
export function dependentInconsistencies(objects: readonly InconsistentObject[], name: string): InconsistentObject[] {
  return objects.filter(
    (object) => object.type !== 'remote_schema' && (object.name.endsWith(` on remote_schema ${name}`) || object.name.endsWith(` in remote schema ${name}`)),
  );
}

/** Every role named by a permission, sorted. */
export function knownRoles(document: MetadataDocument | undefined): string[] {
  const roles = new Set<string>();
  for (const remote of document?.remote_schemas ?? []) for (const permission of remote.permissions ?? []) roles.add(permission.role);
  return [...roles].sort();
}
