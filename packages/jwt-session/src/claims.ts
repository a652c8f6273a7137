import type { ClaimsSource, JwtConfig } from './config.js';
import { JwtClaimsError, JwtVerificationError } from './errors.js';
import { readJsonPath } from './json-path.js';
import { isHeaderName } from './header-text.js';

/** What a verified token says about its holder, before a role is picked for a request. */
export interface TokenClaims {
  readonly allowedRoles: readonly string[];
  readonly defaultRole: string;
  /** Custom `x-svc-*` variables, names lower-cased (role variables excluded). */
  readonly variables: Readonly<Record<string, string>>;
}

/**
 * Checks `exp`, `nbf` and `iat` against `nowSeconds` with `skew` seconds of leeway. Run on every
 * request, cached token or not: a cached verification must never outlive the token.
 */
export function checkTokenTimes(payload: Record<string, unknown>, skew: number, nowSeconds: number): void {
  const exp = numericDate(payload, 'exp');
  const nbf = numericDate(payload, 'nbf');
  const iat = numericDate(payload, 'iat');
  if (exp !== undefined && exp + skew <= nowSeconds) throw new JwtVerificationError('JWTExpired');
  if (nbf !== undefined && nbf - skew > nowSeconds) throw new JwtVerificationError('JWTNotYetValid');
  if (iat !== undefined && iat - skew > nowSeconds) throw new JwtVerificationError('JWTIssuedAtFuture');
}

function numericDate(payload: Record<string, unknown>, claim: string): number | undefined {
  const value = payload[claim];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new JwtVerificationError('JWTClaimsSetDecodeError', `"${claim}" claim must be a number`);
  }
  return value;
}

/** Checks `aud` and `iss`: a missing `aud` fails a configured audience, a missing `iss` passes. */
export function checkAudienceAndIssuer(payload: Record<string, unknown>, config: JwtConfig): void {
  if (config.audience !== undefined) {
    const aud = payload['aud'];
    const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!values.some((v) => typeof v === 'string' && config.audience?.includes(v))) {
      throw new JwtVerificationError('JWTNotInAudience');
    }
  }
  if (config.issuer !== undefined) {
    const iss = payload['iss'];
    if (iss !== undefined && iss !== config.issuer) throw new JwtVerificationError('JWTNotInIssuer');
  }
}

/** Reads the session claims from a verified payload: from the claims namespace (or path), or through `claims_map`. */
export function extractTokenClaims(
  payload: Record<string, unknown>,
  source: ClaimsSource,
  prefix: string,
): TokenClaims {
  const allowedRolesName = `${prefix}allowed-roles`;
  const defaultRoleName = `${prefix}default-role`;
  const entries =
    source.kind === 'map' ? fromClaimsMap(payload, source, allowedRolesName, defaultRoleName) : fromNamespace(payload, source);

  let allowedRoles: unknown;
  let defaultRole: unknown;
  const variables: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (!name.startsWith(prefix)) continue;
    // A session variable travels to remotes as a header of that name.
    if (!isHeaderName(name)) {
      throw new JwtClaimsError('jwt-invalid-claims', `invalid claim name ${JSON.stringify(rawName)}: it cannot be sent as a header name`);
    }
    // Names are case-insensitive: two spellings of one name would leave the choice to their order.
    if (seen.has(name)) throw new JwtClaimsError('jwt-invalid-claims', `invalid claims: ${name} is given twice (claim names are case-insensitive)`);
    seen.add(name);
    if (name === allowedRolesName) allowedRoles = value;
    else if (name === defaultRoleName) defaultRole = value;
    // The role is chosen per request; a claim cannot pin it.
    else if (name === `${prefix}role`) continue;
    else variables[name] = customValue(name, value);
  }
  if (allowedRoles === undefined) {
    throw new JwtClaimsError('jwt-missing-role-claims', `JWT claim does not contain ${allowedRolesName}`);
  }
  if (!Array.isArray(allowedRoles) || !allowedRoles.every((r) => typeof r === 'string')) {
    throw new JwtClaimsError(
      'jwt-invalid-claims',
      `invalid ${allowedRolesName}; should be a list of roles: got ${describe(allowedRoles)}`,
    );
  }
  if (allowedRoles.some((role) => role === '')) {
    throw new JwtClaimsError('jwt-invalid-claims', `invalid ${allowedRolesName}; should be a list of roles: got an empty role name`);
  }
  if (defaultRole === undefined) {
    throw new JwtClaimsError('jwt-missing-role-claims', `JWT claim does not contain ${defaultRoleName}`);
  }
  if (typeof defaultRole !== 'string' || defaultRole === '' || CONTROL_CHARACTERS.test(defaultRole)) {
    const should = typeof defaultRole !== 'string' ? `a string, got ${describe(defaultRole)}` : defaultRole === '' ? 'a non-empty string' : 'a string without control characters';
    throw new JwtClaimsError('jwt-invalid-claims', `invalid ${defaultRoleName}; should be ${should}`);
  }
  return { allowedRoles: allowedRoles as string[], defaultRole, variables };
}

/**
 * C0 controls but tab, DEL and the C1 controls: no HTTP header can carry the first ones, a remote
 * would read the others as bytes of another meaning, and a session variable travels as a header.
 */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;

function customValue(name: string, value: unknown): string {
  if (typeof value === 'string') {
    if (CONTROL_CHARACTERS.test(value)) {
      throw new JwtClaimsError('jwt-invalid-claims', `invalid ${name}: control characters cannot be sent in a header`);
    }
    return value;
  }
  // Hasura reads numbers and booleans as their JSON text, so `"x-svc-user-id": 42` keeps working.
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    // JSON.parse rounds an integer beyond 2^53 to a neighbour (12345678901234567890 becomes
    // ...7168) and reads 1e400 as Infinity: the text we would make of it is not what the issuer
    // signed, and could be another user's id. Such a number has to travel as a string.
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) {
      throw new JwtClaimsError('jwt-invalid-claims', `invalid ${name}: the number is not exactly representable; send it as a string`);
    }
    return String(value);
  }
  throw new JwtClaimsError('jwt-invalid-claims', `invalid claim ${name}: expected a string, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function fromNamespace(
  payload: Record<string, unknown>,
  source: Exclude<ClaimsSource, { kind: 'map' }>,
): Iterable<[string, unknown]> {
  let value: unknown;
  if (source.kind === 'namespace') {
    value = Object.prototype.hasOwnProperty.call(payload, source.namespace) ? payload[source.namespace] : undefined;
    if (value === undefined) throw new JwtClaimsError('jwt-invalid-claims', `claims key: '${source.namespace}' not found`);
  } else {
    value = readJsonPath(payload, source.path);
    if (value === undefined) {
      throw new JwtClaimsError('jwt-invalid-claims', `claims not found at claims_namespace_path: '${source.path.source}'`);
    }
  }
  if (source.format === 'stringified_json') {
    if (typeof value !== 'string') {
      throw new JwtClaimsError('jwt-invalid-claims', 'expecting a string when claims_format is stringified_json');
    }
    const where = source.kind === 'namespace' ? `claims key: '${source.namespace}'` : `claims_namespace_path: '${source.path.source}'`;
    try {
      value = JSON.parse(value);
    } catch {
      throw new JwtClaimsError('jwt-invalid-claims', `invalid JSON text in ${where} (claims_format is stringified_json)`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new JwtClaimsError('jwt-invalid-claims', `expecting a JSON object in ${where} (claims_format is stringified_json)`);
    }
  } else if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new JwtClaimsError('jwt-invalid-claims', 'expecting a json object when claims_format is json');
  }
  return Object.entries(value as Record<string, unknown>);
}

function fromClaimsMap(
  payload: Record<string, unknown>,
  source: Extract<ClaimsSource, { kind: 'map' }>,
  allowedRolesName: string,
  defaultRoleName: string,
): Iterable<[string, unknown]> {
  const out: [string, unknown][] = [];
  for (const [name, entry] of source.map) {
    if (entry.kind === 'literal') {
      out.push([name, entry.value]);
      continue;
    }
    let value = readJsonPath(payload, entry.path);
    if (value === undefined) value = entry.default;
    if (value === undefined) {
      // A missing role claim gets the answer it gets without claims_map (Hasura does the same), so
      // clients see one error for "no roles in this token" however the server is configured.
      if (name === allowedRolesName || name === defaultRoleName) {
        throw new JwtClaimsError('jwt-missing-role-claims', `JWT claim does not contain ${name}`);
      }
      throw new JwtClaimsError('jwt-invalid-claims', `JWT claim from claims_map, ${name} not found`);
    }
    if (name !== allowedRolesName && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new JwtClaimsError(
        'jwt-invalid-claims',
        `invalid claim ${name} at claims_map path '${entry.path.source}': expected a string, got ${describe(value)}`,
      );
    }
    out.push([name, value]);
  }
  return out;
}
