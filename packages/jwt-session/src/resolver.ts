import { createHash, timingSafeEqual } from 'node:crypto';
import {
  JwtClaimsError,
  JwtVerificationError,
  adminSecretRequired,
  invalidAdminSecret,
  missingToken,
  roleNotAllowed,
  sessionErrorFromToken,
} from './errors.js';
import { normalizeOptions, type JwtSessionOptions } from './options.js';
import { headerReader, readToken, type HeaderReader, type HeadersInput } from './request-headers.js';
import type { Session } from './session.js';
import { TokenVerifier } from './verifier.js';

/** Turns request headers into a {@link Session}. Holds JWKS timers: call `dispose()` when done. */
export interface SessionResolver {
  /**
   * The session of a request with these headers (names case-insensitive).
   * @throws {SessionError} with the status, code and exact message the client is answered with.
   */
  resolve(headers: HeadersInput): Promise<Session>;
  /** Stops the JWKS refresh timer and empties the cache. */
  dispose(): void;
  /** Settles when keys are available, or the first JWKS fetch failed (never rejects). */
  ready?(): Promise<void>;
  /** The configured `allowed_skew` in seconds; the WebSocket helper closes at `exp` plus this. */
  readonly allowedSkew?: number;
}

/**
 * Builds the resolver shared by the HTTP plugin, the WebSocket helper and any other entry point.
 *
 * @throws {JwtConfigError} or `TypeError` on bad configuration, before any request is seen.
 */
export function createSessionResolver(options: JwtSessionOptions): SessionResolver {
  const opts = normalizeOptions(options);
  const verifier =
    opts.jwt === undefined
      ? undefined
      : new TokenVerifier({
          config: opts.jwt,
          prefix: opts.prefix,
          cacheMax: opts.cacheMax,
          fetch: opts.fetch,
          jwksFetchTimeoutMs: opts.jwksFetchTimeoutMs,
          logger: opts.logger,
        });
  const secretDigest = opts.adminSecret === undefined ? undefined : digest(opts.adminSecret);
  const roleHeader = `${opts.prefix}role`;
  const secretHeader = `${opts.prefix}admin-secret`;

  function secretMatches(presented: string): boolean {
    // Hashing first gives equal-length inputs, so neither length nor content leaks through timing.
    return secretDigest !== undefined && timingSafeEqual(digest(presented), secretDigest);
  }

  function headerVariables(headers: HeaderReader, role: string): Record<string, string> {
    const variables: Record<string, string> = {};
    for (const [name, value] of headers.entries()) {
      const lower = name.toLowerCase();
      if (lower.startsWith(opts.prefix) && lower !== secretHeader && lower !== roleHeader) variables[lower] = value;
    }
    variables[roleHeader] = role;
    return variables;
  }

  function adminSession(headers: HeaderReader): Session {
    const role = headers.get(roleHeader)?.trim() || 'admin';
    return { role, variables: headerVariables(headers, role), isAdmin: role === 'admin' };
  }

  function unauthorizedSession(headers: HeaderReader, role: string): Session {
    // An unauthorized request cannot pick its role: x-svc-role is ignored.
    return { role, variables: headerVariables(headers, role), isAdmin: false };
  }

  async function tokenSession(token: string, headers: HeaderReader, jwt: TokenVerifier): Promise<Session> {
    let claims;
    let exp;
    try {
      const verified = await jwt.verify(token);
      if (verified.claims instanceof JwtClaimsError) throw verified.claims;
      claims = verified.claims;
      exp = verified.exp;
    } catch (error) {
      if (error instanceof JwtVerificationError || error instanceof JwtClaimsError) {
        opts.logger.debug(`jwt-session: rejected a token: ${error.message}`);
        throw sessionErrorFromToken(error);
      }
      throw error;
    }
    const role = headers.get(roleHeader)?.trim() || claims.defaultRole;
    if (!claims.allowedRoles.includes(role)) throw roleNotAllowed();
    const session: Session = {
      role,
      variables: { ...claims.variables, [roleHeader]: role },
      isAdmin: role === 'admin',
    };
    if (exp !== undefined) session.expiresAt = new Date(exp * 1000);
    return session;
  }

  async function resolve(input: HeadersInput): Promise<Session> {
    const headers = headerReader(input);
    if (verifier !== undefined && opts.jwt !== undefined) {
      // A token is enforced even when an admin secret is sent too: the secret cannot override it.
      const token = readToken(headers, opts.jwt.header);
      if (token !== undefined) return tokenSession(token, headers, verifier);
    }
    const presented = headers.get(secretHeader);
    if (secretDigest === undefined) {
      if (verifier === undefined) return adminSession(headers);
      // JWT without an admin secret (embedding apps): there is no admin path to fall back to.
      return noCredentials(headers);
    }
    if (presented !== undefined && secretMatches(presented)) return adminSession(headers);
    if (verifier !== undefined) {
      if (presented !== undefined) throw invalidAdminSecret(opts.prefix);
      return noCredentials(headers);
    }
    if (opts.unauthorizedRole !== undefined) return unauthorizedSession(headers, opts.unauthorizedRole);
    throw presented === undefined ? adminSecretRequired(opts.prefix) : invalidAdminSecret(opts.prefix);
  }

  function noCredentials(headers: HeaderReader): Session {
    if (opts.unauthorizedRole !== undefined) return unauthorizedSession(headers, opts.unauthorizedRole);
    throw missingToken();
  }

  return {
    resolve,
    dispose: () => verifier?.dispose(),
    ready: () => verifier?.ready() ?? Promise.resolve(),
    allowedSkew: opts.jwt?.allowedSkew ?? 0,
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
