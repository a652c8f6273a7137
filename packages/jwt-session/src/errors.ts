/**
 * Raised by {@link parseJwtConfig} (and therefore by the factories) when the JWT configuration is
 * unusable. The message names the field and the problem, e.g. `key: HS256 key must be at least 32
 * characters`, so a server can print it next to the flag or variable it came from.
 */
export class JwtConfigError extends TypeError {
  override name = 'JwtConfigError';
}

/** Stable error codes a client sees in `errors[0].extensions.code`. */
export type SessionErrorCode =
  | 'invalid-jwt'
  | 'invalid-headers'
  | 'access-denied'
  | 'jwt-missing-role-claims'
  | 'jwt-invalid-claims';

/**
 * Why a request has no session. `code`, `status` and `headers` are decided here, in one place, and
 * the HTTP plugin and the WebSocket helper only render them.
 */
export class SessionError extends Error {
  override name = 'SessionError';
  /** The Hasura-compatible error code, e.g. `invalid-jwt`. */
  readonly code: SessionErrorCode;
  /** HTTP status to answer with (400, 401 or 403). */
  readonly status: number;
  /** Extra response headers, e.g. `WWW-Authenticate` on a 401 to a request that sent a token. */
  readonly headers: Record<string, string>;

  constructor(
    code: SessionErrorCode,
    status: number,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = status;
    this.headers = options.headers ?? {};
  }

  /** The exact answer body: `{"errors":[{"message":M,"extensions":{"code":C,"path":"$"}}]}`. */
  toJSON(): { errors: [{ message: string; extensions: { code: string; path: '$' } }] } {
    return { errors: [{ message: this.message, extensions: { code: this.code, path: '$' } }] };
  }
}

/**
 * Why a token was refused, one word each. The client reads it in `Could not verify JWT: <reason>`
 * and metrics count it (`svc_graphql_jwt_verifications_total{result}`): it never carries a token,
 * a claim or an issuer.
 */
export type JwtVerificationCode =
  | 'JWTExpired'
  | 'JWTNotYetValid'
  | 'JWTIssuedAtFuture'
  | 'JWTNotInAudience'
  | 'JWTNotInIssuer'
  | 'JWTClaimsSetDecodeError'
  | 'JWSInvalidSignature'
  | 'NoUsableKeys'
  | 'CompactDecodeError';

/** The codes a client sees after `JWSError ` (Hasura's wording for failures of the JWS itself). */
const JWS_ERROR_CODES: ReadonlySet<JwtVerificationCode> = new Set(['JWSInvalidSignature', 'NoUsableKeys', 'CompactDecodeError']);

/**
 * A failed token verification. `code` is what the process branches and counts on; `reason` is the
 * part of the message after `Could not verify JWT: `, e.g. `JWTExpired` or
 * `JWSError JWSInvalidSignature` (or `JWSError CompactDecodeError <detail>`): clients match on it,
 * so it is kept to the letter.
 */
export class JwtVerificationError extends Error {
  override name = 'JwtVerificationError';
  readonly code: JwtVerificationCode;
  readonly reason: string;

  /** `detail` follows the code in the message (what was wrong with the token's shape or claims). */
  constructor(code: JwtVerificationCode, detail?: string, options?: { cause?: unknown }) {
    const reason = `${JWS_ERROR_CODES.has(code) ? 'JWSError ' : ''}${code}${detail === undefined ? '' : ` ${detail}`}`;
    super(`Could not verify JWT: ${reason}`, options);
    this.code = code;
    this.reason = reason;
  }
}

/** The claims inside a verified token do not describe a session. */
export class JwtClaimsError extends Error {
  override name = 'JwtClaimsError';
  constructor(
    readonly code: 'jwt-missing-role-claims' | 'jwt-invalid-claims',
    message: string,
  ) {
    super(message);
  }
}

/**
 * What `hooks.onJwtVerification` is called with: `'ok'`, the code of a refused token, or the code
 * of a claims error.
 */
export type JwtVerificationResult = 'ok' | JwtVerificationCode | JwtClaimsError['code'];

const bearerChallenge = { 'WWW-Authenticate': 'Bearer error="invalid_token"' } as const;

/** Maps a token or claims failure to its code and status: 401, with the `WWW-Authenticate` challenge. */
export function sessionErrorFromToken(error: JwtVerificationError | JwtClaimsError): SessionError {
  if (error instanceof JwtVerificationError) {
    return new SessionError('invalid-jwt', 401, error.message, { headers: { ...bearerChallenge }, cause: error });
  }
  return new SessionError(error.code, 401, error.message, { headers: { ...bearerChallenge }, cause: error });
}

/**
 * `error` with the Bearer challenge when it is a 401 to a request whose `Authorization` presents a
 * Bearer token that was not what it was judged by (an admin-secret-only server, a token expected
 * in a cookie): every 401 to a request that presented a token carries the challenge.
 */
export function withBearerChallenge(error: SessionError, authorization: string | undefined): SessionError {
  if (error.status === 401 && authorization !== undefined && /^bearer\s/i.test(authorization.trimStart())) {
    Object.assign(error.headers, bearerChallenge);
  }
  return error;
}

/** An `x-svc-*` header (of a graphql-ws `connection_init`) that no HTTP request could carry to a remote. */
export function invalidSessionHeader(name: string): SessionError {
  return new SessionError('invalid-headers', 400, `invalid header ${JSON.stringify(name)}: it cannot be sent to a remote as a header`);
}

export function malformedAuthorizationHeader(): SessionError {
  return new SessionError('invalid-headers', 400, 'Malformed Authorization header');
}

export function missingToken(): SessionError {
  return new SessionError(
    'invalid-headers',
    401,
    "Missing 'Authorization' or 'Cookie' header in JWT authentication mode",
  );
}

export function invalidAdminSecret(prefix: string): SessionError {
  return new SessionError('access-denied', 401, `invalid ${prefix}admin-secret`);
}

export function adminSecretRequired(prefix: string): SessionError {
  return new SessionError('access-denied', 401, `${prefix}admin-secret required, but not found`);
}

export function roleNotAllowed(): SessionError {
  return new SessionError('access-denied', 403, 'Your requested role is not in allowed roles');
}
