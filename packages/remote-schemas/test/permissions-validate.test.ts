import { describe, expect, it } from 'vitest';
import { buildSchema, print, type GraphQLSchema } from 'graphql';
import type { InputValueGrant, RoleGrant, TypeGrant } from '../src/permissions/grant.js';
import { validateRoleSchema } from '../src/permissions/validate.js';
import { PERMISSIONS_REMOTE_SDL, permissionsRemote } from './fixtures/permissions-remote.js';

const remote = permissionsRemote();
const options = { sessionVariablePrefix: 'x-svc-' };

function grantOf(sdl: string, schema: GraphQLSchema = remote): RoleGrant {
  const result = validateRoleSchema(schema, sdl, options);
  if (!result.ok) throw new Error(`expected the role schema to be accepted, got: ${result.message}`);
  return result.grant;
}

function refusalOf(sdl: string, schema: GraphQLSchema = remote): string {
  const result = validateRoleSchema(schema, sdl, options);
  if (result.ok) throw new Error('expected the role schema to be refused');
  return result.message;
}

function because(reason: string): string {
  return `validation for the given role-based schema failed because ${reason}`;
}

function forReasons(...reasons: string[]): string {
  return `validation for the given role-based schema failed for the following reasons:\n${reasons.map((r) => ` • ${r}\n`).join('')}`;
}

/** A grant as plain data; a preset is shown as the value printed and whether it is static. */
function plain(grant: RoleGrant) {
  return {
    roots: grant.roots,
    hasPresets: grant.hasPresets,
    types: Object.fromEntries([...grant.types].map(([name, type]) => [name, plainType(type)])),
  };
}

function plainType(type: TypeGrant) {
  switch (type.kind) {
    case 'object':
    case 'interface':
      return {
        kind: type.kind,
        interfaces: type.interfaces,
        fields: Object.fromEntries([...type.fields].map(([name, field]) => [name, plainValues(field.args)])),
      };
    case 'input':
      return { kind: type.kind, fields: plainValues(type.fields) };
    case 'enum':
      // A set: which values, not in which order.
      return { kind: type.kind, values: [...type.values].sort() };
    case 'union':
      return { kind: type.kind, members: type.members };
    case 'scalar':
      return { kind: type.kind };
  }
}

function plainValues(values: ReadonlyMap<string, InputValueGrant>) {
  return Object.fromEntries(
    [...values].map(([name, value]) => [name, value.preset ? { preset: print(value.preset.value), static: value.preset.static } : {}]),
  );
}

/** A role schema whose query root asks nothing of the remote, with `sdl` beside it. */
function withRoot(sdl: string): string {
  return `type Query { version: String! }\n${sdl}`;
}

const SCALAR = { kind: 'scalar' } as const;

describe('a subset of the remote is granted', () => {
  it('grants each kind of type in the remote names, with the roots named by the schema block', () => {
    const grant = grantOf(/* GraphQL */ `
      schema { query: query_root mutation: mutation_root subscription: subscription_root }

      scalar DateTime
      enum Role { ADMIN VIEWER }
      interface Node { id: ID! }
      type User implements Node {
        id: ID!
        name: String!
        role: Role!
        created_at: DateTime!
        posts(first: Int, where: PostWhere): [Post!]!
      }
      type Post implements Node { id: ID! title: String! tags: [String!] author: User! }
      union SearchResult = Post
      input UserWhere { name: StringComparison posts: PostWhere }
      input PostWhere { created_at: DateTimeComparison }
      input StringComparison { _eq: String }
      input DateTimeComparison { _gt: DateTime }

      type query_root {
        user(id: ID!): User
        users(where: UserWhere): [User!]!
        node(id: ID!): Node
        search(term: String!, limit: Int): [SearchResult!]!
      }
      type mutation_root { set_role(user_id: ID!, role: Role!): User }
      type subscription_root { post_added(author_id: ID): Post! }
    `);
    expect(plain(grant)).toEqual({
      roots: { query: 'query_root', mutation: 'mutation_root', subscription: 'subscription_root' },
      hasPresets: false,
      types: {
        DateTime: SCALAR,
        Role: { kind: 'enum', values: ['ADMIN', 'VIEWER'] },
        Node: { kind: 'interface', interfaces: [], fields: { id: {} } },
        User: {
          kind: 'object',
          interfaces: ['Node'],
          fields: { id: {}, name: {}, role: {}, created_at: {}, posts: { first: {}, where: {} } },
        },
        Post: { kind: 'object', interfaces: ['Node'], fields: { id: {}, title: {}, tags: {}, author: {} } },
        SearchResult: { kind: 'union', members: ['Post'] },
        UserWhere: { kind: 'input', fields: { name: {}, posts: {} } },
        PostWhere: { kind: 'input', fields: { created_at: {} } },
        StringComparison: { kind: 'input', fields: { _eq: {} } },
        DateTimeComparison: { kind: 'input', fields: { _gt: {} } },
        query_root: {
          kind: 'object',
          interfaces: [],
          fields: { user: { id: {} }, users: { where: {} }, node: { id: {} }, search: { term: {}, limit: {} } },
        },
        mutation_root: { kind: 'object', interfaces: [], fields: { set_role: { user_id: {}, role: {} } } },
        subscription_root: { kind: 'object', interfaces: [], fields: { post_added: { author_id: {} } } },
        ID: SCALAR,
        String: SCALAR,
        Int: SCALAR,
      },
    });
  });

  it('takes Query, Mutation and Subscription for the remote roots, whatever the remote calls them, when there is no schema block', () => {
    const grant = grantOf(/* GraphQL */ `
      type Query { me: User version: String! }
      type Mutation { set_role(user_id: ID!, role: Role!): User }
      type Subscription { post_added: Post! }
      type User { id: ID! name: String! }
      type Post { id: ID! title: String! }
      enum Role { EDITOR }
    `);
    expect(grant.roots).toEqual({ query: 'query_root', mutation: 'mutation_root', subscription: 'subscription_root' });
    expect([...grant.types.keys()].sort()).toEqual(
      ['query_root', 'mutation_root', 'subscription_root', 'User', 'Post', 'Role', 'ID', 'String'].sort(),
    );
    expect(plainType(grant.types.get('query_root') as TypeGrant)).toEqual({
      kind: 'object',
      interfaces: [],
      fields: { me: {}, version: {} },
    });
  });

  it('takes the types a schema block names for the remote roots, whatever either calls them', () => {
    const grant = grantOf(/* GraphQL */ `
      schema { query: Viewer mutation: Admin }
      type Viewer { me: User }
      type Admin { set_role(user_id: ID!, role: Role!): User }
      type User { id: ID! }
      enum Role { ADMIN }
    `);
    expect(grant.roots).toEqual({ query: 'query_root', mutation: 'mutation_root' });
    expect(plainType(grant.types.get('mutation_root') as TypeGrant)).toEqual({
      kind: 'object',
      interfaces: [],
      fields: { set_role: { user_id: {}, role: {} } },
    });
    expect(grant.types.has('Viewer')).toBe(false);
  });

  it('takes types named like the remote roots for its roots when there is no schema block', () => {
    const grant = grantOf('type query_root { version: String! }\ntype mutation_root { set_role(user_id: ID!, role: Role!): User }\ntype User { id: ID! }\nenum Role { ADMIN }');
    expect(grant.roots).toEqual({ query: 'query_root', mutation: 'mutation_root' });
  });

  it('matches a remote whose roots have the default names, with and without a schema block', () => {
    const plainRemote = permissionsRemote('type Query { hello: String! user(id: ID!): User } type User { id: ID! name: String }');
    for (const sdl of [
      'schema { query: Query }\ntype Query { hello: String! }',
      'type Query { hello: String! }',
    ]) {
      const grant = grantOf(sdl, plainRemote);
      expect(plain(grant)).toEqual({
        roots: { query: 'Query' },
        hasPresets: false,
        types: { Query: { kind: 'object', interfaces: [], fields: { hello: {} } }, String: SCALAR },
      });
    }
  });

  it('merges type extensions into their types', () => {
    const grant = grantOf(/* GraphQL */ `
      type Query { version: String! }
      extend type Query { me: User }
      type User { id: ID! }
      extend type User { name: String! }
      enum Role { ADMIN }
      extend enum Role { VIEWER }
    `);
    expect(plainType(grant.types.get('query_root') as TypeGrant)).toEqual({ kind: 'object', interfaces: [], fields: { version: {}, me: {} } });
    expect(plainType(grant.types.get('User') as TypeGrant)).toEqual({ kind: 'object', interfaces: [], fields: { id: {}, name: {} } });
    expect(plainType(grant.types.get('Role') as TypeGrant)).toEqual({ kind: 'enum', values: ['ADMIN', 'VIEWER'] });
  });

  it('accepts built-in scalars declared in the role schema', () => {
    const grant = grantOf('scalar String\nscalar Boolean\ntype Query { version: String! }');
    expect(plain(grant).types).toEqual({ query_root: { kind: 'object', interfaces: [], fields: { version: {} } }, String: SCALAR });
  });
});

describe('the role schema is compared by meaning, not by text', () => {
  const bare = /* GraphQL */ `
    schema { query: query_root mutation: mutation_root }
    scalar JSON
    enum OrderDirection { asc desc }
    enum Role { ADMIN EDITOR }
    union SearchResult = User
    input Paging { limit: Int! offset: Int }
    input NewPost { title: String! author_id: ID! tags: [String!] }
    type User { id: ID! posts(first: Int, order: OrderDirection): [Post!]! settings(keys: JSON): JSON score(weight: Float): Float }
    type Post { id: ID! }
    type query_root {
      version: String!
      me: User
      users(where: UserWhere, paging: Paging, order: OrderDirection): [User!]!
      search(term: String!, limit: Int, roles: [Role!]): [SearchResult!]!
    }
    input UserWhere { name: StringComparison }
    input StringComparison { _eq: String }
    type mutation_root { create_post(input: NewPost!, notify: Boolean): Post! }
  `;

  it('ignores descriptions and other directives, and the order of types, fields and arguments', () => {
    const decorated = /* GraphQL */ `
      directive @cached(ttl: Int) on OBJECT | FIELD_DEFINITION

      """What the user role may ask."""
      type query_root @cached(ttl: 60) {
        "The users, most recent first."
        users(
          "How to sort"
          order: OrderDirection
          paging: Paging @internal
          where: UserWhere
        ): [User!]! @cached(ttl: 5)
        search(roles: [Role!], limit: Int, term: String!): [SearchResult!]!
        me: User @deprecated(reason: "ask for user")
        version: String!
      }
      input StringComparison { _eq: String }
      input UserWhere { name: StringComparison }
      type mutation_root { create_post(notify: Boolean, input: NewPost!): Post! }
      type Post { id: ID! }
      "A person" type User { score(weight: Float): Float settings(keys: JSON): JSON posts(order: OrderDirection, first: Int): [Post!]! id: ID! }
      input NewPost { tags: [String!] author_id: ID! "The headline" title: String! }
      input Paging { offset: Int limit: Int! }
      union SearchResult = User
      enum Role { EDITOR "Everything" ADMIN @deprecated }
      enum OrderDirection { desc asc }
      scalar JSON @specifiedBy(url: "https://www.json.org")
      schema @cached(ttl: 1) { mutation: mutation_root query: query_root }
    `;
    expect(plain(grantOf(decorated))).toEqual(plain(grantOf(bare)));
  });

  it('accepts default values that are omitted, or written differently but equal to the remote ones', () => {
    const withDefaults = /* GraphQL */ `
      schema { query: query_root mutation: mutation_root }
      scalar JSON
      enum OrderDirection { asc desc }
      enum Role { ADMIN EDITOR }
      union SearchResult = User
      input Paging { limit: Int! = 20 offset: Int = 0 }
      input NewPost { title: String! author_id: ID! tags: [String!] = "news" }
      type User {
        id: ID!
        posts(first: Int = 10, order: OrderDirection = desc): [Post!]!
        settings(keys: JSON = {size: 2, theme: "dark"}): JSON
        score(weight: Float = 1): Float
      }
      type Post { id: ID! }
      type query_root {
        version: String!
        me: User
        users(where: UserWhere, paging: Paging = {offset: 0, limit: 20}, order: OrderDirection): [User!]!
        search(term: String!, limit: Int = 5, roles: [Role!] = [ADMIN, EDITOR]): [SearchResult!]!
      }
      input UserWhere { name: StringComparison }
      input StringComparison { _eq: String }
      type mutation_root { create_post(input: NewPost!, notify: Boolean = false): Post! }
    `;
    expect(plain(grantOf(withDefaults))).toEqual(plain(grantOf(bare)));
    // An input object's default compares once its fields' own defaults are filled in.
    const filledIn = withDefaults.replace('{offset: 0, limit: 20}', '{limit: 20}');
    expect(plain(grantOf(filledIn))).toEqual(plain(grantOf(bare)));
  });

  it('compares the same against a remote built from SDL as against one built from introspection', () => {
    const fromSdl = buildSchema(PERMISSIONS_REMOTE_SDL);
    const sdl = bare.replace('paging: Paging,', 'paging: Paging = {offset: 0, limit: 20},');
    expect(plain(grantOf(sdl, fromSdl))).toEqual(plain(grantOf(bare)));
  });
});

describe('what the remote does not have is refused, naming type and field', () => {
  it.each([
    ['a field the object does not have', withRoot('type User { id: ID! birthday: DateTime }\nscalar DateTime'),
      'field "birthday" does not exist in the "Object": "User"'],
    ['a field the interface does not have', withRoot('interface Timestamped { created_at: DateTime! deleted_at: DateTime }\nscalar DateTime'),
      'field "deleted_at" does not exist in the "Interface": "Timestamped"'],
    ['an object field of another nullability', withRoot('type User { name: String }'),
      'expected type of "name"("Object field") to be String! but received String'],
    ['an object field of another list wrapping', withRoot('type Post { tags: [String] }'),
      'expected type of "tags"("Object field") to be [String!] but received [String]'],
    ['an interface field of another type', withRoot('interface Timestamped { created_at: String! }'),
      'expected type of "created_at"("Interface field") to be DateTime! but received String!'],
    ['an argument of another type', 'type Query { user(id: String): User }\ntype User { id: ID! }',
      'expected type of "id"("argument") to be ID! but received String'],
    ['an argument the field does not have', 'type Query { me(as: Role): User }\ntype User { id: ID! }\nenum Role { ADMIN }',
      'argument "as" does not exist in the field "me" of the "Object": "Query"'],
    ['a required argument left out', 'type Query { user: User }\ntype User { id: ID! }',
      'field: "user" expects the following non nullable arguments to be present: "id"'],
    ['two required arguments left out', withRoot('type Mutation { set_role: User }\ntype User { id: ID! }'),
      'field: "set_role" expects the following non nullable arguments to be present: "user_id" and "role"'],
    ['another default value of an enum argument', withRoot('type User { posts(order: OrderDirection = asc): [Post!]! }\ntype Post { id: ID! }\nenum OrderDirection { asc desc }'),
      'expected default value of argument: "order" of field "posts" to be desc but received asc'],
    ['a default value where the remote has none', 'type Query { posts(since: DateTime = "2024-01-01"): [Post!]! }\ntype Post { id: ID! }\nscalar DateTime',
      'expected default value of argument: "since" of field "posts" to be none but received "2024-01-01"'],
    ['another default value of an input object argument', 'type Query { users(paging: Paging = {limit: 50}): [User!]! }\ntype User { id: ID! }\ninput Paging { limit: Int! }',
      'expected default value of argument: "paging" of field "users" to be {limit: 20, offset: 0} but received {limit: 50}'],
    ['another default value of a custom scalar argument', withRoot('type User { settings(keys: JSON = {theme: "light", size: 2}): JSON }\nscalar JSON'),
      'expected default value of argument: "keys" of field "settings" to be {theme: "dark", size: 2} but received {theme: "light", size: 2}'],
    ['an object the remote does not have', withRoot('type Invoice { id: ID! }'),
      '"Object": "Invoice" does not exist in the upstream remote schema'],
    ['a type of another kind', withRoot('interface Comment { id: ID! }'),
      '"Interface": "Comment" does not exist in the upstream remote schema'],
    ['a scalar the remote does not have', withRoot('scalar Upload'),
      '"Scalar": "Upload" does not exist in the upstream remote schema'],
    ['an input object the remote does not have', withRoot('input CommentWhere { text: String }'),
      '"Input object": "CommentWhere" does not exist in the upstream remote schema'],
    ['an enum the remote does not have', withRoot('enum Mood { HAPPY }'),
      '"Enum": "Mood" does not exist in the upstream remote schema'],
    ['enum values the remote does not have', withRoot('enum Role { ADMIN OWNER GUEST }'),
      'enum "Role" contains the following enum values that do not exist in the corresponding upstream remote enum: "OWNER" and "GUEST"'],
    ['a union member the remote does not have', withRoot('union SearchResult = Post | Comment\ntype Post { id: ID! }\ntype Comment { id: ID! }'),
      'union "SearchResult" contains members which do not exist in the members of the remote schema union: "Comment"'],
    ['an interface the remote object does not implement', withRoot('interface Content { id: ID! }\ntype User implements Content { id: ID! }'),
      'object "User" is trying to implement the following interfaces that do not exist in the corresponding upstream remote object: "Content"'],
    ['an input field the remote does not have', withRoot('input PostWhere { title: StringComparison tag: String }\ninput StringComparison { _eq: String }'),
      'field "tag" does not exist in the "Input object": "PostWhere"'],
    ['an input field of another type', withRoot('input IntComparison { _eq: Boolean _gt: Int }'),
      'expected type of "_eq"("Input object argument") to be Int but received Boolean'],
    ['required input fields left out', withRoot('input NewPost { body: String }'),
      'input object: "NewPost" expects the following non nullable fields to be present: "title" and "author_id"'],
    ['another default value of an input field', withRoot('input Paging { limit: Int! = 50 }'),
      'expected default value of input value: "limit" of input object "Paging" to be 20 but received 50'],
  ])('refuses %s', (_, sdl, reason) => {
    expect(refusalOf(sdl)).toBe(because(reason));
  });

  it('reports every mismatch in one message, one reason a line', () => {
    const sdl = /* GraphQL */ `
      type Query { user: User version: Int! }
      type User { id: ID! birthday: String @preset(value: "x-svc-user-id") }
      enum Role { ADMIN OWNER }
    `;
    expect(refusalOf(sdl)).toBe(forReasons(
      'field: "user" expects the following non nullable arguments to be present: "id"',
      'expected type of "version"("Object field") to be String! but received Int!',
      'Preset directives can be defined only on INPUT_FIELD_DEFINITION or ARGUMENT_DEFINITION, but one is on the field "birthday" of the "Object": "User"',
      'field "birthday" does not exist in the "Object": "User"',
      'enum "Role" contains the following enum values that do not exist in the corresponding upstream remote enum: "OWNER"',
    ));
  });
});

describe('the role schema must be a schema of its own', () => {
  it.each([
    ['a type it does not define', 'type Query { me: User }',
      'type "User" used by the field "me" of the "Object": "Query" is not defined in the schema'],
    ['an argument type it does not define', 'type Query { users(where: UserWhere): [User!]! }\ntype User { id: ID! }',
      'type "UserWhere" used by the argument "where" of the field "users" of the "Object": "Query" is not defined in the schema'],
    ['an object without a field of its interface', withRoot('interface Node { id: ID! }\ntype User implements Node { name: String! }'),
      'object "User" does not have the field "id" of its interface "Node"'],
    ['an object without the interfaces of its interface', withRoot('interface Node { id: ID! }\ninterface Content implements Node { id: ID! title: String! }\ntype Post implements Content { id: ID! title: String! }'),
      'object "Post" must also implement "Node", which its interface "Content" implements'],
    ['a type without fields', withRoot('type User'),
      'the "Object": "User" must define one or more fields'],
    ['a type defined twice', withRoot('type User { id: ID! }\ntype User { name: String! }'),
      'duplicate type names found: "User"'],
    ['a field given twice', withRoot('type User { id: ID! id: ID! }'),
      'duplicate fields "id" found in the "Object": "User"'],
    ['an argument given twice', 'type Query { user(id: ID!, id: ID!): User }\ntype User { id: ID! }',
      'duplicate arguments "id" found in the field "user" of the "Object": "Query"'],
    ['an extension of a type it does not define', withRoot('extend type User { name: String! }'),
      'cannot extend type "User" because it is not defined'],
    ['an operation', withRoot('query { version }'),
      'the schema contains an operation or a fragment, where only type definitions are expected'],
  ])('refuses %s', (_, sdl, reason) => {
    expect(refusalOf(sdl)).toBe(because(reason));
  });

  it('refuses an object field without an argument of its interface field', () => {
    const feeds = permissionsRemote(
      'type Query { feed: Feed home: Home }\ninterface Feed { items(first: Int): [String!]! }\ntype Home implements Feed { items(first: Int): [String!]! }',
    );
    const sdl = 'type Query { feed: Feed }\ninterface Feed { items(first: Int): [String!]! }\ntype Home implements Feed { items: [String!]! }';
    expect(refusalOf(sdl, feeds)).toBe(
      because('the field "items" of the object "Home" does not have the argument "first" of its interface "Feed"'),
    );
  });

  it('refuses text that is not GraphQL, naming the syntax error', () => {
    expect(refusalOf('type Query { version: String! ')).toBe(
      because('the schema cannot be parsed: Syntax Error: Expected Name, found <EOF> (line 1, column 31)'),
    );
    expect(refusalOf('type Query {\n  version: String!\n  me: User!!\n}')).toBe(
      because('the schema cannot be parsed: Syntax Error: Expected Name, found "!" (line 3, column 12)'),
    );
  });
});

describe('root types', () => {
  it.each([
    ['an empty schema', ''],
    ['a schema of blanks and comments', '  \n# nothing granted yet\n'],
    ['a schema without a query root', 'type User { id: ID! }'],
    ['a schema block without a query root', 'schema { mutation: mutation_root }\ntype mutation_root { set_role(user_id: ID!, role: Role!): User }\ntype User { id: ID! }\nenum Role { ADMIN }'],
  ])('refuses %s', (_, sdl) => {
    expect(refusalOf(sdl)).toBe(because('query root does not exist in the schema definition'));
  });

  it.each([
    ['a root the schema block names but nothing defines', 'schema { query: Root }',
      'the query root "Root" is not defined in the schema'],
    ['a remote root given as an ordinary type beside a schema block', 'schema { query: Query }\ntype Query { version: String! }\ntype mutation_root { set_role(user_id: ID!, role: Role!): User }\ntype User { id: ID! }\nenum Role { ADMIN }',
      '"mutation_root" is the mutation root of the upstream remote schema, so it can only be given as the mutation root'],
    ['a remote root given beside the default-named root', 'type Query { version: String! }\ntype query_root { me: User }\ntype User { id: ID! }',
      '"query_root" is the query root of the upstream remote schema, so it can only be given as the query root'],
    ['one type for the roots of two operations', 'schema { query: Root mutation: Root }\ntype Root { version: String! }',
      '"Root" is given as the root of more than one operation, but the upstream remote schema has different roots for them'],
  ])('refuses %s', (_, sdl, reason) => {
    expect(refusalOf(sdl)).toBe(because(reason));
  });

  it('refuses a root the remote does not have', () => {
    const queryOnly = permissionsRemote('type Query { hello: String! }');
    expect(refusalOf('schema { query: Query mutation: Mutation }\ntype Query { hello: String! }\ntype Mutation { hello: String! }', queryOnly)).toBe(forReasons(
      'the upstream remote schema has no mutation root, but "Mutation" is given as one',
      '"Object": "Mutation" does not exist in the upstream remote schema',
    ));
    expect(refusalOf('type Query { hello: String! }\ntype Mutation { hello: String! }', queryOnly)).toBe(
      because('"Object": "Mutation" does not exist in the upstream remote schema'),
    );
  });

  it('takes a type with a default root name for an ordinary type when the remote has no such root and there is no schema block', () => {
    const billing = permissionsRemote('schema { query: Query }\ntype Query { subscription: Subscription }\ntype Subscription { plan: String! renews_at: String }');
    const grant = grantOf('type Query { subscription: Subscription }\ntype Subscription { plan: String! }', billing);
    expect(plain(grant)).toEqual({
      roots: { query: 'Query' },
      hasPresets: false,
      types: {
        Query: { kind: 'object', interfaces: [], fields: { subscription: {} } },
        Subscription: { kind: 'object', interfaces: [], fields: { plan: {} } },
        String: SCALAR,
      },
    });
  });

  it('refuses two schema blocks', () => {
    expect(refusalOf('schema { query: Query }\nschema { query: Query }\ntype Query { version: String! }')).toBe(forReasons(
      'the query root is given more than once in the schema definition',
      'multiple schema definitions found',
    ));
  });
});

describe('@preset', () => {
  it('takes session variables on root arguments, whatever the case of the prefix and the type of the argument', () => {
    const grant = grantOf(/* GraphQL */ `
      type Query { user(id: ID! @preset(value: "x-svc-user-id")): User }
      type User { id: ID! posts(first: Int @preset(value: "X-SVC-Page-Size"), order: OrderDirection): [Post!]! }
      type Post { id: ID! }
      enum OrderDirection { asc desc }
    `);
    expect(grant.hasPresets).toBe(true);
    expect(plainType(grant.types.get('query_root') as TypeGrant)).toEqual({
      kind: 'object',
      interfaces: [],
      fields: { user: { id: { preset: '"x-svc-user-id"', static: false } } },
    });
    expect(plainType(grant.types.get('User') as TypeGrant)).toEqual({
      kind: 'object',
      interfaces: [],
      fields: { id: {}, posts: { first: { preset: '"X-SVC-Page-Size"', static: false }, order: {} } },
    });
  });

  it('takes a static preset that looks like a session variable as the literal it is', () => {
    const grant = grantOf('type Query { search(term: String! @preset(value: "x-svc-user-id", static: true), limit: Int @preset(value: 3, static: false)): [SearchResult!]! }\nunion SearchResult = Post\ntype Post { id: ID! }');
    expect(plainType(grant.types.get('query_root') as TypeGrant)).toEqual({
      kind: 'object',
      interfaces: [],
      fields: { search: { term: { preset: '"x-svc-user-id"', static: true }, limit: { preset: '3', static: false } } },
    });
    expect(refusalOf(withRoot('type User { posts(first: Int @preset(value: "x-svc-page-size", static: true)): [Post!]! }\ntype Post { id: ID! }'))).toBe(because(
      'preset value "x-svc-page-size" at the argument "first" of the field "posts" of the "Object": "User" is invalid: Int cannot represent non-integer value: "x-svc-page-size"',
    ));
  });

  it('takes presets on input fields three levels deep, of Int, enum, list and custom scalar types, leaving the argument in place', () => {
    const grant = grantOf(/* GraphQL */ `
      type Query { users(where: UserWhere): [User!]! }
      type User { id: ID! }
      input UserWhere { id: IntComparison role: RoleComparison posts: PostWhere }
      input IntComparison { _gt: Int @preset(value: 0) _lt: Int _in: [Int!] @preset(value: "x-svc-allowed-ids") }
      input RoleComparison { _eq: Role @preset(value: EDITOR) _in: [Role!] @preset(value: [VIEWER, EDITOR]) }
      enum Role { VIEWER EDITOR }
      input PostWhere { created_at: DateTimeComparison visibility: [Visibility!] @preset(value: PUBLIC) }
      input DateTimeComparison { _gt: DateTime @preset(value: "2024-01-01T00:00:00Z") _lt: DateTime }
      scalar DateTime
      enum Visibility { PUBLIC }
    `);
    const { types } = plain(grant);
    expect(grant.hasPresets).toBe(true);
    expect(types['query_root']).toEqual({ kind: 'object', interfaces: [], fields: { users: { where: {} } } });
    expect(types['UserWhere']).toEqual({ kind: 'input', fields: { id: {}, role: {}, posts: {} } });
    expect(types['IntComparison']).toEqual({
      kind: 'input',
      fields: { _gt: { preset: '0', static: false }, _lt: {}, _in: { preset: '"x-svc-allowed-ids"', static: false } },
    });
    expect(types['RoleComparison']).toEqual({
      kind: 'input',
      fields: { _eq: { preset: 'EDITOR', static: false }, _in: { preset: '[VIEWER, EDITOR]', static: false } },
    });
    expect(types['PostWhere']).toEqual({ kind: 'input', fields: { created_at: {}, visibility: { preset: 'PUBLIC', static: false } } });
    expect(types['DateTimeComparison']).toEqual({
      kind: 'input',
      fields: { _gt: { preset: '"2024-01-01T00:00:00Z"', static: false }, _lt: {} },
    });
  });

  it('takes presets on non-null arguments and input fields, and input object values checked against the remote types', () => {
    const grant = grantOf(/* GraphQL */ `
      type Query { users(where: UserWhere @preset(value: {role: {_eq: VIEWER}, posts: {created_at: {_gt: "2024-01-01"}}})): [User!]! }
      type Mutation {
        set_role(user_id: ID! @preset(value: "x-svc-user-id"), role: Role! @preset(value: VIEWER)): User
        create_post(input: NewPost!): Post!
      }
      input NewPost { title: String! author_id: ID! @preset(value: "x-svc-user-id") }
      input UserWhere { name: StringComparison }
      input StringComparison { _eq: String }
      type User { id: ID! }
      type Post { id: ID! }
      enum Role { VIEWER }
    `);
    const { types } = plain(grant);
    expect(types['query_root']).toEqual({
      kind: 'object',
      interfaces: [],
      fields: { users: { where: { preset: '{role: {_eq: VIEWER}, posts: {created_at: {_gt: "2024-01-01"}}}', static: false } } },
    });
    expect(types['mutation_root']).toEqual({
      kind: 'object',
      interfaces: [],
      fields: {
        set_role: { user_id: { preset: '"x-svc-user-id"', static: false }, role: { preset: 'VIEWER', static: false } },
        create_post: { input: {} },
      },
    });
    expect(types['NewPost']).toEqual({ kind: 'input', fields: { title: {}, author_id: { preset: '"x-svc-user-id"', static: false } } });
  });

  it('keeps the value node as written in the SDL', () => {
    const grant = grantOf('type Query { search(term: String!, limit: Int @preset(value: 7)): [SearchResult!]! }\nunion SearchResult = Post\ntype Post { id: ID! }');
    const root = grant.types.get('query_root');
    const preset = root?.kind === 'object' ? root.fields.get('search')?.args.get('limit')?.preset : undefined;
    expect(preset?.value).toMatchObject({ kind: 'IntValue', value: '7' });
    expect(preset?.static).toBe(false);
  });

  const USER_POSTS = 'type Post { id: ID! }\nenum OrderDirection { asc desc }';
  it.each([
    ['a string for an Int', withRoot(`type User { posts(first: Int @preset(value: "abc")): [Post!]! }\n${USER_POSTS}`),
      'preset value "abc" at the argument "first" of the field "posts" of the "Object": "User" is invalid: Int cannot represent non-integer value: "abc"'],
    ['an object for an Int', withRoot(`type User { posts(first: Int @preset(value: {n: 1})): [Post!]! }\n${USER_POSTS}`),
      'preset value {n: 1} at the argument "first" of the field "posts" of the "Object": "User" is invalid: Int cannot represent non-integer value: {n: 1}'],
    ['a value the enum does not have', withRoot(`type User { posts(order: OrderDirection @preset(value: sideways)): [Post!]! }\n${USER_POSTS}`),
      'preset value sideways at the argument "order" of the field "posts" of the "Object": "User" is invalid: "sideways" not found in the enum: "OrderDirection"'],
    ['a string for an enum', withRoot(`type User { posts(order: OrderDirection @preset(value: "asc")): [Post!]! }\n${USER_POSTS}`),
      'preset value "asc" at the argument "order" of the field "posts" of the "Object": "User" is invalid: expected a value of the enum "OrderDirection"'],
    ['a field the input object does not have', withRoot('input UserWhere { id: IntComparison @preset(value: {_lte: 2}) }\ninput IntComparison { _eq: Int }'),
      'preset value {_lte: 2} at the field "id" of the "Input object": "UserWhere" is invalid: "_lte" does not exist in the input object "IntComparison"'],
    ['a wrong item in a list', withRoot('input IntComparison { _in: [Int!] @preset(value: [1, "two"]) }'),
      'preset value [1, "two"] at the field "_in" of the "Input object": "IntComparison" is invalid: Int cannot represent non-integer value: "two"'],
    ['null for a non-null argument', 'type Query { user(id: ID! @preset(value: null)): User }\ntype User { id: ID! }',
      'preset value null at the argument "id" of the field "user" of the "Object": "Query" is invalid: null is not a value of the non-null type ID!'],
    ['an input object value without a required field', withRoot('type Mutation { create_post(input: NewPost! @preset(value: {title: "Hi"})): Post! }\ntype Post { id: ID! }\ninput NewPost { title: String! author_id: ID! }'),
      'preset value {title: "Hi"} at the argument "input" of the field "create_post" of the "Object": "Mutation" is invalid: the input object "NewPost" requires "author_id"'],
    ['a preset on a field', withRoot('type User { id: ID! @preset(value: "1") }'),
      'Preset directives can be defined only on INPUT_FIELD_DEFINITION or ARGUMENT_DEFINITION, but one is on the field "id" of the "Object": "User"'],
    ['a preset on a type', withRoot('type User @preset(value: "1") { id: ID! }'),
      'Preset directives can be defined only on INPUT_FIELD_DEFINITION or ARGUMENT_DEFINITION, but one is on the "Object": "User"'],
    ['a preset on an enum value', withRoot('enum Role { ADMIN @preset(value: 1) }'),
      'Preset directives can be defined only on INPUT_FIELD_DEFINITION or ARGUMENT_DEFINITION, but one is on the enum value "ADMIN" of the "Enum": "Role"'],
    ['two presets on one argument', 'type Query { user(id: ID! @preset(value: "1") @preset(value: "2")): User }\ntype User { id: ID! }',
      'found multiple preset directives at the argument "id" of the field "user" of the "Object": "Query"'],
    ['a preset without a value', 'type Query { user(id: ID! @preset(static: true)): User }\ntype User { id: ID! }',
      'preset argument "value" not found at the argument "id" of the field "user" of the "Object": "Query"'],
    ['a preset with no arguments at all', withRoot('input IntComparison { _eq: Int @preset }'),
      'preset argument "value" not found at the field "_eq" of the "Input object": "IntComparison"'],
    ['a static flag that is not a Boolean', 'type Query { user(id: ID! @preset(value: "1", static: "yes")): User }\ntype User { id: ID! }',
      'expected preset static value to be a Boolean value at the argument "id" of the field "user" of the "Object": "Query"'],
    ['an unknown preset argument', 'type Query { user(id: ID! @preset(value: "1", scope: USER)): User }\ntype User { id: ID! }',
      'unknown preset argument "scope" at the argument "id" of the field "user" of the "Object": "Query"'],
  ])('refuses %s', (_, sdl, reason) => {
    expect(refusalOf(sdl)).toBe(because(reason));
  });

  it('is checked on the input fields of a type the remote does not have', () => {
    expect(refusalOf(withRoot('input CommentWhere { text: String @preset(value: "a") @preset(value: "b") }'))).toBe(forReasons(
      '"Input object": "CommentWhere" does not exist in the upstream remote schema',
      'found multiple preset directives at the field "text" of the "Input object": "CommentWhere"',
    ));
  });
});

describe('options', () => {
  it('refuses an empty session variable prefix', () => {
    expect(() => validateRoleSchema(remote, 'type Query { version: String! }', { sessionVariablePrefix: '' })).toThrow(
      new TypeError('validateRoleSchema: "sessionVariablePrefix" must be a non-empty string'),
    );
  });
});
