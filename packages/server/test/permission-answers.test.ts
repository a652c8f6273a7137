import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDirectoryRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { openSse } from '../../remote-schemas/test/utils/sse.js';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { bearerOf, metadataCall } from './utils/roles.js';

/**
 * A role is answered only what its schema has, whatever the remote answers, through the server with
 * tokens of several roles: hidden runtime types of interfaces and unions, hidden enum values, open
 * subscriptions when the role's permission changes, and presets that cannot be coerced; over HTTP
 * (JSON and SSE) and graphql-ws, on a remote without customization (the fast path and the direct
 * lane) and on one with type_names, field_names and a namespace (plans and delegation).
 */

const KEY = 'a permission answers test secret of 32+ characters';
const ADMIN_SECRET = 'permission-answers-admin-secret';
const ADMIN = { 'x-svc-admin-secret': ADMIN_SECRET };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const OUTSIDE = "the remote answered a value outside this role's schema";
const NO_LONGER = { message: 'the subscription is no longer permitted for this role', extensions: { code: 'access-denied', path: '$' } };

/** `viewer` sees users only (no Post, no Secret) and two of the three roles. */
const VIEWER = /* GraphQL */ `
  interface Node { id: ID! }
  enum Role { EDITOR VIEWER }
  type User implements Node { id: ID! name: String! role: Role! roles: [Role!]! follows: [Node!]! latest: Node }
  union SearchResult = User
  type Query {
    node(id: ID!): Node
    nodes: [Node!]!
    search(term: String): [SearchResult!]!
    user(id: ID!): User
    roles: [Role!]!
    slow(ms: Int! @preset(value: "x-svc-delay")): String
    audit(id: ID!): String
  }
  type Subscription { nodeAdded(intervalMs: Int): Node roleChanged(intervalMs: Int): Role! }
`;
/** `reader` sees users and posts, not secrets, and every role. */
const READER = /* GraphQL */ `
  interface Node { id: ID! }
  enum Role { ADMIN EDITOR VIEWER }
  type User implements Node { id: ID! role: Role! }
  type Post implements Node { id: ID! title: String! }
  union SearchResult = User | Post
  type Query { nodes: [Node!]! search(term: String): [SearchResult!]! roles: [Role!]! }
`;

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-permission-answers-'));
let remote: RunningRemote;
let server: SvcGraphqlServer;
const clients: Client[] = [];

const asRole = (role: string, variables: Record<string, string> = {}) => bearerOf(KEY, role, variables);

async function metadata(body: unknown): Promise<unknown> {
  return (await metadataCall(server.url, ADMIN_SECRET, body)).body;
}

async function graphql(query: string, headers: Record<string, string>): Promise<{ data?: unknown; errors?: Array<Record<string, unknown>> }> {
  const response = await fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { data?: unknown; errors?: Array<Record<string, unknown>> };
}

function ws(headers: Record<string, string>): Client {
  const client = createClient({ url: server.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers }, retryAttempts: 0, lazy: true });
  clients.push(client);
  return client;
}

/** A subscription over graphql-ws, read one result at a time (`undefined`: it completed). */
function wsSubscription(headers: Record<string, string>, query: string) {
  const iterator = ws(headers).iterate({ query });
  return async () => {
    const step = await iterator.next();
    return step.done ? undefined : step.value;
  };
}

/** The same over SSE. */
async function sseSubscription(headers: Record<string, string>, query: string) {
  const stream = await openSse(`${server.url}/v1/graphql`, { query }, headers);
  expect(stream.status).toBe(200);
  return async () => {
    const event = await stream.next();
    return !event || event.event === 'complete' ? undefined : event.data;
  };
}

/** The first `count` results of a subscription over graphql-ws. */
async function firstResults(headers: Record<string, string>, query: string, count: number): Promise<unknown[]> {
  const client = ws(headers);
  const iterator = client.iterate({ query });
  const results: unknown[] = [];
  try {
    while (results.length < count) {
      const step = await iterator.next();
      if (step.done) break;
      results.push(step.value);
    }
  } finally {
    await iterator.return?.();
  }
  return results;
}

beforeAll(async () => {
  remote = await startDirectoryRemote();
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: JSON.stringify({ type: 'HS256', key: KEY }),
    unauthorizedRole: 'anonymous',
    enableRemoteSchemaPermissions: true,
    logger: quiet,
  });
  const customization = {
    root_fields_namespace: 'cat',
    type_names: { prefix: 'Cat_' },
    field_names: [{ parent_type: 'User', mapping: { name: 'fullName' } }],
  };
  const added = await metadata({
    type: 'bulk',
    args: [
      { type: 'add_remote_schema', args: { name: 'directory', definition: { url: remote.url } } },
      { type: 'add_remote_schema', args: { name: 'catalog', definition: { url: remote.url, customization } } },
      ...['directory', 'catalog'].flatMap((name) => [
        { type: 'add_remote_schema_permissions', args: { remote_schema: name, role: 'viewer', definition: { schema: VIEWER } } },
        { type: 'add_remote_schema_permissions', args: { remote_schema: name, role: 'reader', definition: { schema: READER } } },
      ]),
    ],
  });
  expect(added).toEqual(Array.from({ length: 6 }, () => ({ message: 'success' })));
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await server?.close();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Where a variant puts the root fields, and how it names types and `User.name`. */
const variants = [
  { label: 'a remote without customization', query: (s: string) => `{ ${s} }`, data: (d: unknown) => d, type: (t: string) => t, name: 'name', path: (...p: unknown[]) => p, sub: (s: string) => `subscription { ${s} }` },
  {
    label: 'a customized remote',
    query: (s: string) => `{ cat { ${s} } }`,
    data: (d: unknown) => ({ cat: d }),
    type: (t: string) => `Cat_${t}`,
    name: 'name: fullName',
    path: (...p: unknown[]) => ['cat', ...p],
    sub: (s: string) => `subscription { cat { ${s} } }`,
  },
];

describe.each(variants)('what a role is answered, on $label', (variant) => {
  it('leaves runtime types the role does not see out of interfaces and unions, over HTTP and graphql-ws', async () => {
    const viewer = await asRole('viewer');
    const query = variant.query(
      `p: node(id: "p1") { __typename id } u: node(id: "u1") { __typename id } nodes { id } search { ... on ${variant.type('User')} { ${variant.name} } }`,
    );
    const expected = {
      data: variant.data({
        p: null,
        u: { __typename: variant.type('User'), id: 'u1' },
        nodes: [{ id: 'u1' }, { id: 'u2' }, { id: 'u3' }],
        search: [{ name: 'Ada' }, { name: 'Grace' }, { name: 'Linus' }],
      }),
    };
    expect(await graphql(query, viewer)).toEqual(expected);
    expect(await firstResults(viewer, query, 1)).toEqual([expected]);
    // Another role sees more of the same remote; admin sees all of it.
    expect(await graphql(variant.query(`search { __typename }`), await asRole('reader'))).toEqual({
      data: variant.data({ search: [...Array(3).fill({ __typename: variant.type('User') }), ...Array(2).fill({ __typename: variant.type('Post') })] }),
    });
    const admin = (await graphql(variant.query('nodes { __typename }'), ADMIN)) as { data: unknown };
    expect(JSON.stringify(admin.data)).toContain(variant.type('Secret'));
  });

  it('leaves enum values the role does not see out of lists, and nulls a non-null place with the error', async () => {
    const viewer = await asRole('viewer');
    expect(await graphql(variant.query('roles user(id: "u1") { roles }'), viewer)).toEqual({
      data: variant.data({ roles: ['EDITOR', 'VIEWER'], user: { roles: ['VIEWER', 'EDITOR'] } }),
    });
    expect(await graphql(variant.query('user(id: "u1") { id role }'), viewer)).toEqual({
      data: variant.data({ user: null }),
      errors: [{ message: OUTSIDE, path: variant.path('user', 'role'), extensions: { code: 'remote-schema-error' } }],
    });
    expect(await graphql(variant.query('roles'), await asRole('reader'))).toEqual({ data: variant.data({ roles: ['ADMIN', 'EDITOR', 'VIEWER'] }) });
  });

  it('guards each subscription event, over graphql-ws and SSE', async () => {
    const viewer = await asRole('viewer');
    const query = variant.sub('nodeAdded(intervalMs: 2) { __typename id }');
    const expected = [
      { data: variant.data({ nodeAdded: { __typename: variant.type('User'), id: 'u1' } }) },
      { data: variant.data({ nodeAdded: null }) },
      { data: variant.data({ nodeAdded: { __typename: variant.type('User'), id: 'u2' } }) },
    ];
    expect(await firstResults(viewer, query, 3)).toEqual(expected);
    const sse = await sseSubscription(viewer, query);
    expect([await sse(), await sse(), await sse()]).toEqual(expected);
    // A non-null field without a value nulls the event's data (or, under a namespace, the namespace field).
    expect(await firstResults(viewer, variant.sub('roleChanged(intervalMs: 2)'), 2)).toEqual([
      { data: variant.data(null), errors: [{ message: OUTSIDE, path: variant.path('roleChanged'), extensions: { code: 'remote-schema-error' } }] },
      { data: variant.data({ roleChanged: 'EDITOR' }) },
    ]);
  });

  it('rewrites what the remote\'s errors say of hidden types and values', async () => {
    const body = await graphql(variant.query('audit(id: "s1")'), await asRole('viewer'));
    expect(body.errors?.[0]).toMatchObject({ message: '<hidden> s1 belongs to <hidden>', path: variant.path('audit') });
    expect(JSON.stringify(body)).not.toMatch(/Secret|ADMIN/);
  });
});

describe('a preset that cannot be coerced', () => {
  it('names the session variable only', async () => {
    const viewer = await asRole('viewer', { 'x-svc-delay': 'soon' });
    for (const query of ['{ slow }', '{ cat { slow } }']) {
      const body = await graphql(query, viewer);
      expect(body.errors).toEqual([
        expect.objectContaining({ message: 'the value of session variable "x-svc-delay" cannot be coerced', extensions: { code: 'coercion-error', path: expect.anything() } }),
      ]);
      expect(JSON.stringify(body)).not.toContain('Int');
    }
  });
});

describe('open subscriptions of a role whose permission changes', () => {
  it('end at once with the error, then complete, over graphql-ws and SSE; other roles and admin go on', async () => {
    // Their next event is ten minutes away: they are waiting when the permission goes.
    const viewer = await asRole('viewer');
    const overWs = wsSubscription(viewer, 'subscription { nodeAdded(intervalMs: 600000) { id } }');
    const overSse = await sseSubscription(viewer, 'subscription { cat { nodeAdded(intervalMs: 600000) { id } } }');
    const admin = wsSubscription(ADMIN, 'subscription { nodeAdded(intervalMs: 20) { id } }');
    expect(await overWs()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    expect(await overSse()).toEqual({ data: { cat: { nodeAdded: { id: 'u1' } } } });
    expect(await admin()).toEqual({ data: { nodeAdded: { id: 'u1' } } });

    expect(await metadata({ type: 'drop_remote_schema_permissions', args: { remote_schema: 'directory', role: 'viewer' } })).toEqual({ message: 'success' });
    expect(await overWs()).toEqual({ errors: [NO_LONGER] });
    expect(await overWs()).toBeUndefined();
    // The customized remote's permission is still there: that subscription goes on.
    expect(await admin()).toEqual({ data: { nodeAdded: { id: 'p1' } } });

    expect(await metadata({ type: 'drop_remote_schema_permissions', args: { remote_schema: 'catalog', role: 'viewer' } })).toEqual({ message: 'success' });
    expect(await overSse()).toEqual({ errors: [NO_LONGER] });
    expect(await overSse()).toBeUndefined();
    expect(await admin()).toEqual({ data: { nodeAdded: { id: 'u2' } } });
  });
});
