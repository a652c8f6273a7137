import { parseJwtConfig, type JwtConfig } from './config.js';

/** Where diagnostics go; Yoga's logger fits. */
export interface Logger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** Options of {@link createSessionResolver} and {@link useJwtSession}. */
export interface JwtSessionOptions {
  /**
   * The JWT configuration (`type` + `key` or `jwk_url`, claims options, `audience`, `issuer`,
   * `allowed_skew`, `header`): its JSON text, the object, or the result of `parseJwtConfig`.
   * Without it, requests are authenticated by the admin secret alone.
   */
  jwt?: JwtConfig | string | object;
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
}

/** Options after validation and defaults. */
export interface NormalizedOptions {
  readonly jwt: JwtConfig | undefined;
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

/** Validates the options up front, so misconfiguration fails before the server listens. */
export function normalizeOptions(options: JwtSessionOptions): NormalizedOptions {
  if (typeof options !== 'object' || options === null) throw optionError('options', 'must be an object');
  const prefix = (options.sessionVariablePrefix ?? 'x-svc-').toLowerCase();
  if (!/^[a-z0-9-]+$/.test(prefix)) {
    throw optionError('sessionVariablePrefix', `must be a header-name prefix like "x-svc-", got ${JSON.stringify(options.sessionVariablePrefix)}`);
  }
  if (options.adminSecret !== undefined && (typeof options.adminSecret !== 'string' || options.adminSecret === '')) {
    throw optionError('adminSecret', 'must be a non-empty string');
  }
  if (options.unauthorizedRole !== undefined && (typeof options.unauthorizedRole !== 'string' || options.unauthorizedRole === '')) {
    throw optionError('unauthorizedRole', 'must be a non-empty string');
  }
  let cacheMax = 10_000;
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
  return {
    jwt: options.jwt === undefined ? undefined : parseJwtConfig(options.jwt, { sessionVariablePrefix: prefix }),
    adminSecret: options.adminSecret,
    unauthorizedRole: options.unauthorizedRole,
    prefix,
    cacheMax,
    jwksFetchTimeoutMs,
    fetch: fetchFn,
    logger: options.logger ?? defaultLogger,
  };
}

export const defaultLogger: Logger = {
  // A rejected token is routine; printing every one by default would let clients flood the log.
  debug: () => undefined,
  info: (...args) => console.info(...args),
  warn: (...args) => console.warn(...args),
  error: (...args) => console.error(...args),
};
