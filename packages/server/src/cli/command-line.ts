import { InvalidValueError, type OptionErrorCode } from '../errors.js';
import {
  defaultOf,
  FLAG_SETTING_NAMES,
  flagSettingOf,
  resolveSettings,
  settingOf,
  type ResolvedSettings,
  type ServerSettings,
  type SettingName,
} from '../settings.js';

/**
 * The command line of `svc-graphql`: its commands, and the flags and environment variables of
 * `serve`, read as the settings table (settings.ts) describes them. Every flag has an environment
 * variable; the flag wins.
 */

/** The server's configuration, as read from flags and environment, defaults applied. */
export type ServeConfig = ResolvedSettings & {
  /** Where each setting came from (`--flag` or `ENV_VAR`), so errors can name it. */
  sources: Partial<Record<SettingName, string>>;
};

/** Why the command line is refused: {@link OptionErrorCode}, or what is wrong with its words. */
export type ConfigErrorCode = OptionErrorCode | 'ERR_UNKNOWN_FLAG' | 'ERR_MISSING_VALUE' | 'ERR_UNKNOWN_COMMAND' | 'ERR_UNEXPECTED_ARGUMENT';

/**
 * A configuration problem. `setting` is the flag or environment variable at fault, as the user
 * typed it; the CLI prints `Fatal error: <setting>: <message>` and exits with status 1.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly setting: string,
    message: string,
    readonly code: ConfigErrorCode = 'ERR_INVALID_OPTION',
  ) {
    super(message);
  }
}

export type CliCommand =
  | { command: 'serve'; config: ServeConfig }
  | { command: 'import-hasura-metadata'; path: string }
  | { command: 'help' }
  | { command: 'version' };

/** `svc-graphql import-hasura-metadata PATH`: converts a Hasura metadata export (see import-hasura.ts). */
export const IMPORT_HASURA_METADATA = 'import-hasura-metadata';

const FLAG_COLUMN = 38;
const ENV_COLUMN = 32;

/** One line of `--help` per setting: flag and placeholder, variable, then the default and the description. */
function usageLine(name: (typeof FLAG_SETTING_NAMES)[number]): string {
  const { flag, env, kind, description } = flagSettingOf(name);
  const fallback = defaultOf(name);
  const left = kind.placeholder === undefined ? flag : `${flag} ${kind.placeholder}`;
  const note = fallback === undefined ? description : `default ${String(fallback)}; ${description}`;
  return `  ${left.padEnd(FLAG_COLUMN)}${env.padEnd(ENV_COLUMN)} (${note})`;
}

export const USAGE = `Usage: svc-graphql [--database-url URL] serve [flags]
       svc-graphql import-hasura-metadata PATH   (prints the remote schemas of a Hasura metadata export, the JSON or the metadata/ directory, as a document for replace_metadata)

Flags (each also read from its environment variable; the flag wins; a boolean flag alone means true):
${FLAG_SETTING_NAMES.map(usageLine).join('\n')}
`;

/**
 * Reads `svc-graphql [--database-url URL] serve [flags]`. Throws {@link ConfigError} naming the flag
 * or variable for anything it cannot accept.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliCommand {
  const flags = new Map<SettingName, { flag: string; value: string }>();
  let command: string | undefined;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') continue;
    if (arg === '--help' || arg === '-h') return { command: 'help' };
    if (arg === '--version') return { command: 'version' };
    if (!arg.startsWith('-')) {
      if (command !== undefined) throw new ConfigError(arg, `unexpected argument after "${command}"`, 'ERR_UNEXPECTED_ARGUMENT');
      if (arg === IMPORT_HASURA_METADATA) {
        if (flags.size > 0) {
          throw new ConfigError(IMPORT_HASURA_METADATA, 'takes no flags: svc-graphql import-hasura-metadata PATH', 'ERR_UNEXPECTED_ARGUMENT');
        }
        return parseImportArguments(argv.slice(i + 1));
      }
      if (arg !== 'serve' && arg !== 'help' && arg !== 'version') {
        throw new ConfigError(arg, 'unknown command (expected "serve" or "import-hasura-metadata")', 'ERR_UNKNOWN_COMMAND');
      }
      command = arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const name = FLAG_SETTING_NAMES.find((candidate) => flagSettingOf(candidate).flag === flag);
    if (name === undefined) throw new ConfigError(flag, 'unknown flag', 'ERR_UNKNOWN_FLAG');
    let value: string;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else if (settingOf(name).kind.placeholder === undefined) {
      const next = argv[i + 1];
      if (next === 'true' || next === 'false') {
        value = next;
        i++;
      } else {
        value = 'true';
      }
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(flag, 'expects a value', 'ERR_MISSING_VALUE');
      value = next;
      i++;
    }
    flags.set(name, { flag, value });
  }

  if (command === 'help') return { command: 'help' };
  if (command === 'version') return { command: 'version' };
  if (command === undefined) throw new ConfigError('serve', 'missing command; run `svc-graphql serve`', 'ERR_UNKNOWN_COMMAND');

  const sources: ServeConfig['sources'] = {};
  const given: Record<string, unknown> = {};
  for (const name of FLAG_SETTING_NAMES) {
    const { env: variable, kind } = flagSettingOf(name);
    const fromFlag = flags.get(name);
    const fromEnv = env[variable];
    // A variable set to the empty string counts as not set, except for a secret (refused as empty).
    const text = fromFlag?.value ?? (fromEnv === '' && kind.emptyVariableRefused !== true ? undefined : fromEnv);
    if (text === undefined) continue;
    const source = fromFlag?.flag ?? variable;
    sources[name] = source;
    try {
      given[name] = kind.fromText(text);
    } catch (error) {
      if (error instanceof InvalidValueError) throw new ConfigError(source, error.message);
      throw error;
    }
  }
  const settings = resolveSettings(given as ServerSettings, (name, code, message) => new ConfigError(sources[name] ?? settingOf(name).flag ?? name, message, code));
  return { command: 'serve', config: { ...settings, sources } };
}

/** The arguments after `import-hasura-metadata`: exactly one PATH (after `--` when it starts with `-`). */
function parseImportArguments(rest: readonly string[]): CliCommand {
  const paths: string[] = [];
  let afterDashes = false;
  for (const arg of rest) {
    if (!afterDashes && arg === '--') {
      afterDashes = true;
    } else if (!afterDashes && (arg === '--help' || arg === '-h')) {
      return { command: 'help' };
    } else if (!afterDashes && arg.startsWith('-') && arg !== '-') {
      throw new ConfigError(arg.split('=')[0] as string, 'unknown flag', 'ERR_UNKNOWN_FLAG');
    } else {
      paths.push(arg);
    }
  }
  if (paths.length !== 1 || paths[0] === '') {
    throw new ConfigError(IMPORT_HASURA_METADATA, 'expects one PATH: svc-graphql import-hasura-metadata PATH', 'ERR_MISSING_VALUE');
  }
  return { command: IMPORT_HASURA_METADATA, path: paths[0] as string };
}

/** The setting's name as the user gave it, or its flag when it was defaulted. */
export function settingLabel(config: ServeConfig, name: string): string {
  const known = FLAG_SETTING_NAMES.find((candidate) => candidate === name);
  return known === undefined ? name : (config.sources[known] ?? flagSettingOf(known).flag);
}
