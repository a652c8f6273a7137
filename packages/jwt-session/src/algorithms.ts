/** The signing algorithms as they appear in the config `type` field. */
export const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'Ed25519',
] as const;

export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** A key family: a token whose `alg` is of another family can never be verified by the key. */
export type KeyFamily = 'HMAC' | 'RSA' | 'EC' | 'OKP';

export interface AlgorithmInfo {
  readonly family: KeyFamily;
  /** HMAC: the WebCrypto hash of the key. */
  readonly hash?: 'SHA-256' | 'SHA-384' | 'SHA-512';
  /** HMAC: minimum secret length in characters. */
  readonly minSecretLength?: number;
  /** EC: the JWK / WebCrypto name of the curve. */
  readonly curve?: 'P-256' | 'P-384' | 'P-521';
}

const ALGORITHMS: Readonly<Record<string, AlgorithmInfo>> = {
  HS256: { family: 'HMAC', hash: 'SHA-256', minSecretLength: 32 },
  HS384: { family: 'HMAC', hash: 'SHA-384', minSecretLength: 48 },
  HS512: { family: 'HMAC', hash: 'SHA-512', minSecretLength: 64 },
  RS256: { family: 'RSA' },
  RS384: { family: 'RSA' },
  RS512: { family: 'RSA' },
  ES256: { family: 'EC', curve: 'P-256' },
  ES384: { family: 'EC', curve: 'P-384' },
  ES512: { family: 'EC', curve: 'P-521' },
  EdDSA: { family: 'OKP' },
};

/** Information about a JWS `alg`, or `undefined` for anything we do not verify (`none`, `PS256`, …). */
export function algorithmInfo(alg: string): AlgorithmInfo | undefined {
  return Object.prototype.hasOwnProperty.call(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined;
}

/** The JWS `alg` a config `type` stands for. */
export function jwsAlgorithmFor(type: JwtAlgorithm): string {
  return type === 'Ed25519' ? 'EdDSA' : type;
}

/**
 * The header `alg` values a key of `alg` verifies: the one algorithm, and for EdDSA also the fully
 * specified name `Ed25519` (RFC 9864), which is the same check with an Ed25519 key.
 */
export function headerAlgorithmsFor(alg: string): readonly string[] {
  return alg === 'EdDSA' ? ['EdDSA', 'Ed25519'] : [alg];
}

/** The EC algorithm a curve implies. */
export function ecAlgorithmFor(curve: string): string | undefined {
  for (const [alg, info] of Object.entries(ALGORITHMS)) if (info.curve === curve) return alg;
  return undefined;
}

/** RSA keys under 2048 bits are refused, as jose and RFC 7518 section 3.3 require. */
export const MIN_RSA_BITS = 2048;
