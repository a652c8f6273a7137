// An HS256 key and a session token for benchmarks that are not about authentication.
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';

export const CLAIMS_NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

export interface Hs256 {
  /** The JWT configuration for the server. */
  readonly config: { readonly type: 'HS256'; readonly key: string };
  readonly token: string;
}

export async function hs256UserToken(): Promise<Hs256> {
  const key = randomBytes(48).toString('base64url');
  const token = await new SignJWT({ [CLAIMS_NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('bench-user')
    .setIssuedAt()
    .setExpirationTime('6h')
    .sign(new TextEncoder().encode(key));
  return { config: { type: 'HS256', key }, token };
}
