import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionResolver, type SessionResolver } from '../src/index.js';
import { truncateUtf8 } from '../src/graphql-ws.js';
import { NAMESPACE, secretBytes, sign } from './utils/keys.js';
import { silentLogger } from './utils/server.js';
import { connect, first, startWsApp } from './utils/ws-server.js';

const SECRET = 'w'.repeat(32);
const ADMIN = 'ws-admin-secret';
const roles = { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user', 'x-svc-user-id': '42' };

let resolver: SessionResolver;
let app: Awaited<ReturnType<typeof startWsApp>>;

beforeAll(async () => {
  resolver = createSessionResolver({ jwt: { type: 'HS256', key: SECRET }, adminSecret: ADMIN, logger: silentLogger });
  app = await startWsApp(resolver);
});
afterAll(async () => {
  await app.close();
  resolver.dispose();
});

function token(claims: Record<string, unknown> = roles, expiresIn = 3600): Promise<string> {
  return sign({ [NAMESPACE]: claims }, secretBytes(SECRET), { alg: 'HS256', expiresIn });
}

describe('graphql-ws authentication', () => {
  it('authenticates at connection_init from payload.headers (any case) and puts the session in every operation', async () => {
    const { client, connected } = connect(app.wsUrl, { Authorization: `Bearer ${await token()}`, 'X-Svc-Role': 'editor' });
    await connected;
    const expected = { role: 'editor', isAdmin: false, variables: { 'x-svc-user-id': '42', 'x-svc-role': 'editor' } };
    const query = (await first(client, '{ session }')) as { data: { session: string } };
    expect(JSON.parse(query.data.session)).toMatchObject(expected);
    const subscription = (await first(client, 'subscription { session }')) as { data: { session: string } };
    expect(JSON.parse(subscription.data.session)).toMatchObject(expected);
    await client.dispose();
  });

  it('falls back to the upgrade request headers', async () => {
    const { client, connected } = connect(app.wsUrl, undefined, { authorization: `Bearer ${await token()}` });
    await connected;
    const query = (await first(client, '{ session }')) as { data: { session: string } };
    expect(JSON.parse(query.data.session)).toMatchObject({ role: 'user' });
    await client.dispose();
  });

  it('accepts the admin secret like HTTP does', async () => {
    const { client, connected } = connect(app.wsUrl, { 'x-svc-admin-secret': ADMIN });
    await connected;
    const query = (await first(client, '{ session }')) as { data: { session: string } };
    expect(JSON.parse(query.data.session)).toEqual({ role: 'admin', isAdmin: true, variables: { 'x-svc-role': 'admin' } });
    await client.dispose();
  });

  it('closes with 4403 and the reason when the token is refused', async () => {
    const { closed } = connect(app.wsUrl, { authorization: `Bearer ${await token()}x` });
    expect(await closed).toEqual({ code: 4403, reason: 'Forbidden: Could not verify JWT: JWSError JWSInvalidSignature' });
  });

  it('closes with 4403 for an x-svc-* header of connection_init that no HTTP header could be', async () => {
    for (const [name, value] of [['x-svc-a b', '1'], ['x-svc-user-id', 'a\r\nx-forged: 1']] as const) {
      const { closed } = connect(app.wsUrl, { 'x-svc-admin-secret': ADMIN, 'x-svc-role': 'user', [name]: value });
      expect(await closed).toEqual({ code: 4403, reason: `Forbidden: invalid header ${JSON.stringify(name)}: it cannot be sent to a remote as a header` });
    }
  });

  it('closes with 4403 when no credentials are sent', async () => {
    const { closed } = connect(app.wsUrl, {});
    expect(await closed).toEqual({ code: 4403, reason: "Forbidden: Missing 'Authorization' or 'Cookie' header in JWT authentication mode" });
  });

  it('keeps a long reason within 123 bytes without splitting a character', async () => {
    const name = `x-svc-${'é'.repeat(80)}`;
    const { closed } = connect(app.wsUrl, { authorization: `Bearer ${await token({ ...roles, [name]: null })}` });
    const { code, reason } = await closed;
    expect(code).toBe(4403);
    expect(Buffer.byteLength(reason, 'utf8')).toBeLessThanOrEqual(123);
    expect(reason.startsWith(`Forbidden: invalid claim name "x-svc-éé`)).toBe(true);
    expect(reason).not.toContain('\uFFFD');
  });

  it('closes with 4403 "Forbidden: JWTExpired" when the token expires', async () => {
    // exp is in whole seconds: this token expires two to three seconds from now.
    const { connected, closed } = connect(app.wsUrl, { authorization: `Bearer ${await token(roles, 3)}` });
    await connected;
    expect(await closed).toEqual({ code: 4403, reason: 'Forbidden: JWTExpired' });
  });
});

describe('truncateUtf8', () => {
  it('cuts at a character boundary', () => {
    expect(truncateUtf8('abc', 3)).toBe('abc');
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('a😀b', 4)).toBe('a');
    expect(truncateUtf8('a😀b', 5)).toBe('a😀');
  });
});
