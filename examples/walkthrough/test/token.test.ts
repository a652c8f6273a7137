import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { mintToken } from '../src/token.js';

const key = 'a walkthrough secret that is long enough';

describe('mintToken', () => {
  it('signs an HS256 token with the session claims under the default namespace', async () => {
    const token = await mintToken({ key, role: 'user', roles: ['user', 'editor'], variables: { 'x-svc-user-id': '42' }, ttlSeconds: 60 });
    const { payload } = await jwtVerify(token, new TextEncoder().encode(key), { algorithms: ['HS256'] });
    expect(decodeProtectedHeader(token).alg).toBe('HS256');
    expect(payload['https://svc-graphql.dev/jwt/claims']).toEqual({
      'x-svc-default-role': 'user',
      'x-svc-allowed-roles': ['user', 'editor'],
      'x-svc-user-id': '42',
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(60);
  });
});
