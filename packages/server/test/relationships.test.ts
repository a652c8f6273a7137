import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCommerceRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';

/**
 * Remote relationships as a user meets them: defined through /v1/metadata, answered over HTTP (the
 * direct lane, or Yoga's pipeline when the suite runs without it) and graphql-ws, per role with
 * remote schema permissions, counting what each remote receives.
 */

const KEY = 'a relationships test secret of 32+ characters';
const ADMIN_SECRET = 'relationships-test-admin-secret';
const ADMIN = { 'x-svc-admin-secret': ADMIN_SECRET };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-relationships-'));
let orders: RunningRemote;
let users: RunningRemote;
let orgs: RunningRemote;
let server: SvcGraphqlServer;
const clients: Client[] = [];

function token(role: string, variables: Record<string, string> = {}): Promise<string> {
  return new SignJWT({
    'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': role, 'x-svc-allowed-roles': [role], ...variables },
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(KEY));
}

async function asRole(role: string, variables: Record<string, string> = {}): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await token(role, variables)}` };
}

async function metadata(body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function graphql(query: string, headers: Record<string, string> = ADMIN, variables?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: await response.json() };
}

const success = { status: 200, body: { message: 'success' } };
const counts = () => [orders.received.length, users.received.length, orgs.received.length];

function relationship(remote_schema: string, type_name: string, name: string, lhs: string[], remote_field: unknown, batch?: unknown) {
  return {
    type: 'create_remote_schema_remote_relationship',
    args: { remote_schema, type_name, name, definition: { to_remote_schema: { remote_schema: remote_schema === 'orders' ? 'users' : 'orgs', lhs_fields: lhs, remote_field, ...(batch ? { batch } : {}) } } },
  };
}

beforeAll(async () => {
  [orders, users, orgs] = await Promise.all([startCommerceRemote('orders'), startCommerceRemote('users'), startCommerceRemote('orgs')]);
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: JSON.stringify({ type: 'HS256', key: KEY }),
    enableRemoteSchemaPermissions: true,
    logger: quiet,
  });
  expect(
    await metadata({
      type: 'bulk',
      args: [
        { type: 'add_remote_schema', args: { name: 'orders', definition: { url: orders.url } } },
        { type: 'add_remote_schema', args: { name: 'users', definition: { url: users.url, customization: { type_names: { prefix: 'People_' } } } } },
        { type: 'add_remote_schema', args: { name: 'orgs', definition: { url: orgs.url } } },
        relationship('orders', 'Order', 'user', ['userId'], { user: { arguments: { id: '$userId' } } }),
        relationship('orders', 'Order', 'samePlan', ['plan'], { usersByPlan: { arguments: { plan: '$plan' } } }),
        relationship('orders', 'Order', 'buyer', ['userId'], { usersByIds: { arguments: { ids: '$userId' } } }, { argument: 'ids', match_field: 'id' }),
        relationship('users', 'User', 'org', ['orgId'], { org: { arguments: { id: '$orgId' } } }),
      ],
    }),
  ).toMatchObject({ status: 200 });
});

beforeEach(() => {
  for (const remote of [orders, users, orgs]) remote.received.length = 0;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await server?.close();
  await Promise.all([orders?.close(), users?.close(), orgs?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('relationships through the server', () => {
  it('joins 50 orders to their users with 2 upstream requests, two levels with 3', async () => {
    const response = await graphql('{ orders(first: 50) { id userId user { id name } } }');
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    for (const order of response.body.data.orders) expect(order.user).toEqual({ id: order.userId, name: `User ${order.userId}` });
    expect(counts()).toEqual([1, 1, 0]);

    for (const remote of [orders, users, orgs]) remote.received.length = 0;
    const twoLevels = await graphql('{ orders(first: 120) { id user { name org { name } } buyer { __typename org { country } } } }');
    expect(twoLevels.body.errors).toBeUndefined();
    expect(twoLevels.body.data.orders[2]).toEqual({ id: '3', user: { name: 'User 3', org: { name: 'Org 4' } }, buyer: { __typename: 'People_User', org: { country: 'FR' } } });
    expect(counts()).toEqual([1, 1, 1]);
  });

  it('sends the join calls the headers of the session, and the request id', async () => {
    await graphql('{ order(id: "4") { user { id } } }', { ...ADMIN, 'x-request-id': 'join-request-1' });
    expect(users.received[0]?.headers).toMatchObject({ 'x-svc-role': 'admin', 'x-request-id': 'join-request-1' });
  });

  it('serves an operation whose variables are used only by relationship arguments', async () => {
    const response = await graphql('query Plans($n: Int!) { order(id: "1") { id samePlan(limit: $n) { id } } }', ADMIN, { n: 2 });
    expect(response.body).toEqual({ data: { order: { id: '1', samePlan: [{ id: '1' }, { id: '4' }] } } });
    expect(counts()).toEqual([1, 1, 0]);
    // The source is asked without the variable (a remote refuses one its document does not use).
    const source = orders.received[0]!.body as { query: string; variables?: Record<string, unknown> };
    expect(source.query).not.toMatch(/\$n\b/);
    expect(source.variables ?? {}).not.toHaveProperty('n');
  });

  it('answers errors at each source object\'s path, null keys as null without a call', async () => {
    const response = await graphql('{ a: order(id: "13") { id user { email } } b: order(id: "53") { user { email } } c: order(id: "97") { id user { name } } }');
    expect(response.body.data).toEqual({ a: { id: '13', user: null }, b: { user: null }, c: { id: '97', user: null } });
    expect(response.body.errors).toEqual([
      { message: 'email of user 13 is hidden', locations: [{ line: 1, column: 27 }], path: ['a', 'user', 'email'], extensions: { code: 'HIDDEN' } },
      { message: 'email of user 13 is hidden', locations: [{ line: 1, column: 65 }], path: ['b', 'user', 'email'], extensions: { code: 'HIDDEN' } },
    ]);
    expect(counts()).toEqual([1, 1, 0]);
  });

  it('joins the result of a mutation, and each event of a subscription over graphql-ws', async () => {
    const placed = await graphql('mutation { placeOrder(userId: "8", total: 3) { total user { name org { name } } } }');
    expect(placed.body).toEqual({ data: { placeOrder: { total: 3, user: { name: 'User 8', org: { name: 'Org 9' } } } } });
    const client = createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers: ADMIN }, retryAttempts: 0, lazy: true });
    clients.push(client);
    const events: unknown[] = [];
    for await (const event of client.iterate({ query: 'subscription { orderPlaced(count: 2, intervalMs: 5) { id user { name } } }' })) events.push(event);
    expect(events).toEqual([
      { data: { orderPlaced: { id: '1', user: { name: 'User 1' } } } },
      { data: { orderPlaced: { id: '2', user: { name: 'User 2' } } } },
    ]);
  });
});

describe('relationships and remote schema permissions', () => {
  beforeAll(async () => {
    const grant = (remote_schema: string, role: string, schema: string) => ({ type: 'add_remote_schema_permissions', args: { remote_schema, role, definition: { schema } } });
    expect(
      await metadata({
        type: 'bulk',
        args: [
          grant('orders', 'customer', 'enum Plan { FREE PRO ENTERPRISE } type Order { id: ID! userId: ID plan: Plan! } type Query { order(id: ID!): Order }'),
          grant('users', 'customer', 'enum Plan { FREE PRO ENTERPRISE } type User { id: ID! name: String! } type Query { user(id: ID!): User usersByPlan(plan: Plan!, limit: Int @preset(value: 1)): [User!]! }'),
          // Without the join field: the relationship is not for this role.
          grant('orders', 'blind', 'type Order { id: ID! } type Query { order(id: ID!): Order }'),
          grant('users', 'blind', 'type User { id: ID! name: String! } type Query { user(id: ID!): User }'),
          // The usual Hasura pattern: the target's argument is the session's own id.
          grant('orders', 'self', 'type Order { id: ID! userId: ID } type Query { order(id: ID!): Order }'),
          grant('users', 'self', 'type User { id: ID! name: String! } type Query { user(id: ID! @preset(value: "x-svc-user-id")): User }'),
        ],
      }),
    ).toMatchObject({ status: 200 });
  });

  it('shows the field only to a role whose grants hold the join fields and the target field, with the presets of the target grant', async () => {
    const customer = await asRole('customer');
    const fields = await graphql('{ __type(name: "Order") { fields { name args { name } } } }', customer);
    expect(fields.body.data.__type.fields).toEqual([
      { name: 'id', args: [] },
      { name: 'userId', args: [] },
      { name: 'plan', args: [] },
      { name: 'user', args: [] },
      // `limit` is preset by the role's grant on users: not the client's to pass.
      { name: 'samePlan', args: [] },
    ]);
    const joined = await graphql('{ order(id: "2") { user { name } samePlan { id } } }', customer);
    expect(joined.body).toEqual({ data: { order: { user: { name: 'User 2' }, samePlan: [{ id: '2' }] } } });

    const blind = await asRole('blind');
    const hidden = await graphql('{ order(id: "2") { user { name } } }', blind);
    expect(hidden.body.errors[0].message).toBe('Cannot query field "user" on type "Order".');
    const blindFields = await graphql('{ __type(name: "Order") { fields { name } } }', blind);
    expect(blindFields.body.data.__type.fields).toEqual([{ name: 'id' }]);
  });

  it('sets a join argument the target grant presets from the session, and sends no variable left unused', async () => {
    const self = await asRole('self', { 'x-svc-user-id': '7' });
    const joined = await graphql('{ a: order(id: "2") { id user { id name } } b: order(id: "3") { user { name } } }', self);
    expect(joined.body).toEqual({ data: { a: { id: '2', user: { id: '7', name: 'User 7' } }, b: { user: { name: 'User 7' } } } });
    const sent = users.received.map((request) => (request.body as { query: string }).query);
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toMatch(/\$/);
    // Nor its value: a variable the document does not declare is not sent.
    const variables = (users.received[0]!.body as { variables?: Record<string, unknown> | null }).variables ?? {};
    expect(Object.keys(variables)).toEqual([]);
  });
});

describe('relationships in the metadata of a running server', () => {
  it('reports a relationship that no longer fits after update_remote_schema, and serves the rest', async () => {
    const elsewhere = { url: users.url, customization: { root_fields_namespace: 'elsewhere', type_names: { prefix: 'Elsewhere_' } } };
    const updated = await metadata({ type: 'update_remote_schema', args: { name: 'orgs', definition: elsewhere } });
    expect(updated).toMatchObject({
      status: 200,
      body: {
        message: 'success',
        inconsistent_objects: [
          {
            type: 'remote_schema_remote_relationship',
            name: 'remote_schema_remote_relationship org on type User in remote schema users',
            reason: 'Inconsistent object: in remote relationship "org": remote field with name "org" and type "Query" not found',
          },
        ],
      },
    });
    const health = await fetch(`${server.url}/healthz`);
    expect(await health.text()).toBe('WARN: inconsistent metadata');
    const response = await graphql('{ order(id: "1") { user { name } } }');
    expect(response.body).toEqual({ data: { order: { user: { name: 'User 1' } } } });
    const gone = await graphql('{ order(id: "1") { user { org { name } } } }');
    expect(gone.body.errors[0].message).toMatch(/^Cannot query field "org" on type "People_User"./);
    expect(await metadata({ type: 'update_remote_schema', args: { name: 'orgs', definition: { url: orgs.url } } })).toEqual(success);
    expect(await (await fetch(`${server.url}/healthz`)).text()).toBe('OK');
  });
});
