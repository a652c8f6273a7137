import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionResolver, useJwtSession, type Session } from '../src/index.js';
import { b64, NAMESPACE, secretBytes, sign } from './utils/keys.js';
import { bearer, errorBody, sessionOf, silentLogger, startApp, type TestApp } from './utils/server.js';

const SECRET = 'p'.repeat(32);
const ADMIN = 'the-admin-secret';
const jwt = { type: 'HS256', key: SECRET };
const roles = { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user', 'x-svc-user-id': '42' };

const apps: TestApp[] = [];
async function app(options: Parameters<typeof startApp>[0]): Promise<TestApp> {
  const started = await startApp(options);
  apps.push(started);
  return started;
}
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

let userToken: string;
beforeAll(async () => {
  userToken = await sign({ [NAMESPACE]: roles }, secretBytes(SECRET), { alg: 'HS256' });
});

const MISSING = errorBody('invalid-headers', "Missing 'Authorization' or 'Cookie' header in JWT authentication mode");
const WRONG_SECRET = errorBody('access-denied', 'invalid x-svc-admin-secret');
const NO_SECRET = errorBody('access-denied', 'x-svc-admin-secret required, but not found');

describe('who a request is', () => {
  it('without an admin secret every request is admin; x-svc-role picks the role; variables come from x-svc-* headers', async () => {
    const server = await app({});
    expect(sessionOf(await server.query())).toEqual({ role: 'admin', isAdmin: true, variables: { 'x-svc-role': 'admin' } });
    expect(sessionOf(await server.query({ 'X-Svc-Role': 'user', 'X-Svc-User-Id': '7', 'x-other': 'no' }))).toEqual({
      role: 'user',
      isAdmin: false,
      variables: { 'x-svc-role': 'user', 'x-svc-user-id': '7' },
    });
  });

  describe('admin secret, no JWT', () => {
    let server: TestApp;
    let withRole: TestApp;
    beforeAll(async () => {
      server = await app({ adminSecret: ADMIN });
      withRole = await app({ adminSecret: ADMIN, unauthorizedRole: 'anonymous' });
    });

    it('a valid secret is admin, and the secret is no session variable', async () => {
      expect(sessionOf(await server.query({ 'x-svc-admin-secret': ADMIN, 'x-svc-user-id': '1' }))).toEqual({
        role: 'admin',
        isAdmin: true,
        variables: { 'x-svc-role': 'admin', 'x-svc-user-id': '1' },
      });
    });

    it('a wrong secret is 401 access-denied "invalid x-svc-admin-secret"', async () => {
      const answer = await server.query({ 'x-svc-admin-secret': `${ADMIN}x` });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(WRONG_SECRET);
      expect(answer.headers.get('www-authenticate')).toBeNull();
    });

    it('no secret is 401 access-denied "x-svc-admin-secret required, but not found"', async () => {
      const answer = await server.query();
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(NO_SECRET);
      expect(answer.headers.get('www-authenticate')).toBeNull();
    });

    it('a Bearer token it does not read gets the same 401s, with the Bearer challenge (a token was presented)', async () => {
      const bearer = { authorization: 'Bearer some.token.here' };
      const none = await server.query(bearer);
      expect(none.status).toBe(401);
      expect(none.body).toEqual(NO_SECRET);
      expect(none.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      const wrong = await server.query({ ...bearer, 'x-svc-admin-secret': `${ADMIN}x` });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual(WRONG_SECRET);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      // Another scheme is no Bearer token.
      const basic = await server.query({ authorization: 'Basic dXNlcjpwYXNz' });
      expect(basic.status).toBe(401);
      expect(basic.headers.get('www-authenticate')).toBeNull();
    });

    it('with an unauthorized role, a wrong or missing secret gets that role, which it cannot change', async () => {
      for (const headers of [{}, { 'x-svc-admin-secret': 'wrong' }]) {
        expect(sessionOf(await withRole.query({ ...headers, 'x-svc-role': 'admin', 'x-svc-device': 'd1' }))).toEqual({
          role: 'anonymous',
          isAdmin: false,
          variables: { 'x-svc-role': 'anonymous', 'x-svc-device': 'd1' },
        });
      }
    });
  });

  describe('admin secret and JWT', () => {
    let server: TestApp;
    let withRole: TestApp;
    beforeAll(async () => {
      server = await app({ adminSecret: ADMIN, jwt });
      withRole = await app({ adminSecret: ADMIN, jwt, unauthorizedRole: 'anonymous' });
    });

    it('a token is enforced even when a valid admin secret is sent too', async () => {
      expect(sessionOf(await server.query({ ...bearer(userToken), 'x-svc-admin-secret': ADMIN }))).toMatchObject({ role: 'user', isAdmin: false });
      const answer = await server.query({ ...bearer(`${userToken}x`), 'x-svc-admin-secret': ADMIN });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(errorBody('invalid-jwt', 'Could not verify JWT: JWSError JWSInvalidSignature'));
    });

    it('no token and a valid secret is admin', async () => {
      expect(sessionOf(await server.query({ 'x-svc-admin-secret': ADMIN, 'x-svc-role': 'editor' }))).toEqual({
        role: 'editor',
        isAdmin: false,
        variables: { 'x-svc-role': 'editor' },
      });
    });

    it('no token and a wrong secret is 401 "invalid x-svc-admin-secret", unauthorized role or not', async () => {
      for (const target of [server, withRole]) {
        const answer = await target.query({ 'x-svc-admin-secret': 'nope' });
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual(WRONG_SECRET);
      }
    });

    it('neither is 401 invalid-headers, without a WWW-Authenticate challenge', async () => {
      const answer = await server.query();
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(MISSING);
      expect(answer.headers.get('www-authenticate')).toBeNull();
      expect(answer.headers.get('content-type')).toBe('application/json');
    });

    it('neither gets the unauthorized role when one is configured', async () => {
      expect(sessionOf(await withRole.query({ 'x-svc-role': 'user' }))).toEqual({
        role: 'anonymous',
        isAdmin: false,
        variables: { 'x-svc-role': 'anonymous' },
      });
    });
  });

  it('JWT without an admin secret (an embedding app) enforces the token and has no admin path', async () => {
    const server = await app({ jwt });
    expect(sessionOf(await server.query(bearer(userToken)))).toMatchObject({ role: 'user' });
    const answer = await server.query({ 'x-svc-admin-secret': 'anything' });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(MISSING);
  });
});

describe('role selection', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await app({ adminSecret: ADMIN, jwt });
  });

  it('uses x-svc-role when it is an allowed role, else the default role', async () => {
    expect(sessionOf(await server.query({ ...bearer(userToken), 'x-svc-role': 'editor' }))).toMatchObject({
      role: 'editor',
      variables: { 'x-svc-role': 'editor', 'x-svc-user-id': '42' },
    });
    expect(sessionOf(await server.query({ ...bearer(userToken), 'x-svc-role': '' }))).toMatchObject({ role: 'user' });
  });

  it('ignores x-svc-* request headers other than the role for token sessions', async () => {
    expect(sessionOf(await server.query({ ...bearer(userToken), 'x-svc-user-id': '1' }))).toMatchObject({ variables: { 'x-svc-user-id': '42' } });
  });

  it('answers 403 access-denied for a role that is not allowed', async () => {
    const answer = await server.query({ ...bearer(userToken), 'x-svc-role': 'admin' });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(errorBody('access-denied', 'Your requested role is not in allowed roles'));
  });

  it('answers 403 when the default role is not among the allowed roles', async () => {
    const token = await sign({ [NAMESPACE]: { 'x-svc-allowed-roles': ['a'], 'x-svc-default-role': 'b' } }, secretBytes(SECRET), { alg: 'HS256' });
    const answer = await server.query(bearer(token));
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(errorBody('access-denied', 'Your requested role is not in allowed roles'));
  });

  it('a token whose chosen role is admin is an admin session', async () => {
    const token = await sign({ [NAMESPACE]: { 'x-svc-allowed-roles': ['admin'], 'x-svc-default-role': 'admin' } }, secretBytes(SECRET), { alg: 'HS256' });
    expect(sessionOf(await server.query(bearer(token)))).toMatchObject({ role: 'admin', isAdmin: true });
  });
});

describe('token location', () => {
  it('reads Authorization: Bearer with a case-insensitive scheme', async () => {
    const server = await app({ adminSecret: ADMIN, jwt });
    expect(sessionOf(await server.query({ authorization: `bearer ${userToken}` }))).toMatchObject({ role: 'user' });
    expect(sessionOf(await server.query({ authorization: `BEARER   ${userToken}` }))).toMatchObject({ role: 'user' });
  });

  it('answers 400 invalid-headers for an Authorization header that is not Bearer <token>', async () => {
    const server = await app({ adminSecret: ADMIN, jwt });
    for (const value of ['Basic dXNlcjpwYXNz', 'Bearer', `Bearer ${userToken} extra`, userToken, 'Token abc']) {
      const answer = await server.query({ authorization: value });
      expect(answer.status, value).toBe(400);
      expect(answer.body).toEqual(errorBody('invalid-headers', 'Malformed Authorization header'));
    }
  });

  it('reads a cookie, ignoring Authorization', async () => {
    const server = await app({ adminSecret: ADMIN, jwt: { ...jwt, header: { type: 'Cookie', name: 'svc_jwt' } } });
    expect(sessionOf(await server.query({ cookie: `a=b; svc_jwt=${userToken}; c=d` }))).toMatchObject({ role: 'user' });
    const answer = await server.query({ ...bearer(userToken), cookie: 'a=b' });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(MISSING);
    // A token was presented (where this server does not read one): the 401 carries the challenge.
    expect(answer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    const bad = await server.query({ cookie: `svc_jwt=${userToken}x` });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual(errorBody('invalid-jwt', 'Could not verify JWT: JWSError JWSInvalidSignature'));
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('reads a custom header (name case-insensitive) whose value is exactly the token', async () => {
    const server = await app({ adminSecret: ADMIN, jwt: { ...jwt, header: '{"type":"CustomHeader","name":"X-Auth-Token"}' } });
    expect(sessionOf(await server.query({ 'x-auth-token': userToken }))).toMatchObject({ role: 'user' });
    const answer = await server.query(bearer(userToken));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(MISSING);
  });
});

describe('the plugin', () => {
  it('throws at factory time on bad configuration, naming the field', () => {
    expect(() => useJwtSession({ jwt: { type: 'HS256', key: 'short' } })).toThrowError('key: HS256 key must be at least 32 characters');
    expect(() => createSessionResolver({ jwt: '{"type":"HS256","key":"' + SECRET + '","audiance":"x"}' })).toThrowError('unknown field "audiance"');
    expect(() => useJwtSession({ adminSecret: '' })).toThrowError('jwt-session: "adminSecret" must be a non-empty string');
    expect(() => useJwtSession({ sessionVariablePrefix: 'x svc' })).toThrowError(/"sessionVariablePrefix" must be a header-name prefix/);
  });

  it('fails closed on whatever options object an app hands it', async () => {
    // A misspelt option, an option named but unset (an environment variable missing), options
    // that are not an object: refused when the plugin is made, never an app open to everyone.
    expect(() => useJwtSession({ jwtConfig: jwt } as never)).toThrowError(/"jwtConfig" is not an option/);
    expect(() => createSessionResolver({ adminSecrets: ADMIN } as never)).toThrowError(/"adminSecrets" is not an option/);
    expect(() => useJwtSession({ jwt: process.env['JWT_SESSION_TEST_UNSET'] } as never)).toThrowError(/"jwt" is undefined \(an environment variable that is not set\?\)/);
    expect(() => useJwtSession({ jwt, adminSecret: process.env['JWT_SESSION_TEST_UNSET'] } as never)).toThrowError(/"adminSecret" is undefined/);
    expect(() => useJwtSession('{"type":"HS256"}' as never)).toThrowError('jwt-session: "options" must be an object');
    expect(() => useJwtSession({ unauthorizedRole: 'anonymous' })).toThrowError(/"unauthorizedRole" needs "adminSecret" or "jwt"/);
    expect(() => useJwtSession({ adminSecret: ADMIN, unauthorizedRole: 'Admin' })).toThrowError(/"unauthorizedRole" cannot be "admin"/);
    expect(() => useJwtSession({ adminSecret: ADMIN, logger: {} as never })).toThrowError(/"logger" must have debug, info, warn and error functions/);
    expect(() => useJwtSession({ adminSecret: ADMIN, cache: 'yes' as never })).toThrowError(/"cache" must be false or an object/);
    expect(() => useJwtSession({ sessionVariablePrefix: 5 as never })).toThrowError('jwt-session: "sessionVariablePrefix" must be a string, got number');
    expect(() => useJwtSession({ resolver: {} as never })).toThrowError(/"resolver" must be a resolver made by createSessionResolver/);
    expect(() => useJwtSession({ resolver: createSessionResolver({ adminSecret: ADMIN }), jwt } as never)).toThrowError(/"resolver" is given with "jwt"/);

    // Options held by a class (getters), a prototype or a Proxy are read as written.
    class Settings {
      get jwt() {
        return jwt;
      }
    }
    const schema = createSchema<{ session: Session }>({
      typeDefs: 'type Query { role: String }',
      resolvers: { Query: { role: (_: unknown, __: unknown, context: { session: Session }) => context.session.role } },
    });
    const ask = (plugin: ReturnType<typeof useJwtSession>) =>
      createYoga({ schema, logging: false, plugins: [plugin] }).fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ role }' }),
      });
    const proxy = new Proxy({}, { get: (_, key) => (key === 'jwt' ? jwt : undefined), has: (_, key) => key === 'jwt' });
    // A Proxy that answers `get` but not `has`: read by name all the same.
    const getOnly = new Proxy({}, { get: (_, key) => ({ jwt, adminSecret: ADMIN } as Record<string | symbol, unknown>)[key] });
    for (const options of [new Settings(), Object.create({ jwt }) as object, proxy, getOnly]) {
      const answer = await ask(useJwtSession(options as never));
      expect({ status: answer.status, body: await answer.json() }).toEqual({ status: 401, body: MISSING });
    }

    // A resolver that answers something that is not a session, or fails, fails the request, masked.
    for (const resolve of [async () => ({ role: 'admin' }), async () => ({ role: 'user', variables: [], isAdmin: false }), async () => {
      throw new Error('db password=hunter2');
    }]) {
      const answer = await ask(useJwtSession({ resolver: { resolve, dispose() {} } as never }));
      expect({ status: answer.status, body: await answer.json() }).toEqual({
        status: 500,
        body: { errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected', path: '$' } }] },
      });
    }
    const hostFailed = await ask(
      useJwtSession({
        adminSecret: ADMIN,
        resolvedSession: () => {
          throw new Error('host detail');
        },
      }),
    );
    expect({ status: hostFailed.status, text: await hostFailed.text() }).toEqual({ status: 500, text: JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected', path: '$' } }] }) });
    expect(() => createSessionResolver(Object.create({ adminSecrets: ADMIN }) as never)).toThrowError(/"adminSecrets" is not an option/);
  });

  it('uses another sessionVariablePrefix for claims, headers and messages', async () => {
    const server = await app({ adminSecret: ADMIN, jwt: { ...jwt, claims_namespace: 'https://hasura.io/jwt/claims' }, sessionVariablePrefix: 'X-Hasura-' });
    const token = await sign(
      { 'https://hasura.io/jwt/claims': { 'x-hasura-allowed-roles': ['user'], 'x-hasura-default-role': 'user', 'x-hasura-user-id': '5' } },
      secretBytes(SECRET),
      { alg: 'HS256' },
    );
    expect(sessionOf(await server.query(bearer(token)))).toMatchObject({ variables: { 'x-hasura-user-id': '5', 'x-hasura-role': 'user' } });
    expect((await server.query({ 'x-hasura-admin-secret': 'no' })).body).toEqual(errorBody('access-denied', 'invalid x-hasura-admin-secret'));
  });

  it("reports through Yoga's logger when given no logger of its own", async () => {
    const warnings: unknown[][] = [];
    const yoga = createYoga({
      schema: createSchema({ typeDefs: 'type Query { a: String }' }),
      logging: { debug() {}, info() {}, warn: (...args: unknown[]) => warnings.push(args), error() {} },
      // Port 1 refuses connections: the first JWKS fetch fails at once.
      plugins: [useJwtSession({ jwt: { jwk_url: 'http://127.0.0.1:1/jwks.json' }, adminSecret: ADMIN })],
    });
    await expect.poll(() => warnings.length).toBeGreaterThan(0);
    expect(String(warnings[0]?.[0])).toMatch(/^jwt-session: fetching http:\/\/127\.0\.0\.1:1\/jwks\.json failed \(.+\); keeping 0 key\(s\), retrying in 10 s$/);
    await yoga.dispose();
  });

  it('leaves requests to other paths to other handlers', async () => {
    const server = await app({ adminSecret: ADMIN, jwt });
    const response = await fetch(server.url.replace('/graphql', '/somewhere-else'), { headers: { accept: 'application/json' } });
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });

  it('keeps a session already in the context (set by the WebSocket layer) and resolves others from their headers', async () => {
    const resolver = createSessionResolver({ adminSecret: ADMIN, jwt, logger: silentLogger });
    const yoga = createYoga({
      schema: createSchema({ typeDefs: 'type Query { a: String }' }),
      plugins: [useJwtSession({ resolver })],
      logging: false,
    });
    const fromSocket: Session = { role: 'user', isAdmin: false, variables: { 'x-svc-role': 'user' } };
    const request = new Request('http://localhost/graphql');
    const kept = (await yoga.getEnveloped({ request, session: fromSocket }).contextFactory()) as { session?: Session };
    expect(kept.session).toBe(fromSocket);

    const resolved = (await yoga.getEnveloped({ request: new Request('http://localhost/graphql', { headers: { 'x-svc-admin-secret': ADMIN } }) }).contextFactory()) as {
      session?: Session;
    };
    expect(resolved.session).toEqual({ role: 'admin', isAdmin: true, variables: { 'x-svc-role': 'admin' } });

    await expect(yoga.getEnveloped({ request: new Request('http://localhost/graphql') }).contextFactory()).rejects.toMatchObject({
      message: "Missing 'Authorization' or 'Cookie' header in JWT authentication mode",
      extensions: { code: 'invalid-headers', path: '$', http: { status: 401 } },
    });
    await yoga.dispose();
    resolver.dispose();
  });
});

describe('garbage', () => {
  // A seeded generator, so a failure can be replayed.
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const printable = (length: number): string =>
    Array.from({ length }, () => String.fromCharCode(0x21 + Math.floor(random() * 94))).join('');
  const segment = (): string => Buffer.from(printable(Math.floor(random() * 40))).toString('base64url');
  const jsonish = (): unknown =>
    pick([null, 1, 'x', [], {}, { alg: pick(['HS256', 'none', 'RS256', 'ES256', 'EdDSA', 1, null]) }, { alg: 'HS256', kid: printable(5), crit: [] }, roles]);

  function garbageHeaders(): Record<string, string> {
    switch (Math.floor(random() * 7)) {
      case 0:
        return { authorization: printable(1 + Math.floor(random() * 200)) };
      case 1:
        return { authorization: `Bearer ${Array.from({ length: 1 + Math.floor(random() * 5) }, segment).join('.')}` };
      case 2:
        return { authorization: `Bearer ${b64(jsonish())}.${b64(jsonish())}.${segment()}` };
      case 3:
        return { authorization: `Bearer ${userToken.slice(0, Math.floor(random() * userToken.length))}${printable(3)}` };
      case 4:
        return { 'x-svc-admin-secret': printable(1 + Math.floor(random() * 64)), 'x-svc-role': printable(8) };
      case 5:
        return { cookie: `${printable(5)}=${printable(30)}`, authorization: `Bearer ${printable(40).replace(/\s/g, '')}` };
      default:
        return { authorization: `Bearer ${userToken}`, 'x-svc-role': printable(1 + Math.floor(random() * 30)) };
    }
  }

  it('answers a few hundred garbage headers with a 4xx JSON error every time', async () => {
    const server = await app({ adminSecret: ADMIN, jwt });
    for (let batch = 0; batch < 15; batch++) {
      const cases = Array.from({ length: 20 }, garbageHeaders);
      const answers = await Promise.all(cases.map((headers) => server.query(headers)));
      answers.forEach((answer, i) => {
        const context = `${JSON.stringify(cases[i])} -> ${answer.status} ${answer.text}`;
        expect(answer.status, context).toBeGreaterThanOrEqual(400);
        expect(answer.status, context).toBeLessThan(500);
        expect(answer.headers.get('content-type'), context).toBe('application/json');
        const error = (answer.body as { errors?: { message?: unknown; extensions?: { code?: unknown; path?: unknown } }[] } | undefined)?.errors?.[0];
        expect(typeof error?.message, context).toBe('string');
        expect(typeof error?.extensions?.code, context).toBe('string');
        expect(error?.extensions?.path, context).toBe('$');
      });
    }
  });
});
