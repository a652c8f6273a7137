/**
 * The conversion of Hasura v2 metadata (the value of `export_metadata`, either version of its
 * answer) into the svc-graphql document: its remote schemas and their permissions, the
 * `x-hasura-` prefix renamed to `x-svc-` (header names, session variables named by `@preset`),
 * everything else kept as written (remote relationships between remote schemas, query
 * collections, the allow list, API limits and introspection options included), and a count of
 * what was left out.
 */
import { Kind, parse as parseGraphql, visit, type ConstValueNode, type ValueNode } from 'graphql';
import { convertLockdownParts, LOCKDOWN_KEYS, type ImportedLockdownParts } from './lockdown.js';
import { convertRemoteRelationships } from './relationships.js';

/** A path that cannot be read, or that is not Hasura metadata. `where` is the file at fault, as the user would name it. */
export class ImportError extends Error {
  override readonly name = 'ImportError';
  constructor(
    readonly where: string,
    message: string,
  ) {
    super(message);
  }
}

/** One kind of Hasura metadata svc-graphql does not have, and how many of it were left out. */
export interface SkippedKind {
  /** As printed: `tables`, `REST endpoints`, … */
  kind: string;
  count: number;
}

export interface ImportResult {
  /** The svc-graphql metadata document: `{version: 3, remote_schemas: […]}`, then the lock-down parts that are set. */
  document: { version: 3; remote_schemas: Array<Record<string, unknown>> } & ImportedLockdownParts;
  /** Names of the environment variables the document reads (`url_from_env`, `value_from_env`), sorted, each once. */
  environment: string[];
  /** What was left out, in the order of {@link SKIPPED_KINDS}, then unknown top-level keys in document order. */
  skipped: SkippedKind[];
}

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const HASURA_PREFIX = /^x-hasura-/i;
const SVC_PREFIX = 'x-svc-';

/** `X-Hasura-User-Id` → `x-svc-User-Id`; anything else unchanged. */
export function renameHasuraPrefix(name: string): string {
  return name.replace(HASURA_PREFIX, SVC_PREFIX);
}

/**
 * The kinds of Hasura metadata that are left out, in the order they are reported. The settings
 * objects (the `… config` kinds) count 1 when they set anything.
 */
export const SKIPPED_KINDS = [
  { id: 'sources', singular: 'source', plural: 'sources' },
  { id: 'tables', singular: 'table', plural: 'tables' },
  { id: 'functions', singular: 'function', plural: 'functions' },
  { id: 'event_triggers', singular: 'event trigger', plural: 'event triggers' },
  { id: 'remote_relationships', singular: 'remote relationship', plural: 'remote relationships' },
  { id: 'native_queries', singular: 'native query', plural: 'native queries' },
  { id: 'logical_models', singular: 'logical model', plural: 'logical models' },
  { id: 'stored_procedures', singular: 'stored procedure', plural: 'stored procedures' },
  { id: 'actions', singular: 'action', plural: 'actions' },
  { id: 'custom_types', singular: 'custom type', plural: 'custom types' },
  { id: 'cron_triggers', singular: 'cron trigger', plural: 'cron triggers' },
  { id: 'rest_endpoints', singular: 'REST endpoint', plural: 'REST endpoints' },
  { id: 'inherited_roles', singular: 'inherited role', plural: 'inherited roles' },
  { id: 'network', singular: 'network config', plural: 'network configs' },
  { id: 'metrics_config', singular: 'metrics config', plural: 'metrics configs' },
  { id: 'backend_configs', singular: 'backend config', plural: 'backend configs' },
  { id: 'opentelemetry', singular: 'OpenTelemetry config', plural: 'OpenTelemetry configs' },
] as const;

type SkippedId = (typeof SKIPPED_KINDS)[number]['id'];

/** Top-level keys whose whole content is left out, each counted as one kind. */
const LISTS: readonly SkippedId[] = [
  'actions',
  'cron_triggers',
  'rest_endpoints',
  'inherited_roles',
];
const SETTINGS: readonly SkippedId[] = [
  'network',
  'metrics_config',
  'backend_configs',
  'opentelemetry',
];
/** Top-level keys read here: the rest is reported by its own name. */
const KNOWN_KEYS = new Set<string>(['version', 'remote_schemas', 'sources', 'tables', 'functions', 'custom_types', ...LISTS, ...SETTINGS, ...LOCKDOWN_KEYS]);

function listLength(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

/**
 * Converts Hasura metadata (the value of `export_metadata`, either version of its answer) into the
 * svc-graphql document. `where` names the input in error messages.
 */
export function convertHasuraMetadata(input: unknown, where: string): ImportResult {
  let metadata = input;
  // `export_metadata` with `"version": 2` answers `{resource_version, metadata}`.
  if (isObject(metadata) && isObject(metadata['metadata']) && typeof metadata['resource_version'] === 'number') {
    metadata = metadata['metadata'];
  }
  if (!isObject(metadata)) throw notMetadata(where, 'expected an object holding the whole metadata');
  const version = metadata['version'];
  if (version === undefined) {
    // Hasura 1.x exports carried no version: tables, functions and remote schemas at the top.
    if (!('tables' in metadata) && !('remote_schemas' in metadata) && !('functions' in metadata)) {
      throw notMetadata(where, 'no "version", "tables" or "remote_schemas"');
    }
  } else if (version !== 2 && version !== 3) {
    throw notMetadata(where, `unsupported "version" ${JSON.stringify(version)} (expected 2 or 3)`);
  }

  const counts = new Map<string, number>();
  const add = (id: string, count: number) => {
    if (count > 0) counts.set(id, (counts.get(id) ?? 0) + count);
  };

  const remoteSchemas = metadata['remote_schemas'] ?? [];
  if (!Array.isArray(remoteSchemas)) throw notMetadata(where, '"remote_schemas" is not a list');
  const environment = new Set<string>();
  const entries = remoteSchemas.map((entry, index) => {
    const path = `remote_schemas[${String(index)}]`;
    if (!isObject(entry) || typeof entry['name'] !== 'string' || !isObject(entry['definition'])) {
      throw notMetadata(where, `${path} is not a remote schema (expected "name" and "definition")`);
    }
    // Relationships to other remote schemas are kept; those to a database are counted as left out.
    const relationships = convertRemoteRelationships(entry['remote_relationships']);
    add('remote_relationships', relationships.skipped);
    return convertRemoteSchema(entry, path, environment, where, relationships.kept);
  });

  const sources = metadata['sources'];
  if (Array.isArray(sources)) {
    add('sources', sources.length);
    for (const source of sources) {
      if (!isObject(source)) continue;
      countTables(source['tables'], add);
      add('functions', listLength(source['functions']));
      add('native_queries', listLength(source['native_queries']));
      add('logical_models', listLength(source['logical_models']));
      add('stored_procedures', listLength(source['stored_procedures']));
    }
  }
  // Metadata version 2 (and Hasura 1.x): one database, its tables and functions at the top.
  countTables(metadata['tables'], add);
  add('functions', listLength(metadata['functions']));

  for (const id of LISTS) add(id, listLength(metadata[id]));
  const customTypes = metadata['custom_types'];
  if (isObject(customTypes)) {
    for (const group of ['scalars', 'enums', 'input_objects', 'objects']) add('custom_types', listLength(customTypes[group]));
  }
  for (const id of SETTINGS) {
    const value = metadata[id];
    if (isObject(value) && Object.keys(value).length > 0) add(id, 1);
  }

  const skipped: SkippedKind[] = [];
  for (const kind of SKIPPED_KINDS) {
    const count = counts.get(kind.id);
    if (count !== undefined) skipped.push({ kind: count === 1 ? kind.singular : kind.plural, count });
  }
  // Keys newer than this importer are not lost silently: they are reported by their own name.
  for (const [key, value] of Object.entries(metadata)) {
    if (KNOWN_KEYS.has(key) || value === null) continue;
    const count = Array.isArray(value) ? value.length : isObject(value) ? Math.min(1, Object.keys(value).length) : 1;
    if (count > 0) skipped.push({ kind: key, count });
  }

  // Query collections, the allow list, API limits and introspection options are kept.
  const lockdown = convertLockdownParts(metadata, {
    rename: renameHasuraPrefix,
    copyWithoutNulls,
    fail: (reason) => {
      throw notMetadata(where, reason);
    },
  });
  return {
    document: { version: 3, remote_schemas: entries, ...lockdown },
    environment: [...environment].sort(),
    skipped,
  };
}

function countTables(tables: unknown, add: (id: string, count: number) => void): void {
  if (!Array.isArray(tables)) return;
  add('tables', tables.length);
  for (const table of tables) {
    if (!isObject(table)) continue;
    add('event_triggers', listLength(table['event_triggers']));
    add('remote_relationships', listLength(table['remote_relationships']));
  }
}

export function notMetadata(where: string, reason: string): ImportError {
  return new ImportError(where, `not Hasura metadata: ${reason}`);
}

/**
 * A plain copy of JSON-like data with `null` members left out (Hasura writes `"comment": null`,
 * `"url_from_env": null` for "not set"). Built with `Object.fromEntries`, so a `__proto__` key
 * stays a key.
 */
function copyWithoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyWithoutNulls);
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, member]) => member !== null)
        .map(([key, member]) => [key, copyWithoutNulls(member)]),
    );
  }
  return value;
}

function convertRemoteSchema(entry: JsonObject, path: string, environment: Set<string>, where: string, relationships: JsonObject[] | undefined): JsonObject {
  const definition = copyWithoutNulls(entry['definition']) as JsonObject;
  if (typeof definition['url_from_env'] === 'string') environment.add(definition['url_from_env']);
  const headers = definition['headers'];
  if (Array.isArray(headers)) {
    definition['headers'] = headers.map((header: unknown) => {
      if (!isObject(header)) return header;
      if (typeof header['value_from_env'] === 'string') environment.add(header['value_from_env']);
      return typeof header['name'] === 'string' ? { ...header, name: renameHasuraPrefix(header['name']) } : header;
    });
  }

  const result: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(entry)) {
    // Nulls mean "not set".
    if (value === null) continue;
    if (key === 'remote_relationships') {
      if (relationships !== undefined) result.push([key, relationships]);
    } else if (key === 'definition') result.push([key, definition]);
    else if (key === 'permissions') result.push([key, convertPermissions(value, `${path}.permissions`, where)]);
    else result.push([key, copyWithoutNulls(value)]);
  }
  return Object.fromEntries(result);
}

function convertPermissions(value: unknown, path: string, where: string): unknown[] {
  if (!Array.isArray(value)) throw notMetadata(where, `${path} is not a list`);
  return value.map((permission, index) => {
    const schema = isObject(permission) && isObject(permission['definition']) ? permission['definition']['schema'] : undefined;
    if (typeof schema !== 'string') {
      throw notMetadata(where, `${path}[${String(index)}] is not a remote schema permission (expected "role" and "definition.schema")`);
    }
    const copy = copyWithoutNulls(permission) as JsonObject;
    (copy['definition'] as JsonObject)['schema'] = renamePresetSessionVariables(schema);
    return copy;
  });
}

/**
 * The role's SDL with every session variable a `@preset` names renamed from `x-hasura-…` to
 * `x-svc-…` (strings in the preset's value, in lists and input objects too; a `static: true`
 * preset is a literal and stays as it is). Only those strings change: layout, comments,
 * descriptions and the `schema {}` block are kept as written. An SDL that does not parse is
 * returned unchanged (the server will say what is wrong with it).
 */
export function renamePresetSessionVariables(sdl: string): string {
  if (!/x-hasura-/i.test(sdl)) return sdl;
  let document;
  try {
    document = parseGraphql(sdl);
  } catch {
    return sdl;
  }
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const collect = (value: ValueNode | ConstValueNode) => {
    if (value.kind === Kind.STRING) {
      if (!HASURA_PREFIX.test(value.value) || value.loc === undefined) return;
      const { start, end } = value.loc;
      const open = value.block ? 3 : 1;
      // Written plainly (no escape in the prefix): replace just the prefix, keeping the rest as written.
      if (HASURA_PREFIX.test(sdl.slice(start + open, start + open + 'x-hasura-'.length))) {
        edits.push({ start: start + open, end: start + open + 'x-hasura-'.length, text: SVC_PREFIX });
      } else {
        edits.push({ start, end, text: JSON.stringify(renameHasuraPrefix(value.value)) });
      }
    } else if (value.kind === Kind.LIST) {
      value.values.forEach(collect);
    } else if (value.kind === Kind.OBJECT) {
      for (const field of value.fields) collect(field.value);
    }
  };
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'preset') return;
      const isStatic = node.arguments?.some(
        (argument) => argument.name.value === 'static' && argument.value.kind === Kind.BOOLEAN && argument.value.value,
      );
      if (isStatic) return;
      const value = node.arguments?.find((argument) => argument.name.value === 'value');
      if (value) collect(value.value);
    },
  });
  let result = sdl;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  }
  return result;
}
