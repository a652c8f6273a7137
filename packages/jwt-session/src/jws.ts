import { createHmac, timingSafeEqual, verify as verifySignature, constants } from 'node:crypto';
import { algorithmInfo, type VerificationKey } from './algorithms.js';
import { JwtVerificationError } from './errors.js';

/** A compact JWS split and decoded, before any signature check. */
export interface DecodedJws {
  readonly header: Record<string, unknown>;
  readonly alg: string;
  readonly kid: string | undefined;
  /** The payload bytes; parsed only after the signature holds. */
  readonly payloadSegment: string;
  readonly signingInput: Buffer;
  readonly signature: Buffer;
}

// Three base64url segments and nothing else: `=` padding, whitespace or a fourth segment are refused
// before anything is decoded. The signature may be empty so that `alg: none` reaches the alg check
// and is reported as JWSInvalidSignature, like any other algorithm we do not accept.
const COMPACT_JWS = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/;

function decodeError(detail: string): JwtVerificationError {
  return new JwtVerificationError('CompactDecodeError', detail);
}

function base64url(segment: string, what: string): Buffer {
  // A base64url string of length 4n+1 encodes no whole byte: refuse it rather than let Buffer guess.
  if (segment.length % 4 === 1) throw decodeError(`invalid base64url in ${what}`);
  return Buffer.from(segment, 'base64url');
}

function parseJsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw decodeError(`${what} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw decodeError(`${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** Splits and decodes `token`; throws {@link JwtVerificationError} when it is not a compact JWS. */
export function decodeJws(token: string): DecodedJws {
  const match = COMPACT_JWS.exec(token);
  if (match === null) {
    const parts = token.split('.').length;
    throw decodeError(
      parts === 3 ? 'invalid characters (expected three base64url segments)' : `Invalid number of parts: Expected 3 parts; got ${parts}`,
    );
  }
  const [, headerSegment = '', payloadSegment = '', signatureSegment = ''] = match;
  const header = parseJsonObject(base64url(headerSegment, 'header'), 'header');
  const alg = header['alg'];
  if (typeof alg !== 'string') throw decodeError('header has no "alg"');
  // RFC 7515 4.1.11: extensions we do not understand must make the token invalid.
  if (header['crit'] !== undefined) throw new JwtVerificationError('JWSInvalidSignature');
  const kid = typeof header['kid'] === 'string' ? header['kid'] : undefined;
  return {
    header,
    // RFC 9864 names Ed25519 explicitly; it is the same check as EdDSA with an Ed25519 key.
    alg: alg === 'Ed25519' ? 'EdDSA' : alg,
    kid,
    payloadSegment,
    signingInput: Buffer.from(`${headerSegment}.${payloadSegment}`, 'ascii'),
    signature: base64url(signatureSegment, 'signature'),
  };
}

/**
 * Checks the signature of `jws` with `key`. The algorithm is the key's, never the token's: a token
 * whose header names another algorithm fails here.
 */
export function verifyJwsSignature(jws: DecodedJws, key: VerificationKey): boolean {
  if (jws.alg !== key.alg) return false;
  const info = algorithmInfo(key.alg);
  if (info === undefined || jws.signature.length === 0) return false;
  try {
    switch (info.family) {
      case 'HMAC': {
        const expected = createHmac(info.hash ?? 'sha256', key.key).update(jws.signingInput).digest();
        return expected.length === jws.signature.length && timingSafeEqual(expected, jws.signature);
      }
      case 'RSA':
        return verifySignature(
          info.hash,
          jws.signingInput,
          { key: key.key, padding: constants.RSA_PKCS1_PADDING },
          jws.signature,
        );
      case 'EC':
        if (jws.signature.length !== info.signatureLength) return false;
        return verifySignature(info.hash, jws.signingInput, { key: key.key, dsaEncoding: 'ieee-p1363' }, jws.signature);
      case 'OKP':
        return verifySignature(null, jws.signingInput, key.key, jws.signature);
    }
  } catch {
    // OpenSSL rejects some malformed signatures by throwing instead of returning false.
    return false;
  }
}

/** Parses the payload of a token whose signature was verified. */
export function decodePayload(jws: DecodedJws): Record<string, unknown> {
  return parseJsonObject(base64url(jws.payloadSegment, 'payload'), 'payload');
}
