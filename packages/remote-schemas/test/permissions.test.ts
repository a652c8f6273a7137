import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildClientSchema,
  buildSchema,
  getIntrospectionQuery,
  lexicographicSortSchema,
  printSchema,
  type IntrospectionQuery,
} from 'graphql';
import { sampleTypeDefs, startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import {
  createRemoteSchemaRegistry,
  type RemoteSchemaEntry,
  type RemoteSchemaRegistry,
  type RemoteSchemaRegistryOptions,
} from '../src/index.js';
import { roleSchemaInfo } from '../src/permissions/role-schema.js';
import { cachedRoleSchemaCount } from '../src/registry.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';

/** What role `user` may use of the sample remote. */
const userPermission = /* GraphQL */ `
  interface Node {
    id: ID!
  }
  enum Role {
    EDITOR
    VIEWER
  }
  type User implements Node {
    id: ID!
    name: String!
    role: Role!
  }
  union SearchResult = User
  input MessageInput {
    text: String!
  }
  type Message {
    id: ID!
    text: String!
  }
  type Query {
    hello(name: String): String!
    users(role: Role): [User!]!
    node(id: ID!): Node
    search(term: String!): [SearchResult!]!
    "Not how the remote describes it"
    slow(ms: Int!): String
  }
  type Mutation {
    addMessage(input: MessageInput!): Message!
  }
`;

/** What role `user` sees: its grant, with the remote's descriptions. */
const userSees = /* GraphQL */ `
  interface Node {
    id: ID!
  }
  enum Role {
    EDITOR
    VIEWER
  }
  type User implements Node {
    id: ID!
    name: String!
    role: Role!
  }
  union SearchResult = User
  input MessageInput {
    text: String!
  }
  type Message {
    id: ID!
    text: String!
  }
  type Query {
    hello(name: String): String!
    users(role: Role): [User!]!
    node(id: ID!): Node
    search(term: String!): [SearchResult!]!
    "Answers after the given number of milliseconds."
    slow(ms: Int!): String
  }
  type Mutation {
    addMessage(input: MessageInput!): Message!
  }
`;

const placeholderOnly = 'type Query {\n  no_queries_available: String\n}';

const sorted = (sdl: string) => printSchema(lexicographicSortSchema(buildSchema(sdl)));

function session(role: string, variables: Record<string, string> = {}, isAdmin = false): Record<string, string> {
  return { 'x-test-session': JSON.stringify({ role, variables, ...(isAdmin ? { isAdmin } : {}) }) };
}

const admin = session('admin', {}, true);

/** The schema a session is served, as introspection shows it through the gateway. */
async function introspected(gateway: Gateway, headers: Record<string, string>): Promise<string> {
  const response = await gateway.post({ query: getIntrospectionQuery() }, headers);
  expect(response.status).toBe(200);
  return printSchema(lexicographicSortSchema(buildClientSchema(response.body.data as IntrospectionQuery)));
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

let sample: RunningRemote;
beforeAll(async () => {
  sample = await startSampleRemote();
});
afterAll(() => sample.close());

async function setup(
  entries: RemoteSchemaEntry[],
  options: RemoteSchemaRegistryOptions = {},
): Promise<{ registry: RemoteSchemaRegistry; gateway: Gateway; problems: unknown[] }> {
  const registry = createRemoteSchemaRegistry({
    logger: memoryLogger(),
    retry: false,
    enableRemoteSchemaPermissions: true,
    getSession: testGetSession,
    ...options,
  });
  const gateway = await startGateway(registry);
  cleanups.push(() => registry.dispose(), () => gateway.close());
  const plan = await registry.plan(entries);
  registry.commit(plan);
  return { registry, gateway, problems: [...plan.problems] };
}

const sampleWith = (permissions: RemoteSchemaEntry['permissions']): RemoteSchemaEntry => ({
  name: 'sample',
  definition: { url: sample.url },
  ...(permissions ? { permissions } : {}),
});

describe('a role with a permission', () => {
  it('sees exactly its grant in introspection, with the remote\'s descriptions', async () => {
    const { gateway, problems } = await setup([sampleWith([{ role: 'user', schema: userPermission }])]);
    expect(problems).toEqual([]);
    expect(await introspected(gateway, session('user'))).toBe(sorted(userSees));
  });

  it('is held to its grant by validation: fields, arguments, enum values, input fields, union members', async () => {
    const { gateway } = await setup([sampleWith([{ role: 'user', schema: userPermission }])]);
    const user = session('user');
    const refused = async (query: string, variables?: Record<string, unknown>) => {
      const response = await gateway.post({ query, ...(variables ? { variables } : {}) }, user);
      expect(response.status).toBe(200);
      expect(response.body.data).toBeUndefined();
      return response.body.errors.map((e: { message: string }) => e.message);
    };
    expect(await refused('{ remoteName }')).toEqual(['Cannot query field "remoteName" on type "Query".']);
    expect(await refused('{ users { posts { id } } }')).toEqual(['Cannot query field "posts" on type "User".']);
    expect(await refused('{ users(role: ADMIN) { id } }')).toEqual(['Value "ADMIN" does not exist in "Role" enum.']);
    expect(await refused('mutation { addMessage(input: {text: "a", author: "b"}) { id } }')).toEqual([
      'Field "author" is not defined by type "MessageInput".',
    ]);
    expect(await refused('{ search(term: "o") { ... on Post { title } } }')).toEqual(['Unknown type "Post".']);
    // Variables are checked against the role's schema too (the fast path skips execution).
    expect(await refused('query Q($r: Role) { users(role: $r) { id } }', { r: 'ADMIN' })).toEqual([
      'Variable "$r" got invalid value "ADMIN"; Value "ADMIN" does not exist in "Role" enum.',
    ]);
    expect(await refused('mutation M($i: MessageInput!) { addMessage(input: $i) { id } }', { i: { text: 'a', author: 'b' } })).toEqual([
      'Variable "$i" got invalid value { text: "a", author: "b" }; Field "author" is not defined by type "MessageInput".',
    ]);

    const granted = await gateway.post({ query: '{ users(role: EDITOR) { name role } search(term: "Ada") { ... on User { name } } }' }, user);
    expect(granted).toEqual({
      status: 200,
      body: { data: { users: [{ name: 'Grace', role: 'EDITOR' }], search: [{ name: 'Ada' }] } },
    });
  });
});

describe('a role granted the whole remote', () => {
  it('sees what admin sees, served from the same types instead of a copy', async () => {
    const { gateway, registry, problems } = await setup([sampleWith([{ role: 'all', schema: sampleTypeDefs }])]);
    expect(problems).toEqual([]);
    expect(await introspected(gateway, session('all'))).toBe(await introspected(gateway, admin));
    const schema = registry.schemaFor({ role: 'all' });
    expect(schema).not.toBe(registry.schema);
    expect(schema.getType('User')).toBe(registry.schema.getType('User'));
    expect(await gateway.post({ query: '{ remoteName }' }, session('all'))).toEqual({ status: 200, body: { data: { remoteName: 'sample' } } });
  });
});

describe('roles without a permission', () => {
  it('see nothing of the remote, and no conflict with the placeholder: an unknown role and the unauthorized role alike', async () => {
    const { gateway } = await setup([sampleWith([{ role: 'user', schema: userPermission }])]);
    for (const role of ['stranger', 'anonymous']) {
      expect(await introspected(gateway, session(role))).toBe(placeholderOnly);
      const response = await gateway.post({ query: '{ hello }' }, session(role));
      expect(response.body.errors[0].message).toBe('Cannot query field "hello" on type "Query".');
      expect(await gateway.post({ query: '{ no_queries_available }' }, session(role))).toEqual({
        status: 200,
        body: { data: { no_queries_available: null } },
      });
    }
  });

  it('see the local schema when there is one', async () => {
    const localSchema = buildSchema('type Query { version: String }');
    const { gateway } = await setup([sampleWith([{ role: 'user', schema: userPermission }])], { localSchema });
    expect(await introspected(gateway, session('stranger'))).toBe('type Query {\n  version: String\n}');
  });
});

describe('admin', () => {
  it('sees the whole remote; a request without a session sees nothing of it, as a role without permission', async () => {
    const { gateway, registry } = await setup([sampleWith([{ role: 'user', schema: userPermission }])]);
    const whole = printSchema(lexicographicSortSchema(registry.schema));
    expect(await introspected(gateway, admin)).toBe(whole);
    expect(await introspected(gateway, {})).toBe(await introspected(gateway, session('stranger')));
    expect(await introspected(gateway, {})).not.toContain('remoteName');
    expect(whole).toContain('remoteName');
    expect(await gateway.post({ query: '{ remoteName }' }, admin)).toEqual({ status: 200, body: { data: { remoteName: 'sample' } } });
  });
});

describe('with permissions disabled', () => {
  it('every role sees everything and permissions are neither checked nor enforced', async () => {
    const { gateway, registry, problems } = await setup(
      [sampleWith([{ role: 'user', schema: userPermission }, { role: 'broken', schema: 'type Query { nope: Int }' }])],
      { enableRemoteSchemaPermissions: false },
    );
    expect(problems).toEqual([]);
    const whole = printSchema(lexicographicSortSchema(registry.schema));
    for (const role of ['user', 'broken', 'stranger']) {
      expect(registry.schemaFor({ role })).toBe(registry.schema);
      expect(await introspected(gateway, session(role))).toBe(whole);
    }
    expect(await gateway.post({ query: '{ remoteName }' }, session('user'))).toEqual({
      status: 200,
      body: { data: { remoteName: 'sample' } },
    });
  });
});

describe('permissions that cannot be enforced', () => {
  it('are reported after the remotes\' problems, in entry order, and hide that remote from that role only', async () => {
    const { gateway, problems } = await setup([
      { name: 'missing', definition: { url: 'http://127.0.0.1:1/graphql', timeout_seconds: 1 }, permissions: [{ role: 'user', schema: 'type Query { a: Int }' }] },
      sampleWith([
        { role: 'broken', schema: 'type Query { hello: String! created_at: String }' },
        { role: 'user', schema: userPermission },
        { role: 'twice', schema: 'type Query { hello: String! }' },
        { role: 'twice', schema: 'type Query { remoteName: String! }' },
      ]),
    ]);
    expect(problems).toEqual([
      { name: 'missing', code: 'remote-schema-error', message: expect.stringContaining('HTTP exception occurred') },
      {
        name: 'sample',
        role: 'broken',
        code: 'validation-failed',
        message: 'validation for the given role-based schema failed because field "created_at" does not exist in the "Object": "Query"',
      },
      { name: 'sample', role: 'twice', code: 'invalid-configuration', message: 'permission for role "twice" is given more than once' },
    ]);
    expect(await introspected(gateway, session('broken'))).toBe(placeholderOnly);
    expect(await introspected(gateway, session('twice'))).toBe(placeholderOnly);
    expect(await introspected(gateway, session('user'))).toBe(sorted(userSees));
  });

  it('are hidden from their role when their remote is left out, and fixed by the next plan', async () => {
    const { gateway, registry } = await setup([sampleWith([{ role: 'user', schema: 'type Query { hello: String! nope: Int }' }])]);
    expect(registry.problems().map((p) => p.role)).toEqual(['user']);
    expect(await introspected(gateway, session('user'))).toBe(placeholderOnly);
    const plan = await registry.plan([sampleWith([{ role: 'user', schema: 'type Query { hello: String! }' }])]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    expect(await introspected(gateway, session('user'))).toBe('type Query {\n  hello: String!\n}');
  });

  it('are checked once per loaded remote and SDL: an unchanged permission keeps its grant across plans', async () => {
    const entries = [sampleWith([{ role: 'user', schema: userPermission }])];
    const { registry } = await setup(entries);
    const grantOf = () => roleSchemaInfo(registry.schemaFor({ role: 'user' }))?.remotes.get('sample')?.grant;
    const first = grantOf();
    expect(first).toBeDefined();
    registry.commit(await registry.plan(entries));
    expect(grantOf()).toBe(first);
    registry.commit(await registry.plan(entries, { reload: 'all' }));
    expect(grantOf()).not.toBe(first);
  });
});

describe('role schemas', () => {
  it('are built once per role and live state, kept up to maxRoleSchemas, and rebuilt after a swap', async () => {
    const roles = ['r1', 'r2', 'r3', 'r4', 'r5'];
    const { gateway, registry } = await setup(
      [sampleWith(roles.map((role) => ({ role, schema: 'type Query { hello(name: String): String! }' })))],
      { maxRoleSchemas: 3 },
    );
    const first = registry.schemaFor({ role: 'r1' });
    expect(registry.schemaFor({ role: 'r1' })).toBe(first);
    for (const role of roles) {
      expect(await gateway.post({ query: `{ hello(name: "${role}") }` }, session(role))).toEqual({
        status: 200,
        body: { data: { hello: `Hello, ${role}!` } },
      });
      expect(cachedRoleSchemaCount(registry)).toBeLessThanOrEqual(3);
    }
    expect(cachedRoleSchemaCount(registry)).toBe(3);
    // r1 was the least recently used: built again, and it serves as before.
    const again = registry.schemaFor({ role: 'r1' });
    expect(again).not.toBe(first);
    expect(roleSchemaInfo(again)?.role).toBe('r1');
    registry.commit(await registry.plan([sampleWith([{ role: 'r1', schema: 'type Query { hello(name: String): String! }' }])]));
    expect(cachedRoleSchemaCount(registry)).toBe(0);
    expect(registry.schemaFor({ role: 'r1' })).not.toBe(again);
  });

  it('follow a swap: a committed change of permissions is served to the next request of that role', async () => {
    const { gateway, registry } = await setup([sampleWith([{ role: 'user', schema: 'type Query { hello: String! }' }])]);
    expect((await gateway.post({ query: '{ remoteName }' }, session('user'))).body.errors[0].message).toBe(
      'Cannot query field "remoteName" on type "Query".',
    );
    registry.commit(await registry.plan([sampleWith([{ role: 'user', schema: 'type Query { hello: String! remoteName: String! }' }])]));
    expect(await gateway.post({ query: '{ remoteName }' }, session('user'))).toEqual({ status: 200, body: { data: { remoteName: 'sample' } } });
  });

  it('refuse a role whose session is not known when its schema is chosen, instead of serving it everything', async () => {
    // The default getSession reads context.session, which the test gateway sets only once the
    // context is built: at schema choice the request has no session, and gets what a role
    // without any permission gets (nothing of the remote).
    const logger = memoryLogger();
    const { gateway } = await setup([sampleWith([{ role: 'user', schema: 'type Query { hello: String! }' }])], {
      getSession: (context) => testGetSession({ session: (context as { session?: unknown }).session }),
      logger,
    });
    const response = await gateway.post({ query: '{ remoteName }' }, session('user'));
    expect(response.body.errors).toEqual([expect.objectContaining({ message: 'Cannot query field "remoteName" on type "Query".' })]);
    expect(response.body.data).toBeUndefined();
  });
});

describe('two roles querying while permissions change', () => {
  it('fail no request, and neither sees the other\'s view', async () => {
    const plans = [
      [
        { role: 'a', schema: 'type Query { hello(name: String @preset(value: "x-svc-user-id")): String! }' },
        { role: 'b', schema: 'type Query { remoteName: String! }' },
      ],
      [
        { role: 'a', schema: 'type Query { hello(name: String @preset(value: "x-svc-user-id")): String! users: [User!]! } type User { id: ID! }' },
        { role: 'b', schema: 'type Query { remoteName: String! messages: [Message!]! } type Message { id: ID! }' },
      ],
      [{ role: 'b', schema: 'type Query { remoteName: String! }' }],
    ];
    const { registry, gateway } = await setup([sampleWith(plans[0])]);
    let stop = false;
    let commits = 0;
    const swapping = (async () => {
      for (let i = 1; !stop; i++) {
        registry.commit(await registry.plan([sampleWith(plans[i % plans.length])]));
        commits++;
        await new Promise((r) => setTimeout(r, 3));
      }
    })();
    const failures: unknown[] = [];
    const cannot = (field: string) => `Cannot query field "${field}" on type "Query".`;
    const check = (role: string, response: { status: number; body: any }, accept: (body: any) => boolean) => {
      if (response.status !== 200 || !accept(response.body)) failures.push({ role, response });
    };
    const worker = async (n: number) => {
      for (let i = 0; i < 30; i++) {
        const id = `${n}-${i}`;
        const a = session('a', { 'x-svc-user-id': id });
        // a: its hello always works while granted (plans 0 and 1), with its own preset; b's fields never.
        const hello = await gateway.post({ query: '{ hello }' }, a);
        check('a', hello, (b) => b.data?.hello === `Hello, ${id}!` || b.errors?.[0]?.message === cannot('hello'));
        check('a', await gateway.post({ query: '{ remoteName }' }, a), (b) => b.errors?.[0]?.message === cannot('remoteName'));
        check('a', await gateway.post({ query: '{ messages { id } }' }, a), (b) => b.errors?.[0]?.message === cannot('messages'));
        const users = await gateway.post({ query: '{ users { id } }' }, a);
        check('a', users, (b) => b.data?.users?.length === 3 || b.errors?.[0]?.message === cannot('users'));
        // b: never a's fields.
        const b = session('b');
        check('b', await gateway.post({ query: '{ remoteName }' }, b), (body) => body.data?.remoteName === 'sample');
        check('b', await gateway.post({ query: '{ hello }' }, b), (body) => body.errors?.[0]?.message === cannot('hello'));
        check('b', await gateway.post({ query: '{ users { id } }' }, b), (body) => body.errors?.[0]?.message === cannot('users'));
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, n) => worker(n)));
    stop = true;
    await swapping;
    expect(failures).toEqual([]);
    expect(commits).toBeGreaterThan(10);
  }, 60_000);
});
