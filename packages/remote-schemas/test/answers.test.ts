import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDirectoryRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger, sampleIntrospection } from './utils/fixtures.js';
import { READER_GRANT, VIEWER_GRANT } from './fixtures/directory-grants.js';

/**
 * Whatever the remote answers, a role is answered only what its schema has: runtime types it does
 * not see through an interface or a union, and enum values it does not see, are absent (left out
 * of lists, null where nullable, else null propagated with an error), on the fast path, in compiled
 * plans (customized remotes, namespaces) and through delegation, over HTTP and graphql-ws.
 */

const OUTSIDE = "the remote answered a value outside this role's schema";

let remote: RunningRemote;
beforeAll(async () => {
  remote = await startDirectoryRemote();
});
afterAll(() => remote.close());

const CUSTOMIZATION: RemoteSchemaCustomization = {
  root_fields_namespace: 'dir',
  type_names: { prefix: 'Dir_' },
  field_names: [{ parent_type: 'User', mapping: { name: 'fullName' } }],
};

interface Variant {
  label: string;
  customization?: RemoteSchemaCustomization;
  /** The query's root selections, where this variant puts them. */
  query(selections: string): string;
  /** A type's name for clients. */
  type(name: string): string;
  /** How `User.name` is selected under the response key `name`. */
  name: string;
  /** The data of `query()`. */
  data(inner: Record<string, unknown> | null): Record<string, unknown> | null;
  /** An error path of a root field's answer. */
  path(...segments: Array<string | number>): Array<string | number>;
  /** A subscription of the selection `s` (one root field of the remote). */
  subscription(s: string): string;
}

const variants: Variant[] = [
  {
    label: 'without customization (the fast path)',
    query: (s) => `{ ${s} }`,
    type: (t) => t,
    name: 'name',
    data: (inner) => inner,
    path: (...s) => s,
    subscription: (s) => `subscription { ${s} }`,
  },
  {
    label: 'with type_names, field_names and a namespace (a compiled plan)',
    customization: CUSTOMIZATION,
    query: (s) => `{ dir { ${s} } }`,
    type: (t) => `Dir_${t}`,
    name: 'name: fullName',
    data: (inner) => ({ dir: inner }),
    path: (...s) => ['dir', ...s],
    subscription: (s) => `subscription { dir { ${s} } }`,
  },
];

const session = (role: string, variables: Record<string, string> = {}) => ({ 'x-test-session': JSON.stringify({ role, variables }) });

describe.each(variants)('a narrow role\'s answers, $label', (variant) => {
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;
  const logger = memoryLogger();
  beforeAll(async () => {
    registry = createRemoteSchemaRegistry({ logger, retry: false, enableRemoteSchemaPermissions: true, getSession: testGetSession });
    const plan = await registry.plan([
      {
        name: 'directory',
        definition: { url: remote.url, ...(variant.customization ? { customization: variant.customization } : {}) },
        permissions: [
          { role: 'viewer', schema: VIEWER_GRANT },
          { role: 'reader', schema: READER_GRANT },
        ],
      },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    gateway = await startGateway(registry);
  });
  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
  });

  const ask = async (role: string, selections: string) => {
    const response = await gateway.post({ query: variant.query(selections) }, session(role));
    expect(response.status).toBe(200);
    return response.body as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; path?: unknown[]; extensions?: unknown }> };
  };

  it('leaves a hidden runtime type out of an interface field: null, with __typename in the customized name for the others', async () => {
    expect(await ask('viewer', 'p: node(id: "p1") { __typename id } u: node(id: "u1") { __typename id }')).toEqual({
      data: variant.data({ p: null, u: { __typename: variant.type('User'), id: 'u1' } }),
    });
    expect(await ask('viewer', 'node(id: "s1") { id }')).toEqual({ data: variant.data({ node: null }) });
  });

  it('leaves hidden members out of lists of an interface and of a union, without counting them', async () => {
    expect(await ask('viewer', `nodes { id } search { ... on ${variant.type('User')} { id } }`)).toEqual({
      data: variant.data({ nodes: [{ id: 'u1' }, { id: 'u2' }, { id: 'u3' }], search: [{ id: 'u1' }, { id: 'u2' }, { id: 'u3' }] }),
    });
    expect(await ask('reader', `search { __typename ... on ${variant.type('Post')} { title } }`)).toEqual({
      data: variant.data({
        search: [
          { __typename: variant.type('User') },
          { __typename: variant.type('User') },
          { __typename: variant.type('User') },
          { __typename: variant.type('Post'), title: 'Hello world' },
          { __typename: variant.type('Post'), title: 'Compilers' },
        ],
      }),
    });
  });

  it('checks nested places: lists in objects, interfaces in lists', async () => {
    expect(await ask('viewer', `user(id: "u1") { roles follows { id ... on ${variant.type('User')} { ${variant.name} } } latest { id } }`)).toEqual({
      data: variant.data({
        user: { roles: ['VIEWER', 'EDITOR'], follows: [{ id: 'u2', name: 'Grace' }, { id: 'u3', name: 'Linus' }], latest: null },
      }),
    });
  });

  it('leaves hidden enum values out of lists and nulls them where nullable', async () => {
    expect(await ask('viewer', 'roles')).toEqual({ data: variant.data({ roles: ['EDITOR', 'VIEWER'] }) });
  });

  it('propagates null from a non-null place with the error, as GraphQL does', async () => {
    expect(await ask('viewer', 'user(id: "u1") { id role }')).toEqual({
      data: variant.data({ user: null }),
      errors: [{ message: OUTSIDE, path: variant.path('user', 'role'), extensions: { code: 'remote-schema-error' } }],
    });
    // u1's role nulls u1, which nulls the non-null list, which nulls the query's data (or the namespace field).
    expect(await ask('viewer', 'users { id role }')).toEqual({
      data: variant.data(null),
      errors: [{ message: OUTSIDE, path: variant.path('users', 0, 'role'), extensions: { code: 'remote-schema-error' } }],
    });
    expect(await ask('viewer', 'requiredNode(id: "s1") { id }')).toEqual({
      data: variant.data(null),
      errors: [{ message: OUTSIDE, path: variant.path('requiredNode'), extensions: { code: 'remote-schema-error' } }],
    });
    expect(await ask('viewer', 'u2: requiredRole(userId: "u2") u1: requiredRole(userId: "u1")')).toEqual({
      data: variant.data(null),
      errors: [{ message: OUTSIDE, path: variant.path('u1'), extensions: { code: 'remote-schema-error' } }],
    });
  });

  it('answers what the role may see as before', async () => {
    expect(await ask('viewer', `user(id: "u2") { id ${variant.name} role roles latest { __typename id } }`)).toEqual({
      data: variant.data({ user: { id: 'u2', name: 'Grace', role: 'EDITOR', roles: ['VIEWER', 'EDITOR'], latest: null } }),
    });
    expect(await ask('viewer', 'user(id: "u3") { latest { __typename id } }')).toEqual({
      data: variant.data({ user: { latest: { __typename: variant.type('User'), id: 'u2' } } }),
    });
  });

  /** The first `count` events of a subscription of `role` over graphql-ws. */
  const events = async (role: string, query: string, count: number) => {
    const client = gateway.wsClient({ session: { role, variables: {} } });
    const iterator = client.iterate({ query });
    const received: unknown[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const step = await iterator.next();
        if (step.done) break;
        received.push(step.value);
      }
    } finally {
      await iterator.return?.();
      await client.dispose();
    }
    return received;
  };

  it('guards each event of a subscription over graphql-ws', async () => {
    const user = (id: string) => ({ __typename: variant.type('User'), id });
    expect(await events('viewer', variant.subscription('nodeAdded(intervalMs: 2) { __typename id }'), 5)).toEqual([
      { data: variant.data({ nodeAdded: user('u1') }) },
      { data: variant.data({ nodeAdded: null }) },
      { data: variant.data({ nodeAdded: user('u2') }) },
      { data: variant.data({ nodeAdded: null }) },
      { data: variant.data({ nodeAdded: user('u3') }) },
    ]);
    // A non-null field without a value nulls the event's data (or, under a namespace, the namespace field).
    expect(await events('viewer', variant.subscription('roleChanged(intervalMs: 2)'), 3)).toEqual([
      { data: variant.data(null), errors: [expect.objectContaining({ message: OUTSIDE, path: variant.path('roleChanged') })] },
      { data: variant.data({ roleChanged: 'EDITOR' }) },
      { data: variant.data({ roleChanged: 'VIEWER' }) },
    ]);
    expect(await events('viewer', variant.subscription('userUpdated(intervalMs: 2) { id roles latest { id } }'), 2)).toEqual([
      { data: variant.data({ userUpdated: { id: 'u1', roles: ['VIEWER', 'EDITOR'], latest: null } }) },
      { data: variant.data({ userUpdated: { id: 'u2', roles: ['VIEWER', 'EDITOR'], latest: null } }) },
    ]);
  });

  it('answers queries over graphql-ws as over HTTP', async () => {
    expect(await events('viewer', variant.query('nodes { id } roles'), 1)).toEqual([
      { data: variant.data({ nodes: [{ id: 'u1' }, { id: 'u2' }, { id: 'u3' }], roles: ['EDITOR', 'VIEWER'] }) },
    ]);
  });

  it('rewrites the remote\'s errors that name what the role does not see, and admin\'s not', async () => {
    expect(await ask('viewer', 'audit(id: "s1")')).toEqual({
      data: variant.data({ audit: null }),
      errors: [
        {
          message: '<hidden> s1 belongs to <hidden>',
          path: variant.path('audit'),
          locations: expect.any(Array),
          extensions: { code: 'FORBIDDEN', kind: '<hidden>', owner: { role: '<hidden>' } },
        },
      ],
    });
    expect((await ask('viewer', 'audit(id: "u1")')).errors?.[0]?.message).toBe('User u1 belongs to <hidden>');
    const admin = await gateway.post({ query: variant.query('audit(id: "s1")') }, { 'x-test-session': JSON.stringify({ role: 'admin', isAdmin: true }) });
    expect(admin.body.errors[0]).toMatchObject({ message: 'Secret s1 belongs to ADMIN', extensions: { kind: 'Secret', owner: { role: 'ADMIN' } } });
  });

  it('keeps the locations of the remote\'s errors in the client\'s document when the document sent asks a __typename of its own', async () => {
    // `latest` is checked and the client does not ask its type: the document sent is printed with one more field.
    const query = variant.query(`
      user(id: "u2") { latest { id } }
          audit(id: "u1")`);
    const response = await gateway.post({ query }, session('viewer'));
    const line = query.split('\n').findIndex((text) => text.includes('audit')) + 1;
    const column = query.split('\n')[line - 1]!.indexOf('audit') + 1;
    expect(response.body.errors).toEqual([expect.objectContaining({ message: 'User u1 belongs to <hidden>', locations: [{ line, column }] })]);
    expect(response.body.data).toEqual(variant.data({ user: { latest: null }, audit: null }));
  });

  if (variant.customization) it('guards what delegation answers (an operation a plan cannot express)', async () => {
    // One response key that is `__typename` in one place and a field in another, on a remote that renames types.
    expect(await ask('reader', 'search { ... on Dir_User { k: fullName } ... on Dir_Post { k: __typename } }')).toEqual({
      data: variant.data({ search: [{ k: 'Ada' }, { k: 'Grace' }, { k: 'Linus' }, { k: 'Dir_Post' }, { k: 'Dir_Post' }] }),
    });
    expect(await ask('reader', 'nodes { ... on Dir_User { k: fullName role } ... on Dir_Post { k: __typename } }')).toEqual({
      data: variant.data(null),
      errors: [{ message: OUTSIDE, path: variant.path('nodes', 0, 'role'), extensions: { code: 'remote-schema-error' } }],
    });
    expect(logger.lines.filter((line) => line.includes('executed with delegation'))).toHaveLength(2);
  });
});

/**
 * A gateway over a remote with the sample remote's schema that answers `answer` to every query,
 * whatever it asks, with permissions on and role `narrow` granted `grant`; `run` gets the gateway.
 */
async function withHostileRemote(answer: unknown, grant: string, run: (gateway: Gateway) => Promise<void>): Promise<void> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body.includes('__schema') ? { data: sampleIntrospection() } : answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  const registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false, enableRemoteSchemaPermissions: true, getSession: testGetSession });
  try {
    const plan = await registry.plan([{ name: 'hostile', definition: { url }, permissions: [{ role: 'narrow', schema: grant }] }]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    const gateway = await startGateway(registry);
    try {
      await run(gateway);
    } finally {
      await gateway.close();
    }
  } finally {
    await registry.dispose();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('a remote that answers what the role may not see, and errors about it', () => {
  it('has its hidden members left out, the paths of its other errors moved with them, and hidden names replaced', async () => {
    // The sample remote's schema, and one answer to every query whatever it asks.
    const answer = {
      data: {
        search: [
          { __typename: 'Post', id: 'p1' },
          { __typename: 'User', id: '1' },
          { __typename: 'User', id: '3' },
        ],
      },
      errors: [
        { message: 'Post p1 is ADMIN only', path: ['search', 0, 'id'] },
        { message: 'User 3 failed', path: ['search', 2, 'id'], extensions: { code: 'FAILED', owner: 'ADMIN' } },
        { message: 'the remote was busy' },
      ],
      extensions: { cost: { Post: 3, author: 4, note: 'Post and User read' } },
    };
    const grant = `
      interface Node { id: ID! }
      enum Role { EDITOR VIEWER }
      type User implements Node { id: ID! }
      union SearchResult = User
      type Query { search(term: String!): [SearchResult!]! }
    `;
    await withHostileRemote(answer, grant, async (gateway) => {
      const query = '{ search(term: "x") { __typename ... on User { id } } }';
      const response = await gateway.post({ query }, session('narrow'));
      expect(response.body).toEqual({
        data: { search: [{ __typename: 'User', id: '1' }, { __typename: 'User', id: '3' }] },
        errors: [
          { message: 'User 3 failed', path: ['search', 1, 'id'], extensions: { code: 'FAILED', owner: '<hidden>' } },
          { message: 'the remote was busy' },
        ],
        extensions: { cost: { '<hidden>': 3, '<hidden> (2)': 4, note: '<hidden> and User read' } },
      });
      // A remote that does not say which type it answered where the role needs to know: left out.
      const untyped = await gateway.post({ query: '{ search(term: "x") { ... on User { id } } }' }, session('narrow'));
      expect(untyped.body.data).toEqual({ search: [] });
      const admin = await gateway.post({ query }, { 'x-test-session': JSON.stringify({ role: 'admin', isAdmin: true }) });
      expect(admin.body).toEqual({ data: answer.data, errors: answer.errors, extensions: answer.extensions });
    });
  });
  it('has keys it was not asked for left out, and a __typename naming another type taken as a type the role does not see', async () => {
    // The sample remote's schema; it answers every query with fields nobody asked for, at every level.
    const answer = {
      data: {
        user: { __typename: 'User', id: '1', name: 'Ada', role: 'ADMIN', secret: 'S1', posts: [{ id: 'p1', title: 'T', draft: 'S2' }] },
        a: { __typename: 'Hidden', id: '2', name: 'Grace' },
        b: { t: 'Post', id: '3', name: 'Linus' },
        // Values of another kind than their place holds: an object at a String!, an object where a list belongs.
        c: { id: '4', name: { secret: 'S4', __typename: 'Secret' }, posts: { id: 'S5' } },
        // A list where one User belongs (of objects of a type the role does not see).
        d: [{ __typename: 'Secret', id: 'S6' }],
        leak: { password: 'S3' },
      },
      errors: [
        { message: 'the draft of p1 failed', path: ['user', 'posts', 0, 'draft'] },
        // Errors at keys the document did not select, or below a scalar: about nothing the role was answered.
        { message: 'the secret failed', path: ['user', 'secret'] },
        { message: 'below a name', path: ['user', 'name', 'x'] },
        { message: 'a root key not asked', path: ['leak', 'password'] },
      ],
    };
    const grant = `
      type Post { id: ID! title: String! }
      type User { id: ID! name: String! posts: [Post!]! }
      type Query { user(id: ID!): User }
    `;
    await withHostileRemote(answer, grant, async (gateway) => {
      const query =
        '{ user(id: "1") { __typename id name posts { id title } } a: user(id: "2") { __typename id name } b: user(id: "3") { t: __typename id } ' +
        'c: user(id: "4") { id name posts { id } } d: user(id: "5") { id } }';
      const response = await gateway.post({ query }, session('narrow'));
      expect(response.body).toEqual({
        data: {
          user: { __typename: 'User', id: '1', name: 'Ada', posts: [{ id: 'p1', title: 'T' }] },
          // Nullable: a User named as another type is an object the role may not see.
          a: null,
          b: null,
          // Its non-null name held an object: null propagates to the nullable user, with the error.
          c: null,
          d: null,
        },
        errors: [{ message: OUTSIDE, path: ['c', 'name'], extensions: { code: 'remote-schema-error' } }],
      });
      expect(JSON.stringify(response.body)).not.toMatch(/S1|S2|S3|S4|S5|S6|secret|Secret|draft|password|leak|Hidden|Post|"role"|below/);
      // Admin gets what the remote sent, as it sent it.
      const admin = await gateway.post({ query }, { 'x-test-session': JSON.stringify({ role: 'admin', isAdmin: true }) });
      expect(admin.body.data.user.secret).toBe('S1');
    });
  });

  it('keeps its error at a field whose value the role may not see, hidden names replaced', async () => {
    const answer = {
      data: { user: { id: '1', role: 'ADMIN' }, users: [{ id: '2', role: 'ADMIN' }] },
      errors: [
        { message: 'the role ADMIN of 1 is restricted', path: ['user', 'role'], extensions: { code: 'RESTRICTED' } },
        // Below the hidden value there is nothing the role was answered.
        { message: 'below the role', path: ['user', 'role', 'x'] },
      ],
    };
    const grant = `
      enum Role { EDITOR VIEWER }
      type User { id: ID! role: Role! }
      type Query { user(id: ID!): User users(role: Role): [User!]! }
    `;
    await withHostileRemote(answer, grant, async (gateway) => {
      const response = await gateway.post({ query: '{ user(id: "1") { id role } }' }, session('narrow'));
      expect(response.body).toEqual({
        data: { user: null },
        errors: [
          { message: 'the role <hidden> of 1 is restricted', path: ['user', 'role'], extensions: { code: 'RESTRICTED' } },
          { message: OUTSIDE, path: ['user', 'role'], extensions: { code: 'remote-schema-error' } },
        ],
      });
    });
  });
});
