import { MetadataApiError } from './errors.js';
import { LOCKDOWN_OPERATION_TYPES } from './lockdown-operations.js';
import { childPath, expectObject, rejectUnknownKeys } from './validation.js';

export const OPERATION_TYPES = [
  'add_remote_schema',
  'update_remote_schema',
  'remove_remote_schema',
  'reload_remote_schema',
  'introspect_remote_schema',
  'add_remote_schema_permissions',
  'drop_remote_schema_permissions',
  'create_remote_schema_remote_relationship',
  'update_remote_schema_remote_relationship',
  'delete_remote_schema_remote_relationship',
  'export_metadata',
  'replace_metadata',
  'reload_metadata',
  'get_inconsistent_metadata',
  'drop_inconsistent_metadata',
  'bulk',
  ...LOCKDOWN_OPERATION_TYPES,
] as const;

export type OperationType = (typeof OPERATION_TYPES)[number];

/** `{"type": T, "args": {...}, "resource_version"?: n, "version"?: 1 | 2}`, checked. */
export interface MetadataRequest {
  type: OperationType;
  args: unknown;
  resourceVersion?: number;
  version: 1 | 2;
}

function isOperationType(value: string): value is OperationType {
  return (OPERATION_TYPES as readonly string[]).includes(value);
}

/** Anything wrong with the envelope itself is `parse-failed`, as in Hasura. */
export function parseMetadataRequest(body: unknown, path = '$'): MetadataRequest {
  const object = expectObject(body, path, 'parse-failed');
  rejectUnknownKeys(object, ['type', 'args', 'resource_version', 'version'], path, 'parse-failed');
  const type = object['type'];
  if (type === undefined) throw new MetadataApiError('parse-failed', 'key "type" not found', path);
  if (typeof type !== 'string') throw new MetadataApiError('parse-failed', 'expected a string', childPath(path, 'type'));
  if (!isOperationType(type)) {
    throw new MetadataApiError('parse-failed', `unknown metadata operation "${type}"`, childPath(path, 'type'));
  }
  const request: MetadataRequest = { type, args: object['args'], version: 1 };
  const resourceVersion = object['resource_version'];
  if (resourceVersion !== undefined && resourceVersion !== null) {
    if (typeof resourceVersion !== 'number' || !Number.isSafeInteger(resourceVersion) || resourceVersion < 0) {
      throw new MetadataApiError('parse-failed', 'expected a non-negative integer', childPath(path, 'resource_version'));
    }
    request.resourceVersion = resourceVersion;
  }
  const version = object['version'];
  if (version !== undefined && version !== null) {
    if (version !== 1 && version !== 2) throw new MetadataApiError('parse-failed', 'expected 1 or 2', childPath(path, 'version'));
    request.version = version;
  }
  return request;
}
