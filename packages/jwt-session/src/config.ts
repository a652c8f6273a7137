import { JWT_ALGORITHMS, type JwtAlgorithm } from './algorithms.js';
import { JwtConfigError } from './errors.js';
import { parseJsonPath, type JsonPath } from './json-path.js';
import { parseConfigKey, type ConfigKey } from './keys.js';

/** The claims namespace used when the config names none. */
export const DEFAULT_CLAIMS_NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

/** Where the token is read from: `Authorization: Bearer`, a cookie, or a custom header. */
export type TokenLocation =
  | { readonly type: 'Authorization' }
  | { readonly type: 'Cookie'; readonly name: string }
  | { readonly type: 'CustomHeader'; readonly name: string };

export type ClaimsFormat = 'json' | 'stringified_json';

/** One `claims_map` entry: a literal value, or a JSON path into the payload with an optional default. */
export type ClaimsMapEntry =
  | { readonly kind: 'literal'; readonly value: string | readonly string[] }
  | { readonly kind: 'path'; readonly path: JsonPath; readonly default?: string | readonly string[] };

/** Where the session claims live in the payload. */
export type ClaimsSource =
  | { readonly kind: 'namespace'; readonly namespace: string; readonly format: ClaimsFormat }
  | { readonly kind: 'path'; readonly path: JsonPath; readonly format: ClaimsFormat }
  | { readonly kind: 'map'; readonly map: ReadonlyMap<string, ClaimsMapEntry> };

/** How keys are obtained: one configured key, or a JWKS URL. */
export type KeySource =
  | { readonly kind: 'key'; readonly type: JwtAlgorithm; readonly key: ConfigKey }
  | { readonly kind: 'jwks'; readonly url: URL };

/** The JWT configuration, validated and normalized by {@link parseJwtConfig}. */
export interface JwtConfig {
  readonly keys: KeySource;
  readonly claims: ClaimsSource;
  /** Accepted `aud` values; `undefined` when no audience is checked. */
  readonly audience?: readonly string[];
  readonly issuer?: string;
  /** Leeway in seconds for `exp`, `nbf` and `iat`. */
  readonly allowedSkew: number;
  readonly header: TokenLocation;
}

/** Options of {@link parseJwtConfig}. */
export interface ParseJwtConfigOptions {
  /**
   * The session variable prefix; `claims_map` may give a literal list only to `<prefix>allowed-roles`.
   * @default 'x-svc-'
   */
  sessionVariablePrefix?: string;
}

const FIELDS = new Set([
  'type',
  'key',
  'jwk_url',
  'claims_namespace',
  'claims_namespace_path',
  'claims_format',
  'audience',
  'issuer',
  'claims_map',
  'allowed_skew',
  'header',
]);

const parsedConfigs = new WeakSet<object>();

/** True when `value` came out of {@link parseJwtConfig}. */
export function isJwtConfig(value: unknown): value is JwtConfig {
  return typeof value === 'object' && value !== null && parsedConfigs.has(value);
}

/**
 * A JSON.parse error without the piece of input V8 quotes in some messages (`Unexpected token 'a',
 * "abc…" is not valid JSON`): the input holds keys, and the message reaches logs.
 */
export function jsonErrorMessage(error: unknown): string {
  return String((error as Error)?.message ?? error).replace(/".*"(\.\.\.)?/s, '…');
}

function fail(message: string): never {
  throw new JwtConfigError(message);
}

/** `input` parsed when it is JSON text, else as it is. @throws {JwtConfigError} `invalid JSON: …` */
export function fromJsonText(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch (error) {
    return fail(`invalid JSON: ${jsonErrorMessage(error)}`);
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function optionalString(input: Record<string, unknown>, field: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(`${field}: expected a string, got ${kindOf(value)}`);
  return value;
}

function nonEmptyString(input: Record<string, unknown>, field: string): string | undefined {
  const value = optionalString(input, field);
  if (value === '') fail(`${field}: must not be empty`);
  return value;
}

/**
 * Validates and normalizes the JWT configuration (an object, or its JSON text).
 *
 * @throws {JwtConfigError} naming the field and the problem, e.g. `unknown field "audiance"`.
 */
export function parseJwtConfig(input: unknown, options: ParseJwtConfigOptions = {}): JwtConfig {
  if (isJwtConfig(input)) return input;
  const prefix = (options.sessionVariablePrefix ?? 'x-svc-').toLowerCase();
  const raw = fromJsonText(input);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    fail(`expected a JSON object, got ${kindOf(raw)}`);
  }
  const config = raw as Record<string, unknown>;
  for (const field of Object.keys(config)) {
    if (!FIELDS.has(field)) fail(`unknown field "${field}"`);
  }

  const keys = parseKeySource(config);

  const namespace = nonEmptyString(config, 'claims_namespace');
  const namespacePath = nonEmptyString(config, 'claims_namespace_path');
  if (namespace !== undefined && namespacePath !== undefined) {
    fail('claims_namespace and claims_namespace_path both cannot be set');
  }
  const format = optionalString(config, 'claims_format') ?? 'json';
  if (format !== 'json' && format !== 'stringified_json') {
    fail(`claims_format: expected "json" or "stringified_json", got "${format}"`);
  }
  let claims: ClaimsSource;
  if (config['claims_map'] !== undefined && config['claims_map'] !== null) {
    claims = { kind: 'map', map: parseClaimsMap(config['claims_map'], prefix) };
  } else if (namespacePath !== undefined) {
    claims = { kind: 'path', path: jsonPath('claims_namespace_path', namespacePath), format };
  } else {
    claims = { kind: 'namespace', namespace: namespace ?? DEFAULT_CLAIMS_NAMESPACE, format };
  }

  const result: {
    -readonly [K in keyof JwtConfig]: JwtConfig[K];
  } = { keys, claims, allowedSkew: parseSkew(config['allowed_skew']), header: parseHeader(config['header']) };
  const audience = parseAudience(config['audience']);
  if (audience !== undefined) result.audience = audience;
  const issuer = optionalString(config, 'issuer');
  // An empty issuer matches no token's `iss` that any issuer writes, and reads as a mistake.
  if (issuer === '') fail('issuer: expected a non-empty string (leave "issuer" out to accept any)');
  if (issuer !== undefined) result.issuer = issuer;
  const frozen = Object.freeze(result);
  parsedConfigs.add(frozen);
  return frozen;
}

/**
 * Validates and normalizes several JWT configurations (a list, or its JSON text), one per token
 * issuer: their `issuer` values must be distinct, and at most one entry may have none (the entry
 * for tokens whose `iss` no other entry names). A problem with one entry is reported with its
 * position, e.g. `[1]: key: HS256 key must be at least 32 characters`.
 *
 * @throws {JwtConfigError} e.g. `issuer "https://a.example" is configured twice`.
 */
export function parseJwtConfigs(input: unknown, options: ParseJwtConfigOptions = {}): readonly JwtConfig[] {
  const raw = fromJsonText(input);
  if (!Array.isArray(raw)) fail(`expected a JSON array of JWT configurations, got ${kindOf(raw)}`);
  if (raw.length === 0) fail('expected at least one JWT configuration, got an empty list');
  const configs = raw.map((entry: unknown, index) => {
    try {
      return parseJwtConfig(entry, options);
    } catch (error) {
      if (error instanceof JwtConfigError) fail(`[${index}]: ${error.message}`);
      throw error;
    }
  });
  checkDistinctIssuers(configs);
  return Object.freeze(configs);
}

/** Distinct `issuer` values, and at most one entry without one. */
function checkDistinctIssuers(configs: readonly JwtConfig[]): void {
  const seen = new Set<string>();
  let fallback = false;
  for (const config of configs) {
    if (config.issuer === undefined) {
      if (fallback) fail('an entry without "issuer" is configured twice (at most one entry may have no issuer)');
      fallback = true;
    } else {
      if (seen.has(config.issuer)) fail(`issuer ${JSON.stringify(config.issuer)} is configured twice`);
      seen.add(config.issuer);
    }
  }
}

function parseKeySource(config: Record<string, unknown>): KeySource {
  const type = optionalString(config, 'type');
  const key = optionalString(config, 'key');
  const jwkUrl = optionalString(config, 'jwk_url');
  if (jwkUrl !== undefined) {
    if (key !== undefined) fail('key and jwk_url both cannot be set');
    if (type !== undefined) fail('type: must not be set with jwk_url (the keys carry their algorithm)');
    let url: URL;
    try {
      url = new URL(jwkUrl);
    } catch {
      fail(`jwk_url: invalid URL "${jwkUrl}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`jwk_url: expected an http(s) URL, got "${jwkUrl}"`);
    return { kind: 'jwks', url };
  }
  if (key === undefined) fail(type === undefined ? 'either type and key, or jwk_url, must be set' : 'key: required with type');
  if (type === undefined) fail('type: required with key');
  if (!(JWT_ALGORITHMS as readonly string[]).includes(type)) {
    fail(`type: unsupported algorithm "${type}"; expected one of ${JWT_ALGORITHMS.join(', ')}`);
  }
  const algorithm = type as JwtAlgorithm;
  try {
    return { kind: 'key', type: algorithm, key: parseConfigKey(algorithm, key) };
  } catch (error) {
    fail(`key: ${(error as Error).message}`);
  }
}

function jsonPath(field: string, source: string): JsonPath {
  try {
    return parseJsonPath(source);
  } catch (error) {
    fail(`${field}: ${(error as Error).message}`);
  }
}

function parseSkew(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    fail(`allowed_skew: expected a non-negative integer (seconds), got ${JSON.stringify(value)}`);
  }
  return value;
}

function parseAudience(value: unknown): readonly string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return Object.freeze([value]);
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
    fail('audience: expected a string or a non-empty list of strings');
  }
  return Object.freeze([...(value as string[])]);
}

function parseHeader(value: unknown): TokenLocation {
  if (value === undefined || value === null) return { type: 'Authorization' };
  let header = value;
  if (typeof header === 'string') {
    try {
      header = JSON.parse(header);
    } catch {
      fail('header: expected a JSON object or its JSON text');
    }
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    fail(`header: expected an object, got ${kindOf(header)}`);
  }
  const h = header as Record<string, unknown>;
  for (const field of Object.keys(h)) {
    if (field !== 'type' && field !== 'name') fail(`header: unknown field "${field}"`);
  }
  const type = h['type'];
  if (type === 'Authorization') {
    if (h['name'] !== undefined) fail('header: "name" is not allowed with type Authorization');
    return { type };
  }
  if (type === 'Cookie' || type === 'CustomHeader') {
    const name = h['name'];
    // RFC 7230 token characters, so the name can be looked up as a header or cookie name.
    if (typeof name !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      fail(`header: type ${type} needs a "name" that is a valid ${type === 'Cookie' ? 'cookie' : 'header'} name`);
    }
    return { type, name: type === 'CustomHeader' ? name.toLowerCase() : name };
  }
  return fail(`header: "type" must be "Authorization", "Cookie" or "CustomHeader", got ${JSON.stringify(type)}`);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function parseClaimsMap(value: unknown, prefix: string): ReadonlyMap<string, ClaimsMapEntry> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(`claims_map: expected an object, got ${kindOf(value)}`);
  }
  const allowedRoles = `${prefix}allowed-roles`;
  const map = new Map<string, ClaimsMapEntry>();
  for (const [rawName, entry] of Object.entries(value as Record<string, unknown>)) {
    const name = rawName.toLowerCase();
    const field = `claims_map.${rawName}`;
    if (!name.startsWith(prefix)) fail(`${field}: session variable names must start with "${prefix}"`);
    if (map.has(name)) fail(`${field}: session variable given twice (names are case-insensitive)`);
    const listAllowed = name === allowedRoles;
    if (typeof entry === 'string') {
      map.set(name, { kind: 'literal', value: entry });
    } else if (Array.isArray(entry)) {
      if (!listAllowed) fail(`${field}: a literal list is only allowed for ${allowedRoles}`);
      if (!isStringList(entry)) fail(`${field}: expected a list of strings`);
      map.set(name, { kind: 'literal', value: Object.freeze([...entry]) });
    } else if (typeof entry === 'object' && entry !== null) {
      const e = entry as Record<string, unknown>;
      for (const key of Object.keys(e)) {
        if (key !== 'path' && key !== 'default') fail(`${field}: unknown field "${key}"`);
      }
      if (typeof e['path'] !== 'string') fail(`${field}: "path" must be a JSON path string`);
      const path = jsonPath(`${field}.path`, e['path']);
      const fallback = e['default'];
      if (fallback === undefined || fallback === null) {
        map.set(name, { kind: 'path', path });
      } else if (typeof fallback === 'string' || (listAllowed && isStringList(fallback))) {
        map.set(name, {
          kind: 'path',
          path,
          default: typeof fallback === 'string' ? fallback : Object.freeze([...fallback]),
        });
      } else {
        fail(`${field}: "default" must be a string${listAllowed ? ' or a list of strings' : ''}`);
      }
    } else {
      fail(`${field}: expected {"path": …}, a string${listAllowed ? ' or a list of strings' : ''}, got ${kindOf(entry)}`);
    }
  }
  return map;
}
