import { createHmac, sign as nodeSign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JwtAlgorithm } from '../src/index.js';
import { b64, generateTestKeys, secretBytes, sign, userClaims, type AsymmetricFamily, type TestKeyPair } from './utils/keys.js';
import { bearer, errorBody, sessionOf, startApp, type TestApp } from './utils/server.js';

const INVALID_SIGNATURE = errorBody('invalid-jwt', 'Could not verify JWT: JWSError JWSInvalidSignature');
const CHALLENGE = 'Bearer error="invalid_token"';

let keys: Record<AsymmetricFamily, TestKeyPair>;
let others: Record<AsymmetricFamily, TestKeyPair>;
const apps: TestApp[] = [];

beforeAll(() => {
  keys = generateTestKeys(['rsa', 'p256', 'p384', 'p521', 'ed25519']);
  others = generateTestKeys(['rsa', 'p256', 'p384', 'p521', 'ed25519']);
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function app(jwt: object): Promise<TestApp> {
  const started = await startApp({ jwt, adminSecret: 'admin-secret' });
  apps.push(started);
  return started;
}

const asymmetric: [JwtAlgorithm, string, AsymmetricFamily][] = [
  ['RS256', 'RS256', 'rsa'],
  ['RS384', 'RS384', 'rsa'],
  ['RS512', 'RS512', 'rsa'],
  ['ES256', 'ES256', 'p256'],
  ['ES384', 'ES384', 'p384'],
  ['ES512', 'ES512', 'p521'],
  ['Ed25519', 'EdDSA', 'ed25519'],
];

describe('signature verification', () => {
  for (const [type, secret] of [
    ['HS256', 's'.repeat(32)],
    ['HS384', 's'.repeat(48)],
    ['HS512', 's'.repeat(64)],
  ] as const) {
    it(`${type}: accepts a token signed with the shared secret and refuses one signed with another`, async () => {
      const server = await app({ type, key: secret });
      const good = await sign(userClaims(), secretBytes(secret), { alg: type });
      expect(sessionOf(await server.query(bearer(good)))).toMatchObject({ role: 'user', isAdmin: false });
      const bad = await sign(userClaims(), secretBytes(`${secret}x`), { alg: type });
      const answer = await server.query(bearer(bad));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
      expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(answer.headers.get('content-type')).toBe('application/json');
    });
  }

  for (const [type, alg, family] of asymmetric) {
    for (const form of ['PEM', 'X.509'] as const) {
      it(`${type}: verifies with the public key as ${form} and refuses another key's signature`, async () => {
        const pair = keys[family];
        const server = await app({ type, key: form === 'PEM' ? pair.spki : pair.certificate });
        const good = await sign(userClaims(), pair.privateKey, { alg });
        expect(sessionOf(await server.query(bearer(good)))).toMatchObject({ role: 'user', variables: { 'x-svc-user-id': '42', 'x-svc-role': 'user' } });
        const bad = await sign(userClaims(), others[family].privateKey, { alg });
        const answer = await server.query(bearer(bad));
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual(INVALID_SIGNATURE);
        expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
      });
    }
  }

  it('RS256: verifies with the public key as PKCS#1 PEM (BEGIN RSA PUBLIC KEY)', async () => {
    const pkcs1 = keys.rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    expect(pkcs1).toContain('BEGIN RSA PUBLIC KEY');
    const server = await app({ type: 'RS256', key: pkcs1 });
    expect(sessionOf(await server.query(bearer(await sign(userClaims(), keys.rsa.privateKey, { alg: 'RS256' }))))).toMatchObject({ role: 'user' });
    const answer = await server.query(bearer(await sign(userClaims(), others.rsa.privateKey, { alg: 'RS256' })));
    expect([answer.status, answer.body]).toEqual([401, INVALID_SIGNATURE]);
  });

  describe('attacks on the algorithm', () => {
    let rs256: TestApp;
    beforeAll(async () => {
      rs256 = await app({ type: 'RS256', key: keys.rsa.spki });
    });

    it('refuses alg "none" (an unsecured JWT)', async () => {
      const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(userClaims())}.`;
      const answer = await rs256.query(bearer(token));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
    });

    it('refuses HS256 signed with the RSA public key as the secret (algorithm confusion)', async () => {
      const input = `${b64({ alg: 'HS256' })}.${b64(userClaims())}`;
      const mac = createHmac('sha256', keys.rsa.spki).update(input).digest('base64url');
      const answer = await rs256.query(bearer(`${input}.${mac}`));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
    });

    it('refuses a header naming another algorithm even when the signature fits it', async () => {
      const token = await sign(userClaims(), keys.rsa.privateKey, { alg: 'RS384' });
      const answer = await rs256.query(bearer(token));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
    });

    it('refuses a tampered payload', async () => {
      const token = await sign(userClaims(), keys.rsa.privateKey, { alg: 'RS256' });
      const [header, , signature] = token.split('.');
      const forged = b64(userClaims({ 'x-svc-allowed-roles': ['admin'], 'x-svc-default-role': 'admin' }));
      const answer = await rs256.query(bearer(`${header}.${forged}.${signature}`));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
    });

    it('refuses a token with a critical header extension', async () => {
      const input = `${b64({ alg: 'RS256', crit: ['x'], x: 1 })}.${b64(userClaims())}`;
      const token = `${input}.${nodeSign('sha256', Buffer.from(input), keys.rsa.privateKey).toString('base64url')}`;
      const answer = await rs256.query(bearer(token));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
    });

    it('refuses an ES256 signature in DER form (JWS needs raw r||s)', async () => {
      const es = await app({ type: 'ES256', key: keys.p256.spki });
      const input = `${b64({ alg: 'ES256' })}.${b64({ ...userClaims(), exp: Math.floor(Date.now() / 1000) + 60 })}`;
      const der = nodeSign('sha256', Buffer.from(input), keys.p256.privateKey).toString('base64url');
      const answer = await es.query(bearer(`${input}.${der}`));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_SIGNATURE);
    });

    it('accepts the fully specified "Ed25519" alg name for an Ed25519 key', async () => {
      const ed = await app({ type: 'Ed25519', key: keys.ed25519.spki });
      const input = `${b64({ alg: 'Ed25519' })}.${b64(userClaims())}`;
      const signature = nodeSign(null, Buffer.from(input), keys.ed25519.privateKey).toString('base64url');
      expect(sessionOf(await ed.query(bearer(`${input}.${signature}`)))).toMatchObject({ role: 'user' });
    });
  });

  describe('token shape', () => {
    const secret = 'q'.repeat(32);
    let hs: TestApp;
    let token: string;
    beforeAll(async () => {
      hs = await app({ type: 'HS256', key: secret });
      token = await sign(userClaims(), secretBytes(secret), { alg: 'HS256' });
    });

    it('refuses = padding added by a load balancer', async () => {
      const answer = await hs.query(bearer(`${token}==`));
      expect(answer.status).toBe(401);
      const message = (answer.body as { errors: { message: string; extensions: { code: string } }[] }).errors[0];
      expect(message?.message.startsWith('Could not verify JWT: ')).toBe(true);
      expect(message?.extensions.code).toBe('invalid-jwt');
      expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
    });

    for (const [name, mutate] of [
      ['two segments', (t: string) => t.split('.').slice(0, 2).join('.')],
      ['four segments', (t: string) => `${t}.abc`],
      ['a standard-base64 character', (t: string) => t.replace('.', '+.')],
      ['a header that is not JSON', (t: string) => `${b64('not json')}.${t.split('.').slice(1).join('.')}`],
      ['a header without alg', (t: string) => `${b64({ typ: 'JWT' })}.${t.split('.').slice(1).join('.')}`],
      ['a segment of impossible base64url length', (t: string) => `${t.split('.')[0]}a.${t.split('.').slice(1).join('.')}`],
    ] as const) {
      it(`refuses a token with ${name} as invalid-jwt`, async () => {
        const answer = await hs.query(bearer(mutate(token)));
        expect(answer.status).toBe(401);
        const error = (answer.body as { errors: { message: string; extensions: { code: string; path: string } }[] }).errors[0];
        expect(error?.message).toMatch(/^Could not verify JWT: /);
        expect(error?.extensions).toEqual({ code: 'invalid-jwt', path: '$' });
      });
    }

    it('refuses, as not a compact JWS, a well-signed token whose payload segment is not base64url', async () => {
      // Signed over the segment as written: the signature holds, decoding the payload cannot.
      let payload = b64(userClaims());
      while (payload.length % 4 !== 1) payload += 'A';
      const input = `${b64({ alg: 'HS256' })}.${payload}`;
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      const answer = await hs.query(bearer(`${input}.${mac}`));
      expect(answer.status).toBe(401);
      const error = (answer.body as { errors: { message: string; extensions: { code: string } }[] }).errors[0];
      expect(error?.message).toMatch(/^Could not verify JWT: JWSError CompactDecodeError /);
      expect(error?.extensions.code).toBe('invalid-jwt');
    });

    it('refuses a header that is not UTF-8 as not a compact JWS', async () => {
      const header = Buffer.concat([Buffer.from('{"alg":"HS256","x":"'), Buffer.from([0xff]), Buffer.from('"}')]).toString('base64url');
      const input = `${header}.${b64(userClaims())}`;
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      const answer = await hs.query(bearer(`${input}.${mac}`));
      expect(answer.status).toBe(401);
      expect((answer.body as { errors: { message: string }[] }).errors[0]?.message).toBe(
        'Could not verify JWT: JWSError CompactDecodeError header is not UTF-8',
      );
    });

    it('refuses a header whose kid is not a string as not a compact JWS, though its signature holds', async () => {
      for (const kid of [7, null, ['k1'], { id: 'k1' }]) {
        const input = `${b64({ alg: 'HS256', kid })}.${b64(userClaims())}`;
        const mac = createHmac('sha256', secret).update(input).digest('base64url');
        const answer = await hs.query(bearer(`${input}.${mac}`));
        expect(answer.status).toBe(401);
        expect((answer.body as { errors: { message: string }[] }).errors[0]?.message).toBe(
          'Could not verify JWT: JWSError CompactDecodeError header "kid" is not a string',
        );
      }
      // The same token with a string kid is accepted (the one configured key has no kid).
      const input = `${b64({ alg: 'HS256', kid: 'k1' })}.${b64(userClaims())}`;
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      expect((await hs.query(bearer(`${input}.${mac}`))).status).toBe(200);
    });

    it('accepts a valid 20 KB token', async () => {
      const big = await sign(userClaims({ 'x-svc-blob': 'b'.repeat(20 * 1024) }), secretBytes(secret), { alg: 'HS256' });
      expect(big.length).toBeGreaterThan(20 * 1024);
      const session = sessionOf(await hs.query(bearer(big)));
      expect((session['variables'] as Record<string, string>)['x-svc-blob']).toHaveLength(20 * 1024);
    });
  });
});
