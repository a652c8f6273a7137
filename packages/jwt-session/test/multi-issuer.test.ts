import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  context as otelContext,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createSessionResolver,
  JwtConfigError,
  parseJwtConfigs,
  SessionError,
  type JwtSessionOptions,
  type SessionResolver,
} from '../src/index.js';
import { publicJwk, settle, startJwksServer, until, type JwksServer } from './utils/jwks-server.js';
import { NAMESPACE, secretBytes, sign } from './utils/keys.js';
import { bearer, errorBody, sessionOf, silentLogger, startApp, type TestApp } from './utils/server.js';
import { connect, first, startWsApp } from './utils/ws-server.js';

const ADMIN = 'multi-admin-secret';
const ISS_A = 'https://a.example';
const ISS_B = 'https://b.example';
const ISS_C = 'https://c.example';
const SECRET_A = 'a'.repeat(32);
const SECRET_FALLBACK = 'f'.repeat(32);
const rsaB = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaB2 = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaC = generateKeyPairSync('rsa', { modulusLength: 2048 });

const NOT_IN_ISSUER = errorBody('invalid-jwt', 'Could not verify JWT: JWTNotInIssuer');
const INVALID_SIGNATURE = errorBody('invalid-jwt', 'Could not verify JWT: JWSError JWSInvalidSignature');

/** Issuer A: HS256, claims in the default namespace, token in `Authorization`. */
const entryA = { type: 'HS256', key: SECRET_A, issuer: ISS_A };
/** Issuer B: RS256 keys from a JWKS, claims through `claims_map`, 30 s of skew. */
function entryB(jwks: JwksServer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    jwk_url: jwks.url,
    issuer: ISS_B,
    allowed_skew: 30,
    claims_map: {
      'x-svc-allowed-roles': { path: '$.roles' },
      'x-svc-default-role': { path: '$.roles[0]' },
      'x-svc-user-id': { path: '$.sub' },
    },
    ...extra,
  };
}
const fallbackEntry = { type: 'HS256', key: SECRET_FALLBACK };

function tokenA(extra: Record<string, unknown> = {}, expiresIn = 3600): Promise<string> {
  return sign(
    { iss: ISS_A, [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': 'a-1' }, ...extra },
    secretBytes(SECRET_A),
    { alg: 'HS256', expiresIn },
  );
}
function tokenB(key: KeyObject = rsaB.privateKey, kid = 'b1', extra: Record<string, unknown> = {}): Promise<string> {
  return sign({ iss: ISS_B, sub: 'b-7', roles: ['reader', 'writer'], ...extra }, key, { alg: 'RS256', kid });
}
function tokenC(): Promise<string> {
  return sign({ iss: ISS_C, [NAMESPACE]: { 'x-svc-allowed-roles': ['c'], 'x-svc-default-role': 'c' } }, rsaC.privateKey, { alg: 'RS256', kid: 'c1' });
}
/** A token for the fallback entry: `iss` as given (none when undefined). */
function fallbackToken(iss: string | undefined, secret = SECRET_FALLBACK): Promise<string> {
  return sign(
    { ...(iss !== undefined && { iss }), [NAMESPACE]: { 'x-svc-allowed-roles': ['guest'], 'x-svc-default-role': 'guest' } },
    secretBytes(secret),
    { alg: 'HS256' },
  );
}

let jwksB: JwksServer;
let jwksC: JwksServer;
const apps: { close(): Promise<void> }[] = [];
const resolvers: SessionResolver[] = [];

beforeAll(async () => {
  jwksB = await startJwksServer();
  jwksC = await startJwksServer();
});
afterAll(async () => {
  await jwksB.close();
  await jwksC.close();
});
beforeEach(async () => {
  jwksB.mode = 'up';
  jwksB.headers = {};
  jwksB.keys = [await publicJwk(rsaB.publicKey, 'b1', 'RS256')];
  jwksC.mode = 'up';
  jwksC.headers = {};
  jwksC.keys = [await publicJwk(rsaC.publicKey, 'c1', 'RS256')];
});
afterEach(async () => {
  vi.useRealTimers();
  for (const app of apps.splice(0)) await app.close();
  for (const resolver of resolvers.splice(0)) resolver.dispose();
});

async function app(jwt: unknown[], options: Partial<JwtSessionOptions> = {}): Promise<TestApp> {
  const resolver = createSessionResolver({ jwt, adminSecret: ADMIN, logger: silentLogger, ...options });
  resolvers.push(resolver);
  await resolver.ready?.();
  const started = await startApp({ resolver });
  apps.push(started);
  return started;
}

async function resolverOf(jwt: unknown, options: Partial<JwtSessionOptions> = {}): Promise<SessionResolver> {
  const resolver = createSessionResolver({ jwt, adminSecret: ADMIN, logger: silentLogger, ...options } as JwtSessionOptions);
  resolvers.push(resolver);
  await resolver.ready?.();
  return resolver;
}

describe('two issuers: HS256 and a JWKS with RS256', () => {
  it('verifies a token of each with its own keys and claims settings', async () => {
    const server = await app([entryA, entryB(jwksB)]);
    expect(sessionOf(await server.query(bearer(await tokenA())))).toMatchObject({
      role: 'user',
      variables: { 'x-svc-role': 'user', 'x-svc-user-id': 'a-1' },
    });
    expect(sessionOf(await server.query({ ...bearer(await tokenB()), 'x-svc-role': 'writer' }))).toMatchObject({
      role: 'writer',
      variables: { 'x-svc-role': 'writer', 'x-svc-user-id': 'b-7' },
    });
    // B reads its roles through claims_map: claims in A's namespace mean nothing to it.
    const bWithNamespace = await sign({ iss: ISS_B, [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } }, rsaB.privateKey, {
      alg: 'RS256',
      kid: 'b1',
    });
    const refused = await server.query(bearer(bWithNamespace));
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(errorBody('jwt-missing-role-claims', 'JWT claim does not contain x-svc-allowed-roles'));
  });

  it('verifies a token only by the entry its iss names', async () => {
    const server = await app([entryA, entryB(jwksB), fallbackEntry]);
    // iss says A, signed with the fallback's secret: A's key refuses it and nothing else is tried.
    const forged = await sign(
      { iss: ISS_A, [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } },
      secretBytes(SECRET_FALLBACK),
      { alg: 'HS256' },
    );
    const answer = await server.query(bearer(forged));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(INVALID_SIGNATURE);
    // iss says B, signed by A's HS256 secret: B's JWKS holds no HMAC key.
    const aKeyForB = await sign({ iss: ISS_B, roles: ['reader'] }, secretBytes(SECRET_A), { alg: 'HS256' });
    expect((await server.query(bearer(aKeyForB))).body).toEqual(errorBody('invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys'));
  });

  it('refuses a token of an unknown issuer, or without iss, when no entry lacks an issuer', async () => {
    const server = await app([entryA, entryB(jwksB)]);
    for (const token of [await fallbackToken('https://unknown.example'), await fallbackToken(undefined), await tokenA({ iss: 42 })]) {
      const answer = await server.query(bearer(token));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(NOT_IN_ISSUER);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });

  it('gives tokens of an unknown issuer, or without iss, to the entry without issuer', async () => {
    const server = await app([entryA, fallbackEntry, entryB(jwksB)]);
    expect(sessionOf(await server.query(bearer(await fallbackToken('https://unknown.example'))))).toMatchObject({ role: 'guest' });
    expect(sessionOf(await server.query(bearer(await fallbackToken(undefined))))).toMatchObject({ role: 'guest' });
    // The named issuers keep working next to it.
    expect(sessionOf(await server.query(bearer(await tokenA())))).toMatchObject({ role: 'user' });
    expect(sessionOf(await server.query(bearer(await tokenB())))).toMatchObject({ role: 'reader' });
    // An unknown issuer's token signed with another key is refused by the fallback's key.
    const stranger = await server.query(bearer(await fallbackToken('https://unknown.example', 'z'.repeat(32))));
    expect(stranger.body).toEqual(INVALID_SIGNATURE);
  });

  it('refuses a token of a configured issuer that has no iss claim when it is a list (no fallback)', async () => {
    // One configuration on its own accepts a token without iss; in a list, iss chooses the entry.
    const single = await resolverOf(entryA);
    const noIss = await sign({ [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' } }, secretBytes(SECRET_A), { alg: 'HS256' });
    expect((await single.resolve(bearer(noIss))).role).toBe('user');
    const list = await resolverOf([entryA]);
    await expect(list.resolve(bearer(noIss))).rejects.toMatchObject({ status: 401, message: 'Could not verify JWT: JWTNotInIssuer' });
    expect((await list.resolve(bearer(await tokenA()))).role).toBe('user');
  });

  it('refuses a malformed token before choosing an entry, as one configuration does', async () => {
    const server = await app([entryA, fallbackEntry]);
    const notJson = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('not json').toString('base64url')}.c2ln`;
    const answer = await server.query(bearer(notJson));
    expect(answer.status).toBe(401);
    expect((answer.body as { errors: [{ message: string }] }).errors[0].message).toBe(
      'Could not verify JWT: JWSError CompactDecodeError payload is not JSON',
    );
  });

  it('keeps the allowed_skew of the entry that verified each token', async () => {
    const resolver = await resolverOf([entryA, entryB(jwksB)]);
    expect(resolver.allowedSkew).toBe(30);
    expect(resolver.allowedSkewOf?.(await resolver.resolve(bearer(await tokenA())))).toBe(0);
    expect(resolver.allowedSkewOf?.(await resolver.resolve(bearer(await tokenB())))).toBe(30);
    // B's 30 s of leeway accept a token expired 10 s ago; A's none refuse one.
    const lateB = await sign({ iss: ISS_B, sub: 'b-7', roles: ['reader'] }, rsaB.privateKey, { alg: 'RS256', kid: 'b1', expiresIn: -10 });
    expect((await resolver.resolve(bearer(lateB))).role).toBe('reader');
    await expect(resolver.resolve(bearer(await tokenA({}, -10)))).rejects.toMatchObject({ message: 'Could not verify JWT: JWTExpired' });
  });

  it('accepts the list as JSON text', async () => {
    const resolver = await resolverOf(JSON.stringify([entryA, entryB(jwksB)]));
    expect((await resolver.resolve(bearer(await tokenB()))).role).toBe('reader');
  });
});

describe('configuration errors', () => {
  it('refuses an issuer configured twice, naming it', () => {
    const attempt = () => createSessionResolver({ jwt: [entryA, { type: 'HS256', key: 'b'.repeat(32), issuer: ISS_A }], adminSecret: ADMIN });
    expect(attempt).toThrowError(JwtConfigError);
    expect(attempt).toThrowError(new JwtConfigError(`issuer "${ISS_A}" is configured twice`));
    expect(() => parseJwtConfigs([entryA, { jwk_url: 'http://127.0.0.1:1/jwks', issuer: ISS_A }])).toThrowError(
      `issuer "${ISS_A}" is configured twice`,
    );
  });

  it('refuses two entries without issuer', () => {
    expect(() => parseJwtConfigs([fallbackEntry, entryA, { type: 'HS256', key: 'c'.repeat(32) }])).toThrowError(
      new JwtConfigError('an entry without "issuer" is configured twice (at most one entry may have no issuer)'),
    );
  });

  it('names the position of a bad entry, and refuses an empty list', () => {
    expect(() => parseJwtConfigs([entryA, { type: 'HS256', key: 'short', issuer: ISS_B }])).toThrowError(
      /^\[1\]: key: HS256 key must be at least 32 characters/,
    );
    expect(() => parseJwtConfigs([entryA, { ...entryA, issuer: ISS_B, audiance: 'x' }])).toThrowError('[1]: unknown field "audiance"');
    expect(() => parseJwtConfigs([])).toThrowError('expected at least one JWT configuration, got an empty list');
    expect(() => parseJwtConfigs('{"type":"HS256"}')).toThrowError('expected a JSON array of JWT configurations, got an object');
    expect(() => parseJwtConfigs('[')).toThrowError(/^invalid JSON: /);
  });
});

describe('token location per entry', () => {
  it('reads each entry’s token from its own location, the first location in list order that holds one', async () => {
    const server = await app([{ ...entryA, header: { type: 'Cookie', name: 'session' } }, entryB(jwksB)]);
    const a = await tokenA();
    const b = await tokenB();
    expect(sessionOf(await server.query({ cookie: `x=1; session=${a}` }))).toMatchObject({ role: 'user' });
    expect(sessionOf(await server.query(bearer(b)))).toMatchObject({ role: 'reader' });
    // Both present: the cookie comes first in the list.
    expect(sessionOf(await server.query({ cookie: `session=${a}`, ...bearer(b) }))).toMatchObject({ role: 'user' });
    // A token is never taken from where its entry does not look.
    for (const headers of [{ cookie: `session=${b}` }, bearer(a)]) {
      const answer = await server.query(headers);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(NOT_IN_ISSUER);
    }
    // A malformed Authorization header is still a 400 when no earlier location holds a token.
    const malformed = await server.query({ authorization: 'Basic abc' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual(errorBody('invalid-headers', 'Malformed Authorization header'));
    // Neither location: no token, so the admin secret decides.
    expect(sessionOf(await server.query({ 'x-svc-admin-secret': ADMIN }))).toMatchObject({ role: 'admin', isAdmin: true });
  });

  it('reads a custom header for one entry and Authorization for another', async () => {
    const server = await app([entryA, { ...entryB(jwksB), header: { type: 'CustomHeader', name: 'X-B-Token' } }]);
    expect(sessionOf(await server.query({ 'x-b-token': await tokenB() }))).toMatchObject({ role: 'reader' });
    expect(sessionOf(await server.query(bearer(await tokenA())))).toMatchObject({ role: 'user' });
  });
});

describe('JWKS per entry', () => {
  function fakeTime(): void {
    // Only timers and Date: I/O stays real so the JWKS servers can answer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  }
  async function advance(ms: number): Promise<void> {
    await vi.advanceTimersByTimeAsync(ms);
    await settle(5);
  }

  it('rotates the keys of one issuer and leaves the other untouched', async () => {
    fakeTime();
    jwksB.headers = { 'cache-control': 'max-age=60' };
    jwksC.headers = { 'cache-control': 'max-age=3600' };
    const before = { b: jwksB.hits, c: jwksC.hits };
    const resolver = await resolverOf([entryB(jwksB), { jwk_url: jwksC.url, issuer: ISS_C }]);
    expect({ b: jwksB.hits - before.b, c: jwksC.hits - before.c }).toEqual({ b: 1, c: 1 });
    const oldB = await tokenB();
    const c = await tokenC();
    expect((await resolver.resolve(bearer(oldB))).role).toBe('reader');
    expect((await resolver.resolve(bearer(c))).role).toBe('c');

    // B rotates: the old key is withdrawn, a new one published; B refetches on its own schedule.
    jwksB.keys = [await publicJwk(rsaB2.publicKey, 'b2', 'RS256')];
    await advance(60_000);
    await until(() => jwksB.hits - before.b === 2, 'B refetching');
    expect((await resolver.resolve(bearer(await tokenB(rsaB2.privateKey, 'b2')))).role).toBe('reader');
    // B's cached verification of the withdrawn key is gone; C's keys, fetches and tokens are as before.
    await expect(resolver.resolve(bearer(oldB))).rejects.toMatchObject({ message: 'Could not verify JWT: JWSError NoUsableKeys' });
    expect((await resolver.resolve(bearer(c))).role).toBe('c');
    expect(jwksC.hits - before.c).toBe(1);

    // An unknown kid refetches only its issuer's key set.
    await advance(10_000);
    jwksB.keys = [await publicJwk(rsaB.publicKey, 'b3', 'RS256'), await publicJwk(rsaB2.publicKey, 'b2', 'RS256')];
    expect((await resolver.resolve(bearer(await tokenB(rsaB.privateKey, 'b3')))).role).toBe('reader');
    expect({ b: jwksB.hits - before.b, c: jwksC.hits - before.c }).toEqual({ b: 3, c: 1 });
  });

  it('keeps serving one issuer while the other’s JWKS is down', async () => {
    jwksC.mode = 'down';
    const resolver = await resolverOf([entryB(jwksB), { jwk_url: jwksC.url, issuer: ISS_C }, entryA]);
    expect((await resolver.resolve(bearer(await tokenB()))).role).toBe('reader');
    expect((await resolver.resolve(bearer(await tokenA()))).role).toBe('user');
    await expect(resolver.resolve(bearer(await tokenC()))).rejects.toMatchObject({ message: 'Could not verify JWT: JWSError NoUsableKeys' });
  });
});

describe('graphql-ws with two issuers', () => {
  it('authenticates connections of either issuer and refuses an unknown one', async () => {
    const resolver = await resolverOf([entryA, entryB(jwksB)]);
    const server = await startWsApp(resolver);
    apps.push(server);
    for (const [token, role] of [
      [await tokenA(), 'user'],
      [await tokenB(), 'reader'],
    ] as const) {
      const { client, connected } = connect(server.wsUrl, bearer(token));
      await connected;
      const result = (await first(client, '{ session }')) as { data: { session: string } };
      expect(JSON.parse(result.data.session)).toMatchObject({ role });
      await client.dispose();
    }
    const { closed } = connect(server.wsUrl, bearer(await fallbackToken('https://unknown.example')));
    expect(await closed).toEqual({ code: 4403, reason: 'Forbidden: Could not verify JWT: JWTNotInIssuer' });
  });
});

describe('hooks', () => {
  it('reports every token verification, once per request or connection, cache hits included', async () => {
    const results: string[] = [];
    const fetches: string[] = [];
    const resolver = await resolverOf([entryA, entryB(jwksB)], {
      hooks: { onJwtVerification: (result) => results.push(result), onJwksFetch: (outcome) => fetches.push(outcome) },
    });
    expect(fetches).toEqual(['ok']);
    const a = await tokenA();
    await resolver.resolve(bearer(a));
    await resolver.resolve(bearer(a));
    await resolver.resolve({ ...bearer(await tokenB()), 'x-svc-role': 'admin' }).catch((error: unknown) => {
      // Verified, then refused for its role: the verification itself was ok.
      expect(error).toBeInstanceOf(SessionError);
      expect((error as SessionError).status).toBe(403);
    });
    const refusals = [
      await fallbackToken('https://unknown.example'),
      await tokenA({}, -10),
      `${a}x`,
      await sign({ iss: ISS_B, roles: ['r'] }, rsaB2.privateKey, { alg: 'RS256', kid: 'nope' }),
      await sign({ iss: ISS_A, [NAMESPACE]: { 'x-svc-default-role': 'user' } }, secretBytes(SECRET_A), { alg: 'HS256' }),
      await sign({ iss: ISS_A }, secretBytes(SECRET_A), { alg: 'HS256' }),
      'abc',
    ];
    for (const token of refusals) await expect(resolver.resolve(bearer(token))).rejects.toBeInstanceOf(SessionError);
    // No token: nothing to report.
    await resolver.resolve({ 'x-svc-admin-secret': ADMIN });
    await expect(resolver.resolve({})).rejects.toBeInstanceOf(SessionError);
    expect(results).toEqual([
      'ok',
      'ok',
      'ok',
      'JWTNotInIssuer',
      'JWTExpired',
      'JWSInvalidSignature',
      'NoUsableKeys',
      'jwt-missing-role-claims',
      'jwt-invalid-claims',
      'CompactDecodeError',
    ]);
    // The unknown kid came within 10 s of the first fetch: no refetch, nothing more to report.
    expect(fetches).toEqual(['ok']);

    // graphql-ws: one report per connection, however many operations it runs.
    const server = await startWsApp(resolver);
    apps.push(server);
    results.length = 0;
    const { client, connected } = connect(server.wsUrl, bearer(await tokenB()));
    await connected;
    await first(client, '{ session }');
    await first(client, '{ session }');
    await client.dispose();
    expect(results).toEqual(['ok']);
  });

  it('reports failed JWKS fetches, and a hook that throws does not fail the request', async () => {
    jwksB.mode = 'down';
    const fetches: string[] = [];
    const warnings: string[] = [];
    const resolver = await resolverOf([entryB(jwksB), entryA], {
      logger: { ...silentLogger, warn: (message: unknown) => warnings.push(String(message)) },
      hooks: {
        onJwksFetch: (outcome) => fetches.push(outcome),
        onJwtVerification: () => {
          throw new Error('metrics are down');
        },
      },
    });
    expect(fetches).toEqual(['error']);
    expect((await resolver.resolve(bearer(await tokenA()))).role).toBe('user');
    expect(warnings).toContain('jwt-session: hooks.onJwtVerification threw: metrics are down');
  });

  it('refuses a hook that is not a function', () => {
    expect(() => createSessionResolver({ jwt: entryA, adminSecret: ADMIN, hooks: { onJwksFetch: 'yes' as never } })).toThrowError(
      'jwt-session: "hooks.onJwksFetch" must be a function',
    );
  });
});

describe('the jwks.fetch span', () => {
  interface Recorded {
    name: string;
    attributes: Attributes;
    status: SpanStatus;
    ended: boolean;
    tracer: string;
  }
  const recorded: Recorded[] = [];

  /** A tracer provider that records spans in memory: what an SDK registered by the app would see. */
  function recordingProvider(): TracerProvider {
    let next = 1;
    const makeSpan = (tracer: string, name: string, options: SpanOptions = {}): Span => {
      const entry: Recorded = { name, attributes: { ...options.attributes }, status: { code: 0 }, ended: false, tracer };
      recorded.push(entry);
      const spanContext: SpanContext = { traceId: 'a'.repeat(32), spanId: (next++).toString(16).padStart(16, '0'), traceFlags: 1 };
      const span: Span = {
        spanContext: () => spanContext,
        setAttribute: (key, value) => {
          if (value !== undefined) entry.attributes[key] = value;
          return span;
        },
        setAttributes: (attributes) => {
          Object.assign(entry.attributes, attributes);
          return span;
        },
        addEvent: () => span,
        addLink: () => span,
        addLinks: () => span,
        setStatus: (status) => {
          entry.status = status;
          return span;
        },
        updateName: (newName) => {
          entry.name = newName;
          return span;
        },
        end: () => {
          entry.ended = true;
        },
        isRecording: () => !entry.ended,
        recordException: () => undefined,
      };
      return span;
    };
    return {
      getTracer(name: string): Tracer {
        return {
          startSpan: (spanName: string, options?: SpanOptions) => makeSpan(name, spanName, options),
          startActiveSpan: ((spanName: string, ...rest: unknown[]) => {
            const fn = rest[rest.length - 1] as (span: Span) => unknown;
            const options = (rest.length > 1 ? rest[0] : {}) as SpanOptions;
            const span = makeSpan(name, spanName, options);
            const ctx: Context = trace.setSpan(otelContext.active(), span);
            return otelContext.with(ctx, () => fn(span));
          }) as Tracer['startActiveSpan'],
        };
      },
    };
  }

  beforeAll(() => {
    trace.setGlobalTracerProvider(recordingProvider());
  });
  afterAll(() => {
    trace.disable();
  });

  it('wraps each fetch, without the query in url.full, with an error status on failure', async () => {
    recorded.length = 0;
    const url = new URL(jwksB.url);
    url.search = '?token=s3cret';
    url.hash = '#keys';
    const resolver = await resolverOf([{ ...entryB(jwksB), jwk_url: url.href }]);
    expect((await resolver.resolve(bearer(await tokenB()))).role).toBe('reader');
    resolver.dispose();
    jwksB.mode = 'down';
    await resolverOf([{ ...entryB(jwksB), jwk_url: url.href }]);
    const shown = `http://${url.host}${url.pathname}`;
    expect(recorded).toEqual([
      { name: 'jwks.fetch', tracer: '@svc-graphql/jwt-session', attributes: { 'url.full': shown }, status: { code: 0 }, ended: true },
      {
        name: 'jwks.fetch',
        tracer: '@svc-graphql/jwt-session',
        attributes: { 'url.full': shown },
        status: { code: 2, message: 'HTTP 503' },
        ended: true,
      },
    ]);
  });
});
