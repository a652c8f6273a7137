import { fromJsonText, parseJwtConfig, parseJwtConfigs, type JwtConfig } from './config.js';
import type { JwtVerificationCode, JwtVerificationResult } from './errors.js';

/** Where diagnostics go; Yoga's logger fits. */
export interface Logger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/**
 * Callbacks for metrics. They run synchronously on the request path, so they must be cheap; one
 * that throws is reported to the logger (warn) and does not affect the request.
 */
export interface JwtSessionHooks {
  /**
   * Once per request or graphql-ws connection that presented a token (cache hits included): `'ok'`,
   * or the code it was refused with: a {@link JwtVerificationCode} for an `invalid-jwt` answer
   * (`'JWTExpired'`, `'JWSInvalidSignature'`, `'NoUsableKeys'`, `'JWTNotInIssuer'`,
   * `'CompactDecodeError'`, …), or the code of a claims error (`'jwt-missing-role-claims'`,
   * `'jwt-invalid-claims'`). A token that verified but asks for a role it is not allowed (403) is `'ok'`.
   * The values form a small fixed set (never a token, a claim or an issuer).
   */
  onJwtVerification?(result: JwtVerificationResult): void;
  /** Once per `jwk_url` fetch attempt (start-up, refresh, unknown-`kid` refetch, retry). */
  onJwksFetch?(outcome: 'ok' | 'error'): void;
}

/** Options of {@link createSessionResolver} and {@link useJwtSession}. */
export interface JwtSessionOptions {
  /**
   * The JWT configuration (`type` + `key` or `jwk_url`, claims options, `audience`, `issuer`,
   * `allowed_skew`, `header`): its JSON text, the object, or the result of `parseJwtConfig`.
   * Without it, requests are authenticated by the admin secret alone.
   *
   * A list (or the JSON text of one) holds one configuration per token issuer: a token is verified
   * by the entry whose `issuer` equals its `iss`, else by the one entry without `issuer`, else it is
   * refused with `JWTNotInIssuer`. Each entry has its own keys, JWKS refresh, claims settings, token
   * location and cache; the token is read from the first location, in list order, that holds one.
   */
  jwt?: JwtConfig | string | object | readonly (JwtConfig | string | object)[];
  /**
   * The admin secret, compared in constant time with the `x-svc-admin-secret` header. Without an
   * admin secret and without `jwt`, every request is admin.
   */
  adminSecret?: string;
  /** The role of requests that carry neither a token nor a valid admin secret. */
  unauthorizedRole?: string;
  /**
   * Prefix of session variables, claims and headers (names are lower-cased).
   * @default 'x-svc-'
   */
  sessionVariablePrefix?: string;
  /**
   * The verified-token cache (lru-cache, keyed by the raw token; entries never outlive `exp`).
   * `false` turns it off.
   * @default { max: 10000 }
   */
  cache?: { max?: number } | false;
  /**
   * How long a `jwk_url` fetch may take before it counts as failed.
   * @default 5000
   */
  jwksFetchTimeoutMs?: number;
  /**
   * The fetch used for `jwk_url`.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
  /**
   * Where JWKS failures (warn) and rejected tokens (debug) are reported.
   * @default Yoga's logger inside Yoga (useJwtSession), else console without debug lines
   */
  logger?: Logger;
  /** Metrics callbacks; see {@link JwtSessionHooks}. */
  hooks?: JwtSessionHooks;
}

/** Options after validation and defaults. */
export interface NormalizedOptions {
  /** One configuration (checked as always), or several selected by the token's `iss`. */
  readonly jwt: JwtConfig | readonly JwtConfig[] | undefined;
  readonly hooks: JwtSessionHooks;
  readonly adminSecret: string | undefined;
  readonly unauthorizedRole: string | undefined;
  readonly prefix: string;
  readonly cacheMax: number;
  readonly jwksFetchTimeoutMs: number;
  readonly fetch: typeof fetch;
  readonly logger: Logger;
}

function optionError(option: string, problem: string): TypeError {
  return new TypeError(`jwt-session: "${option}" ${problem}`);
}

/** The options of the session resolver, in the order the README lists them. */
export const RESOLVER_OPTION_KEYS = [
  'jwt',
  'adminSecret',
  'unauthorizedRole',
  'sessionVariablePrefix',
  'cache',
  'jwksFetchTimeoutMs',
  'fetch',
  'logger',
  'hooks',
] as const;

/**
 * Refuses an options object with a key none of `known` names: a misspelt option (`jwtConfig`,
 * `adminSecrets`) would otherwise be left out in silence, and the app would run without it.
 */
export function refuseUnknownOptions(options: object, known: readonly string[]): void {
  // Own and inherited enumerable keys: a misspelt option on a prototype is one too.
  for (const key in options) {
    if (!known.includes(key)) throw optionError(key, `is not an option (the options are ${known.map((k) => `"${k}"`).join(', ')})`);
  }
}

/**
 * The value of a security option that must be there when it is named: `{ jwt: process.env.X }`
 * with X unset would otherwise authenticate every request as admin.
 */
function namedButUndefined(options: JwtSessionOptions, key: 'jwt' | 'adminSecret', value: unknown): boolean {
  return value === undefined && key in options;
}

function isLogger(value: unknown): value is Logger {
  if (typeof value !== 'object' || value === null) return false;
  const logger = value as Record<string, unknown>;
  return ['debug', 'info', 'warn', 'error'].every((level) => typeof logger[level] === 'function');
}

/** Validates the options up front, so misconfiguration fails before the server listens. */
export function normalizeOptions(options: JwtSessionOptions): NormalizedOptions {
  if (typeof options !== 'object' || options === null) throw optionError('options', 'must be an object');
  refuseUnknownOptions(options, RESOLVER_OPTION_KEYS);
  // Each option is read once: a getter answers the same for every check below.
  const { jwt, adminSecret, unauthorizedRole } = options;
  for (const [key, value] of [['jwt', jwt], ['adminSecret', adminSecret]] as const) {
    if (namedButUndefined(options, key, value)) {
      throw optionError(key, 'is undefined (an environment variable that is not set?): leave the option out to go without it');
    }
  }
  const prefixOption = options.sessionVariablePrefix ?? 'x-svc-';
  if (typeof prefixOption !== 'string') throw optionError('sessionVariablePrefix', `must be a string, got ${typeof prefixOption}`);
  const prefix = prefixOption.toLowerCase();
  if (!/^[a-z0-9-]+$/.test(prefix)) {
    throw optionError('sessionVariablePrefix', `must be a header-name prefix like "x-svc-", got ${JSON.stringify(options.sessionVariablePrefix)}`);
  }
  if (adminSecret !== undefined && (typeof adminSecret !== 'string' || adminSecret === '')) {
    throw optionError('adminSecret', 'must be a non-empty string');
  }
  if (unauthorizedRole !== undefined) {
    if (typeof unauthorizedRole !== 'string' || unauthorizedRole === '') throw optionError('unauthorizedRole', 'must be a non-empty string');
    if (unauthorizedRole.trim().toLowerCase() === 'admin') throw optionError('unauthorizedRole', 'cannot be "admin": requests without credentials would see everything');
    if (adminSecret === undefined && jwt === undefined) {
      throw optionError('unauthorizedRole', 'needs "adminSecret" or "jwt": without either, every request is admin and the role would never apply');
    }
  }
  let cacheMax = 10_000;
  if (options.cache !== undefined && options.cache !== false && (typeof options.cache !== 'object' || options.cache === null)) {
    throw optionError('cache', `must be false or an object like { max: 10000 }, got ${options.cache === null ? 'null' : typeof options.cache}`);
  }
  if (options.cache === false) cacheMax = 0;
  else if (options.cache?.max !== undefined) {
    if (!Number.isInteger(options.cache.max) || options.cache.max < 0) {
      throw optionError('cache.max', `must be a non-negative integer, got ${String(options.cache.max)}`);
    }
    cacheMax = options.cache.max;
  }
  const jwksFetchTimeoutMs = options.jwksFetchTimeoutMs ?? 5000;
  if (!Number.isFinite(jwksFetchTimeoutMs) || jwksFetchTimeoutMs <= 0) {
    throw optionError('jwksFetchTimeoutMs', `must be a positive number, got ${String(options.jwksFetchTimeoutMs)}`);
  }
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw optionError('fetch', 'must be a function');
  const hooks = options.hooks ?? {};
  if (typeof hooks !== 'object' || hooks === null) throw optionError('hooks', 'must be an object');
  for (const name of ['onJwtVerification', 'onJwksFetch'] as const) {
    if (hooks[name] !== undefined && typeof hooks[name] !== 'function') throw optionError(`hooks.${name}`, 'must be a function');
  }
  return {
    jwt: jwt === undefined ? undefined : parseJwtOption(jwt, prefix),
    hooks,
    adminSecret,
    unauthorizedRole,
    prefix,
    cacheMax,
    jwksFetchTimeoutMs,
    fetch: fetchFn,
    logger: loggerOption(options.logger),
  };
}

function loggerOption(logger: unknown): Logger {
  if (logger === undefined) return defaultLogger;
  if (!isLogger(logger)) throw optionError('logger', 'must have debug, info, warn and error functions (Yoga\'s logger, pino, console)');
  return logger;
}

/** One configuration as always; a list, or the JSON text of one, as one configuration per issuer. */
function parseJwtOption(jwt: unknown, prefix: string): JwtConfig | readonly JwtConfig[] {
  const value = fromJsonText(jwt);
  return Array.isArray(value)
    ? parseJwtConfigs(value, { sessionVariablePrefix: prefix })
    : parseJwtConfig(value, { sessionVariablePrefix: prefix });
}

export const defaultLogger: Logger = {
  // A rejected token is routine; printing every one by default would let clients flood the log.
  debug: () => undefined,
  info: (...args) => console.info(...args),
  warn: (...args) => console.warn(...args),
  error: (...args) => console.error(...args),
};
