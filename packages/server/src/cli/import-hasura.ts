/**
 * `svc-graphql import-hasura-metadata PATH`: reads a Hasura v2 metadata export (the JSON answer of
 * `export_metadata`, or a Hasura CLI `metadata/` directory) and prints the svc-graphql metadata
 * document holding its remote schemas and their permissions, ready for `replace_metadata`.
 *
 * The conversion renames the `x-hasura-` prefix to `x-svc-` (header names, session variables named
 * by `@preset`), keeps everything else as written, and names on stderr what it left out and the
 * environment variables the document reads. See docs/migrating-from-hasura.md.
 */
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Kind, parse as parseGraphql, visit, type ConstValueNode, type ValueNode } from 'graphql';
import { parse as parseYaml, YAMLParseError, type ScalarTag } from 'yaml';

/** Bounds on what one import reads. Real exports are far below them. */
export interface ImportLimits {
  /** Bytes of one YAML file of a directory. @default 16 MiB */
  maxFileBytes: number;
  /** Bytes of all YAML files of a directory together, and of the JSON export. @default 64 MiB */
  maxTotalBytes: number;
  /** YAML files read from a directory, includes counted once per `!include`. @default 20,000 */
  maxFiles: number;
  /** `!include` inside included files, at most this deep. @default 16 */
  maxIncludeDepth: number;
}

export const DEFAULT_IMPORT_LIMITS: Readonly<ImportLimits> = {
  maxFileBytes: 16 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  maxFiles: 20_000,
  maxIncludeDepth: 16,
};

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
  /** The svc-graphql metadata document: `{version: 3, remote_schemas: […]}`. */
  document: { version: 3; remote_schemas: Array<Record<string, unknown>> };
  /** Names of the environment variables the document reads (`url_from_env`, `value_from_env`), sorted, each once. */
  environment: string[];
  /** What was left out, in the order of {@link SKIPPED_KINDS}, then unknown top-level keys in document order. */
  skipped: SkippedKind[];
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
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
  { id: 'query_collections', singular: 'query collection', plural: 'query collections' },
  { id: 'allowlist', singular: 'allow list entry', plural: 'allow list entries' },
  { id: 'cron_triggers', singular: 'cron trigger', plural: 'cron triggers' },
  { id: 'rest_endpoints', singular: 'REST endpoint', plural: 'REST endpoints' },
  { id: 'inherited_roles', singular: 'inherited role', plural: 'inherited roles' },
  { id: 'api_limits', singular: 'API limits config', plural: 'API limits configs' },
  { id: 'graphql_schema_introspection', singular: 'introspection config', plural: 'introspection configs' },
  { id: 'network', singular: 'network config', plural: 'network configs' },
  { id: 'metrics_config', singular: 'metrics config', plural: 'metrics configs' },
  { id: 'backend_configs', singular: 'backend config', plural: 'backend configs' },
  { id: 'opentelemetry', singular: 'OpenTelemetry config', plural: 'OpenTelemetry configs' },
] as const;

type SkippedId = (typeof SKIPPED_KINDS)[number]['id'];

/** Top-level keys whose whole content is left out, each counted as one kind. */
const LISTS: readonly SkippedId[] = [
  'actions',
  'query_collections',
  'allowlist',
  'cron_triggers',
  'rest_endpoints',
  'inherited_roles',
];
const SETTINGS: readonly SkippedId[] = [
  'api_limits',
  'graphql_schema_introspection',
  'network',
  'metrics_config',
  'backend_configs',
  'opentelemetry',
];
/** Top-level keys read here: the rest is reported by its own name. */
const KNOWN_KEYS = new Set<string>(['version', 'remote_schemas', 'sources', 'tables', 'functions', 'custom_types', ...LISTS, ...SETTINGS]);

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
    const relationships = entry['remote_relationships'];
    if (Array.isArray(relationships)) {
      // `[{type_name, relationships: […]}]`: one per relationship.
      for (const group of relationships) add('remote_relationships', isObject(group) ? listLength(group['relationships']) : 1);
    }
    return convertRemoteSchema(entry, path, environment, where);
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

  return {
    document: { version: 3, remote_schemas: entries },
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

function notMetadata(where: string, reason: string): ImportError {
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

function convertRemoteSchema(entry: JsonObject, path: string, environment: Set<string>, where: string): JsonObject {
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
    // Remote relationships are reported as skipped; nulls mean "not set".
    if (key === 'remote_relationships' || value === null) continue;
    if (key === 'definition') result.push([key, definition]);
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

// ---------------------------------------------------------------------------------------------
// Reading the input: a JSON file, or a Hasura CLI metadata directory.

/** Hasura CLI metadata files and the top-level key each holds (`actions.yaml` holds two). */
const DIRECTORY_FILES: ReadonlyArray<[file: string, key: string | undefined]> = [
  ['databases/databases.yaml', 'sources'],
  // Config v2 projects (Hasura 1.x): one database's tables and functions at the top.
  ['tables.yaml', 'tables'],
  ['functions.yaml', 'functions'],
  ['remote_schemas.yaml', 'remote_schemas'],
  ['actions.yaml', undefined],
  ['query_collections.yaml', 'query_collections'],
  ['allow_list.yaml', 'allowlist'],
  ['cron_triggers.yaml', 'cron_triggers'],
  ['rest_endpoints.yaml', 'rest_endpoints'],
  ['inherited_roles.yaml', 'inherited_roles'],
  ['api_limits.yaml', 'api_limits'],
  ['graphql_schema_introspection.yaml', 'graphql_schema_introspection'],
  ['network.yaml', 'network'],
  ['metrics_config.yaml', 'metrics_config'],
  ['backend_configs.yaml', 'backend_configs'],
  ['opentelemetry.yaml', 'opentelemetry'],
];

const INCLUDE = '!include';

/** A `!include` tag, resolved after parsing (relative to the file it is written in). */
class Include {
  constructor(readonly target: string) {}
}

const includeTag: ScalarTag = {
  tag: INCLUDE,
  identify: (value) => value instanceof Include,
  resolve: (text) => new Include(text),
};

/**
 * The Hasura CLI writes includes as strings (`tables: '!include default/tables/tables.yaml'`) and
 * also reads the tag form (`tables: !include default/tables/tables.yaml`).
 */
function includeTarget(value: unknown): string | undefined {
  if (value instanceof Include) return value.target.trim().replace(/^"|"$/g, '');
  if (typeof value !== 'string' || !value.startsWith(`${INCLUDE} `)) return undefined;
  const target = value.slice(INCLUDE.length).trim().replace(/^"|"$/g, '');
  // As the Hasura CLI reads it: `!include` and one file name; any other string is a string.
  return target === '' || /\s/.test(target) ? undefined : target;
}

function systemReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'not a directory';
    case 'ELOOP':
      return 'too many symbolic links';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/** Reads the YAML files of one metadata directory, resolving `!include` within it. */
class MetadataDirectoryReader {
  #files = 0;
  #bytes = 0;

  constructor(
    /** The metadata directory, resolved through symbolic links. */
    private readonly root: string,
    /** How the user named the directory, for messages. */
    private readonly shownRoot: string,
    private readonly limits: ImportLimits,
  ) {}

  shown(file: string): string {
    return join(this.shownRoot, relative(this.root, file));
  }

  /** `file` parsed, includes resolved; `undefined` when a top-level file does not exist. */
  async readTopLevel(name: string): Promise<unknown> {
    const file = join(this.root, name);
    try {
      await lstat(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ImportError(this.shown(file), systemReason(error));
    }
    return this.read(file, []);
  }

  /** `includedFrom`: the file whose `!include target` led here, blamed for a cycle or a way out. */
  private async read(file: string, chain: readonly string[], includedFrom?: { shown: string; target: string }): Promise<unknown> {
    const shown = this.shown(file);
    let real: string;
    try {
      real = await realpath(file);
    } catch (error) {
      throw new ImportError(shown, systemReason(error));
    }
    // A symbolic link may lead out of the directory as well as `../`.
    if (!isInside(this.root, real)) {
      if (includedFrom === undefined) throw new ImportError(shown, 'points outside the metadata directory');
      throw new ImportError(includedFrom.shown, `!include ${includedFrom.target} points outside the metadata directory`);
    }
    if (chain.includes(real)) {
      const cycle = [...chain.slice(chain.indexOf(real)), real].map((entry) => relative(this.root, entry)).join(' -> ');
      throw new ImportError(includedFrom?.shown ?? shown, `!include cycle: ${cycle}`);
    }
    let info;
    try {
      info = await stat(real);
    } catch (error) {
      throw new ImportError(shown, systemReason(error));
    }
    if (!info.isFile()) throw new ImportError(shown, 'not a file');
    if (info.size > this.limits.maxFileBytes) {
      throw new ImportError(shown, `larger than ${String(this.limits.maxFileBytes)} bytes`);
    }
    this.#files += 1;
    this.#bytes += info.size;
    if (this.#files > this.limits.maxFiles) {
      throw new ImportError(shown, `more than ${String(this.limits.maxFiles)} files to read in the metadata directory`);
    }
    if (this.#bytes > this.limits.maxTotalBytes) {
      throw new ImportError(shown, `more than ${String(this.limits.maxTotalBytes)} bytes to read in the metadata directory`);
    }
    let text: string;
    try {
      text = await readFile(real, 'utf8');
    } catch (error) {
      throw new ImportError(shown, systemReason(error));
    }
    // The size may have changed since `stat`.
    if (Buffer.byteLength(text) > this.limits.maxFileBytes) {
      throw new ImportError(shown, `larger than ${String(this.limits.maxFileBytes)} bytes`);
    }
    const value = parseYamlText(text, shown, true);
    return this.resolveIncludes(value, dirname(file), shown, [...chain, real]);
  }

  private async resolveIncludes(value: unknown, directory: string, shown: string, chain: readonly string[]): Promise<unknown> {
    const target = includeTarget(value);
    if (target === '') throw new ImportError(shown, '!include without a file name');
    if (target !== undefined) {
      // Depth counts included files: the top-level file is 1.
      if (chain.length > this.limits.maxIncludeDepth) {
        throw new ImportError(shown, `!include nested more than ${String(this.limits.maxIncludeDepth)} deep`);
      }
      const file = join(directory, target);
      if (isAbsolute(target) || !isInside(this.root, file)) {
        throw new ImportError(shown, `!include ${target} points outside the metadata directory`);
      }
      return this.read(file, chain, { shown, target });
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const item of value) out.push(await this.resolveIncludes(item, directory, shown, chain));
      return out;
    }
    if (isObject(value)) {
      const entries: Array<[string, unknown]> = [];
      for (const [key, member] of Object.entries(value)) {
        entries.push([key, await this.resolveIncludes(member, directory, shown, chain)]);
      }
      return Object.fromEntries(entries);
    }
    return value;
  }
}

/** One YAML document, errors with their position; `!include` read as a tag when `includes`. */
function parseYamlText(text: string, shown: string, includes: boolean): unknown {
  try {
    // `maxAliasCount` bounds the expansion of aliases ("billion laughs"). `logLevel: 'error'`
    // throws the first error ('silent' would drop errors and return what it could read).
    return parseYaml(text, { ...(includes && { customTags: [includeTag] }), maxAliasCount: 100, logLevel: 'error' });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const [line, column] = error.linePos?.[0] ? [error.linePos[0].line, error.linePos[0].col] : [];
      const message = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? 'invalid YAML';
      throw new ImportError(shown, `invalid YAML${line === undefined ? '' : ` at line ${String(line)}, column ${String(column)}`}: ${message}`);
    }
    throw new ImportError(shown, `invalid YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function isInside(root: string, path: string): boolean {
  const relativePath = relative(root, path);
  return relativePath !== '' && !relativePath.startsWith(`..${sep}`) && relativePath !== '..' && !isAbsolute(relativePath);
}

async function readDirectory(directory: string, shown: string, limits: ImportLimits): Promise<ImportResult> {
  // Pointed at the project (config.yaml beside metadata/) rather than at metadata/: look inside.
  let root = directory;
  let shownRoot = shown;
  if (!(await exists(join(root, 'version.yaml'))) && (await exists(join(root, 'metadata', 'version.yaml')))) {
    root = join(root, 'metadata');
    shownRoot = join(shown, 'metadata');
  }
  if (!(await exists(join(root, 'version.yaml')))) {
    throw notMetadata(shown, 'no version.yaml (expected the JSON of export_metadata or a Hasura CLI metadata directory)');
  }
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch (error) {
    throw new ImportError(shownRoot, systemReason(error));
  }
  const reader = new MetadataDirectoryReader(realRoot, shownRoot, limits);
  const versionFile = await reader.readTopLevel('version.yaml');
  const version = isObject(versionFile) ? versionFile['version'] : undefined;
  if (version !== 2 && version !== 3) {
    throw notMetadata(join(shownRoot, 'version.yaml'), 'expected "version: 3" (or 2)');
  }
  const metadata: JsonObject = { version };
  for (const [file, key] of DIRECTORY_FILES) {
    const value = await reader.readTopLevel(file);
    if (value === undefined || value === null) continue;
    if (key !== undefined) {
      metadata[key] = value;
    } else if (isObject(value)) {
      // actions.yaml: `actions` and `custom_types` (their SDL is in actions.graphql).
      if (value['actions'] !== undefined) metadata['actions'] = value['actions'];
      if (value['custom_types'] !== undefined) metadata['custom_types'] = value['custom_types'];
    }
  }
  try {
    return convertHasuraMetadata(metadata, shownRoot);
  } catch (error) {
    // Problems in remote schemas belong to remote_schemas.yaml.
    if (error instanceof ImportError && error.where === shownRoot && error.message.includes('remote_schemas')) {
      throw new ImportError(join(shownRoot, 'remote_schemas.yaml'), error.message);
    }
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads `path` (an `export_metadata` JSON file or a Hasura CLI metadata directory) and converts it.
 * `cwd` resolves a relative `path`; messages name it as given.
 */
export async function importHasuraMetadata(
  path: string,
  options: { cwd?: string; limits?: Partial<ImportLimits> } = {},
): Promise<ImportResult> {
  const limits = { ...DEFAULT_IMPORT_LIMITS, ...options.limits };
  const absolute = resolve(options.cwd ?? process.cwd(), path);
  let info;
  try {
    info = await stat(absolute);
  } catch (error) {
    throw new ImportError(path, systemReason(error));
  }
  if (info.isDirectory()) return readDirectory(absolute, path, limits);
  if (!info.isFile()) throw notMetadata(path, 'neither a file nor a directory');
  // The JSON export is the whole metadata in one file: it has the directory's total bound.
  const maxBytes = limits.maxTotalBytes;
  if (info.size > maxBytes) throw new ImportError(path, `larger than ${String(maxBytes)} bytes`);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    throw new ImportError(path, systemReason(error));
  }
  if (Buffer.byteLength(text) > maxBytes) throw new ImportError(path, `larger than ${String(maxBytes)} bytes`);
  // `hasura metadata export --output yaml` prints the whole metadata as one YAML document; it has no
  // `!include` (one is left as the string it is).
  if (/\.ya?ml$/i.test(path)) return convertHasuraMetadata(parseYamlText(text, path, false), path);
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw notMetadata(path, `invalid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  return convertHasuraMetadata(value, path);
}

/** The lines the command prints on stderr after the document (none when there is nothing to say). */
export function summaryLines(result: ImportResult): string[] {
  const lines: string[] = [];
  if (result.environment.length > 0) lines.push(`reads environment: ${result.environment.join(', ')}`);
  if (result.skipped.length > 0) {
    lines.push(`skipped: ${result.skipped.map(({ kind, count }) => `${String(count)} ${kind}`).join(', ')}`);
  }
  return lines;
}

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The command: prints the document on stdout and the summary on stderr, and answers the exit
 * status (0 printed, 1 with one line on stderr).
 */
export async function runImportHasuraMetadata(path: string, io: CommandIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const env = io.env ?? process.env;
  // Run as `pnpm svc-graphql …`, the script runs in the checkout's root: a relative PATH means
  // the directory the user typed it in.
  const cwd = io.cwd ?? (env['npm_lifecycle_event'] === 'svc-graphql' && env['INIT_CWD'] ? env['INIT_CWD'] : process.cwd());
  let result: ImportResult;
  try {
    result = await importHasuraMetadata(path, { cwd });
  } catch (error) {
    let where = path;
    let message: string;
    if (error instanceof ImportError) {
      where = error.where;
      message = error.message;
    } else if (error instanceof RangeError) {
      // Call stack exhausted by a hostile nesting depth.
      message = 'nested too deeply';
    } else {
      message = error instanceof Error ? error.message : String(error);
    }
    io.stderr.write(`Fatal error: ${where}: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return 1;
  }
  io.stdout.write(`${JSON.stringify(result.document, null, 2)}\n`);
  for (const line of summaryLines(result)) io.stderr.write(`${line}\n`);
  return 0;
}
