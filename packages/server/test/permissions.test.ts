import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { bearerOf, metadataCall } from './utils/roles.js';

/**
 * Remote schema permissions as a user meets them: granted through /v1/metadata, enforced over HTTP
 * (JSON and SSE) and graphql-ws with tokens of several roles, the unauthorized role and admin.
 */

const KEY = 'a permissions test secret of 32+ characters';
const ADMIN_SECRET = 'permissions-test-admin-secret';
const ADMIN = { 'x-svc-admin-secret': ADMIN_SECRET };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-permissions-'));
let remote: RunningRemote;
let server: SvcGraphqlServer;
const clients: Client[] = [];

const metadata = (body: unknown) => metadataCall(server.url, ADMIN_SECRET, body);

async function graphql(query: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: await response.json() };
}

const asRole = (role: string, variables: Record<string, string> = {}) => bearerOf(KEY, role, variables);

function ws(headers: Record<string, string>): Client {
  const client = createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers }, retryAttempts: 0, lazy: true });
  clients.push(client);
  return client;
}

async function first(client: Client, query: string): Promise<unknown> {
  const iterator = client.iterate({ query });
  try {
    return (await iterator.next()).value;
  } finally {
    await iterator.return?.();
  }
}

const queryFields = async (headers: Record<string, string>) =>
  ((await graphql('{ __schema { queryType { fields { name } } } }', headers)).body.data.__schema.queryType.fields as Array<{ name: string }>)
    .map((field) => field.name)
    .sort();

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: JSON.stringify({ type: 'HS256', key: KEY }),
    unauthorizedRole: 'anonymous',
    enableRemoteSchemaPermissions: true,
    logger: quiet,
  });
  expect(await metadata({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } })).toEqual({
    status: 200,
    body: { message: 'success' },
  });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await server?.close();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('remote schema permissions through the server', () => {
  it('serves each role its grant, with session presets, over HTTP and graphql-ws', async () => {
    const granted = await metadata({
      type: 'add_remote_schema_permissions',
      args: {
        remote_schema: 'sample',
        role: 'user',
        definition: {
          schema: `
            type User { id: ID! name: String! }
            type Query {
              hello(name: String @preset(value: "x-svc-user-name")): String!
              user(id: ID!): User
            }
            type Subscription { countdown(from: Int! @preset(value: 2), intervalMs: Int): Int! }
          `,
        },
      },
    });
    expect(granted).toEqual({ status: 200, body: { message: 'success' } });

    const user = await asRole('user', { 'x-svc-user-name': 'Grace' });
    expect(await queryFields(user)).toEqual(['hello', 'user']);
    // The preset fills the argument the role can no longer pass.
    expect((await graphql('{ hello user(id: "1") { id name } }', user)).body).toEqual({
      data: { hello: 'Hello, Grace!', user: { id: '1', name: 'Ada' } },
    });
    const passing = await graphql('{ hello(name: "Mallory") }', user);
    expect(passing.body.errors[0].message).toBe('Unknown argument "name" on field "Query.hello".');
    const hidden = await graphql('{ messages { id } }', user);
    expect(hidden.body.errors[0].message).toBe('Cannot query field "messages" on type "Query".');
    // A document with a mutation is refused whole for a role whose schema has no mutation root,
    // whichever operation it asks to run (the direct lane and Yoga alike).
    const response = await fetch(`${server.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user },
      body: JSON.stringify({ query: 'mutation M { x } query Q { hello }', operationName: 'Q' }),
    });
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'Schema is not configured to execute mutation operation.',
          locations: [{ line: 1, column: 1 }],
          extensions: { code: 'validation-failed', path: '$' },
        },
      ],
    });

    const socket = ws(user);
    await expect(first(socket, '{ hello }')).resolves.toEqual({ data: { hello: 'Hello, Grace!' } });
    await expect(first(socket, 'subscription { countdown(intervalMs: 1) }')).resolves.toEqual({ data: { countdown: 2 } });

    const missing = await graphql('{ hello }', await asRole('user'));
    expect(missing.body).toEqual({
      errors: [{ message: '"x-svc-user-name" session variable expected, but not found', extensions: { code: 'not-found', path: '$' } }],
    });
  });

  it('shows nothing of the remote to a role without a grant, nor to the unauthorized role, and everything to admin', async () => {
    expect(await queryFields(await asRole('stranger'))).toEqual(['no_queries_available']);
    expect(await queryFields({})).toEqual(['no_queries_available']);
    const admin = await queryFields(ADMIN);
    expect(admin).toContain('users');
    expect(admin).toContain('hello');
  });

  it('refuses a grant that is not a subset of the remote, storing nothing', async () => {
    const refused = await metadata({
      type: 'add_remote_schema_permissions',
      args: { remote_schema: 'sample', role: 'editor', definition: { schema: 'type Query { hello: String! created_at: String }' } },
    });
    expect(refused).toEqual({
      status: 400,
      body: {
        code: 'validation-failed',
        path: '$.args',
        error: 'validation for the given role-based schema failed because field "created_at" does not exist in the "Object": "Query"',
      },
    });
    expect(await queryFields(await asRole('editor'))).toEqual(['no_queries_available']);
  });

  it('drops a grant at once, and refuses to remove a remote with permissions unless cascade', async () => {
    expect(await metadata({ type: 'remove_remote_schema', args: { name: 'sample' } })).toEqual({
      status: 400,
      body: {
        code: 'dependency-error',
        path: '$.args',
        error: 'cannot drop due to the following dependent objects: remote_schema_permission user on remote_schema sample',
      },
    });
    expect(await metadata({ type: 'drop_remote_schema_permissions', args: { remote_schema: 'sample', role: 'user' } })).toEqual({
      status: 200,
      body: { message: 'success' },
    });
    expect(await queryFields(await asRole('user', { 'x-svc-user-name': 'Grace' }))).toEqual(['no_queries_available']);
  });
});
