import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign, SignJWT, type JWTPayload } from 'jose';

export const NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

/** An asymmetric key pair with its public key as PEM (SPKI) and as a self-signed X.509 certificate. */
export interface TestKeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly spki: string;
  readonly certificate: string;
}

export type AsymmetricFamily = 'rsa' | 'p256' | 'p384' | 'p521' | 'ed25519';

function generate(family: AsymmetricFamily): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (family) {
    case 'rsa':
      return generateKeyPairSync('rsa', { modulusLength: 2048 });
    case 'p256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'p384':
      return generateKeyPairSync('ec', { namedCurve: 'P-384' });
    case 'p521':
      return generateKeyPairSync('ec', { namedCurve: 'P-521' });
    case 'ed25519':
      return generateKeyPairSync('ed25519');
  }
}

/**
 * Generates key pairs and X.509 certificates for them with the openssl CLI (node:crypto cannot
 * issue certificates). Done once per test file; a few hundred milliseconds.
 */
export function generateTestKeys(families: readonly AsymmetricFamily[]): Record<AsymmetricFamily, TestKeyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-session-keys-'));
  try {
    const out: Partial<Record<AsymmetricFamily, TestKeyPair>> = {};
    for (const family of families) {
      const { privateKey, publicKey } = generate(family);
      const keyFile = join(dir, `${family}.key.pem`);
      const certFile = join(dir, `${family}.cert.pem`);
      writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      execFileSync('openssl', ['req', '-new', '-x509', '-key', keyFile, '-subj', '/CN=jwt-session test', '-days', '2', '-out', certFile], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      out[family] = {
        privateKey,
        publicKey,
        spki: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        certificate: readFileSync(certFile, 'utf8'),
      };
    }
    return out as Record<AsymmetricFamily, TestKeyPair>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Standard claims for a user token in the default namespace. */
export function userClaims(extra: Record<string, unknown> = {}): JWTPayload {
  return {
    sub: 'user-1',
    [NAMESPACE]: {
      'x-svc-allowed-roles': ['user', 'editor'],
      'x-svc-default-role': 'user',
      'x-svc-user-id': '42',
      ...extra,
    },
  };
}

export interface SignOptions {
  alg: string;
  kid?: string;
  /** Seconds from now; `null` for no `exp`. */
  expiresIn?: number | null;
  header?: Record<string, unknown>;
}

/** Mints a token with jose. `exp` defaults to one hour from now. */
export async function sign(payload: JWTPayload, key: KeyObject | Uint8Array, options: SignOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(payload).setProtectedHeader({
    ...options.header,
    alg: options.alg,
    ...(options.kid !== undefined && { kid: options.kid }),
  });
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 3600));
  return jwt.sign(key);
}

/**
 * Signs `payload` as written, for payloads a JavaScript object cannot hold (an integer beyond 2^53,
 * `1e400`): the token carries exactly this JSON text.
 */
export function signText(payload: string, key: KeyObject | Uint8Array, alg: string): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg }).sign(key);
}

export function secretBytes(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** base64url of a JSON value, for hand-made tokens. */
export function b64(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}
