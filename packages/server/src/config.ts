import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCorsDomains } from './cors.js';

/**
 * Command-line flags and environment variables of `svc-graphql serve`.
 * Every flag has an environment variable; the flag wins.
 */

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

/** How log lines are written: `text` (`<ISO time> <level> <message>`) or `json` (one object a line). */
export type LogFormat = 'text' | 'json';

const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

/** The server's configuration, as read from flags and environment; nothing validated beyond syntax. */
export interface ServeConfig {
  host: string;
  port: number;
  databaseUrl: string;
  adminSecret?: string;
  jwtSecret?: string;
  /** `--jwt-secrets`: the JSON text of a list of JWT configurations (one per token issuer). */
  jwtSecrets?: string;
  unauthorizedRole?: string;
  enableRemoteSchemaPermissions: boolean;
  logLevel: LogLevel;
  logFormat: LogFormat;
  maxRequestBodySize: number;
  maxQueryTokens: number;
  maxRemoteResponseSize: number;
  corsDomain: string;
  disableCors: boolean;
  wsReadCookie: boolean;
  /** `/v1/metrics` then asks for `Authorization: Bearer <metricsSecret>`. */
  metricsSecret?: string;
  /** No metrics kept; `/v1/metrics` answers 404. */
  disableMetrics: boolean;
  /** Serve the web console at `/console`. */
  enableConsole: boolean;
  /** Where each setting came from (`--flag` or `ENV_VAR`), so errors can name it. */
  sources: Partial<Record<SettingName, string>>;
}

export type SettingName =
  | 'host'
  | 'port'
  | 'databaseUrl'
  | 'adminSecret'
  | 'jwtSecret'
  | 'jwtSecrets'
  | 'unauthorizedRole'
  | 'enableRemoteSchemaPermissions'
  | 'logLevel'
  | 'logFormat'
  | 'maxRequestBodySize'
  | 'maxQueryTokens'
  | 'maxRemoteResponseSize'
  | 'corsDomain'
  | 'disableCors'
  | 'wsReadCookie'
  | 'metricsSecret'
  | 'disableMetrics'
  | 'enableConsole';

interface Setting {
  name: SettingName;
  flag: string;
  env: string;
  /** Boolean flags may be given without a value. */
  boolean?: true;
}

const SETTINGS: readonly Setting[] = [
  { name: 'host', flag: '--server-host', env: 'SVC_GRAPHQL_SERVER_HOST' },
  { name: 'port', flag: '--server-port', env: 'SVC_GRAPHQL_SERVER_PORT' },
  { name: 'databaseUrl', flag: '--database-url', env: 'SVC_GRAPHQL_DATABASE_URL' },
  { name: 'adminSecret', flag: '--admin-secret', env: 'SVC_GRAPHQL_ADMIN_SECRET' },
  { name: 'jwtSecret', flag: '--jwt-secret', env: 'SVC_GRAPHQL_JWT_SECRET' },
  { name: 'jwtSecrets', flag: '--jwt-secrets', env: 'SVC_GRAPHQL_JWT_SECRETS' },
  { name: 'unauthorizedRole', flag: '--unauthorized-role', env: 'SVC_GRAPHQL_UNAUTHORIZED_ROLE' },
  {
    name: 'enableRemoteSchemaPermissions',
    flag: '--enable-remote-schema-permissions',
    env: 'SVC_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS',
    boolean: true,
  },
  { name: 'logLevel', flag: '--log-level', env: 'SVC_GRAPHQL_LOG_LEVEL' },
  { name: 'logFormat', flag: '--log-format', env: 'SVC_GRAPHQL_LOG_FORMAT' },
  { name: 'maxRequestBodySize', flag: '--max-request-body-size', env: 'SVC_GRAPHQL_MAX_REQUEST_BODY_SIZE' },
  { name: 'maxQueryTokens', flag: '--max-query-tokens', env: 'SVC_GRAPHQL_MAX_QUERY_TOKENS' },
  { name: 'maxRemoteResponseSize', flag: '--max-remote-response-size', env: 'SVC_GRAPHQL_MAX_REMOTE_RESPONSE_SIZE' },
  { name: 'corsDomain', flag: '--cors-domain', env: 'SVC_GRAPHQL_CORS_DOMAIN' },
  { name: 'disableCors', flag: '--disable-cors', env: 'SVC_GRAPHQL_DISABLE_CORS', boolean: true },
  { name: 'wsReadCookie', flag: '--ws-read-cookie', env: 'SVC_GRAPHQL_WS_READ_COOKIE', boolean: true },
  { name: 'metricsSecret', flag: '--metrics-secret', env: 'SVC_GRAPHQL_METRICS_SECRET' },
  { name: 'disableMetrics', flag: '--disable-metrics', env: 'SVC_GRAPHQL_DISABLE_METRICS', boolean: true },
  { name: 'enableConsole', flag: '--enable-console', env: 'SVC_GRAPHQL_ENABLE_CONSOLE', boolean: true },
];

/** Defaults of the limits (bytes, tokens). */
export const DEFAULT_LIMITS = {
  maxRequestBodySize: 2_097_152,
  maxQueryTokens: 15_000,
  maxRemoteResponseSize: 67_108_864,
} as const;

export const DEFAULT_DATABASE_URL = 'file:./.svc-graphql/metadata.json';

/**
 * A configuration problem. `setting` is the flag or environment variable at fault, as the user
 * typed it; the CLI prints `Fatal error: <setting>: <message>` and exits with status 1.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly setting: string,
    message: string,
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

export const USAGE = `Usage: svc-graphql [--database-url URL] serve [flags]
       svc-graphql import-hasura-metadata PATH   (prints the remote schemas of a Hasura metadata export, the JSON or the metadata/ directory, as a document for replace_metadata)

Flags (each also read from its environment variable; the flag wins):
  --server-host HOST                    SVC_GRAPHQL_SERVER_HOST          (default 127.0.0.1)
  --server-port PORT                    SVC_GRAPHQL_SERVER_PORT          (default 8080, 0 = any free port)
  --database-url URL                    SVC_GRAPHQL_DATABASE_URL         (default ${DEFAULT_DATABASE_URL})
  --admin-secret SECRET                 SVC_GRAPHQL_ADMIN_SECRET
  --jwt-secret JSON                     SVC_GRAPHQL_JWT_SECRET
  --jwt-secrets JSON                    SVC_GRAPHQL_JWT_SECRETS          (a list, one per token issuer, chosen by iss)
  --unauthorized-role ROLE              SVC_GRAPHQL_UNAUTHORIZED_ROLE
  --enable-remote-schema-permissions    SVC_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS (true/false)
  --log-level error|warn|info|debug     SVC_GRAPHQL_LOG_LEVEL            (default info)
  --log-format text|json                SVC_GRAPHQL_LOG_FORMAT           (default text; json: one object a line)
  --max-request-body-size BYTES         SVC_GRAPHQL_MAX_REQUEST_BODY_SIZE (default 2097152; also one WebSocket message)
  --max-query-tokens N                  SVC_GRAPHQL_MAX_QUERY_TOKENS     (default 15000)
  --max-remote-response-size BYTES      SVC_GRAPHQL_MAX_REMOTE_RESPONSE_SIZE (default 67108864)
  --cors-domain ORIGINS                 SVC_GRAPHQL_CORS_DOMAIN          (default *; comma-separated, https://*.example.com)
  --disable-cors                        SVC_GRAPHQL_DISABLE_CORS         (true/false)
  --ws-read-cookie                      SVC_GRAPHQL_WS_READ_COOKIE       (true/false)
  --metrics-secret SECRET               SVC_GRAPHQL_METRICS_SECRET       (GET /v1/metrics asks for Authorization: Bearer SECRET;
                                                                         without it: the admin secret, else open)
  --disable-metrics                     SVC_GRAPHQL_DISABLE_METRICS      (true/false; no metrics kept, /v1/metrics is 404)
  --enable-console                      SVC_GRAPHQL_ENABLE_CONSOLE       (true/false; default false: the web console at /console)
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
      if (command !== undefined) throw new ConfigError(arg, `unexpected argument after "${command}"`);
      if (arg === IMPORT_HASURA_METADATA) {
        if (flags.size > 0) throw new ConfigError(IMPORT_HASURA_METADATA, 'takes no flags: svc-graphql import-hasura-metadata PATH');
        return parseImportArguments(argv.slice(i + 1));
      }
      if (arg !== 'serve' && arg !== 'help' && arg !== 'version') {
        throw new ConfigError(arg, 'unknown command (expected "serve" or "import-hasura-metadata")');
      }
      command = arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const setting = SETTINGS.find((s) => s.flag === flag);
    if (!setting) throw new ConfigError(flag, 'unknown flag');
    let value: string;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else if (setting.boolean) {
      const next = argv[i + 1];
      if (next === 'true' || next === 'false') {
        value = next;
        i++;
      } else {
        value = 'true';
      }
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(flag, 'expects a value');
      value = next;
      i++;
    }
    flags.set(setting.name, { flag, value });
  }

  if (command === 'help') return { command: 'help' };
  if (command === 'version') return { command: 'version' };
  if (command === undefined) throw new ConfigError('serve', 'missing command; run `svc-graphql serve`');

  const sources: ServeConfig['sources'] = {};
  const read = (name: SettingName): string | undefined => {
    const fromFlag = flags.get(name);
    if (fromFlag) {
      sources[name] = fromFlag.flag;
      return fromFlag.value;
    }
    const setting = SETTINGS.find((s) => s.name === name) as Setting;
    const fromEnv = env[setting.env];
    if (fromEnv !== undefined && fromEnv !== '') {
      sources[name] = setting.env;
      return fromEnv;
    }
    return undefined;
  };

  const host = read('host') ?? '127.0.0.1';
  const portText = read('port');
  let port = 8080;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
      throw new ConfigError(sources.port as string, `expected a port number between 0 and 65535, but got "${portText}"`);
    }
    port = Number(portText);
  }

  const databaseUrl = read('databaseUrl') ?? DEFAULT_DATABASE_URL;
  try {
    parseDatabaseUrl(databaseUrl);
  } catch (error) {
    throw new ConfigError(sources.databaseUrl as string, (error as Error).message);
  }

  const readBoolean = (name: SettingName): boolean => {
    const text = read(name);
    if (text === undefined) return false;
    if (text !== 'true' && text !== 'false') {
      throw new ConfigError(sources[name] as string, `expected "true" or "false", but got "${text}"`);
    }
    return text === 'true';
  };
  const readPositiveInteger = (name: keyof typeof DEFAULT_LIMITS): number => {
    const text = read(name);
    if (text === undefined) return DEFAULT_LIMITS[name];
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value <= 0) {
      throw new ConfigError(sources[name] as string, `expected a positive whole number, but got "${text}"`);
    }
    return value;
  };
  const enableRemoteSchemaPermissions = readBoolean('enableRemoteSchemaPermissions');
  const disableCors = readBoolean('disableCors');
  const wsReadCookie = readBoolean('wsReadCookie');
  const disableMetrics = readBoolean('disableMetrics');
  const enableConsole = readBoolean('enableConsole');
  const maxRequestBodySize = readPositiveInteger('maxRequestBodySize');
  const maxQueryTokens = readPositiveInteger('maxQueryTokens');
  const maxRemoteResponseSize = readPositiveInteger('maxRemoteResponseSize');
  const corsDomain = read('corsDomain') ?? '*';
  try {
    parseCorsDomains(corsDomain);
  } catch (error) {
    throw new ConfigError(sources.corsDomain as string, (error as Error).message);
  }

  const logLevelText = read('logLevel') ?? 'info';
  if (!LOG_LEVELS.includes(logLevelText as LogLevel)) {
    throw new ConfigError(
      sources.logLevel as string,
      `expected one of ${LOG_LEVELS.join(', ')}, but got "${logLevelText}"`,
    );
  }

  const logFormatText = read('logFormat') ?? 'text';
  if (!LOG_FORMATS.includes(logFormatText as LogFormat)) {
    throw new ConfigError(
      sources.logFormat as string,
      `expected one of ${LOG_FORMATS.join(', ')}, but got "${logFormatText}"`,
    );
  }

  const config: ServeConfig = {
    host,
    port,
    databaseUrl,
    enableRemoteSchemaPermissions,
    logLevel: logLevelText as LogLevel,
    logFormat: logFormatText as LogFormat,
    maxRequestBodySize,
    maxQueryTokens,
    maxRemoteResponseSize,
    corsDomain,
    disableCors,
    wsReadCookie,
    disableMetrics,
    enableConsole,
    sources,
  };
  const adminSecret = read('adminSecret');
  if (adminSecret !== undefined) config.adminSecret = adminSecret;
  const jwtSecret = read('jwtSecret');
  if (jwtSecret !== undefined) config.jwtSecret = jwtSecret;
  const jwtSecrets = read('jwtSecrets');
  if (jwtSecrets !== undefined) {
    // Only the outer shape here; each entry and the issuers are checked when the server starts.
    let list: unknown;
    try {
      list = JSON.parse(jwtSecrets);
    } catch (error) {
      // V8 quotes a piece of the input in some messages: keys must not reach the terminal or logs.
      const reason = String((error as Error).message).replace(/".*"(\.\.\.)?/s, '…');
      throw new ConfigError(sources.jwtSecrets as string, `invalid JSON: ${reason}`);
    }
    if (!Array.isArray(list)) {
      throw new ConfigError(sources.jwtSecrets as string, 'expected a JSON array of JWT configurations');
    }
    config.jwtSecrets = jwtSecrets;
  }
  const unauthorizedRole = read('unauthorizedRole');
  if (unauthorizedRole !== undefined) config.unauthorizedRole = unauthorizedRole;
  const metricsSecret = read('metricsSecret');
  if (metricsSecret !== undefined) config.metricsSecret = metricsSecret;

  if (config.jwtSecret !== undefined && config.adminSecret === undefined) {
    throw new ConfigError(sources.jwtSecret as string, JWT_NEEDS_ADMIN_SECRET);
  }
  if (config.jwtSecrets !== undefined && config.adminSecret === undefined) {
    throw new ConfigError(sources.jwtSecrets as string, JWT_NEEDS_ADMIN_SECRET);
  }
  return { command: 'serve', config };
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
      throw new ConfigError(arg.split('=')[0] as string, 'unknown flag');
    } else {
      paths.push(arg);
    }
  }
  if (paths.length !== 1 || paths[0] === '') {
    throw new ConfigError(IMPORT_HASURA_METADATA, 'expects one PATH: svc-graphql import-hasura-metadata PATH');
  }
  return { command: IMPORT_HASURA_METADATA, path: paths[0] as string };
}

/** The setting's name as the user gave it, or its flag when it was defaulted. */
export function settingLabel(config: ServeConfig, name: string): string {
  return config.sources[name as SettingName] ?? SETTINGS.find((s) => s.name === name)?.flag ?? name;
}

/** JWT mode without an admin secret is refused: the endpoint would be open to everyone. */
export const JWT_NEEDS_ADMIN_SECRET = 'JWT mode needs an admin secret: set --admin-secret or SVC_GRAPHQL_ADMIN_SECRET';

/** Where `--database-url` points. */
export type StoreLocation = { kind: 'file'; path: string } | { kind: 'postgres'; connectionString: string };

/**
 * Reads a database URL: `file:PATH` (also `file:///abs`), `postgres://…` or `postgresql://…`.
 * Throws a `TypeError` whose message says what is wrong (the password hidden).
 */
export function parseDatabaseUrl(url: string): StoreLocation {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { kind: 'postgres', connectionString: url };
  if (url.startsWith('file:')) {
    const path = url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length);
    if (path !== '') return { kind: 'file', path: resolvePath(path) };
  }
  throw new TypeError(`expected file:PATH, postgres://… or postgresql://…, but got "${redactUrl(url)}"`);
}

/** Hides a password in a connection string, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@');
}
