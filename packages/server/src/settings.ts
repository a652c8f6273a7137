import { parseCorsDomains } from './http/cors.js';
import { InvalidValueError } from './errors.js';
import { DEFAULT_DATABASE_URL, parseDatabaseUrl } from './store.js';

/**
 * The server's settings, one entry each: its flag, its environment variable, the kind of value it
 * takes, its default and a line of description. Everything else comes from this table: the CLI
 * parser and `--help` (cli/command-line.ts), the options and defaults of `createServer`
 * ({@link ServerSettings}, {@link resolveSettings}), and a test holds the flag table of
 * docs/reference/configuration.md to it.
 *
 * Adding a flag is adding one entry here (its option appears in `ServerOptions` by itself), then
 * using the resolved value where the server is composed (server.ts) and its row in
 * configuration.md. An entry without a flag is an option only a program gives to `createServer`.
 */

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** How log lines are written: `text` (`<ISO time> <level> <message>`) or `json` (one object a line). */
export type LogFormat = 'text' | 'json';

/**
 * How a setting's value is read: from the text of a flag or variable, and as an option of
 * `createServer`. Both throw an {@link InvalidValueError} saying what is wrong.
 */
export interface SettingKind<T> {
  /** What `--help` shows after the flag (`BYTES`); `undefined` for a boolean flag, which may stand alone. */
  readonly placeholder: string | undefined;
  fromText(text: string): T;
  fromOption(value: unknown): T;
  /**
   * Its environment variable set to the empty string is refused like an empty flag, instead of
   * counting as not set: a secret that came out empty must not leave the server open.
   */
  readonly emptyVariableRefused?: boolean;
}

export interface Setting<T> {
  /** The flag, and with it the environment variable; both absent: an option only a program gives. */
  readonly flag?: `--${string}`;
  readonly env?: `SVC_GRAPHQL_${string}`;
  readonly kind: SettingKind<T>;
  /** Absent: the setting is unset unless given. A function: read when the server starts. */
  readonly default?: T | (() => T);
  /** One line for `--help` (the default is shown before it). */
  readonly description: string;
}

function invalid(message: string): never {
  throw new InvalidValueError(message);
}

function text(placeholder: string, options: { nonEmpty?: boolean; emptyVariableRefused?: boolean } = {}): SettingKind<string> {
  const check = (value: string) => (options.nonEmpty === true && value === '' ? invalid('must not be empty') : value);
  return {
    placeholder,
    ...(options.emptyVariableRefused === true && { emptyVariableRefused: true }),
    fromText: check,
    fromOption: (value) => (typeof value === 'string' ? check(value) : invalid(`expected a string, but got ${typeof value}`)),
  };
}

const flag: SettingKind<boolean> = {
  placeholder: undefined,
  fromText: (value) => (value === 'true' || value === 'false' ? value === 'true' : invalid(`expected "true" or "false", but got "${value}"`)),
  fromOption: (value) => (typeof value === 'boolean' ? value : invalid(`expected true or false, but got ${String(value)}`)),
};

const port: SettingKind<number> = {
  placeholder: 'PORT',
  fromText: (value) =>
    /^\d{1,5}$/.test(value) && Number(value) <= 65535 ? Number(value) : invalid(`expected a port number between 0 and 65535, but got "${value}"`),
  fromOption: (value) =>
    Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65535
      ? (value as number)
      : invalid(`expected a port number between 0 and 65535, but got ${String(value)}`),
};

function positiveInteger(placeholder: string): SettingKind<number> {
  const valid = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
  return {
    placeholder,
    fromText: (value) => (/^\d+$/.test(value) && valid(Number(value)) ? Number(value) : invalid(`expected a positive whole number, but got "${value}"`)),
    fromOption: (value) => (valid(value) ? value : invalid(`expected a positive whole number, but got ${String(value)}`)),
  };
}

function nonNegativeInteger(placeholder: string): SettingKind<number> {
  const valid = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
  return {
    placeholder,
    fromText: (value) => (/^\d+$/.test(value) && valid(Number(value)) ? Number(value) : invalid(`expected a whole number of at least 0, but got "${value}"`)),
    fromOption: (value) => (valid(value) ? value : invalid(`expected a whole number of at least 0, but got ${String(value)}`)),
  };
}

function oneOf<const T extends string>(values: readonly T[]): SettingKind<T> {
  const read = (value: unknown, shown: string): T =>
    values.includes(value as T) ? (value as T) : invalid(`expected one of ${values.join(', ')}, but got ${shown}`);
  return { placeholder: values.join('|'), fromText: (value) => read(value, `"${value}"`), fromOption: (value) => read(value, String(value)) };
}

/** A text checked by `check` (which throws {@link InvalidValueError}), kept as it is. */
function checkedText(placeholder: string, check: (value: string) => unknown): SettingKind<string> {
  const read = (value: string) => {
    check(value);
    return value;
  };
  return { placeholder, fromText: read, fromOption: (value) => (typeof value === 'string' ? read(value) : invalid(`expected a string, but got ${typeof value}`)) };
}

/** A JWT configuration: its JSON text, or (as an option) the object. jwt-session checks it when the server starts. */
const jwtConfig: SettingKind<string | object> = {
  placeholder: 'JSON',
  fromText: (value) => value,
  fromOption: (value) =>
    typeof value === 'string' || (typeof value === 'object' && value !== null) ? value : invalid(`expected JSON text or an object, but got ${String(value)}`),
};

/** A list of JWT configurations: the JSON text of an array, or (as an option) the array. */
const jwtConfigList: SettingKind<string | readonly (string | object)[]> = {
  placeholder: 'JSON',
  fromText(value) {
    // Only the outer shape here; each entry and the issuers are checked when the server starts.
    let list: unknown;
    try {
      list = JSON.parse(value);
    } catch (error) {
      // V8 quotes a piece of the input in some messages: keys must not reach the terminal or logs.
      invalid(`invalid JSON: ${String((error as Error).message).replace(/".*"(\.\.\.)?/s, '…')}`);
    }
    return Array.isArray(list) ? value : invalid('expected a JSON array of JWT configurations');
  },
  fromOption: (value) =>
    typeof value === 'string' || Array.isArray(value) ? (value as string | readonly (string | object)[]) : invalid(`expected JSON text or an array, but got ${String(value)}`),
};

function setting<const S extends Setting<unknown>>(entry: S): S {
  return entry;
}

/**
 * The settings table. The TSDoc of an entry is the documentation of its option in `ServerOptions`.
 */
export const SETTINGS = {
  /** Address to listen on; `0.0.0.0` or `::` for every interface. @default '127.0.0.1' */
  host: setting({ flag: '--server-host', env: 'SVC_GRAPHQL_SERVER_HOST', kind: text('HOST'), default: '127.0.0.1', description: 'address to listen on' }),
  /** Port to listen on; `0` picks any free port. @default 8080 */
  port: setting({ flag: '--server-port', env: 'SVC_GRAPHQL_SERVER_PORT', kind: port, default: 8080, description: '0 = any free port' }),
  /**
   * Where metadata lives: `file:PATH` (the embedded store) or `postgres://…` / `postgresql://…`.
   * @default 'file:./.svc-graphql/metadata.json'
   */
  databaseUrl: setting({
    flag: '--database-url',
    env: 'SVC_GRAPHQL_DATABASE_URL',
    kind: checkedText('URL', parseDatabaseUrl),
    default: DEFAULT_DATABASE_URL,
    description: 'file:PATH or postgres://…',
  }),
  /** Secures the endpoint; without it every request is admin. */
  adminSecret: setting({
    flag: '--admin-secret',
    env: 'SVC_GRAPHQL_ADMIN_SECRET',
    kind: text('SECRET', { nonEmpty: true, emptyVariableRefused: true }),
    description: 'X-Svc-Admin-Secret of the admin; without it every request is admin',
  }),
  /** The JWT configuration as JSON text or an object. Requires `adminSecret`. */
  jwtSecret: setting({ flag: '--jwt-secret', env: 'SVC_GRAPHQL_JWT_SECRET', kind: jwtConfig, description: 'one JWT configuration' }),
  /**
   * Several JWT configurations, one per token issuer (a list or its JSON text): a token is verified
   * by the entry whose `issuer` is its `iss`, else by the entry without `issuer`. With `jwtSecret`
   * too, that one comes first in the list. Requires `adminSecret`.
   */
  jwtSecrets: setting({
    flag: '--jwt-secrets',
    env: 'SVC_GRAPHQL_JWT_SECRETS',
    kind: jwtConfigList,
    description: 'a list, one per token issuer, chosen by iss',
  }),
  /** Role of requests that bring neither a valid admin secret nor a token. */
  unauthorizedRole: setting({
    flag: '--unauthorized-role',
    env: 'SVC_GRAPHQL_UNAUTHORIZED_ROLE',
    kind: text('ROLE', { nonEmpty: true }),
    description: 'role of requests without credentials, instead of 401',
  }),
  /** Serve each role only what its remote schema permissions grant. @default false */
  enableRemoteSchemaPermissions: setting({
    flag: '--enable-remote-schema-permissions',
    env: 'SVC_GRAPHQL_ENABLE_REMOTE_SCHEMA_PERMISSIONS',
    kind: flag,
    default: false,
    description: 'each role sees only its grants',
  }),
  /** @default 'info' */
  logLevel: setting({
    flag: '--log-level',
    env: 'SVC_GRAPHQL_LOG_LEVEL',
    kind: oneOf<LogLevel>(['error', 'warn', 'info', 'debug']),
    default: 'info',
    description: 'least severe level written',
  }),
  /** `text` (`<ISO time> <level> <message>`) or `json` (one JSON object a line). @default 'text' */
  logFormat: setting({
    flag: '--log-format',
    env: 'SVC_GRAPHQL_LOG_FORMAT',
    kind: oneOf<LogFormat>(['text', 'json']),
    default: 'text',
    description: 'json: one object a line',
  }),
  /** Largest body of a request to `/v1/graphql`, and of one WebSocket message, in bytes. @default 2097152 */
  maxRequestBodySize: setting({
    flag: '--max-request-body-size',
    env: 'SVC_GRAPHQL_MAX_REQUEST_BODY_SIZE',
    kind: positiveInteger('BYTES'),
    default: 2_097_152,
    description: 'also one WebSocket message',
  }),
  /** Most lexical tokens in one GraphQL document. @default 15000 */
  maxQueryTokens: setting({
    flag: '--max-query-tokens',
    env: 'SVC_GRAPHQL_MAX_QUERY_TOKENS',
    kind: positiveInteger('N'),
    default: 15_000,
    description: 'lexical tokens in one document',
  }),
  /** Largest answer of a remote (HTTP body or WebSocket message), in bytes. @default 67108864 */
  maxRemoteResponseSize: setting({
    flag: '--max-remote-response-size',
    env: 'SVC_GRAPHQL_MAX_REMOTE_RESPONSE_SIZE',
    kind: positiveInteger('BYTES'),
    default: 67_108_864,
    description: 'one answer of a remote',
  }),
  /**
   * Origins allowed by browsers: `*`, or comma-separated origins with `*` as a wildcard in the host
   * (`https://*.example.com`). @default '*'
   */
  corsDomain: setting({
    flag: '--cors-domain',
    env: 'SVC_GRAPHQL_CORS_DOMAIN',
    kind: checkedText('ORIGINS', parseCorsDomains),
    default: '*',
    description: 'comma-separated, https://*.example.com',
  }),
  /** No CORS headers at all. @default false */
  disableCors: setting({ flag: '--disable-cors', env: 'SVC_GRAPHQL_DISABLE_CORS', kind: flag, default: false, description: 'no CORS headers' }),
  /** Read the `Cookie` of a WebSocket upgrade even when its `Origin` is not a listed origin. @default false */
  wsReadCookie: setting({
    flag: '--ws-read-cookie',
    env: 'SVC_GRAPHQL_WS_READ_COOKIE',
    kind: flag,
    default: false,
    description: 'read the Cookie of upgrades from any origin',
  }),
  /**
   * `GET /v1/metrics` then asks for `Authorization: Bearer <metricsSecret>`; without it, the admin
   * secret header (when an admin secret is set), else it is open.
   */
  metricsSecret: setting({
    flag: '--metrics-secret',
    env: 'SVC_GRAPHQL_METRICS_SECRET',
    kind: text('SECRET', { nonEmpty: true, emptyVariableRefused: true }),
    description: 'GET /v1/metrics asks for Authorization: Bearer SECRET; without it: the admin secret, else open',
  }),
  /** No metrics kept, `/v1/metrics` answers 404. @default false */
  disableMetrics: setting({
    flag: '--disable-metrics',
    env: 'SVC_GRAPHQL_DISABLE_METRICS',
    kind: flag,
    default: false,
    description: 'no metrics kept, /v1/metrics is 404',
  }),
  /** Serve the web console at `/console` (when off, `/console` answers 404). @default false */
  enableConsole: setting({
    flag: '--enable-console',
    env: 'SVC_GRAPHQL_ENABLE_CONSOLE',
    kind: flag,
    default: false,
    description: 'the web console at /console',
  }),

  // Options only a program gives (no flag, no variable of their own).

  /** The directory of the console's build. @default the `dist/` of the installed `@svc-graphql/console` */
  consoleRoot: setting({ kind: text('DIR', { nonEmpty: true }), description: "the console's build" }),

  /** How long `close()` lets in-flight requests finish, in milliseconds. @default 10000 */
  shutdownTimeoutMs: setting({ kind: nonNegativeInteger('MS'), default: 10_000, description: 'how long close() lets requests finish' }),
  /** Most operations running at once on one WebSocket connection. @default 100 */
  maxOperationsPerConnection: setting({ kind: positiveInteger('N'), default: 100, description: 'operations at once on one WebSocket' }),
  /**
   * Answer operations served by remotes alone, without errors, before Yoga's request pipeline
   * (the same answers, less CPU per request). `false` sends every request through Yoga.
   * @default true, unless the environment variable `SVC_GRAPHQL_DIRECT_LANE` is `off`
   */
  directLane: setting({
    kind: flag,
    default: () => process.env['SVC_GRAPHQL_DIRECT_LANE'] !== 'off',
    description: 'answer operations of remotes alone before Yoga',
  }),
  /**
   * Largest body of a request to `/v1/metadata`, in bytes: larger ones are answered 413
   * `payload-too-large` before they are read to the end. @default 16777216 (16 MiB)
   */
  maxMetadataBodySize: setting({
    flag: '--max-metadata-body-size',
    env: 'SVC_GRAPHQL_MAX_METADATA_BODY_SIZE',
    kind: positiveInteger('BYTES'),
    default: 16_777_216,
    description: 'body of a request to /v1/metadata',
  }),
  /** Match the operations of every role but admin against the allow list of the metadata. @default false */
  enableAllowlist: setting({
    flag: '--enable-allowlist',
    env: 'SVC_GRAPHQL_ENABLE_ALLOWLIST',
    kind: flag,
    default: false,
    description: 'run only allow-listed operations (admin excepted)',
  }),
  /** Redis shared by every instance for rate limits (`redis://` or `rediss://`); without it each instance counts alone. */
  rateLimitRedisUrl: setting({
    flag: '--rate-limit-redis-url',
    env: 'SVC_GRAPHQL_RATE_LIMIT_REDIS_URL',
    kind: checkedText('URL', redisUrl),
    description: 'rate limits counted in this Redis, shared by every instance',
  }),
  /** How many proxies in front of the server append to `X-Forwarded-For` (0: the socket's address is the client). @default 0 */
  trustProxy: setting({
    flag: '--trust-proxy',
    env: 'SVC_GRAPHQL_TRUST_PROXY',
    kind: nonNegativeInteger('N'),
    default: 0,
    description: 'the client IP is the N-th address from the right of X-Forwarded-For',
  }),
  /** The prefix of the Redis keys of rate limits (instances sharing counts use the same). @default 'svc-graphql:rate:' */
  rateLimitKeyPrefix: setting({
    flag: '--rate-limit-key-prefix',
    env: 'SVC_GRAPHQL_RATE_LIMIT_KEY_PREFIX',
    kind: text('PREFIX', { nonEmpty: true }),
    default: 'svc-graphql:rate:',
    description: 'prefix of the Redis keys of rate limits',
  }),
  /**
   * Most subscriptions open at once to one remote schema (each client subscription counts); past
   * it, a subscription is answered `too many subscriptions to remote schema "<name>"`. @default 20000
   */
  maxSubscriptionsPerRemote: setting({
    flag: '--max-subscriptions-per-remote',
    env: 'SVC_GRAPHQL_MAX_SUBSCRIPTIONS_PER_REMOTE',
    kind: positiveInteger('N'),
    default: 20_000,
    description: 'subscriptions open at once to one remote',
  }),
};

/** A Redis URL: `redis://` or `rediss://` with a host. */
function redisUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    invalid('expected a redis:// or rediss:// URL');
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') invalid('expected a redis:// or rediss:// URL with a host');
}

type Table = typeof SETTINGS;
export type SettingName = keyof Table;
type ValueOf<S> = S extends { readonly kind: SettingKind<infer T> } ? T : never;
type WithFlag = { [K in SettingName]: Table[K] extends { flag: string } ? K : never }[SettingName];
type WithDefault = { [K in SettingName]: Table[K] extends { default: unknown } ? K : never }[SettingName];

/** The settings as options of `createServer`: each optional, documented in {@link SETTINGS}. */
export type ServerSettings = { -readonly [K in SettingName]?: ValueOf<Table[K]> };

/** The settings after {@link resolveSettings}: defaults applied, values checked. */
export type ResolvedSettings = { -readonly [K in WithDefault]: ValueOf<Table[K]> } & {
  -readonly [K in Exclude<SettingName, WithDefault>]?: ValueOf<Table[K]>;
};

/** The entries of the table, in its order. */
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** The entries with a flag (and a variable), in the order of `--help`. */
export const FLAG_SETTING_NAMES = SETTING_NAMES.filter((name): name is WithFlag => settingOf(name).flag !== undefined);

export function settingOf(name: SettingName): Setting<unknown> {
  return SETTINGS[name] as Setting<unknown>;
}

/** A setting of the command line: its flag and variable are there. */
export function flagSettingOf(name: WithFlag): Setting<unknown> & { flag: `--${string}`; env: `SVC_GRAPHQL_${string}` } {
  return SETTINGS[name] as Setting<unknown> & { flag: `--${string}`; env: `SVC_GRAPHQL_${string}` };
}

/** The default of a setting, as it is when the server starts. */
export function defaultOf(name: SettingName): unknown {
  const fallback = settingOf(name).default;
  return typeof fallback === 'function' ? (fallback as () => unknown)() : fallback;
}

/** JWT mode without an admin secret is refused: the endpoint would be open to everyone. */
export const JWT_NEEDS_ADMIN_SECRET = 'JWT mode needs an admin secret: set --admin-secret or SVC_GRAPHQL_ADMIN_SECRET';

/**
 * Checks the given values and fills in the defaults: the one place where settings get their
 * defaults, for `createServer` and for the CLI alike. `problem(name, code, message, cause)` builds
 * the error thrown for a setting (a `ServerOptionError`, or the CLI's error naming the flag).
 */
export function resolveSettings(
  given: ServerSettings,
  problem: (name: SettingName, code: 'ERR_INVALID_OPTION' | 'ERR_OPTION_COMBINATION', message: string, cause?: unknown) => Error,
): ResolvedSettings {
  const resolved: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const entry = settingOf(name);
    const value = (given as Readonly<Record<string, unknown>>)[name];
    if (value === undefined) {
      const fallback = defaultOf(name);
      if (fallback !== undefined) resolved[name] = fallback;
      continue;
    }
    try {
      resolved[name] = entry.kind.fromOption(value);
    } catch (error) {
      if (error instanceof InvalidValueError) throw problem(name, 'ERR_INVALID_OPTION', error.message, error);
      throw error;
    }
  }
  for (const name of ['jwtSecret', 'jwtSecrets'] as const) {
    if (resolved[name] !== undefined && resolved['adminSecret'] === undefined) throw problem(name, 'ERR_OPTION_COMBINATION', JWT_NEEDS_ADMIN_SECRET);
  }
  return resolved as ResolvedSettings;
}
