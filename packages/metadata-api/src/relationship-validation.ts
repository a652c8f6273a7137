/**
 * The shape of remote relationships: the arguments of their metadata calls and the
 * `remote_relationships` of a document. Whether a relationship fits its remotes (types, fields,
 * arguments) is decided by the registry, against their schemas; here only what can be told from
 * the JSON itself, each refusal at the path of the offending value.
 */
import type { RemoteRelationshipMetadata, TypeRelationshipsMetadata } from './document.js';
import { MetadataApiError } from './errors.js';
import type { RemoteFieldPath, RemoteRelationshipDefinition } from './registry.js';
import {
  childPath,
  optional,
  rejectUnknownKeys,
  required,
  validateGraphqlName,
  validateName,
  type JsonObject,
} from './validation.js';

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
/** Deeper `remote_field` levels or argument values are refused: no schema needs them, and recursion must stay bounded. */
const MAX_DEPTH = 64;

function invalid(path: string, message: string): MetadataApiError {
  return new MetadataApiError('invalid-params', message, path);
}

/** What a JSON value is, for messages: `expected an object, got a list`. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'string' ? 'a string' : typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'an object';
}

function expectObject(value: unknown, path: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(path, `expected an object, got ${kindOf(value)}`);
  return value as JsonObject;
}

function expectList(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(path, `expected a list, got ${kindOf(value)}`);
  return value;
}

/** Longest relationship name: it names a field, and objects of the metadata. */
const MAX_RELATIONSHIP_NAME_LENGTH = 255;

/**
 * An argument value: any JSON; a string starting with `$` names a field of the source object, so
 * the rest must be a GraphQL name (`"$"` alone: `Empty variable name`, as Hasura says).
 */
function validateValue(value: unknown, path: string, depth: number): void {
  if (depth > MAX_DEPTH) throw invalid(path, 'nested too deeply');
  if (typeof value === 'string' && value.startsWith('$')) {
    const name = value.slice(1);
    if (name === '') throw invalid(path, 'Empty variable name');
    if (!GRAPHQL_NAME.test(name)) throw invalid(path, `Invalid variable name '${name}'`);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => validateValue(item, childPath(path, index), depth + 1));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) validateValue(item, childPath(path, key), depth + 1);
  }
}

function validateArguments(value: unknown, path: string, depth: number): Record<string, unknown> {
  const object = expectObject(value, path);
  for (const [name, item] of Object.entries(object)) {
    const itemPath = childPath(path, name);
    if (!GRAPHQL_NAME.test(name)) throw invalid(itemPath, `${JSON.stringify(name)} is an invalid key name`);
    validateValue(item, itemPath, depth + 1);
  }
  return object;
}

/** `{"<field>": {"arguments": {…}, "field"?: {…}}}`, one key per level. */
function validateRemoteField(value: unknown, path: string, depth = 0): RemoteFieldPath {
  if (depth > MAX_DEPTH) throw invalid(path, 'nested too deeply');
  const object = expectObject(value, path);
  const entries = Object.entries(object);
  if (entries.length === 0) throw invalid(path, 'Expecting one single mapping, received none');
  if (entries.length > 1) throw invalid(path, 'Expecting one single mapping, received too many');
  const [name, call] = entries[0]!;
  const callPath = childPath(path, name);
  if (!GRAPHQL_NAME.test(name)) throw invalid(callPath, `${JSON.stringify(name)} is an invalid field name`);
  const callObject = expectObject(call, callPath);
  rejectUnknownKeys(callObject, ['arguments', 'field'], callPath);
  const args = validateArguments(required(callObject, 'arguments', callPath), childPath(callPath, 'arguments'), depth);
  const field = optional(callObject, 'field');
  return { [name]: field === undefined ? { arguments: args } : { arguments: args, field: validateRemoteField(field, childPath(callPath, 'field'), depth + 1) } };
}

/** `{"to_remote_schema": {remote_schema, lhs_fields, remote_field, batch?}}`, kept as written. */
export function validateRelationshipDefinition(value: unknown, path: string): RemoteRelationshipDefinition {
  const object = expectObject(value, path);
  if (Object.hasOwn(object, 'to_source')) {
    throw invalid(childPath(path, 'to_source'), 'remote relationships to a database are not supported; only "to_remote_schema"');
  }
  rejectUnknownKeys(object, ['to_remote_schema'], path);
  const targetPath = childPath(path, 'to_remote_schema');
  const target = expectObject(required(object, 'to_remote_schema', path), targetPath);
  rejectUnknownKeys(target, ['remote_schema', 'lhs_fields', 'remote_field', 'batch'], targetPath);
  const remoteSchema = validateName(required(target, 'remote_schema', targetPath), childPath(targetPath, 'remote_schema'));
  const lhsPath = childPath(targetPath, 'lhs_fields');
  const lhs = expectList(required(target, 'lhs_fields', targetPath), lhsPath);
  const lhsFields = lhs.map((field, index) => validateGraphqlName(field, childPath(lhsPath, index)));
  const remoteField = validateRemoteField(required(target, 'remote_field', targetPath), childPath(targetPath, 'remote_field'));
  const definition: RemoteRelationshipDefinition = {
    to_remote_schema: { remote_schema: remoteSchema, lhs_fields: lhsFields, remote_field: remoteField },
  };
  const batch = optional(target, 'batch');
  if (batch !== undefined) {
    const batchPath = childPath(targetPath, 'batch');
    const batchObject = expectObject(batch, batchPath);
    rejectUnknownKeys(batchObject, ['argument', 'match_field'], batchPath);
    const argument = validateGraphqlName(required(batchObject, 'argument', batchPath), childPath(batchPath, 'argument'));
    const matchField = optional(batchObject, 'match_field');
    definition.to_remote_schema.batch =
      matchField === undefined ? { argument } : { argument, match_field: validateGraphqlName(matchField, childPath(batchPath, 'match_field')) };
  }
  return definition;
}

/** A relationship's name: it becomes a field name. */
export function validateRelationshipName(value: unknown, path: string): string {
  if (typeof value === 'string' && value.length > MAX_RELATIONSHIP_NAME_LENGTH) {
    throw invalid(path, `expected at most ${String(MAX_RELATIONSHIP_NAME_LENGTH)} characters`);
  }
  if (typeof value === 'string' && !GRAPHQL_NAME.test(value)) {
    throw invalid(path, `${JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)} is not a valid GraphQL name (letters, digits and underscores, not starting with a digit)`);
  }
  return validateGraphqlName(value, path);
}

/** `type_name`, or its synonym `type`; both given must agree. */
export function validateTypeName(object: JsonObject, path: string): string {
  const typeName = optional(object, 'type_name');
  const type = optional(object, 'type');
  if (typeName !== undefined && type !== undefined && typeName !== type) {
    throw invalid(childPath(path, 'type'), '"type" and "type_name" name different types');
  }
  const value = typeName ?? type;
  if (value === undefined) throw invalid(path, 'key "type_name" not found');
  return validateGraphqlName(value, childPath(path, typeName !== undefined ? 'type_name' : 'type'));
}

function validateRelationship(value: unknown, path: string): RemoteRelationshipMetadata {
  const object = expectObject(value, path);
  rejectUnknownKeys(object, ['name', 'definition'], path);
  return {
    name: validateRelationshipName(required(object, 'name', path), childPath(path, 'name')),
    definition: validateRelationshipDefinition(required(object, 'definition', path), childPath(path, 'definition')),
  };
}

/** The `remote_relationships` of a document's remote: `[{type_name, relationships: [{name, definition}]}]`. */
export function validateTypeRelationships(value: unknown, path: string, remote: string): TypeRelationshipsMetadata[] {
  expectList(value, path);
  const types = new Set<string>();
  const groups: TypeRelationshipsMetadata[] = [];
  (value as unknown[]).forEach((item, index) => {
    const itemPath = childPath(path, index);
    const object = expectObject(item, itemPath);
    rejectUnknownKeys(object, ['type_name', 'relationships'], itemPath);
    const typeName = validateGraphqlName(required(object, 'type_name', itemPath), childPath(itemPath, 'type_name'));
    if (types.has(typeName)) throw invalid(childPath(itemPath, 'type_name'), `the relationships of type "${typeName}" are given more than once`);
    types.add(typeName);
    const listPath = childPath(itemPath, 'relationships');
    const list = expectList(optional(object, 'relationships') ?? [], listPath);
    const names = new Set<string>();
    const relationships = list.map((relationship, position) => {
      const checked = validateRelationship(relationship, childPath(listPath, position));
      if (names.has(checked.name)) {
        throw new MetadataApiError(
          'already-exists',
          relationshipExistsMessage(checked.name, typeName, remote),
          childPath(childPath(listPath, position), 'name'),
        );
      }
      names.add(checked.name);
      return checked;
    });
    if (relationships.length > 0) groups.push({ type_name: typeName, relationships });
  });
  return groups;
}

/** `remote relationship with name "<name>" already exists on type "<T>" in remote schema "<n>"`. */
export function relationshipExistsMessage(name: string, type: string, remote: string): string {
  return `remote relationship with name "${name}" already exists on type "${type}" in remote schema "${remote}"`;
}
