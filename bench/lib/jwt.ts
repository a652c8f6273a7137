// Keys and session tokens for the benchmarks (minting is never measured).
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

export const CLAIMS_NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

/** A JWT configuration for the server and one user token it accepts. */
export interface JwtSetup {
  /** The JWT configuration for the server (`{ type, key }`). */
  readonly config: { readonly type: string; readonly key: string };
  readonly token: string;
}

export type Hs256 = JwtSetup & { readonly config: { readonly type: 'HS256' } };

/** A token for role `user` (allowed roles `[user]`), signed with `signingKey` as `alg`. */
export function mintUserToken(signingKey: KeyObject | Uint8Array, alg: string, subject: string): Promise<string> {
  return new SignJWT({ [CLAIMS_NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } })
    .setProtectedHeader({ alg })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('6h')
    .sign(signingKey);
}

/** `count` distinct tokens (subjects user-0, user-1, ...). */
export async function mintPool(signingKey: KeyObject | Uint8Array, alg: string, count: number): Promise<string[]> {
  const tokens: string[] = [];
  const batch = 500; // jose signs asynchronously; a batch keeps the thread pool busy
  for (let i = 0; i < count; i += batch) {
    const n = Math.min(batch, count - i);
    tokens.push(...(await Promise.all(Array.from({ length: n }, (_, j) => mintUserToken(signingKey, alg, `user-${i + j}`)))));
  }
  return tokens;
}

export async function hs256UserToken(): Promise<Hs256> {
  const key = randomBytes(48).toString('base64url');
  const token = await mintUserToken(new TextEncoder().encode(key), 'HS256', 'bench-user');
  return { config: { type: 'HS256', key }, token };
}

/** A fresh RSA-2048 key pair: the RS256 configuration (public key, PEM), one token, and the signing key for more. */
export async function rs256UserToken(): Promise<JwtSetup & { readonly signingKey: KeyObject }> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return { config: { type: 'RS256', key }, token: await mintUserToken(privateKey, 'RS256', 'bench-user'), signingKey: privateKey };
}
