import { KeyObject, X509Certificate, createPublicKey, createSecretKey, type VerifyKeyObjectInput } from 'node:crypto';
import { importJWK, importSPKI, importX509, type JWK } from 'jose';
import {
  MIN_RSA_BITS,
  algorithmInfo,
  ecAlgorithmFor,
  headerAlgorithmsFor,
  jwsAlgorithmFor,
  type AlgorithmInfo,
  type JwtAlgorithm,
  type KeyFamily,
} from './algorithms.js';

/**
 * A key imported by jose (a `CryptoKey` bound to one algorithm), with the algorithm it verifies,
 * fixed before any token is seen.
 */
export interface VerificationKey {
  /** The JWS `alg` this key verifies (`EdDSA` for Ed25519). */
  readonly alg: string;
  /** The header `alg` values jose is allowed to accept for this key. */
  readonly algorithms: readonly string[];
  readonly family: KeyFamily;
  readonly key: CryptoKey;
  /**
   * HMAC only: the secret and its hash, checked in this thread with `node:crypto` (see
   * `verifyJws`); `key` is the same secret as jose imports it.
   */
  readonly hmac?: { readonly secret: KeyObject; readonly hash: string };
  /**
   * Public keys (RS256/384/512, ES256/384/512, EdDSA): `key` as node:crypto's `verify` takes it
   * and the hash (none for Ed25519), to check signatures in this thread too (see `verifyJws`).
   */
  readonly native?: NativeVerification;
  readonly kid?: string;
}

/** How node:crypto checks a public key's signatures (see {@link VerificationKey.native}). */
export interface NativeVerification {
  /**
   * The key jose imported (`KeyObject.from`), for ECDSA with the JWS signature encoding
   * (`ieee-p1363`, r and s side by side): built once, passed to every check as it is.
   */
  readonly key: KeyObject | VerifyKeyObjectInput;
  readonly hash: string | null;
}

/**
 * The `key` of a JWT configuration, checked when the configuration is parsed (so that a key that
 * cannot verify its `type` fails at factory time, naming the problem) and imported by jose when a
 * verifier is built ({@link importConfigKey}).
 */
export interface ConfigKey {
  /** The JWS `alg` the key verifies (`EdDSA` for Ed25519). */
  readonly alg: string;
  readonly family: KeyFamily;
  /**
   * What is imported: the HMAC secret (a `KeyObject`, so that a configuration printed or serialized
   * never shows it), or a PEM public key (SPKI) or certificate as jose reads them.
   */
  readonly material: { readonly format: 'secret'; readonly key: KeyObject } | { readonly format: 'spki' | 'x509'; readonly pem: string };
}

/**
 * Checks the `key` of the JWT config for `type`. Throws a plain `Error` whose message is the problem;
 * the config parser prefixes the field name.
 *
 * The key is read with node:crypto here only because a configuration is parsed synchronously (its
 * errors are thrown before a server listens) and jose's importers are asynchronous; it is then handed
 * to jose in the form jose imports (PKCS#1 RSA keys, which jose does not read, as SPKI).
 */
export function parseConfigKey(type: JwtAlgorithm, material: string): ConfigKey {
  const alg = jwsAlgorithmFor(type);
  const info = algorithmInfo(alg);
  if (info === undefined) throw new Error(`unsupported algorithm ${type}`);
  if (info.family === 'HMAC') {
    const min = info.minSecretLength ?? 32;
    if ([...material].length < min) throw new Error(`${type} key must be at least ${min} characters`);
    // A public key is public: used as a shared secret, anyone holding it could sign tokens.
    if (/-----BEGIN [A-Z0-9 ]*(PUBLIC KEY|CERTIFICATE)-----/.test(material)) {
      throw new Error(`${type} key is a PEM public key or certificate, which anyone may hold: give ${type} a shared secret, or the key's own algorithm (RS256, ES256, ...)`);
    }
    return { alg, family: 'HMAC', material: { format: 'secret', key: createSecretKey(Buffer.from(material, 'utf8')) } };
  }
  // A PEM pasted into JSON twice-escaped arrives with literal "\n" sequences; they cannot occur in PEM.
  const text = material.replace(/\\n/g, '\n').trim();
  if (/^(ssh-|ecdsa-sha2-)/.test(text) || text.includes('BEGIN OPENSSH')) {
    throw new Error('OpenSSH keys are not supported; give a PEM public key or an X.509 certificate');
  }
  if (text.includes('PRIVATE KEY')) {
    throw new Error('expected a public key or an X.509 certificate, got a private key');
  }
  if (text.includes('-----BEGIN CERTIFICATE-----')) {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(text);
    } catch {
      throw new Error('invalid X.509 certificate');
    }
    checkKeyFits(info, describeKeyObject(certificate.publicKey), type);
    // The first certificate alone, without text around it: the form jose's importX509 reads.
    return { alg, family: info.family, material: { format: 'x509', pem: certificate.toString() } };
  }
  if (/-----BEGIN (RSA )?PUBLIC KEY-----/.test(text)) {
    let key: KeyObject;
    try {
      key = createPublicKey({ key: text, format: 'pem' });
    } catch {
      throw new Error('invalid PEM public key');
    }
    checkKeyFits(info, describeKeyObject(key), type);
    const spki = key.export({ type: 'spki', format: 'pem' }).toString();
    return { alg, family: info.family, material: { format: 'spki', pem: spki } };
  }
  throw new Error(`${type} key must be a PEM public key or an X.509 certificate`);
}

/** Imports a configured key with jose (WebCrypto for the HMAC secret), once per verifier. */
export async function importConfigKey(config: ConfigKey): Promise<VerificationKey> {
  const { alg, family, material } = config;
  if (material.format === 'secret') {
    const hash = algorithmInfo(alg)?.hash ?? 'SHA-256';
    const key = await crypto.subtle.importKey('raw', material.key.export(), { name: 'HMAC', hash }, false, ['verify']);
    return { alg, algorithms: headerAlgorithmsFor(alg), family, key, hmac: { secret: material.key, hash: hash.replace('-', '').toLowerCase() } };
  }
  const key = material.format === 'x509' ? await importX509(material.pem, alg) : await importSPKI(material.pem, alg);
  return withNative({ alg, algorithms: headerAlgorithmsFor(alg), family, key });
}

/** A public key with what checks its signatures in this thread (see `verifyJws`); any other key as it is. */
function withNative(key: VerificationKey): VerificationKey {
  const bits = /^(RS|ES)(256|384|512)$/.exec(key.alg);
  let native: NativeVerification | undefined;
  if (bits?.[1] === 'RS' && key.family === 'RSA') native = { key: KeyObject.from(key.key), hash: `sha${bits[2]!}` };
  else if (bits?.[1] === 'ES' && key.family === 'EC') native = { key: { key: KeyObject.from(key.key), dsaEncoding: 'ieee-p1363' }, hash: `sha${bits[2]!}` };
  else if (key.alg === 'EdDSA' && key.key.algorithm.name === 'Ed25519') native = { key: KeyObject.from(key.key), hash: null };
  return native === undefined ? key : { ...key, native };
}

/** What kind of key a key is: its type, and its curve or size where the algorithm cares. */
interface KeyDescription {
  readonly type: string;
  readonly curve?: string | undefined;
  readonly bits?: number | undefined;
}

const NODE_CURVES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

function describeKeyObject(key: KeyObject): KeyDescription {
  const details = key.asymmetricKeyDetails;
  const curve = details?.namedCurve;
  return { type: key.asymmetricKeyType ?? key.type, curve: curve === undefined ? undefined : (NODE_CURVES[curve] ?? curve), bits: details?.modulusLength };
}

function describeCryptoKey(key: CryptoKey): KeyDescription {
  const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm & EcKeyAlgorithm>;
  const type = algorithm.name === 'ECDSA' ? 'ec' : algorithm.name === 'Ed25519' ? 'ed25519' : algorithm.name?.startsWith('RSA') ? 'rsa' : String(algorithm.name);
  return { type, curve: algorithm.namedCurve, bits: algorithm.modulusLength };
}

/** Throws when a key of `key`'s description cannot verify the algorithm of `info` (wrong type, curve or size). */
function checkKeyFits(info: AlgorithmInfo, key: KeyDescription, label: string): void {
  switch (info.family) {
    case 'RSA':
      if (key.type !== 'rsa') throw new Error(`${label} needs an RSA key, got ${article(key)}`);
      if ((key.bits ?? 0) < MIN_RSA_BITS) throw new Error(`${label} RSA key must be at least ${MIN_RSA_BITS} bits`);
      return;
    case 'EC':
      if (key.type !== 'ec' || key.curve !== info.curve) throw new Error(`${label} needs an EC ${String(info.curve)} key, got ${article(key)}`);
      return;
    case 'OKP':
      if (key.type !== 'ed25519') throw new Error(`${label} needs an Ed25519 key, got ${article(key)}`);
      return;
    case 'HMAC':
      throw new Error(`${label} needs a secret key`);
  }
}

function article(key: KeyDescription): string {
  return key.type === 'ec' ? `an EC ${String(key.curve)} key` : `a ${key.type} key`;
}

/** The public members of a JWK: nothing else reaches the importer (a published private part, `key_ops`, …). */
const PUBLIC_MEMBERS = ['kty', 'crv', 'n', 'e', 'x', 'y'] as const;

/**
 * Imports one JWK of a key set with jose. `undefined` for a key that is not for signatures
 * (`use` other than `sig`, `key_ops` without `verify`); throws with the reason for a key that cannot
 * be used (unsupported type or curve, an `alg` that does not fit it, RSA under 2048 bits).
 * `print` identifies the key's public material, to tell whether a key set changed.
 */
export async function importJwk(value: unknown): Promise<{ key: VerificationKey; print: string } | undefined> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
  const jwk = value as Record<string, unknown>;
  if (jwk['use'] !== undefined && jwk['use'] !== 'sig') return undefined;
  const ops = jwk['key_ops'];
  if (Array.isArray(ops) && !ops.includes('verify')) return undefined;
  const alg = algorithmOf(jwk);
  const info = algorithmInfo(alg);
  if (info === undefined) throw new Error(`unsupported alg ${alg}`);
  const material: Record<string, unknown> = {};
  for (const member of PUBLIC_MEMBERS) if (jwk[member] !== undefined) material[member] = jwk[member];
  const x5c = Array.isArray(jwk['x5c']) && typeof jwk['x5c'][0] === 'string' ? jwk['x5c'][0] : undefined;
  let key: CryptoKey;
  if (material['n'] === undefined && material['x'] === undefined && x5c !== undefined) {
    // Some providers publish only the certificate chain; its first certificate holds the key.
    key = await importX509(`-----BEGIN CERTIFICATE-----\n${x5c}\n-----END CERTIFICATE-----`, alg);
    material['x5c'] = x5c;
  } else {
    const imported = await importJWK(material as JWK, alg);
    if (imported instanceof Uint8Array) throw new Error(`unsupported kty ${String(jwk['kty'])}`);
    key = imported;
  }
  checkKeyFits(info, describeCryptoKey(key), alg);
  const kid = typeof jwk['kid'] === 'string' ? jwk['kid'] : undefined;
  const print = JSON.stringify([kid ?? null, alg, ...PUBLIC_MEMBERS.map((m) => material[m] ?? null), material['x5c'] ?? null]);
  const imported = withNative({ alg, algorithms: headerAlgorithmsFor(alg), family: info.family, key });
  return { key: kid === undefined ? imported : { ...imported, kid }, print };
}

/**
 * The one algorithm a JWK verifies: its `alg`, or what its type implies. An RSA key without `alg`
 * (Azure AD publishes those) is taken as RS256, the algorithm every such provider signs with.
 */
function algorithmOf(jwk: Record<string, unknown>): string {
  const declared = typeof jwk['alg'] === 'string' ? jwk['alg'] : undefined;
  switch (jwk['kty']) {
    case 'RSA':
      return declared ?? 'RS256';
    case 'EC': {
      const implied = ecAlgorithmFor(String(jwk['crv']));
      if (implied === undefined) throw new Error(`unsupported curve ${String(jwk['crv'])}`);
      if (declared !== undefined && declared !== implied) throw new Error(`alg ${declared} does not fit curve ${String(jwk['crv'])}`);
      return implied;
    }
    case 'OKP':
      if (jwk['crv'] !== 'Ed25519') throw new Error(`unsupported curve ${String(jwk['crv'])}`);
      if (declared !== undefined && declared !== 'EdDSA' && declared !== 'Ed25519') throw new Error(`alg ${declared} does not fit Ed25519`);
      return 'EdDSA';
    default:
      throw new Error(`unsupported kty ${String(jwk['kty'])}`);
  }
}
