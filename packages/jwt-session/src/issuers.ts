import type { JwtConfig, TokenLocation } from './config.js';
import { JwtVerificationError } from './errors.js';
import { decodeJws, decodePayload } from './jws.js';
import { readToken, type HeaderReader } from './request-headers.js';
import { TokenVerifier, type TokenVerifierOptions, type VerifiedToken } from './verifier.js';

/** What every configuration's verifier shares. */
export type JwtVerifiersOptions = Omit<TokenVerifierOptions, 'config'>;

/** A token found in a request, and where. */
export interface FoundToken {
  readonly token: string;
  readonly location: TokenLocation;
}

/** A verified token and the configuration that verified it. */
export interface TokenVerification {
  readonly verified: VerifiedToken;
  readonly config: JwtConfig;
}

function sameLocation(a: TokenLocation, b: TokenLocation): boolean {
  return a.type === b.type && (a.type === 'Authorization' || a.name === (b as { name: string }).name);
}

/**
 * The JWT configurations of a resolver, each with its own verifier (keys, JWKS refresh, cache).
 *
 * One configuration (not a list) works as it always has: the token is read from its location and
 * its `iss`, when it has one, must equal a configured `issuer`.
 *
 * Several configurations (a list, even of one) are chosen by the token's `iss`: the entry whose
 * `issuer` equals it, else the entry without `issuer`, else `JWTNotInIssuer`. The token is read
 * from the first location, in list order, that holds one, and the chosen entry must read its
 * token from that same location (a token is never accepted from where its entry does not look:
 * `JWTNotInIssuer`). To choose, the payload is parsed before the signature is checked; the token
 * is as large as the transport allows (a request header, a WebSocket message) and no larger, and
 * the parsed payload is reused after the signature holds, so a token is parsed once. A token in
 * an entry's cache skips that step: it is the entry its `iss` chose when it was verified.
 */
export class JwtVerifiers {
  readonly #entries: readonly TokenVerifier[];
  readonly #byIssuer: boolean;
  readonly #issuers = new Map<string, TokenVerifier>();
  readonly #fallback: TokenVerifier | undefined;
  /** The distinct token locations, in list order. */
  readonly #locations: readonly TokenLocation[];

  constructor(jwt: JwtConfig | readonly JwtConfig[], options: JwtVerifiersOptions) {
    const configs: readonly JwtConfig[] = Array.isArray(jwt) ? jwt : [jwt as JwtConfig];
    this.#byIssuer = Array.isArray(jwt);
    this.#entries = configs.map((config) => new TokenVerifier({ config, ...options }));
    let fallback: TokenVerifier | undefined;
    const locations: TokenLocation[] = [];
    for (const entry of this.#entries) {
      const { issuer, header } = entry.config;
      if (issuer === undefined) fallback ??= entry;
      else if (!this.#issuers.has(issuer)) this.#issuers.set(issuer, entry);
      if (!locations.some((location) => sameLocation(location, header))) locations.push(header);
    }
    this.#fallback = fallback;
    this.#locations = locations;
  }

  /**
   * The token of a request: from the first location, in list order, that holds one.
   * @throws {SessionError} 400 when `Authorization` is read and is not `Bearer <token>`.
   */
  readToken(headers: HeaderReader): FoundToken | undefined {
    for (const location of this.#locations) {
      const token = readToken(headers, location);
      if (token !== undefined) return { token, location };
    }
    return undefined;
  }

  /** Verifies a token found at `found.location`. Throws {@link JwtVerificationError} with the reason the client sees. */
  async verify(found: FoundToken): Promise<TokenVerification> {
    const { token } = found;
    if (!this.#byIssuer) {
      const entry = this.#entries[0] as TokenVerifier;
      return { verified: await entry.verify(token), config: entry.config };
    }
    const nowMs = Date.now();
    const cachedBy = this.#entries.find((entry) => entry.holds(token));
    if (cachedBy !== undefined) return this.#verifyWith(cachedBy, found, nowMs);
    const jws = decodeJws(token);
    const payload = decodePayload(jws);
    const iss = payload['iss'];
    const entry = (typeof iss === 'string' ? this.#issuers.get(iss) : undefined) ?? this.#fallback;
    if (entry === undefined) throw new JwtVerificationError('JWTNotInIssuer');
    return this.#verifyWith(entry, found, nowMs, { jws, payload });
  }

  async #verifyWith(
    entry: TokenVerifier,
    found: FoundToken,
    nowMs: number,
    decoded?: Parameters<TokenVerifier['verify']>[2],
  ): Promise<TokenVerification> {
    if (!sameLocation(entry.config.header, found.location)) throw new JwtVerificationError('JWTNotInIssuer');
    return { verified: await entry.verify(found.token, nowMs, decoded), config: entry.config };
  }

  /** The largest `allowed_skew` of the configurations. */
  get maxAllowedSkew(): number {
    return Math.max(0, ...this.#entries.map((entry) => entry.config.allowedSkew));
  }

  /** Settles when every JWKS has keys or failed its first fetch. */
  async ready(): Promise<void> {
    await Promise.all(this.#entries.map((entry) => entry.ready()));
  }

  dispose(): void {
    for (const entry of this.#entries) entry.dispose();
  }
}
