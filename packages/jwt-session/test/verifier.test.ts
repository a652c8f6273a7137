import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSessionResolver, parseJwtConfig, SessionError, type SessionResolver } from '../src/index.js';
import { normalizeOptions } from '../src/options.js';
import { TokenVerifier } from '../src/verifier.js';
import { NAMESPACE, secretBytes, sign } from './utils/keys.js';
import { silentLogger } from './utils/server.js';

const SECRET = 'v'.repeat(32);
const roles = { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' };
const EXPIRED = { errors: [{ message: 'Could not verify JWT: JWTExpired', extensions: { code: 'invalid-jwt', path: '$' } }] };

let resolver: SessionResolver | undefined;
afterEach(() => {
  resolver?.dispose();
  resolver = undefined;
  vi.useRealTimers();
});

async function outcome(jwt: string): Promise<unknown> {
  try {
    return (await resolver?.resolve({ authorization: `Bearer ${jwt}` }))?.role;
  } catch (error) {
    if (error instanceof SessionError) return { status: error.status, body: error.toJSON() };
    throw error;
  }
}

describe('the verified-token cache', () => {
  it('holds at most cache.max tokens, 10,000 by default', async () => {
    expect(normalizeOptions({}).cacheMax).toBe(10_000);
    expect(normalizeOptions({ cache: false }).cacheMax).toBe(0);
    const verifier = new TokenVerifier({
      config: parseJwtConfig({ type: 'HS256', key: SECRET }),
      prefix: 'x-svc-',
      cacheMax: 3,
      fetch,
      jwksFetchTimeoutMs: 1000,
      logger: silentLogger,
    });
    for (let i = 0; i < 10; i++) {
      const token = await sign({ [NAMESPACE]: { ...roles, 'x-svc-n': String(i) } }, secretBytes(SECRET), { alg: 'HS256', expiresIn: 60 });
      await verifier.verify(token);
      expect(verifier.cacheSize).toBe(Math.min(i + 1, 3));
    }
    verifier.dispose();
    expect(verifier.cacheSize).toBe(0);
  });

  for (const cache of [undefined, false] as const) {
    it(`never accepts a token after its exp (cache ${cache === false ? 'off' : 'on'})`, async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      resolver = createSessionResolver({ jwt: { type: 'HS256', key: SECRET }, adminSecret: 'a', logger: silentLogger, ...(cache === false && { cache }) });
      const token = await sign({ [NAMESPACE]: roles }, secretBytes(SECRET), { alg: 'HS256', expiresIn: 60 });
      expect(await outcome(token)).toBe('user');
      vi.advanceTimersByTime(30_000);
      expect(await outcome(token)).toBe('user');
      vi.advanceTimersByTime(31_000);
      expect(await outcome(token)).toEqual({ status: 401, body: EXPIRED });
    });
  }

  it('honours allowed_skew on cache hits, and no more', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    resolver = createSessionResolver({ jwt: { type: 'HS256', key: SECRET, allowed_skew: 10 }, adminSecret: 'a', logger: silentLogger });
    const exp = Math.floor(Date.now() / 1000) + 20;
    const token = await sign({ [NAMESPACE]: roles, exp }, secretBytes(SECRET), { alg: 'HS256', expiresIn: null });
    expect(await outcome(token)).toBe('user');
    vi.setSystemTime((exp + 9) * 1000);
    expect(await outcome(token)).toBe('user');
    vi.setSystemTime((exp + 10) * 1000);
    expect(await outcome(token)).toEqual({ status: 401, body: EXPIRED });
  });

  it('rechecks nbf on cache hits, so a clock stepping back cannot revive an early token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    resolver = createSessionResolver({ jwt: { type: 'HS256', key: SECRET }, adminSecret: 'a', logger: silentLogger });
    const now = Math.floor(Date.now() / 1000);
    const token = await sign({ [NAMESPACE]: roles, nbf: now - 1 }, secretBytes(SECRET), { alg: 'HS256' });
    expect(await outcome(token)).toBe('user');
    vi.setSystemTime((now - 100) * 1000);
    expect(await outcome(token)).toEqual({
      status: 401,
      body: { errors: [{ message: 'Could not verify JWT: JWTNotYetValid', extensions: { code: 'invalid-jwt', path: '$' } }] },
    });
  });

  it('serves the role claims of a cached token with the role chosen per request', async () => {
    resolver = createSessionResolver({ jwt: { type: 'HS256', key: SECRET }, adminSecret: 'a', logger: silentLogger });
    const token = await sign({ [NAMESPACE]: { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user' } }, secretBytes(SECRET), {
      alg: 'HS256',
    });
    expect((await resolver.resolve({ authorization: `Bearer ${token}` })).role).toBe('user');
    expect((await resolver.resolve({ authorization: `Bearer ${token}`, 'x-svc-role': 'editor' })).role).toBe('editor');
    await expect(resolver.resolve({ authorization: `Bearer ${token}`, 'x-svc-role': 'admin' })).rejects.toMatchObject({ status: 403 });
  });

  it('rejects a bad cache size at factory time', () => {
    expect(() => createSessionResolver({ jwt: { type: 'HS256', key: SECRET }, cache: { max: -1 } })).toThrowError(
      'jwt-session: "cache.max" must be a non-negative integer, got -1',
    );
  });
});
