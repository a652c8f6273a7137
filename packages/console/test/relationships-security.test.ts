import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  definitionOf,
  elementFieldsOf,
  formOfRow,
  formProblems,
  joinFieldsOf,
  levelChoices,
  levelFields,
  listArgumentsOf,
  placeOfMessage,
  relationshipsOf,
  type RelationshipDefinition,
} from '../src/relationships/model.js';
import { limitsFormOf, limitsOfForm, parsePerRole, parseRoles, type ApiLimits } from '../src/security/model.js';

const users = buildSchema(`
  type User { id: ID! name: String! tags: [String!]! org: Org friends(first: Int): [User!]! }
  type Org { id: ID! users(first: Int!): [User!]! }
  type Query { user(id: ID!): User usersByIds(ids: [ID!]!): [User]! org(id: ID!): Org }
`);

describe('the relationship form', () => {
  it('offers as join fields only fields without arguments of scalar, enum or list of them', () => {
    expect(joinFieldsOf(users.getType('User') as never)).toEqual(['id', 'name', 'tags']);
  });

  it('offers each level the fields of the level above, and the list arguments and element fields for batching', () => {
    const levels = [{ field: 'org', arguments: {} }, { field: 'users', arguments: {} }];
    expect(levelChoices(users, levels, 0)).toEqual(['user', 'usersByIds', 'org']);
    expect(levelChoices(users, levels, 1)).toEqual(['id', 'users']);
    expect(levelFields(users, levels).map((field) => field?.name)).toEqual(['org', 'users']);
    const byIds = levelFields(users, [{ field: 'usersByIds', arguments: {} }])[0];
    expect(listArgumentsOf(byIds)).toEqual(['ids']);
    expect(elementFieldsOf(byIds)).toEqual(['id', 'name', 'tags']);
  });

  it('round-trips nested paths, literals, $fields and batch through the definition', () => {
    const definitions: RelationshipDefinition[] = [
      { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { user: { arguments: { id: '$userId' } } } } },
      {
        to_remote_schema: {
          remote_schema: 'orgs',
          lhs_fields: ['orgId', 'plan'],
          remote_field: { org: { arguments: { id: '$orgId' }, field: { users: { arguments: { first: 3, filter: { plan: '$plan', tags: ['a', 'b'] } } } } } },
        },
      },
      { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { usersByIds: { arguments: { ids: '$userId' } } }, batch: { argument: 'ids', match_field: 'id' } } },
      { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { usersByIds: { arguments: { ids: '$userId', note: 'plain', code: '5', flag: 'true', quoted: '"x"' } } }, batch: { argument: 'ids' } } },
    ];
    for (const definition of definitions) {
      const form = formOfRow({ remote: 'orders', type: 'Order', name: 'rel', definition });
      expect(formProblems(form)).toEqual({});
      expect(definitionOf(form)).toEqual(definition);
    }
  });

  it('reads the relationships of an export, and names what a form lacks', () => {
    const definition = { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { user: { arguments: { id: '$userId' } } } } };
    const document = { version: 3, remote_schemas: [{ name: 'orders', definition: {}, remote_relationships: [{ type_name: 'Order', relationships: [{ name: 'user', definition }] }] }] };
    expect(relationshipsOf(document)).toEqual([{ remote: 'orders', type: 'Order', name: 'user', definition }]);
    const form = { ...formOfRow(relationshipsOf(document)[0]!), name: '1bad', lhsFields: [], batch: true, batchArgument: '' };
    // (Its argument still takes $userId, no longer ticked: that is a problem of the levels too.)
    expect(Object.keys(formProblems(form)).sort()).toEqual(['batch', 'levels', 'lhsFields', 'name']);
  });

  it('refuses an argument from a join field that is no longer ticked, before anything is sent', () => {
    const definition = { to_remote_schema: { remote_schema: 'orders', lhs_fields: ['userNumber'], remote_field: { order: { arguments: { id: '$userNumber' } } } } };
    const form = { ...formOfRow({ remote: 'orders', type: 'Order', name: 'owner', definition }), lhsFields: ['userId'] };
    expect(formProblems(form)).toEqual({ levels: 'argument "id" takes a join field that is not ticked: choose one of the join fields' });
    const chosen = { ...form, levels: [{ field: 'order', arguments: { id: { kind: 'field' as const, field: 'userId' } } }] };
    expect(formProblems(chosen)).toEqual({});
    expect(definitionOf(chosen).to_remote_schema.remote_field).toEqual({ order: { arguments: { id: '$userId' } } });
  });

  it('places the server\'s messages under the part they are about', () => {
    expect(placeOfMessage('remote relationship with name "user" already exists on type "Order" in remote schema "orders"')).toBe('name');
    expect(placeOfMessage('Inconsistent object: in remote relationship "x": field with name "y" is not provided by the lhs entity; the allowed fields are id')).toBe('lhsFields');
    expect(placeOfMessage('Inconsistent object: in remote relationship "x": expected type "ID" but got "Int"')).toBe('levels');
    expect(placeOfMessage('Inconsistent object: in remote relationship "x": remote schema with name "nope" not found')).toBe('target');
    expect(placeOfMessage('something else')).toBeUndefined();
  });
});

describe('the security forms', () => {
  it('round-trips API limits through the form', () => {
    const limits: ApiLimits = {
      disabled: true,
      depth_limit: { global: 8, per_role: { user: 5, editor: 6 } },
      node_limit: { global: 500 },
      time_limit: { per_role: { user: 3 } },
      batch_limit: { global: 4 },
      rate_limit: { global: { max_reqs_per_min: 1000, unique_params: 'IP' }, per_role: { user: { max_reqs_per_min: 60, unique_params: ['x-svc-user-id'] } } },
    };
    expect(limitsOfForm(limitsFormOf(limits))).toEqual({ limits });
    expect(limitsOfForm(limitsFormOf(undefined))).toEqual({ limits: { disabled: false } });
  });

  it('names the field of every bad value', () => {
    const form = limitsFormOf(undefined);
    form.counts.depth_limit.global = '0';
    form.counts.node_limit.perRole = 'user:5';
    form.counts.time_limit.global = '9999999';
    form.rateGlobal = '10';
    form.rateGlobalParams = 'user-id';
    expect(limitsOfForm(form)).toEqual({
      problems: [
        'Depth limit for every role: must be from 1 to 1000000000',
        'Nodes limit per role: write each role as role=number ("user:5" is not)',
        'Time limit for every role: must be from 1 to 2147483',
        'Rate limit for every role, counted per: "user-id" is neither IP nor a session variable (x-svc-…)',
      ],
    });
    expect(parseRoles('user, a b', 'Roles')).toEqual({ problem: 'Roles: "a b" is not a role name (letters, digits, - and _)' });
    expect(parseRoles(' user,editor,user ', 'Roles')).toEqual({ roles: ['user', 'editor'] });
    expect(parsePerRole('user=1.5', 'Depth limit per role', 10)).toEqual({ problem: 'Depth limit per role, role user: "1.5" is not a whole number' });
  });
});
