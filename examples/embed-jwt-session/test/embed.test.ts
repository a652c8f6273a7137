import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createApp } from '../src/app.js';

const KEY = 'an-example-hs256-key-of-32-chars!';
const NAMESPACE = 'https://svc-graphql.dev/jwt/claims';

let remote: RunningRemote;
let server: Server;
let url: string;
let dispose: () => Promise<void>;

beforeAll(async () => {
  remote = await startSampleRemote();
  const app = await createApp({ type: 'HS256', key: KEY }, { remoteUrl: remote.url, logger: { debug() {}, info() {}, warn() {}, error() {} } });
  expect(app.problems).toEqual([]);
  dispose = () => app.dispose();
  server = createServer(app.yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  await dispose?.();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await remote?.close();
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
/** User 2 of the sample remote (Grace), who may also act as editor. */
const grace = { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user', 'x-svc-user-id': '2' };
const admin = { 'x-svc-allowed-roles': ['admin'], 'x-svc-default-role': 'admin' };

const QUERY_FIELDS = '{ __schema { queryType { fields { name } } } }';
const LOCAL_FIELDS = ['greeting', 'me', 'drafts'];
const SAMPLE_FIELDS = ['hello', 'remoteName', 'user', 'users', 'node', 'search', 'messages', 'boom', 'slow', 'echoHeaders'];

function fieldNames(...names: string[]): unknown {
  return { data: { __schema: { queryType: { fields: names.map((name) => ({ name })) } } } };
}

async function bearer(claims: Record<string, unknown>, role?: string): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await token(claims)}`, ...(role !== undefined && { 'x-svc-role': role }) };
}

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

describe('a role-limited remote next to the local schema', () => {
  it('shows the user role only its grant of the remote: two root fields, two fields of User', async () => {
    const headers = await bearer(grace);
    expect(await post(QUERY_FIELDS, headers)).toEqual({ status: 200, body: fieldNames(...LOCAL_FIELDS, 'hello', 'user') });
    expect(await post('{ __type(name: "User") { fields { name } } }', headers)).toEqual({
      status: 200,
      body: { data: { __type: { fields: [{ name: 'id' }, { name: 'name' }] } } },
    });
  });

  it('fills the preset id from the token, alone and next to local fields', async () => {
    const headers = await bearer(grace);
    expect(await post('{ user { id name } }', headers)).toEqual({ status: 200, body: { data: { user: { id: '2', name: 'Grace' } } } });
    expect(await post('{ me { userId } user { name } hello greeting }', headers)).toEqual({
      status: 200,
      body: { data: { me: { userId: '2' }, user: { name: 'Grace' }, hello: 'Hello, world!', greeting: 'hello, user' } },
    });
  });

  it('refuses the preset argument and the fields outside the grant', async () => {
    const headers = await bearer(grace);
    expect(await post('{ user(id: "1") { name } }', headers)).toEqual({
      status: 200,
      body: {
        errors: [
          { message: 'Unknown argument "id" on field "Query.user".', locations: [{ line: 1, column: 8 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ],
      },
    });
    expect(await post('{ user { role } }', headers)).toEqual({
      status: 200,
      body: {
        errors: [
          { message: 'Cannot query field "role" on type "User".', locations: [{ line: 1, column: 10 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ],
      },
    });
  });

  it('answers a token without the preset session variable with not-found, without calling the remote', async () => {
    const received = remote.received.length;
    const headers = await bearer({ 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' });
    expect(await post('{ user { id } }', headers)).toEqual({
      status: 200,
      body: { errors: [{ message: '"x-svc-user-id" session variable expected, but not found', extensions: { code: 'not-found', path: '$' } }] },
    });
    expect(remote.received.length).toBe(received);
  });

  it('shows nothing of the remote to another role, nor to requests without a token', async () => {
    const asEditor = await bearer(grace, 'editor');
    expect(await post(QUERY_FIELDS, asEditor)).toEqual({ status: 200, body: fieldNames(...LOCAL_FIELDS) });
    expect(await post('{ hello }', asEditor)).toEqual({
      status: 200,
      body: {
        errors: [
          { message: 'Cannot query field "hello" on type "Query".', locations: [{ line: 1, column: 3 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ],
      },
    });
    expect(await post(QUERY_FIELDS)).toEqual({ status: 200, body: fieldNames(...LOCAL_FIELDS) });
  });

  it('keeps @requiresScopes working on the local fields of the role schemas', async () => {
    expect(await post('{ drafts }', await bearer(grace))).toEqual({ status: 401, body: unauthorized('drafts') });
    expect(await post('{ drafts }', await bearer(grace, 'editor'))).toEqual({ status: 200, body: { data: { drafts: ['a draft'] } } });
  });

  it('shows admin the whole remote and the local fields, drafts included', async () => {
    const headers = await bearer(admin);
    expect(await post(QUERY_FIELDS, headers)).toEqual({ status: 200, body: fieldNames(...LOCAL_FIELDS, ...SAMPLE_FIELDS) });
    expect(await post('{ drafts user(id: "1") { id name role } users { id } }', headers)).toEqual({
      status: 200,
      body: {
        data: {
          drafts: ['a draft'],
          user: { id: '1', name: 'Ada', role: 'ADMIN' },
          users: [{ id: '1' }, { id: '2' }, { id: '3' }],
        },
      },
    });
  });
});
