import { createHash, timingSafeEqual } from 'node:crypto';
import {
  JwtClaimsError,
  JwtVerificationError,
  adminSecretRequired,
  invalidAdminSecret,
  invalidSessionHeader,
  missingToken,
  roleNotAllowed,
  sessionErrorFromToken,
  withBearerChallenge,
  type JwtVerificationResult,
  type SessionError,
} from './errors.js';
import { JwtVerifiers, type FoundToken } from './issuers.js';
import { normalizeOptions, type JwtSessionOptions } from './options.js';
import { isHeaderName, isHeaderValue } from './header-text.js';
import { headerReader, type HeaderReader, type HeadersInput } from './request-headers.js';
import type { Session } from './session.js';

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
  /**
   * The configured `allowed_skew` in seconds (with several configurations, the largest); the
   * WebSocket helper closes at `exp` plus this, unless {@link allowedSkewOf} says otherwise.
   */
  readonly allowedSkew?: number;
  /** The `allowed_skew` of the configuration that verified the token of `session` (0 for other sessions). */
  allowedSkewOf?(session: Session): number;
}

/**
 * Builds the resolver shared by the HTTP plugin, the WebSocket helper and any other entry point.
 *
 * @throws {JwtConfigError} or `TypeError` on bad configuration, before any request is seen.
 */
export function createSessionResolver(options: JwtSessionOptions): SessionResolver {
  const opts = normalizeOptions(options);
  const { onJwtVerification, onJwksFetch } = opts.hooks;
  const verifier =
    opts.jwt === undefined
      ? undefined
      : new JwtVerifiers(opts.jwt, {
          prefix: opts.prefix,
          cacheMax: opts.cacheMax,
          fetch: opts.fetch,
          jwksFetchTimeoutMs: opts.jwksFetchTimeoutMs,
          logger: opts.logger,
          ...(onJwksFetch !== undefined && { onJwksFetch: (outcome: 'ok' | 'error') => onJwksFetch.call(opts.hooks, outcome) }),
        });
  /** The `allowed_skew` of the configuration that verified each token session. */
  const skews = new WeakMap<Session, number>();

  function report(result: JwtVerificationResult): void {
    if (onJwtVerification === undefined) return;
    try {
      onJwtVerification.call(opts.hooks, result);
    } catch (error) {
      opts.logger.warn(`jwt-session: hooks.onJwtVerification threw: ${(error as Error)?.message ?? String(error)}`);
    }
  }
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
      if (!lower.startsWith(opts.prefix) || lower === secretHeader || lower === roleHeader) continue;
      // Headers of a graphql-ws `connection_init` are JSON: what no HTTP header could be is refused
      // here, not by the remote call that would carry it.
      if (!isHeaderName(lower) || !isHeaderValue(value)) {
        throw invalidSessionHeader(name);
      }
      variables[lower] = value;
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

  async function tokenSession(found: FoundToken, headers: HeaderReader, jwt: JwtVerifiers): Promise<Session> {
    let claims;
    let exp;
    let skew;
    try {
      const { verified, config } = await jwt.verify(found);
      if (verified.claims instanceof JwtClaimsError) throw verified.claims;
      claims = verified.claims;
      exp = verified.exp;
      skew = config.allowedSkew;
    } catch (error) {
      if (error instanceof JwtVerificationError || error instanceof JwtClaimsError) {
        opts.logger.debug(`jwt-session: rejected a token: ${error.message}`);
        report(error.code);
        throw sessionErrorFromToken(error);
      }
      throw error;
    }
    report('ok');
    const role = headers.get(roleHeader)?.trim() || claims.defaultRole;
    if (!claims.allowedRoles.includes(role)) throw roleNotAllowed();
    const session: Session = {
      role,
      variables: { ...claims.variables, [roleHeader]: role },
      isAdmin: role === 'admin',
    };
    if (exp !== undefined) {
      // An `exp` past what a Date holds (year 275760; some issuers write Number.MAX_SAFE_INTEGER
      // for "never") is a token that does not expire in any time the server can name.
      const expiresAt = new Date(exp * 1000);
      if (!Number.isNaN(expiresAt.getTime())) session.expiresAt = expiresAt;
    }
    skews.set(session, skew);
    return session;
  }

  async function resolve(input: HeadersInput): Promise<Session> {
    const headers = headerReader(input);
    if (verifier !== undefined) {
      // A token is enforced even when an admin secret is sent too: the secret cannot override it.
      const found = verifier.readToken(headers);
      if (found !== undefined) return tokenSession(found, headers, verifier);
    }
    const presented = headers.get(secretHeader);
    if (secretDigest === undefined) {
      if (verifier === undefined) return adminSession(headers);
      // JWT without an admin secret (embedding apps): there is no admin path to fall back to.
      return noCredentials(headers);
    }
    if (presented !== undefined && secretMatches(presented)) return adminSession(headers);
    if (verifier !== undefined) {
      if (presented !== undefined) throw refused(invalidAdminSecret(opts.prefix), headers);
      return noCredentials(headers);
    }
    if (opts.unauthorizedRole !== undefined) return unauthorizedSession(headers, opts.unauthorizedRole);
    throw refused(presented === undefined ? adminSecretRequired(opts.prefix) : invalidAdminSecret(opts.prefix), headers);
  }

  function noCredentials(headers: HeaderReader): Session {
    if (opts.unauthorizedRole !== undefined) return unauthorizedSession(headers, opts.unauthorizedRole);
    throw refused(missingToken(), headers);
  }

  /** A refusal of a request that sent a Bearer token it was not judged by: with the challenge too. */
  function refused(error: SessionError, headers: HeaderReader): SessionError {
    return withBearerChallenge(error, headers.get('authorization'));
  }

  return {
    resolve,
    dispose: () => verifier?.dispose(),
    ready: () => verifier?.ready() ?? Promise.resolve(),
    allowedSkew: verifier?.maxAllowedSkew ?? 0,
    allowedSkewOf: (session) => skews.get(session) ?? 0,
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
