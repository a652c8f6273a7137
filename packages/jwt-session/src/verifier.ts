import { LRUCache } from 'lru-cache';
import { algorithmInfo } from './algorithms.js';
import { checkAudienceAndIssuer, checkTokenTimes, extractTokenClaims, type TokenClaims } from './claims.js';
import type { JwtConfig } from './config.js';
import { JwtClaimsError, JwtVerificationError } from './errors.js';
import { RemoteKeySet } from './jwks.js';
import { decodeJws, decodePayload, verifyJws, type DecodedJws } from './jws.js';
import { importConfigKey, type VerificationKey } from './keys.js';
import type { Logger } from './options.js';

/** A token whose signature, `aud` and `iss` held. Its times are re-checked on every use. */
export interface VerifiedToken {
  readonly payload: Readonly<Record<string, unknown>>;
  /** `exp` in seconds, when the token has one. */
  readonly exp: number | undefined;
  /** The session claims, or why the token does not describe a session (also cached: it never changes). */
  readonly claims: TokenClaims | JwtClaimsError;
}

export interface TokenVerifierOptions {
  config: JwtConfig;
  prefix: string;
  cacheMax: number;
  fetch: typeof fetch;
  jwksFetchTimeoutMs: number;
  logger: Logger;
  /** Called once per `jwk_url` fetch attempt. */
  onJwksFetch?: (outcome: 'ok' | 'error') => void;
}

/** A token already split and its payload parsed (to read `iss` before choosing the verifier). */
export interface DecodedToken {
  readonly jws: DecodedJws;
  readonly payload: Record<string, unknown>;
}

/** Verifies tokens against the configured key or JWKS, caching successes by the raw token. */
export class TokenVerifier {
  readonly #config: JwtConfig;
  readonly #prefix: string;
  readonly #cache: LRUCache<string, VerifiedToken> | undefined;
  readonly #remote: RemoteKeySet | undefined;
  /** The configured key (not a key set), imported by jose once; `undefined` until then. */
  #key: VerificationKey | undefined;
  readonly #keyImport: Promise<void> | undefined;

  constructor(options: TokenVerifierOptions) {
    this.#config = options.config;
    this.#prefix = options.prefix;
    this.#cache = options.cacheMax > 0 ? new LRUCache<string, VerifiedToken>({ max: options.cacheMax }) : undefined;
    const keys = options.config.keys;
    if (keys.kind === 'key') {
      // Checked when the configuration was parsed; jose's import of a key node:crypto read cannot
      // fail, but if it did, every token would be refused (NoUsableKeys) and the reason logged.
      this.#keyImport = importConfigKey(keys.key).then(
        (key) => {
          this.#key = key;
        },
        (error: unknown) => {
          const reason = (error as Error)?.message ?? String(error);
          options.logger.error(`jwt-session: importing the configured ${keys.type} key failed: ${reason}`);
        },
      );
    } else {
      this.#remote = new RemoteKeySet({
        url: keys.url,
        fetch: options.fetch,
        timeoutMs: options.jwksFetchTimeoutMs,
        logger: options.logger,
        // A token verified by a key that was withdrawn must be verified again.
        onKeysChanged: () => this.#cache?.clear(),
        ...(options.onJwksFetch !== undefined && { onFetch: options.onJwksFetch }),
      });
    }
  }

  /** Settles once keys are available or the first JWKS fetch failed. */
  ready(): Promise<void> {
    return this.#remote?.ready ?? this.#keyImport ?? Promise.resolve();
  }

  dispose(): void {
    this.#remote?.dispose();
    this.#cache?.clear();
  }

  /** The configuration this verifier checks tokens against. */
  get config(): JwtConfig {
    return this.#config;
  }

  /** Whether `token` is in the verified-token cache (and not past its time there). */
  holds(token: string): boolean {
    return this.#cache?.has(token) ?? false;
  }

  /** Tokens held by the verified-token cache right now (0 when the cache is off). */
  get cacheSize(): number {
    return this.#cache?.size ?? 0;
  }

  /**
   * Verifies `token`. Throws {@link JwtVerificationError} with the reason the client sees, e.g. `JWTExpired`.
   * `nowMs` is read once per request so all time checks agree. `decoded` is `token` already split
   * and its payload parsed, when the caller had to read it first.
   */
  async verify(token: string, nowMs = Date.now(), decoded?: DecodedToken): Promise<VerifiedToken> {
    const skew = this.#config.allowedSkew;
    const nowSeconds = nowMs / 1000;
    const cached = this.#cache?.get(token);
    if (cached !== undefined) {
      // The cache is only a shortcut past the signature: expiry and nbf are checked on every hit.
      checkTokenTimes(cached.payload, skew, nowSeconds);
      return cached;
    }
    const jws = decoded?.jws ?? decodeJws(token);
    const info = algorithmInfo(jws.alg);
    // `none`, and every algorithm we never verify, fail like a bad signature.
    if (info === undefined) throw new JwtVerificationError('JWSInvalidSignature');
    const verifiedPayload = await verifyJws(jws, await this.#keysFor(jws.alg, info.family, jws.kid));

    const payload = decoded?.payload ?? decodePayload(verifiedPayload);
    checkTokenTimes(payload, skew, nowSeconds);
    checkAudienceAndIssuer(payload, this.#config);
    let claims: TokenClaims | JwtClaimsError;
    try {
      claims = extractTokenClaims(payload, this.#config.claims, this.#prefix);
    } catch (error) {
      if (!(error instanceof JwtClaimsError)) throw error;
      claims = error;
    }
    const exp = typeof payload['exp'] === 'number' ? payload['exp'] : undefined;
    const verified: VerifiedToken = { payload, exp, claims };
    if (this.#cache !== undefined) {
      // Never let an entry outlive the token; exp is still re-checked on each hit.
      const ttl = exp === undefined ? 0 : Math.max(1, Math.floor((exp + skew) * 1000 - nowMs));
      this.#cache.set(token, verified, { ttl });
    }
    return verified;
  }

  async #keysFor(alg: string, family: string, kid: string | undefined): Promise<readonly VerificationKey[]> {
    const source = this.#config.keys;
    if (source.kind === 'key') {
      // The configured type fixes the algorithm; a header naming another one fails the signature.
      if (alg !== source.key.alg) throw new JwtVerificationError('JWSInvalidSignature');
      if (this.#key === undefined) await this.#keyImport;
      if (this.#key === undefined) throw new JwtVerificationError('NoUsableKeys');
      return [this.#key];
    }
    const candidates = (await this.#remote?.candidates(kid)) ?? [];
    const usable = candidates.filter((key) => key.alg === alg);
    if (usable.length > 0) return usable;
    // A key of the right type with another hash or curve: the header lies about the algorithm.
    if (candidates.some((key) => key.family === family)) throw new JwtVerificationError('JWSInvalidSignature');
    throw new JwtVerificationError('NoUsableKeys');
  }
}
