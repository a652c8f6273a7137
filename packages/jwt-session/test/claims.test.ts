import { afterAll, describe, expect, it } from 'vitest';
import { NAMESPACE, secretBytes, sign, signText } from './utils/keys.js';
import { bearer, errorBody, sessionOf, startApp, type TestApp } from './utils/server.js';

const SECRET = 'c'.repeat(32);
const apps: TestApp[] = [];

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function app(jwt: Record<string, unknown> = {}): Promise<TestApp> {
  const started = await startApp({ jwt: { type: 'HS256', key: SECRET, ...jwt }, adminSecret: 'admin-secret' });
  apps.push(started);
  return started;
}

function token(payload: Record<string, unknown>): Promise<string> {
  return sign(payload, secretBytes(SECRET), { alg: 'HS256' });
}

const roles = { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user' };

async function expectError(server: TestApp, payload: Record<string, unknown>, code: string, message: string | RegExp): Promise<void> {
  const answer = await server.query(bearer(await token(payload)));
  expect(answer.status).toBe(401);
  expect(answer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  if (typeof message === 'string') {
    expect(answer.body).toEqual(errorBody(code, message));
  } else {
    const error = (answer.body as { errors: { message: string; extensions: unknown }[] }).errors[0];
    expect(error?.extensions).toEqual({ code, path: '$' });
    expect(error?.message).toMatch(message);
  }
}

describe('claims', () => {
  it('reads the default namespace, lower-cases names and keeps only x-svc- claims', async () => {
    const server = await app();
    const session = sessionOf(
      await server.query(
        bearer(await token({ sub: 'u', other: 'x', [NAMESPACE]: { ...roles, 'X-Svc-User-Id': 'u1', 'x-svc-count': 3, 'x-svc-flag': true, plain: 'ignored' } })),
      ),
    );
    expect(session).toEqual({
      role: 'user',
      isAdmin: false,
      variables: { 'x-svc-user-id': 'u1', 'x-svc-count': '3', 'x-svc-flag': 'true', 'x-svc-role': 'user' },
      expiresAt: expect.any(String),
    });
  });

  it('sets expiresAt from exp', async () => {
    const server = await app();
    const exp = Math.floor(Date.now() / 1000) + 600;
    const answer = await server.query(bearer(await sign({ [NAMESPACE]: roles }, secretBytes(SECRET), { alg: 'HS256', expiresIn: 600 })));
    expect(sessionOf(answer)['expiresAt']).toBe(new Date(exp * 1000).toISOString());
  });

  it('reads a custom claims_namespace', async () => {
    const server = await app({ claims_namespace: 'claims' });
    expect(sessionOf(await server.query(bearer(await token({ claims: roles }))))).toMatchObject({ role: 'user' });
    await expectError(server, { [NAMESPACE]: roles }, 'jwt-invalid-claims', "claims key: 'claims' not found");
  });

  it('reads claims at the payload root with claims_namespace_path "$"', async () => {
    const server = await app({ claims_namespace_path: '$' });
    expect(sessionOf(await server.query(bearer(await token({ ...roles, 'x-svc-user-id': '9' }))))).toMatchObject({
      variables: { 'x-svc-user-id': '9', 'x-svc-role': 'user' },
    });
  });

  it('reads claims at "$.a.b" and reports a missing path', async () => {
    const server = await app({ claims_namespace_path: '$.a.b' });
    expect(sessionOf(await server.query(bearer(await token({ a: { b: roles } }))))).toMatchObject({ role: 'user' });
    await expectError(server, { a: {} }, 'jwt-invalid-claims', "claims not found at claims_namespace_path: '$.a.b'");
  });

  it("reads claims at \"$['a%']\" (a key that is no identifier)", async () => {
    const server = await app({ claims_namespace_path: "$['a%']" });
    expect(sessionOf(await server.query(bearer(await token({ 'a%': roles }))))).toMatchObject({ role: 'user' });
  });

  it('reads stringified JSON claims and rejects non-strings and non-JSON text', async () => {
    const server = await app({ claims_format: 'stringified_json' });
    expect(sessionOf(await server.query(bearer(await token({ [NAMESPACE]: JSON.stringify(roles) }))))).toMatchObject({ role: 'user' });
    await expectError(server, { [NAMESPACE]: roles }, 'jwt-invalid-claims', 'expecting a string when claims_format is stringified_json');
    await expectError(server, { [NAMESPACE]: '{nope' }, 'jwt-invalid-claims', new RegExp(`claims key: '${NAMESPACE}'`));
  });

  it('rejects a json-format namespace value that is not an object', async () => {
    const server = await app();
    await expectError(server, { [NAMESPACE]: 'text' }, 'jwt-invalid-claims', 'expecting a json object when claims_format is json');
    await expectError(server, { [NAMESPACE]: [roles] }, 'jwt-invalid-claims', 'expecting a json object when claims_format is json');
  });

  it('rejects a missing namespace with the namespace named', async () => {
    await expectError(await app(), { roles }, 'jwt-invalid-claims', `claims key: '${NAMESPACE}' not found`);
  });

  it('requires the allowed roles and default role claims', async () => {
    const server = await app();
    await expectError(server, { [NAMESPACE]: { 'x-svc-default-role': 'user' } }, 'jwt-missing-role-claims', 'JWT claim does not contain x-svc-allowed-roles');
    await expectError(server, { [NAMESPACE]: { 'x-svc-allowed-roles': ['user'] } }, 'jwt-missing-role-claims', 'JWT claim does not contain x-svc-default-role');
  });

  it('rejects allowed roles that are not a list of strings', async () => {
    const server = await app();
    for (const value of ['user', [1], null, { a: 1 }]) {
      await expectError(
        server,
        { [NAMESPACE]: { 'x-svc-allowed-roles': value, 'x-svc-default-role': 'user' } },
        'jwt-invalid-claims',
        /^invalid x-svc-allowed-roles; should be a list of roles/,
      );
    }
  });

  it('rejects a custom claim that is null, an object or a list, naming it', async () => {
    const server = await app();
    for (const value of [null, { a: 1 }, ['a']]) {
      await expectError(server, { [NAMESPACE]: { ...roles, 'x-svc-org-id': value } }, 'jwt-invalid-claims', /x-svc-org-id/);
    }
  });

  it('rejects a custom claim or default role with control characters, which no header can carry', async () => {
    const server = await app();
    for (const value of ['line\nbreak', 'nul\u0000', 'cr\r']) {
      await expectError(
        server,
        { [NAMESPACE]: { ...roles, 'x-svc-user-id': value } },
        'jwt-invalid-claims',
        'invalid x-svc-user-id: control characters cannot be sent in a header',
      );
    }
    await expectError(
      server,
      { [NAMESPACE]: { 'x-svc-allowed-roles': ['a\nb'], 'x-svc-default-role': 'a\nb' } },
      'jwt-invalid-claims',
      'invalid x-svc-default-role; should be a string without control characters',
    );
    const fine = await server.query(bearer(await token({ [NAMESPACE]: { ...roles, 'x-svc-user-id': 'tab\tand 名前' } })));
    expect(fine.status).toBe(200);
    // C1 controls too: a remote would read them as bytes of another meaning (0x9b: a terminal's CSI).
    for (const value of ['a\u0085b', 'a\u009bb']) {
      await expectError(
        server,
        { [NAMESPACE]: { ...roles, 'x-svc-org-id': value } },
        'jwt-invalid-claims',
        'invalid x-svc-org-id: control characters cannot be sent in a header',
      );
    }
  });

  it('rejects a claim name no header can have, without writing it as it is', async () => {
    const server = await app();
    for (const name of ['x-svc-a b', 'x-svc-a:b', 'x-svc-a\nERROR forged line', 'x-svc-ü']) {
      await expectError(
        server,
        { [NAMESPACE]: { ...roles, [name]: '1' } },
        'jwt-invalid-claims',
        `invalid claim name ${JSON.stringify(name)}: it cannot be sent as a header name`,
      );
    }
  });

  it('rejects a claim given twice in different cases, and empty role names', async () => {
    const server = await app();
    await expectError(
      server,
      { [NAMESPACE]: { ...roles, 'x-svc-user-id': '1', 'X-SVC-USER-ID': '2' } },
      'jwt-invalid-claims',
      'invalid claims: x-svc-user-id is given twice (claim names are case-insensitive)',
    );
    await expectError(
      server,
      { [NAMESPACE]: { 'x-svc-allowed-roles': [''], 'x-svc-default-role': '' } },
      'jwt-invalid-claims',
      'invalid x-svc-allowed-roles; should be a list of roles: got an empty role name',
    );
    await expectError(
      server,
      { [NAMESPACE]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': '' } },
      'jwt-invalid-claims',
      'invalid x-svc-default-role; should be a non-empty string',
    );
  });

  describe('numbers', () => {
    // Payloads written as JSON text: 12345678901234567890 must reach the server as these digits.
    const ROLES = '"x-svc-allowed-roles":["user"],"x-svc-default-role":"user"';
    const NOT_EXACT = 'invalid x-svc-user-id: the number is not exactly representable; send it as a string';

    async function answer(server: TestApp, payload: string): Promise<Awaited<ReturnType<TestApp['query']>>> {
      return server.query(bearer(await signText(payload, secretBytes(SECRET), 'HS256')));
    }

    async function expectNotExact(server: TestApp, payload: string): Promise<void> {
      const result = await answer(server, payload);
      expect(result.status, payload).toBe(401);
      expect(result.body, payload).toEqual(errorBody('jwt-invalid-claims', NOT_EXACT));
      expect(result.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }

    it('refuses an integer beyond 2^53 or a number beyond the double range, naming the claim, instead of rounding it', async () => {
      const server = await app();
      for (const number of ['12345678901234567890', '-9007199254740993', '9007199254740992', '1e400', '-1e400']) {
        await expectNotExact(server, `{"${NAMESPACE}":{${ROLES},"x-svc-user-id":${number}}}`);
      }
    });

    it('keeps safe integers and fractions as their JSON text', async () => {
      const server = await app();
      for (const [number, text] of [
        ['9007199254740991', '9007199254740991'],
        ['-42', '-42'],
        ['1.5', '1.5'],
        ['0.1', '0.1'],
      ] as const) {
        expect(sessionOf(await answer(server, `{"${NAMESPACE}":{${ROLES},"x-svc-user-id":${number}}}`))).toMatchObject({
          variables: { 'x-svc-user-id': text },
        });
      }
    });

    it('applies the same check at a claims_namespace_path, in stringified JSON claims and through claims_map', async () => {
      await expectNotExact(await app({ claims_namespace_path: '$.a' }), `{"a":{${ROLES},"x-svc-user-id":12345678901234567890}}`);
      await expectNotExact(
        await app({ claims_format: 'stringified_json' }),
        `{"${NAMESPACE}":${JSON.stringify(`{${ROLES},"x-svc-user-id":12345678901234567890}`)}}`,
      );
      const mapped = await app({ claims_map: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': { path: '$.uid' } } });
      await expectNotExact(mapped, '{"uid":12345678901234567890}');
      await expectNotExact(mapped, '{"uid":1e400}');
      expect(sessionOf(await answer(mapped, '{"uid":1.5}'))).toMatchObject({ variables: { 'x-svc-user-id': '1.5' } });
    });
  });

  it('maps claims with claims_map: paths over the whole payload, defaults and literals', async () => {
    const server = await app({
      claims_map: {
        'x-svc-allowed-roles': { path: '$.roles' },
        'x-svc-default-role': 'user',
        'x-svc-user-id': { path: '$.sub' },
        'x-svc-org-id': { path: "$.org['id']", default: 'no-org' },
        'x-svc-tier': 'gold',
      },
      // Ignored when claims_map is set: the map reads the whole payload.
      claims_namespace: 'nowhere',
    });
    expect(sessionOf(await server.query(bearer(await token({ sub: 'u7', roles: ['user'] }))))).toEqual({
      role: 'user',
      isAdmin: false,
      expiresAt: expect.any(String),
      variables: { 'x-svc-user-id': 'u7', 'x-svc-org-id': 'no-org', 'x-svc-tier': 'gold', 'x-svc-role': 'user' },
    });
    expect(sessionOf(await server.query(bearer(await token({ sub: 'u7', roles: ['user'], org: { id: 'o1' } }))))).toMatchObject({
      variables: { 'x-svc-org-id': 'o1' },
    });
    await expectError(server, { roles: ['user'] }, 'jwt-invalid-claims', 'JWT claim from claims_map, x-svc-user-id not found');
  });

  it('answers a role claim missing at its claims_map path like a missing role claim, other variables with the claims_map message', async () => {
    const server = await app({
      claims_map: {
        'x-svc-allowed-roles': { path: '$.roles' },
        'x-svc-default-role': { path: '$.role' },
        'x-svc-user-id': { path: '$.sub' },
      },
    });
    await expectError(server, { role: 'user', sub: 'u1' }, 'jwt-missing-role-claims', 'JWT claim does not contain x-svc-allowed-roles');
    await expectError(server, { roles: ['user'], sub: 'u1' }, 'jwt-missing-role-claims', 'JWT claim does not contain x-svc-default-role');
    await expectError(server, { roles: ['user'], role: 'user' }, 'jwt-invalid-claims', 'JWT claim from claims_map, x-svc-user-id not found');
    // A default stands in for a missing role claim as for any other.
    const withDefault = await app({ claims_map: { 'x-svc-allowed-roles': { path: '$.roles' }, 'x-svc-default-role': { path: '$.role', default: 'user' } } });
    expect(sessionOf(await withDefault.query(bearer(await token({ roles: ['user'] }))))).toMatchObject({ role: 'user' });
  });

  it('takes a literal list of allowed roles from claims_map', async () => {
    const server = await app({ claims_map: { 'x-svc-allowed-roles': ['user', 'guest'], 'x-svc-default-role': { path: '$.role' } } });
    expect(sessionOf(await server.query(bearer(await token({ role: 'guest' }))))).toMatchObject({ role: 'guest' });
  });
});

describe('standard claims', () => {
  it('rejects an expired token, honouring allowed_skew', async () => {
    const strict = await app();
    const lenient = await app({ allowed_skew: 60 });
    const expired = await sign({ [NAMESPACE]: roles }, secretBytes(SECRET), { alg: 'HS256', expiresIn: -30 });
    const answer = await strict.query(bearer(expired));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(errorBody('invalid-jwt', 'Could not verify JWT: JWTExpired'));
    expect(answer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(sessionOf(await lenient.query(bearer(expired)))).toMatchObject({ role: 'user' });
  });

  it('rejects nbf and iat in the future beyond the skew', async () => {
    const server = await app({ allowed_skew: 10 });
    const now = Math.floor(Date.now() / 1000);
    await expectError(server, { [NAMESPACE]: roles, nbf: now + 60 }, 'invalid-jwt', 'Could not verify JWT: JWTNotYetValid');
    await expectError(server, { [NAMESPACE]: roles, iat: now + 60 }, 'invalid-jwt', 'Could not verify JWT: JWTIssuedAtFuture');
    expect(sessionOf(await server.query(bearer(await token({ [NAMESPACE]: roles, nbf: now + 5, iat: now + 5 }))))).toMatchObject({ role: 'user' });
  });

  it('checks aud against a string or a list, and rejects a token without aud', async () => {
    const server = await app({ audience: ['app-1', 'app-2'] });
    expect(sessionOf(await server.query(bearer(await token({ [NAMESPACE]: roles, aud: 'app-2' }))))).toMatchObject({ role: 'user' });
    expect(sessionOf(await server.query(bearer(await token({ [NAMESPACE]: roles, aud: ['x', 'app-1'] }))))).toMatchObject({ role: 'user' });
    await expectError(server, { [NAMESPACE]: roles, aud: 'app-3' }, 'invalid-jwt', 'Could not verify JWT: JWTNotInAudience');
    await expectError(server, { [NAMESPACE]: roles }, 'invalid-jwt', 'Could not verify JWT: JWTNotInAudience');
  });

  it('checks iss, accepting a token without iss', async () => {
    const server = await app({ issuer: 'https://idp.example' });
    expect(sessionOf(await server.query(bearer(await token({ [NAMESPACE]: roles, iss: 'https://idp.example' }))))).toMatchObject({ role: 'user' });
    expect(sessionOf(await server.query(bearer(await token({ [NAMESPACE]: roles }))))).toMatchObject({ role: 'user' });
    await expectError(server, { [NAMESPACE]: roles, iss: 'https://evil.example' }, 'invalid-jwt', 'Could not verify JWT: JWTNotInIssuer');
  });
});
