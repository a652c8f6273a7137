import { SignJWT } from 'jose';

/** The claims namespace of the server's default JWT configuration. */
const CLAIMS = 'https://svc-graphql.dev/jwt/claims';

/**
 * `Authorization` of a request of `role` (its only allowed and default role), with these session
 * variables, signed HS256 with `key` (the server's `jwtSecret` key), valid ten minutes.
 */
export async function bearerOf(key: string, role: string, variables: Record<string, string> = {}): Promise<Record<string, string>> {
  const token = await new SignJWT({ [CLAIMS]: { 'x-svc-default-role': role, 'x-svc-allowed-roles': [role], ...variables } })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(key));
  return { authorization: `Bearer ${token}` };
}

/** A call of the metadata API at `url` with the admin secret: its status and parsed body. */
export async function metadataCall(url: string, adminSecret: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': adminSecret },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
