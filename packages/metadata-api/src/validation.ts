/**
 * Request and document validation. Every refusal names the JSON path of the offending value so a
 * client sees `$.args.definition.timeout_seconds: expected a positive number`, not just "bad request".
 * Unknown keys are refused: a misspelt option must never be silently ignored.
 */
import { reservedVariableReason } from './environment.js';
import { MetadataApiError, type MetadataErrorCode } from './errors.js';
import { validateTypeRelationships } from './relationship-validation.js';
import type { MetadataDocument, RemoteSchemaMetadata, RemoteSchemaPermissionMetadata } from './document.js';
import { LOCKDOWN_KEYS } from './lockdown-document.js';
import { validateLockdownMetadata } from './lockdown-validation.js';
import type {
  FieldNamesCustomization,
  RemoteSchemaCustomization,
  RemoteSchemaDefinition,
  RemoteSchemaHeader,
  TypeNamesCustomization,
} from './registry.js';

export type JsonObject = Record<string, unknown>;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const GRAPHQL_NAME_TAIL = /^[_0-9A-Za-z]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// C0 controls, DEL and C1 controls.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
const MAX_NAME_LENGTH = 255;
/** The largest delay `setTimeout` honours, in whole seconds. */
export const MAX_TIMEOUT_SECONDS = 2_147_483;
export const DEFAULT_TIMEOUT_SECONDS = 60;

/** `$.a` for plain keys, `$["a b"]` otherwise, `$[3]` for indices. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${String(key)}]`;
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function invalid(path: string, message: string, code: MetadataErrorCode = 'invalid-params'): MetadataApiError {
  return new MetadataApiError(code, message, path);
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function expectObject(value: unknown, path: string, code: MetadataErrorCode = 'invalid-params'): JsonObject {
  if (!isObject(value)) throw invalid(path, 'expected an object', code);
  return value;
}

export function rejectUnknownKeys(
  object: JsonObject,
  allowed: readonly string[],
  path: string,
  code: MetadataErrorCode = 'invalid-params',
): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw invalid(childPath(path, key), `unknown field "${key}"`, code);
  }
}

/** Optional fields accept `null` as "not given", as Hasura does. */
export function optional(object: JsonObject, key: string): unknown {
  const value = object[key];
  return value === null ? undefined : value;
}

export function required(object: JsonObject, key: string, path: string, code: MetadataErrorCode = 'invalid-params'): unknown {
  const value = optional(object, key);
  if (value === undefined) throw invalid(path, `key "${key}" not found`, code);
  return value;
}

export function expectString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalid(path, 'expected a string');
  return value;
}

export function expectBoolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw invalid(path, 'expected a boolean');
  return value;
}

/** Remote schema names, roles: non-empty, at most 255 characters, no control characters. */
export function validateName(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(path, 'expected a non-empty string');
  if (value.length > MAX_NAME_LENGTH) throw invalid(path, `expected at most ${String(MAX_NAME_LENGTH)} characters`);
  if (CONTROL_CHARACTER.test(value)) throw invalid(path, 'must not contain control characters');
  return value;
}

export function validateGraphqlName(value: unknown, path: string): string {
  if (typeof value !== 'string' || !GRAPHQL_NAME.test(value)) throw invalid(path, 'expected a GraphQL name');
  if (value.startsWith('__')) throw invalid(path, 'names starting with "__" are reserved for introspection');
  return value;
}

function validatePrefix(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalid(path, 'expected a string');
  if (value !== '') validateGraphqlName(value, path);
  return value;
}

function validateSuffix(value: unknown, path: string): string {
  if (typeof value !== 'string' || !GRAPHQL_NAME_TAIL.test(value)) {
    throw invalid(path, 'expected letters, digits or underscores');
  }
  return value;
}

function validateMapping(value: unknown, path: string): Record<string, string> {
  const object = expectObject(value, path);
  const mapping: Record<string, string> = {};
  const sourceByTarget = new Map<string, string>();
  for (const [from, to] of Object.entries(object)) {
    const entryPath = childPath(path, from);
    if (!GRAPHQL_NAME.test(from)) throw invalid(entryPath, `"${from}" is not a GraphQL name`);
    if (from.startsWith('__')) throw invalid(entryPath, 'names starting with "__" are reserved for introspection');
    const target = validateGraphqlName(to, entryPath);
    const earlier = sourceByTarget.get(target);
    if (earlier !== undefined) {
      throw invalid(entryPath, `mapping is not distinct: "${earlier}" and "${from}" are both mapped to "${target}"`);
    }
    sourceByTarget.set(target, from);
    mapping[from] = target;
  }
  return mapping;
}

function validateTypeNames(value: unknown, path: string): TypeNamesCustomization {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['prefix', 'suffix', 'mapping'], path);
  return validateRenaming(object, path, {});
}

/** `prefix`, `suffix` and `mapping`, shared by `type_names` and each `field_names` entry. */
function validateRenaming<T extends TypeNamesCustomization>(object: Record<string, unknown>, path: string, result: T): T {
  const prefix = optional(object, 'prefix');
  if (prefix !== undefined) result.prefix = validatePrefix(prefix, childPath(path, 'prefix'));
  const suffix = optional(object, 'suffix');
  if (suffix !== undefined) result.suffix = validateSuffix(suffix, childPath(path, 'suffix'));
  const mapping = optional(object, 'mapping');
  if (mapping !== undefined) result.mapping = validateMapping(mapping, childPath(path, 'mapping'));
  return result;
}

function validateFieldNames(value: unknown, path: string): FieldNamesCustomization[] {
  if (!Array.isArray(value)) throw invalid(path, 'expected an array');
  const seen = new Set<string>();
  return value.map((item, index) => {
    const itemPath = childPath(path, index);
    const object = expectObject(item, itemPath);
    rejectUnknownKeys(object, ['parent_type', 'prefix', 'suffix', 'mapping'], itemPath);
    const parentType = required(object, 'parent_type', itemPath);
    const parentPath = childPath(itemPath, 'parent_type');
    if (typeof parentType !== 'string' || !GRAPHQL_NAME.test(parentType)) throw invalid(parentPath, 'expected a GraphQL name');
    if (seen.has(parentType)) throw invalid(parentPath, `parent_type "${parentType}" is given more than once`);
    seen.add(parentType);
    return validateRenaming<FieldNamesCustomization>(object, itemPath, { parent_type: parentType });
  });
}

function validateCustomization(value: unknown, path: string): RemoteSchemaCustomization {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['root_fields_namespace', 'type_names', 'field_names'], path);
  const result: RemoteSchemaCustomization = {};
  const namespace = optional(object, 'root_fields_namespace');
  if (namespace !== undefined) {
    result.root_fields_namespace = validateGraphqlName(namespace, childPath(path, 'root_fields_namespace'));
  }
  const typeNames = optional(object, 'type_names');
  if (typeNames !== undefined) result.type_names = validateTypeNames(typeNames, childPath(path, 'type_names'));
  const fieldNames = optional(object, 'field_names');
  if (fieldNames !== undefined) result.field_names = validateFieldNames(fieldNames, childPath(path, 'field_names'));
  return result;
}

function validateHeaders(value: unknown, path: string): RemoteSchemaHeader[] {
  if (!Array.isArray(value)) throw invalid(path, 'expected an array');
  return value.map((item, index): RemoteSchemaHeader => {
    const itemPath = childPath(path, index);
    const object = expectObject(item, itemPath);
    rejectUnknownKeys(object, ['name', 'value', 'value_from_env'], itemPath);
    const name = required(object, 'name', itemPath);
    if (typeof name !== 'string' || !HTTP_TOKEN.test(name)) {
      throw invalid(childPath(itemPath, 'name'), 'expected an HTTP header name');
    }
    const literal = optional(object, 'value');
    const fromEnv = optional(object, 'value_from_env');
    if (literal !== undefined && fromEnv !== undefined) {
      throw invalid(itemPath, 'only one of "value" and "value_from_env" can be given');
    }
    if (literal !== undefined) {
      const valuePath = childPath(itemPath, 'value');
      const text = expectString(literal, valuePath);
      // A header value with a line break or NUL cannot be sent; refuse it now rather than at call time.
      if (/[\r\n\0]/.test(text)) throw invalid(valuePath, 'must not contain line breaks or NUL characters');
      return { name, value: text };
    }
    if (fromEnv !== undefined) {
      return { name, value_from_env: validateEnvName(fromEnv, childPath(itemPath, 'value_from_env')) };
    }
    throw invalid(itemPath, 'one of "value" and "value_from_env" is required');
  });
}

function validateEnvName(value: unknown, path: string): string {
  if (typeof value !== 'string' || !ENV_NAME.test(value)) throw invalid(path, 'expected the name of an environment variable');
  const reserved = reservedVariableReason(value);
  if (reserved !== undefined) throw invalid(path, reserved);
  return value;
}

function validateUrl(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalid(path, 'expected an http or https URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(path, 'expected an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(path, 'expected an http or https URL');
  return value;
}

/**
 * Validates a RemoteSchemaDef and returns it normalized: the defaults of `forward_client_headers`
 * and `timeout_seconds` filled in (export always shows them), an empty `headers` list left out.
 */
export function validateDefinition(value: unknown, path: string): RemoteSchemaDefinition {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['url', 'url_from_env', 'headers', 'forward_client_headers', 'timeout_seconds', 'customization'], path);
  const url = optional(object, 'url');
  const urlFromEnv = optional(object, 'url_from_env');
  if (url !== undefined && urlFromEnv !== undefined) throw invalid(path, 'only one of "url" and "url_from_env" can be given');
  if (url === undefined && urlFromEnv === undefined) throw invalid(path, 'one of "url" and "url_from_env" is required');
  const result: RemoteSchemaDefinition = {};
  if (url !== undefined) result.url = validateUrl(url, childPath(path, 'url'));
  if (urlFromEnv !== undefined) result.url_from_env = validateEnvName(urlFromEnv, childPath(path, 'url_from_env'));

  const headers = optional(object, 'headers');
  if (headers !== undefined) {
    const list = validateHeaders(headers, childPath(path, 'headers'));
    if (list.length > 0) result.headers = list;
  }

  const forward = optional(object, 'forward_client_headers');
  result.forward_client_headers = forward === undefined ? false : expectBoolean(forward, childPath(path, 'forward_client_headers'));

  const timeout = optional(object, 'timeout_seconds');
  if (timeout === undefined) {
    result.timeout_seconds = DEFAULT_TIMEOUT_SECONDS;
  } else {
    const timeoutPath = childPath(path, 'timeout_seconds');
    if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0) throw invalid(timeoutPath, 'expected a positive number');
    if (timeout > MAX_TIMEOUT_SECONDS) throw invalid(timeoutPath, `expected a positive number of at most ${String(MAX_TIMEOUT_SECONDS)}`);
    result.timeout_seconds = timeout;
  }

  const customization = optional(object, 'customization');
  if (customization !== undefined) result.customization = validateCustomization(customization, childPath(path, 'customization'));
  return result;
}

export function validateComment(value: unknown, path: string): string | undefined {
  return value === undefined || value === null ? undefined : expectString(value, path);
}

/**
 * A permission's `definition`: `{schema}`, the role's SDL. Kept exactly as written (a `schema {}`
 * block, comments, descriptions and layout included) so that export gives back what was sent.
 */
export function validatePermissionDefinition(value: unknown, path: string): RemoteSchemaPermissionMetadata['definition'] {
  const definition = expectObject(value, path);
  rejectUnknownKeys(definition, ['schema'], path);
  return { schema: expectString(required(definition, 'schema', path), childPath(path, 'schema')) };
}

function validatePermission(value: unknown, path: string): RemoteSchemaPermissionMetadata {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['role', 'definition', 'comment'], path);
  const role = validateName(required(object, 'role', path), childPath(path, 'role'));
  const definition = validatePermissionDefinition(required(object, 'definition', path), childPath(path, 'definition'));
  const result: RemoteSchemaPermissionMetadata = { role, definition };
  const comment = validateComment(object['comment'], childPath(path, 'comment'));
  if (comment !== undefined) result.comment = comment;
  return result;
}

/** One `remote_schemas` entry of a whole document (`replace_metadata`, a stored file). */
export function validateRemoteSchemaMetadata(value: unknown, path: string): RemoteSchemaMetadata {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['name', 'definition', 'comment', 'permissions', 'remote_relationships'], path);
  const name = validateName(required(object, 'name', path), childPath(path, 'name'));
  const definition = validateDefinition(required(object, 'definition', path), childPath(path, 'definition'));
  const entry: RemoteSchemaMetadata = { name, definition };
  const comment = validateComment(object['comment'], childPath(path, 'comment'));
  if (comment !== undefined) entry.comment = comment;
  const permissions = optional(object, 'permissions');
  if (permissions !== undefined) {
    const permissionsPath = childPath(path, 'permissions');
    if (!Array.isArray(permissions)) throw invalid(permissionsPath, 'expected an array');
    const roles = new Set<string>();
    const list = permissions.map((item, index) => {
      const permission = validatePermission(item, childPath(permissionsPath, index));
      if (roles.has(permission.role)) {
        throw invalid(
          childPath(childPath(permissionsPath, index), 'role'),
          `permission for role "${permission.role}" on remote schema "${name}" already exists`,
          'already-exists',
        );
      }
      roles.add(permission.role);
      return permission;
    });
    if (list.length > 0) entry.permissions = list;
  }
  const relationships = optional(object, 'remote_relationships');
  if (relationships !== undefined) {
    const groups = validateTypeRelationships(relationships, childPath(path, 'remote_relationships'), name);
    if (groups.length > 0) entry.remote_relationships = groups;
  }
  return entry;
}

/** A whole metadata document (version 2 or 3; stored as 3). */
export function validateDocument(value: unknown, path: string): MetadataDocument {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['version', 'remote_schemas', ...LOCKDOWN_KEYS], path);
  const version = optional(object, 'version');
  if (version !== undefined && version !== 2 && version !== 3) {
    throw invalid(childPath(path, 'version'), 'expected metadata version 2 or 3');
  }
  const remoteSchemas = optional(object, 'remote_schemas') ?? [];
  const listPath = childPath(path, 'remote_schemas');
  if (!Array.isArray(remoteSchemas)) throw invalid(listPath, 'expected an array');
  const names = new Set<string>();
  const entries = remoteSchemas.map((item, index) => {
    const entry = validateRemoteSchemaMetadata(item, childPath(listPath, index));
    if (names.has(entry.name)) {
      throw invalid(
        childPath(childPath(listPath, index), 'name'),
        `remote schema with name "${entry.name}" already exists`,
        'already-exists',
      );
    }
    names.add(entry.name);
    return entry;
  });
  return { version: 3, remote_schemas: entries, ...validateLockdownMetadata(object, path) };
}
