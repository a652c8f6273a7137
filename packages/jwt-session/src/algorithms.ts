import { X509Certificate, createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';

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

/** An imported key with the one algorithm it verifies, fixed before any token is seen. */
export interface VerificationKey {
  /** The JWS `alg` this key verifies (`EdDSA` for Ed25519). */
  readonly alg: string;
  readonly family: KeyFamily;
  readonly key: KeyObject;
  readonly kid?: string;
}

interface AlgorithmInfo {
  readonly family: KeyFamily;
  /** node:crypto digest name; `null` for EdDSA. */
  readonly hash: string | null;
  /** HMAC: minimum secret length in characters; EC: the curve. */
  readonly minSecretLength?: number;
  readonly curve?: string;
  /** ES*: the raw r||s signature length. */
  readonly signatureLength?: number;
}

const ALGORITHMS: Readonly<Record<string, AlgorithmInfo>> = {
  HS256: { family: 'HMAC', hash: 'sha256', minSecretLength: 32 },
  HS384: { family: 'HMAC', hash: 'sha384', minSecretLength: 48 },
  HS512: { family: 'HMAC', hash: 'sha512', minSecretLength: 64 },
  RS256: { family: 'RSA', hash: 'sha256' },
  RS384: { family: 'RSA', hash: 'sha384' },
  RS512: { family: 'RSA', hash: 'sha512' },
  ES256: { family: 'EC', hash: 'sha256', curve: 'prime256v1', signatureLength: 64 },
  ES384: { family: 'EC', hash: 'sha384', curve: 'secp384r1', signatureLength: 96 },
  ES512: { family: 'EC', hash: 'sha512', curve: 'secp521r1', signatureLength: 132 },
  EdDSA: { family: 'OKP', hash: null },
};

/** Information about a JWS `alg`, or `undefined` for anything we do not verify (`none`, `PS256`, …). */
export function algorithmInfo(alg: string): AlgorithmInfo | undefined {
  return Object.prototype.hasOwnProperty.call(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined;
}

/** The JWS `alg` a config `type` stands for. */
export function jwsAlgorithmFor(type: JwtAlgorithm): string {
  return type === 'Ed25519' ? 'EdDSA' : type;
}

/** RSA keys under 2048 bits are refused, as jose and RFC 7518 section 3.3 require. */
const MIN_RSA_BITS = 2048;

/**
 * Imports the `key` of the JWT config for `type`. Throws a plain `Error` whose message is the problem;
 * the config parser prefixes the field name.
 */
export function importConfigKey(type: JwtAlgorithm, material: string): VerificationKey {
  const alg = jwsAlgorithmFor(type);
  const info = algorithmInfo(alg);
  if (info === undefined) throw new Error(`unsupported algorithm ${type}`);
  if (info.family === 'HMAC') {
    const min = info.minSecretLength ?? 32;
    if ([...material].length < min) throw new Error(`${type} key must be at least ${min} characters`);
    return { alg, family: 'HMAC', key: createSecretKey(Buffer.from(material, 'utf8')) };
  }
  // A PEM pasted into JSON twice-escaped arrives with literal "\n" sequences; they cannot occur in PEM.
  const text = material.replace(/\\n/g, '\n').trim();
  if (/^(ssh-|ecdsa-sha2-)/.test(text) || text.includes('BEGIN OPENSSH')) {
    throw new Error('OpenSSH keys are not supported; give a PEM public key or an X.509 certificate');
  }
  if (text.includes('PRIVATE KEY')) {
    throw new Error('expected a public key or an X.509 certificate, got a private key');
  }
  let key: KeyObject;
  if (text.includes('-----BEGIN CERTIFICATE-----')) {
    try {
      key = new X509Certificate(text).publicKey;
    } catch {
      throw new Error('invalid X.509 certificate');
    }
  } else if (/-----BEGIN (RSA )?PUBLIC KEY-----/.test(text)) {
    try {
      key = createPublicKey({ key: text, format: 'pem' });
    } catch {
      throw new Error('invalid PEM public key');
    }
  } else {
    throw new Error(`${type} key must be a PEM public key or an X.509 certificate`);
  }
  checkKeyFits(alg, info, key, type);
  return { alg, family: info.family, key };
}

/** Throws when `key` cannot verify `alg` (wrong type, curve or size). */
export function checkKeyFits(alg: string, info: AlgorithmInfo, key: KeyObject, label = alg): void {
  const details = key.asymmetricKeyDetails;
  switch (info.family) {
    case 'RSA':
      if (key.asymmetricKeyType !== 'rsa') throw new Error(`${label} needs an RSA key, got ${describe(key)}`);
      if ((details?.modulusLength ?? 0) < MIN_RSA_BITS) {
        throw new Error(`${label} RSA key must be at least ${MIN_RSA_BITS} bits`);
      }
      return;
    case 'EC':
      if (key.asymmetricKeyType !== 'ec' || details?.namedCurve !== info.curve) {
        throw new Error(`${label} needs an EC ${curveName(info.curve)} key, got ${describe(key)}`);
      }
      return;
    case 'OKP':
      if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${label} needs an Ed25519 key, got ${describe(key)}`);
      return;
    case 'HMAC':
      if (key.type !== 'secret') throw new Error(`${label} needs a secret key`);
      return;
  }
}

function curveName(curve: string | undefined): string {
  return curve === 'prime256v1' ? 'P-256' : curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : String(curve);
}

function describe(key: KeyObject): string {
  if (key.asymmetricKeyType === 'ec') return `an EC ${curveName(key.asymmetricKeyDetails?.namedCurve)} key`;
  return `a ${key.asymmetricKeyType ?? key.type} key`;
}
