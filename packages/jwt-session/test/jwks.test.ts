import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSessionResolver, SessionError, type Logger, type SessionResolver } from '../src/index.js';
import { publicJwk, settle, startJwksServer, until, type JwksServer } from './utils/jwks-server.js';
import { generateTestKeys, NAMESPACE, sign } from './utils/keys.js';
import { silentLogger } from './utils/server.js';

const roles = { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' };
const NO_USABLE_KEYS = { errors: [{ message: 'Could not verify JWT: JWSError NoUsableKeys', extensions: { code: 'invalid-jwt', path: '$' } }] };
const INVALID_SIGNATURE = { errors: [{ message: 'Could not verify JWT: JWSError JWSInvalidSignature', extensions: { code: 'invalid-jwt', path: '$' } }] };

const keyA = generateKeyPairSync('rsa', { modulusLength: 2048 });
const keyB = generateKeyPairSync('rsa', { modulusLength: 2048 });
const keyE = generateKeyPairSync('ec', { namedCurve: 'P-256' });

let jwks: JwksServer;
let resolver: SessionResolver | undefined;

beforeAll(async () => {
  jwks = await startJwksServer();
});
afterAll(async () => {
  await jwks.close();
});

beforeEach(async () => {
  jwks.mode = 'up';
  jwks.headers = {};
  jwks.keys = [await publicJwk(keyA.publicKey, 'a', 'RS256')];
});

afterEach(() => {
  resolver?.dispose();
  resolver = undefined;
  vi.useRealTimers();
});

function fakeTime(): void {
  // Only timers and Date: I/O and setImmediate stay real so the JWKS server can answer.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
}

async function start(options: { jwksFetchTimeoutMs?: number; logger?: Logger } = {}): Promise<SessionResolver> {
  resolver = createSessionResolver({ jwt: { jwk_url: jwks.url }, adminSecret: 'admin-secret', logger: silentLogger, ...options });
  await resolver.ready?.();
  return resolver;
}

function token(key: KeyObject, kid: string | undefined, alg = 'RS256', expiresIn = 3600): Promise<string> {
  return sign({ [NAMESPACE]: roles }, key, { alg, expiresIn, ...(kid !== undefined && { kid }) });
}

async function outcome(r: SessionResolver, jwt: string): Promise<{ status: number; body: unknown } | string> {
  try {
    return (await r.resolve({ authorization: `Bearer ${jwt}` })).role;
  } catch (error) {
    if (error instanceof SessionError) return { status: error.status, body: error.toJSON() };
    throw error;
  }
}

async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await settle(5);
}

describe('jwk_url refresh schedule', () => {
  // [name, headers, delay, delay of the next cycle (the same headers again)]
  const cases: [string, () => Record<string, string>, number, number?][] = [
    ['max-age', () => ({ 'cache-control': 'max-age=120' }), 120_000],
    ['s-maxage', () => ({ 'cache-control': 's-maxage=90' }), 90_000],
    // The second response carries the same, now past, Expires: under one second, so a minute.
    ['Expires', () => ({ expires: new Date(Date.now() + 200_000).toUTCString() }), 200_000, 60_000],
    ['no-cache (over max-age)', () => ({ 'cache-control': 'no-cache, max-age=600' }), 60_000],
    ['no-store', () => ({ 'cache-control': 'no-store' }), 60_000],
    ['must-revalidate with max-age', () => ({ 'cache-control': 'max-age=300, must-revalidate' }), 300_000],
    ['a sub-second max-age', () => ({ 'cache-control': 'max-age=0' }), 60_000],
  ];
  for (const [name, headers, delay, nextDelay = delay] of cases) {
    it(`refetches after ${delay / 1000} s for ${name}, and not before`, async () => {
      fakeTime();
      jwks.headers = headers();
      const before = jwks.hits;
      await start();
      expect(jwks.hits).toBe(before + 1);
      // Expires is rounded to whole seconds by its format: stay two seconds clear of the edge.
      await advance(delay - 2_000);
      expect(jwks.hits).toBe(before + 1);
      await advance(2_000);
      await until(() => jwks.hits === before + 2, 'the scheduled refetch');
      // The next cycle follows the same rule.
      await advance(nextDelay - 1_000);
      expect(jwks.hits).toBe(before + 2);
      await advance(1_000);
      await until(() => jwks.hits === before + 3, 'the second refetch');
    });
  }

  it('never refetches when nothing is parseable at start; after a later fetch, every minute', async () => {
    fakeTime();
    const before = jwks.hits;
    const r = await start();
    await advance(3_600_000);
    expect(jwks.hits).toBe(before + 1);
    // An unknown kid makes a later fetch; from then on the keys are refreshed once a minute.
    expect(await outcome(r, await token(keyB.privateKey, 'b'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    expect(jwks.hits).toBe(before + 2);
    await advance(59_000);
    expect(jwks.hits).toBe(before + 2);
    await advance(1_000);
    await until(() => jwks.hits === before + 3, 'the one-minute refresh');
  });
});

describe('jwk_url keys', () => {
  it('verifies a token by its kid', async () => {
    jwks.keys = [await publicJwk(keyB.publicKey, 'b', 'RS256'), await publicJwk(keyA.publicKey, 'a', 'RS256')];
    const r = await start();
    expect(await outcome(r, await token(keyA.privateKey, 'a'))).toBe('user');
    expect(await outcome(r, await token(keyB.privateKey, 'b'))).toBe('user');
    // Signed by B but naming A: A cannot verify it.
    expect(await outcome(r, await token(keyB.privateKey, 'a'))).toEqual({ status: 401, body: INVALID_SIGNATURE });
  });

  it('reads a JWK that carries only its X.509 chain (x5c), and skips encryption keys', async () => {
    const { p256 } = generateTestKeys(['p256']);
    const der = p256.certificate.replace(/-----[A-Z ]+-----|\s/g, '');
    jwks.keys = [
      { kty: 'EC', crv: 'P-256', kid: 'cert', use: 'sig', x5c: [der] },
      { ...(await publicJwk(keyA.publicKey, 'enc', 'RS256')), use: 'enc' },
    ];
    const r = await start();
    expect(await outcome(r, await token(p256.privateKey, 'cert', 'ES256'))).toBe('user');
    expect(await outcome(r, await token(keyA.privateKey, 'enc'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
  });

  it('tries every key of the right algorithm for a token without kid', async () => {
    jwks.keys = [await publicJwk(keyB.publicKey, 'b', 'RS256'), await publicJwk(keyA.publicKey, 'a', 'RS256')];
    const r = await start();
    expect(await outcome(r, await token(keyA.privateKey, undefined))).toBe('user');
  });

  it('answers NoUsableKeys when kid names a key of another type, and JWSInvalidSignature for another hash of the same type', async () => {
    const r = await start();
    expect(await outcome(r, await token(keyE.privateKey, 'a', 'ES256'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    expect(await outcome(r, await token(keyA.privateKey, 'a', 'RS384'))).toEqual({ status: 401, body: INVALID_SIGNATURE });
  });

  it('takes the algorithm from the JWK, not the token: alg none and HS256 with a kid are refused', async () => {
    jwks.keys = [await publicJwk(keyA.publicKey, 'a', 'RS256'), await publicJwk(keyE.publicKey, 'e')];
    const r = await start();
    expect(await outcome(r, await token(keyE.privateKey, 'e', 'ES256'))).toBe('user');
    const none = `${Buffer.from('{"alg":"none","kid":"a"}').toString('base64url')}.${Buffer.from(JSON.stringify({ [NAMESPACE]: roles })).toString('base64url')}.`;
    expect(await outcome(r, none)).toEqual({ status: 401, body: INVALID_SIGNATURE });
    expect(await outcome(r, await sign({ [NAMESPACE]: roles }, new TextEncoder().encode('x'.repeat(32)), { alg: 'HS256', kid: 'a' }))).toEqual({
      status: 401,
      body: NO_USABLE_KEYS,
    });
  });

  it('rotates on an unknown kid: one refetch the request waits for, at most once per 10 s', async () => {
    fakeTime();
    const r = await start();
    const start0 = jwks.hits;
    jwks.keys = [await publicJwk(keyA.publicKey, 'a', 'RS256'), await publicJwk(keyB.publicKey, 'b', 'RS256')];
    // Within 10 s of the start-up fetch: no refetch.
    expect(await outcome(r, await token(keyB.privateKey, 'b'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    expect(jwks.hits).toBe(start0);
    await advance(10_000);
    // Concurrent requests share the one fetch.
    const results = await Promise.all(Array.from({ length: 5 }, async () => outcome(r, await token(keyB.privateKey, 'b'))));
    expect(results).toEqual(['user', 'user', 'user', 'user', 'user']);
    expect(jwks.hits).toBe(start0 + 1);
    // Another unknown kid right after: refused without a fetch.
    expect(await outcome(r, await token(keyB.privateKey, 'c'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    expect(jwks.hits).toBe(start0 + 1);
  });

  it('empties the token cache when the key set changes', async () => {
    fakeTime();
    const r = await start();
    const tokenA = await token(keyA.privateKey, 'a');
    expect(await outcome(r, tokenA)).toBe('user');
    jwks.keys = [await publicJwk(keyB.publicKey, 'b', 'RS256')];
    await advance(10_000);
    expect(await outcome(r, await token(keyB.privateKey, 'b'))).toBe('user');
    // Key A was withdrawn: its token, cached before, is verified again and refused.
    expect(await outcome(r, tokenA)).toEqual({ status: 401, body: NO_USABLE_KEYS });
  });

  it('starts while the JWKS endpoint is down, answers NoUsableKeys, retries in 10 s backing off to 60 s, and recovers', async () => {
    fakeTime();
    jwks.mode = 'down';
    const before = jwks.hits;
    const r = await start();
    expect(jwks.hits).toBe(before + 1);
    const good = await token(keyA.privateKey, 'a');
    expect(await outcome(r, good)).toEqual({ status: 401, body: NO_USABLE_KEYS });
    let expected = before + 1;
    for (const wait of [10_000, 20_000, 40_000, 60_000, 60_000]) {
      await advance(wait - 1_000);
      expect(jwks.hits).toBe(expected);
      await advance(1_000);
      expected += 1;
      await until(() => jwks.hits === expected, `the retry after ${wait} ms`);
      await settle(5);
    }
    jwks.mode = 'up';
    await advance(60_000);
    await until(() => jwks.hits === expected + 1, 'the recovering fetch');
    await settle(10);
    expect(await outcome(r, good)).toBe('user');
    // That fetch was not the one at start: with nothing parseable, the keys are refreshed every minute.
    await advance(59_000);
    expect(jwks.hits).toBe(expected + 1);
    await advance(1_000);
    await until(() => jwks.hits === expected + 2, 'the one-minute refresh after recovering');
  });

  it('keeps the last good keys when a refresh fails, and retries in 10 s', async () => {
    fakeTime();
    jwks.headers = { 'cache-control': 'max-age=60' };
    const r = await start();
    const before = jwks.hits;
    jwks.mode = 'down';
    await advance(60_000);
    await until(() => jwks.hits === before + 1, 'the failing refresh');
    await settle(5);
    expect(await outcome(r, await token(keyA.privateKey, 'a'))).toBe('user');
    jwks.mode = 'up';
    await advance(10_000);
    await until(() => jwks.hits === before + 2, 'the retry');
  });

  it('withdraws every key when the endpoint answers a key set without a usable one, and asks again in 10 s', async () => {
    fakeTime();
    jwks.headers = { 'cache-control': 'max-age=60' };
    const r = await start();
    const tokenA = await token(keyA.privateKey, 'a');
    expect(await outcome(r, tokenA)).toBe('user');
    const before = jwks.hits;
    jwks.keys = [];
    await advance(60_000);
    await until(() => jwks.hits === before + 1, 'the refresh to an empty key set');
    await settle(5);
    // The token verified (and cached) before is refused now, as is a new one.
    expect(await outcome(r, tokenA)).toEqual({ status: 401, body: NO_USABLE_KEYS });
    expect(await outcome(r, await token(keyA.privateKey, undefined))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    // Asked again as after a failed fetch, not a minute later as its max-age says.
    jwks.keys = [await publicJwk(keyA.publicKey, 'a', 'RS256')];
    await advance(10_000);
    await until(() => jwks.hits === before + 2, 'the retry');
    await settle(5);
    expect(await outcome(r, tokenA)).toBe('user');
  });

  it('gives up on a fetch that takes longer than jwksFetchTimeoutMs', async () => {
    jwks.mode = 'hang';
    const r = await start({ jwksFetchTimeoutMs: 100 });
    expect(await outcome(r, await token(keyA.privateKey, 'a'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
  });

  it('stops refreshing after dispose()', async () => {
    fakeTime();
    jwks.headers = { 'cache-control': 'max-age=5' };
    const r = await start();
    const before = jwks.hits;
    r.dispose();
    await advance(60_000);
    expect(jwks.hits).toBe(before);
  });
});

describe('jwk_url answers that are refused', () => {
  let warnings: string[];
  const logger: Logger = {
    ...silentLogger,
    warn: (message: unknown) => {
      warnings.push(String(message));
    },
  };
  beforeEach(() => {
    warnings = [];
  });

  /**
   * Starts with key A, then serves key B in `mode` from the next refresh on: that refresh must fail
   * as an unreachable endpoint does (A kept, B unknown, a retry 10 s later, then 20 s), and the
   * endpoint serving B normally again must bring B in.
   */
  async function expectRefusedRefresh(mode: 'huge' | 'huge-chunked', reason: string): Promise<void> {
    fakeTime();
    jwks.headers = { 'cache-control': 'max-age=60' };
    const r = await start({ logger });
    const before = jwks.hits;
    jwks.keys = [await publicJwk(keyB.publicKey, 'b', 'RS256')];
    jwks.mode = mode;
    await advance(60_000);
    await until(() => jwks.hits === before + 1, 'the refresh');
    await until(() => warnings.length === 1, 'the failure to be reported');
    expect(warnings[0]).toBe(`jwt-session: fetching ${jwks.url} failed (${reason}); keeping 1 key(s), retrying in 10 s`);
    expect(await outcome(r, await token(keyA.privateKey, 'a'))).toBe('user');
    expect(await outcome(r, await token(keyB.privateKey, 'b'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    await advance(9_000);
    expect(jwks.hits).toBe(before + 1);
    await advance(1_000);
    await until(() => jwks.hits === before + 2, 'the retry after 10 s');
    await until(() => warnings.length === 2, 'the second failure');
    expect(warnings[1]).toMatch(/retrying in 20 s$/);
    jwks.mode = 'up';
    await advance(20_000);
    await until(() => jwks.hits === before + 3, 'the retry after 20 s');
    await settle(10);
    expect(await outcome(r, await token(keyB.privateKey, 'b'))).toBe('user');
  }

  it('fails the fetch of a 2 MiB key set (Content-Length) like an unreachable endpoint', async () => {
    await expectRefusedRefresh('huge', 'the response is larger than 1048576 bytes');
  });

  it('fails the fetch of a chunked key set without Content-Length once it passes 1 MiB, cutting the stream off', async () => {
    const abandoned = jwks.abandonedStreams;
    await expectRefusedRefresh('huge-chunked', 'the response is larger than 1048576 bytes');
    // Both 32 MiB answers were cut off mid-way, not read to their end.
    await until(() => jwks.abandonedStreams === abandoned + 2, 'the server to see both streams abandoned');
  });

  it('does not follow a redirect, even to a valid key set: the fetch fails and is retried', async () => {
    fakeTime();
    jwks.mode = 'redirect';
    const before = jwks.hits;
    const r = await start({ logger });
    expect(jwks.hits).toBe(before + 1);
    expect(warnings).toEqual([`jwt-session: fetching ${jwks.url} failed (HTTP 302: redirects are not followed); keeping 0 key(s), retrying in 10 s`]);
    expect(await outcome(r, await token(keyA.privateKey, 'a'))).toEqual({ status: 401, body: NO_USABLE_KEYS });
    await advance(10_000);
    await until(() => jwks.hits === before + 2, 'the retry');
    await settle(10);
    expect(jwks.redirectTargetHits).toBe(0);
    jwks.mode = 'up';
    await advance(20_000);
    await until(() => jwks.hits === before + 3, 'the recovering fetch');
    await settle(10);
    expect(await outcome(r, await token(keyA.privateKey, 'a'))).toBe('user');
  });
});
