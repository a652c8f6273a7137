import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

const KEY = 'an-example-hs256-key-of-32-chars!';
const NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

let server: Server;
let url: string;
let dispose: () => Promise<void>;

beforeAll(async () => {
  const app = createApp({ type: 'HS256', key: KEY }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
  dispose = async () => {
    await app.dispose();
  };
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  await dispose();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ [NAMESPACE]: claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(KEY));
}

/** generic-auth's answer for a field the user may not see. */
function unauthorized(field: string): unknown {
  return {
    data: null,
    errors: [{ message: 'Unauthorized field or type', locations: [{ line: 1, column: 3 }], path: [field], extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } }],
  };
}

const editor = { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user', 'x-svc-user-id': '42' };

async function post(query: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: await response.json() };
}

describe('embedding useJwtSession with @envelop/generic-auth', () => {
  it('serves public fields to requests without a token, as the anonymous role', async () => {
    expect(await post('{ greeting }')).toEqual({ status: 200, body: { data: { greeting: 'hello, anonymous' } } });
  });

  it('refuses @authenticated fields to requests without a token', async () => {
    const { status, body } = await post('{ me { role } }');
    expect(status).toBe(401);
    expect(body).toEqual(unauthorized('me'));
  });

  it('serves @authenticated fields to a token holder, from context.session', async () => {
    const answer = await post('{ me { role userId } }', { authorization: `Bearer ${await token(editor)}` });
    expect(answer).toEqual({ status: 200, body: { data: { me: { role: 'user', userId: '42' } } } });
  });

  it('checks @requiresScopes against the role the request acts as', async () => {
    const jwt = await token(editor);
    const denied = await post('{ drafts }', { authorization: `Bearer ${jwt}` });
    expect(denied).toEqual({ status: 401, body: unauthorized('drafts') });
    const allowed = await post('{ drafts }', { authorization: `Bearer ${jwt}`, 'x-svc-role': 'editor' });
    expect(allowed).toEqual({ status: 200, body: { data: { drafts: ['a draft'] } } });
  });

  it('still answers a bad token with the jwt-session error, before generic-auth runs', async () => {
    const answer = await post('{ greeting }', { authorization: `Bearer ${await token(editor)}x` });
    expect(answer).toEqual({
      status: 401,
      body: { errors: [{ message: 'Could not verify JWT: JWSError JWSInvalidSignature', extensions: { code: 'invalid-jwt', path: '$' } }] },
    });
  });
});
