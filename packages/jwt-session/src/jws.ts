import { createHmac, timingSafeEqual, verify as verifySignature } from 'node:crypto';
import { compactVerify, errors } from 'jose';
import { JwtVerificationError } from './errors.js';
import type { NativeVerification, VerificationKey } from './keys.js';

/** A compact JWS split and its header decoded, before any signature check. */
export interface DecodedJws {
  readonly token: string;
  readonly header: Record<string, unknown>;
  /** The header's `alg`, with `Ed25519` read as `EdDSA` (the same check with an Ed25519 key). */
  readonly alg: string;
  readonly kid: string | undefined;
  /** The payload segment; parsed only after the signature holds (or to choose an issuer). */
  readonly payloadSegment: string;
}

// Three base64url segments and nothing else: `=` padding, whitespace or a fourth segment are refused
// before anything is decoded. The signature may be empty so that `alg: none` reaches the alg check
// and is reported as JWSInvalidSignature, like any other algorithm we do not accept.
const COMPACT_JWS = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/;

function decodeError(detail: string): JwtVerificationError {
  return new JwtVerificationError('CompactDecodeError', detail);
}

function base64url(segment: string, what: string): Buffer {
  checkSegmentLength(segment, what);
  return Buffer.from(segment, 'base64url');
}

/** A base64url string of length 4n+1 encodes no whole byte: refuse it rather than let a decoder guess. */
function checkSegmentLength(segment: string, what: string): void {
  if (segment.length % 4 === 1) throw decodeError(`invalid base64url in ${what}`);
}

/** The header must be UTF-8, as RFC 7515 and jose require (a byte-order mark is kept, and then is not JSON); the payload is read leniently. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function parseJsonObject(bytes: Uint8Array, what: 'header' | 'payload'): Record<string, unknown> {
  let text: string;
  try {
    text = what === 'header' ? strictUtf8.decode(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  } catch {
    throw decodeError(`${what} is not UTF-8`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw decodeError(`${what} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw decodeError(`${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/**
 * Splits `token` and decodes its header; throws {@link JwtVerificationError} when it is not a compact
 * JWS (CompactDecodeError) or names a critical extension (JWSInvalidSignature: we understand none,
 * and RFC 7515 says such a token must be refused). These checks are ours and come before jose sees
 * the token, so that every token we refuse here gets the same answer whatever jose would say.
 */
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
  if (header['crit'] !== undefined) throw new JwtVerificationError('JWSInvalidSignature');
  checkSegmentLength(signatureSegment, 'signature');
  // RFC 7515: `kid` is a string. Another type is a malformed header, not a token without `kid`
  // (which any key of its algorithm may verify).
  const kid = header['kid'];
  if (kid !== undefined && typeof kid !== 'string') throw decodeError('header "kid" is not a string');
  return { token, header, alg: alg === 'Ed25519' ? 'EdDSA' : alg, kid, payloadSegment };
}

/**
 * Verifies the signature of `jws` with jose (HMAC and RSA keys: in this thread, see below), trying
 * `keys` in order (several keys may share a `kid`, or a token without `kid` may fit any key of its
 * algorithm), and returns the verified payload bytes.
 * Each key admits only its own algorithm (`algorithms`), so the token's header can never choose it.
 *
 * jose's refusals map to our codes: a JWS jose finds malformed is CompactDecodeError (after
 * {@link decodeJws}, only a payload segment that is not base64url, found once the signature holds);
 * anything else it refuses (the signature, an algorithm the key does not admit, a key it will not use
 * for the token) is JWSInvalidSignature, failing closed.
 */
export async function verifyJws(jws: DecodedJws, keys: readonly VerificationKey[]): Promise<Uint8Array> {
  let cause: unknown;
  for (const key of keys) {
    if (key.hmac !== undefined) {
      if (hmacHolds(jws, key, key.hmac)) return decodeVerifiedPayload(jws);
      continue;
    }
    if (key.native !== undefined) {
      if (signatureHolds(jws, key, key.native)) return decodeVerifiedPayload(jws);
      continue;
    }
    try {
      return (await compactVerify(jws.token, key.key, { algorithms: key.algorithms as string[] })).payload;
    } catch (error) {
      if (error instanceof errors.JWSInvalid) throw new JwtVerificationError('CompactDecodeError', error.message, { cause: error });
      if (!(error instanceof errors.JOSEError) && !(error instanceof TypeError)) throw error;
      cause = error;
    }
  }
  throw new JwtVerificationError('JWSInvalidSignature', undefined, { cause });
}

/**
 * An HMAC signature, checked in this thread. jose checks it through WebCrypto, which on Node 20
 * queues every check on libuv's thread pool: for a keyed hash of a few hundred bytes that hop costs
 * several times the hash itself. The decision is the same as jose's (the JWS must name the key's
 * own algorithm, the signature must equal the HMAC of `header.payload`, compared in constant time),
 * and the jose-agreement property test holds the two together.
 */
function hmacHolds(jws: DecodedJws, key: VerificationKey, hmac: NonNullable<VerificationKey['hmac']>): boolean {
  if (!key.algorithms.includes(jws.alg)) return false;
  const signingInputEnd = jws.token.lastIndexOf('.');
  const signature = Buffer.from(jws.token.slice(signingInputEnd + 1), 'base64url');
  const expected = createHmac(hmac.hash, hmac.secret).update(jws.token.slice(0, signingInputEnd)).digest();
  return expected.length === signature.length && timingSafeEqual(expected, signature);
}

/**
 * An RSA (PKCS #1 v1.5), ECDSA or Ed25519 signature, checked in this thread with node:crypto, for
 * the same reason as {@link hmacHolds}: through WebCrypto each check is queued on libuv's thread
 * pool, and the hop and the promises around it cost about as much CPU as the check itself. The
 * decision is jose's: the JWS must name the key's own algorithm, and the signature of
 * `header.payload` must hold under the key (the one jose imported, as node:crypto holds it; ECDSA
 * signatures in the JWS encoding, r and s of fixed length side by side); a signature node:crypto
 * cannot even check fails, as it does in jose. The jose-agreement property test holds the two together.
 */
function signatureHolds(jws: DecodedJws, key: VerificationKey, native: NativeVerification): boolean {
  if (!key.algorithms.includes(jws.alg)) return false;
  const signingInputEnd = jws.token.lastIndexOf('.');
  const signature = Buffer.from(jws.token.slice(signingInputEnd + 1), 'base64url');
  try {
    return verifySignature(native.hash, Buffer.from(jws.token.slice(0, signingInputEnd), 'latin1'), native.key, signature);
  } catch {
    return false;
  }
}

/** The payload bytes of a JWS whose signature held (a segment that is not base64url is malformed, as jose says). */
function decodeVerifiedPayload(jws: DecodedJws): Uint8Array {
  return base64url(jws.payloadSegment, 'payload');
}

/** Parses a payload: the bytes jose verified, or the segment of a token not verified yet. */
export function decodePayload(payload: Uint8Array | DecodedJws): Record<string, unknown> {
  return parseJsonObject(payload instanceof Uint8Array ? payload : base64url(payload.payloadSegment, 'payload'), 'payload');
}
