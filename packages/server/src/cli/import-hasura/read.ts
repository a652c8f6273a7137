/**
 * Reading a Hasura v2 metadata export: the JSON answer of `export_metadata` (or its YAML), or a
 * Hasura CLI `metadata/` directory whose YAML files and `!include`s are read within bounds
 * ({@link ImportLimits}) and without leaving the directory.
 */
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parse as parseYaml, YAMLParseError, type ScalarTag } from 'yaml';
import { convertHasuraMetadata, ImportError, isObject, notMetadata, type ImportResult, type JsonObject } from './convert.js';

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
    // As the Hasura CLI does: an included file that is not YAML (a `.graphql` query of a
    // collection, a schema document) is its text, as written.
    if (includedFrom !== undefined && !isYamlFile(file)) return text;
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

/** YAML (JSON included) by its extension; any other included file is read as text. */
function isYamlFile(file: string): boolean {
  return /\.(ya?ml|json)$/i.test(file);
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
