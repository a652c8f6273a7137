import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GraphQLObjectType, GraphQLSchema, GraphQLString, buildSchema, graphqlSync } from 'graphql';
import { COMMERCE_SCHEMAS, startCommerceRemote, startSampleRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaEntry, type RemoteSchemaRegistry } from '../src/index.js';
import { commerceEntries, relationship, startCommerce, type Commerce } from './utils/commerce.js';
import { memoryLogger, startStubRemote } from './utils/fixtures.js';
import { startGateway, type Gateway } from './utils/gateway.js';

let commerce: Commerce;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

beforeAll(async () => {
  commerce = await startCommerce();
  registry = createRemoteSchemaRegistry({
    retry: false,
    logger: memoryLogger(),
    localSchema: new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { localHello: { type: GraphQLString, resolve: () => 'local' } } }),
    }),
  });
  gateway = await startGateway(registry);
});

beforeEach(() => commerce.reset());

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await commerce.close();
});

async function use(entries: RemoteSchemaEntry[]): Promise<void> {
  const plan = await registry.plan(entries);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  commerce.reset();
}

const usersQueries = () => commerce.users.received.map((r) => (r.body as { query: string }).query);
const usersVariables = () => commerce.users.received.map((r) => (r.body as { variables: Record<string, unknown> }).variables);

describe('a relationship field in a query', () => {
  beforeAll(() => use(commerceEntries(commerce)));

  it('joins 50 orders to their users with one request to each remote', async () => {
    const response = await gateway.post({ query: '{ orders(first: 50) { id userId user { id name } } }' });
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    const orders = response.body.data.orders as Array<{ id: string; userId: string; user: { id: string; name: string } }>;
    expect(orders).toHaveLength(50);
    for (const order of orders) expect(order.user).toEqual({ id: order.userId, name: `User ${order.userId}` });
    expect(commerce.counts()).toEqual([1, 1, 0]);
    // 50 orders of 40 distinct users: one field call per distinct key, in one document.
    expect(Object.keys(usersVariables()[0]!)).toHaveLength(40);
  });

  it('asks three remotes for two levels, one request each, whatever the number of rows', async () => {
    for (const first of [3, 200]) {
      commerce.reset();
      const response = await gateway.post({ query: `{ orders(first: ${first}) { id user { name org { name } } } }` });
      expect(response.body.errors).toBeUndefined();
      expect(response.body.data.orders).toHaveLength(first);
      expect(response.body.data.orders[0]).toEqual({ id: '1', user: { name: 'User 1', org: { name: 'Org 2' } } });
      expect(commerce.counts()).toEqual([1, 1, 1]);
    }
  });

  it('leaves out the join fields the client did not select, and keeps the key order of the client', async () => {
    const response = await gateway.post({ query: '{ order(id: "2") { user { name } total } }' });
    expect(JSON.stringify(response.body)).toBe('{"data":{"order":{"user":{"name":"User 2"},"total":3}}}');
  });

  it('gives null without a call when a join value is null', async () => {
    const response = await gateway.post({ query: '{ order(id: "97") { id userId user { name } } }' });
    expect(response.body).toEqual({ data: { order: { id: '97', userId: null, user: null } } });
    expect(commerce.counts()).toEqual([1, 0, 0]);
    // A user without an organization: the second level asks nothing either.
    commerce.reset();
    const second = await gateway.post({ query: '{ order(id: "7") { user { id orgId org { name } } } }' });
    expect(second.body).toEqual({ data: { order: { user: { id: '7', orgId: null, org: null } } } });
    expect(commerce.counts()).toEqual([1, 1, 0]);
  });

  it('finds the join values through lists of lists', async () => {
    const response = await gateway.post({ query: '{ orderPages(pages: 2, size: 2) { id user { id } } }' });
    expect(response.body).toEqual({
      data: {
        orderPages: [
          [
            { id: '1', user: { id: '1' } },
            { id: '2', user: { id: '2' } },
          ],
          [
            { id: '3', user: { id: '3' } },
            { id: '4', user: { id: '4' } },
          ],
        ],
      },
    });
    expect(commerce.counts()).toEqual([1, 1, 0]);
  });

  it('puts a target error at the path of each source object that used its key, and keeps the rest', async () => {
    // Orders 13 and 53 both belong to user 13, whose email is an error.
    const response = await gateway.post({ query: '{ orders(first: 2, offset: 12) { id user { name email } } o53: order(id: "53") { user { email } } }' });
    expect(response.body.data).toEqual({
      orders: [
        { id: '13', user: null },
        { id: '14', user: { name: 'User 14', email: 'user14@example.com' } },
      ],
      o53: { user: null },
    });
    expect(response.body.errors).toEqual([
      expect.objectContaining({ message: 'email of user 13 is hidden', path: ['orders', 0, 'user', 'email'], extensions: { code: 'HIDDEN' } }),
      expect.objectContaining({ message: 'email of user 13 is hidden', path: ['o53', 'user', 'email'], extensions: { code: 'HIDDEN' } }),
    ]);
    // Locations point at the relationship field in the client's own document.
    expect(response.body.errors[0].locations).toEqual([{ line: 1, column: 37 }]);
    expect(commerce.counts()).toEqual([1, 1, 0]);
  });

  it('moves the locations of the source\'s errors into the client\'s document', async () => {
    const query = '{\n  user(id: "13") {\n    org { name }\n    email\n  }\n}';
    const response = await gateway.post({ query });
    expect(response.body).toEqual({
      data: { user: null },
      errors: [{ message: 'email of user 13 is hidden', locations: [{ line: 4, column: 5 }], path: ['user', 'email'], extensions: { code: 'HIDDEN' } }],
    });
  });

  it('moves the locations of a customized source\'s errors (namespace, renamed types and fields) into the client\'s document too', async () => {
    await use(
      commerceEntries(commerce, {
        users: { definition: { url: commerce.users.url, customization: { root_fields_namespace: 'us', type_names: { prefix: 'U_' }, field_names: [{ parent_type: 'User', mapping: { email: 'mail' } }] } } },
      }),
    );
    const query = '{\n  us { user(id: "13") {\n    org { name }\n    mail\n  } }\n}';
    const response = await gateway.post({ query });
    expect(response.body).toEqual({
      data: { us: { user: null } },
      errors: [{ message: 'email of user 13 is hidden', locations: [{ line: 4, column: 5 }], path: ['us', 'user', 'mail'], extensions: { code: 'HIDDEN' } }],
    });
  });

  it('answers __typename with the customized name, on both sides', async () => {
    await use(
      commerceEntries(commerce, {
        orders: { definition: { url: commerce.orders.url, customization: { type_names: { prefix: 'O_' } } } },
        users: { definition: { url: commerce.users.url, customization: { type_names: { suffix: '_u' } } } },
      }),
    );
    const response = await gateway.post({ query: '{ order(id: "1") { __typename user { __typename name org { __typename name } } } }' });
    expect(response.body).toEqual({
      data: { order: { __typename: 'O_Order', user: { __typename: 'User_u', name: 'User 1', org: { __typename: 'Org', name: 'Org 2' } } } },
    });
    await use(commerceEntries(commerce));
  });
});

describe('relationships and customization', () => {
  it('reads renamed join fields and asks renamed targets in their own names', async () => {
    await use(
      commerceEntries(commerce, {
        orders: {
          definition: {
            url: commerce.orders.url,
            customization: { root_fields_namespace: 'shop', field_names: [{ parent_type: 'Order', mapping: { userId: 'customerId' } }] },
          },
        },
        users: {
          definition: {
            url: commerce.users.url,
            customization: { root_fields_namespace: 'people', type_names: { prefix: 'P_' }, field_names: [{ parent_type: 'User', prefix: 'u_' }] },
          },
        },
      }),
    );
    const response = await gateway.post({ query: '{ shop { order(id: "3") { customerId user { u_name u_org: org { name } } } } }' });
    expect(response.body).toEqual({ data: { shop: { order: { customerId: '3', user: { u_name: 'User 3', u_org: { name: 'Org 4' } } } } } });
    expect(usersQueries()[0]).toContain('user(id: $');
    expect(usersQueries()[0]).toContain('u_name:name');
    expect(commerce.counts()).toEqual([1, 1, 1]);
    // Each event of a subscription under the namespace is joined too.
    const client = gateway.wsClient();
    const events: unknown[] = [];
    for await (const event of client.iterate({ query: 'subscription { shop { orderPlaced(count: 2, intervalMs: 5) { id customerId user { u_name } } } }' })) {
      events.push(event);
    }
    expect(events).toEqual([
      { data: { shop: { orderPlaced: { id: '1', customerId: '1', user: { u_name: 'User 1' } } } } },
      { data: { shop: { orderPlaced: { id: '2', customerId: '2', user: { u_name: 'User 2' } } } } },
    ]);
    await use(commerceEntries(commerce));
  });
});

describe('arguments', () => {
  beforeAll(() =>
    use(
      commerceEntries(commerce, {
        orders: {
          relationships: [
            relationship('Order', 'user', 'users', ['userId'], { user: { arguments: { id: '$userId' } } }),
            relationship('Order', 'byNumber', 'users', ['userNumber'], { userByNumber: { arguments: { number: '$userNumber' } } }),
            relationship('Order', 'samePlan', 'users', ['plan'], { usersByPlan: { arguments: { plan: '$plan' } } }),
            relationship('Order', 'pros', 'users', [], { usersByPlan: { arguments: { plan: 'PRO', limit: 2 } } }),
            relationship('Order', 'listed', 'users', ['userId'], { users: { arguments: { filter: { ids: ['$userId'], plan: 'PRO' } } } }),
            relationship('Order', 'tagged', 'users', ['tags'], { usersByTags: { arguments: { tags: '$tags' } } }),
          ],
        },
      }),
    ),
  );

  it('takes Int, enum and list join values, enum literals and lists with join values inside', async () => {
    const response = await gateway.post({
      query: `{ order(id: "2") { byNumber { id } samePlan(limit: 1) { plan } pros { id plan } listed { id } tagged { id } } }`,
    });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.order).toEqual({
      byNumber: { id: '2' },
      samePlan: [{ plan: 'ENTERPRISE' }],
      pros: [
        { id: '1', plan: 'PRO' },
        { id: '4', plan: 'PRO' },
      ],
      listed: [],
      tagged: [{ id: '2' }, { id: '6' }, { id: '10' }, { id: '14' }, { id: '18' }],
    });
    expect(commerce.counts()).toEqual([1, 1, 0]);
  });

  it('leaves the arguments the definition does not fix to the client, variables included', async () => {
    const response = await gateway.post({
      query: 'query ($n: Int) { o1: order(id: "1") { samePlan(limit: $n) { id } } o2: order(id: "2") { samePlan { id } } }',
      variables: { n: 2 },
    });
    expect(response.body.data).toEqual({
      o1: { samePlan: [{ id: '1' }, { id: '4' }] },
      o2: { samePlan: [{ id: '2' }, { id: '5' }, { id: '8' }, { id: '11' }, { id: '14' }] },
    });
    expect(commerce.counts()).toEqual([1, 1, 0]);
    expect(usersQueries()[0]).toMatch(/\$n: Int/);
  });

  it('serves an operation whose variables are used only by relationship arguments', async () => {
    const response = await gateway.post({
      query: 'query Plans($n: Int!) { order(id: "1") { id samePlan(limit: $n) { id } } }',
      variables: { n: 1 },
    });
    expect(response.body).toEqual({ data: { order: { id: '1', samePlan: [{ id: '1' }] } } });
    expect(commerce.counts()).toEqual([1, 1, 0]);
    // The source is asked without the variable it does not use (a remote refuses unused ones).
    const source = commerce.orders.received[0]!.body as { query: string; variables?: Record<string, unknown> };
    expect(source.query).not.toMatch(/\$n\b/);
    expect(source.variables ?? {}).not.toHaveProperty('n');
    // The target gets it, declared with its type.
    expect(usersQueries()[0]).toMatch(/\$n: Int!/);
    expect(Object.values(usersVariables()[0]!)).toContain(1);
    // Without the required variable: a GraphQL error naming it, and no call at all.
    commerce.reset();
    const missing = await gateway.post({ query: 'query Plans($n: Int!) { order(id: "1") { samePlan(limit: $n) { id } } }' });
    expect(missing.body.errors?.[0]?.message).toMatch(/\$n/);
    expect(commerce.counts()).toEqual([0, 0, 0]);
  });
});

describe('the batch option', () => {
  it('asks one field with every key of the level, matched back by a field of the items', async () => {
    await use(
      commerceEntries(commerce, {
        orders: {
          relationships: [relationship('Order', 'user', 'users', ['userId'], { usersByIds: { arguments: { ids: '$userId' } } }, { argument: 'ids', match_field: 'id' })],
        },
      }),
    );
    const response = await gateway.post({ query: '{ orders(first: 50, offset: 10) { id userId user { name } } }' });
    expect(response.body.data.orders[0]).toEqual({ id: '11', userId: '11', user: { name: 'User 11' } });
    expect(response.body.data.orders.every((o: { userId: string; user: { name: string } | null }) => o.user?.name === `User ${o.userId}` || o.userId === '13')).toBe(true);
    expect(response.body.errors).toBeUndefined();
    expect(commerce.counts()).toEqual([1, 1, 0]);
    const variables = usersVariables()[0]!;
    expect(Object.values(variables)).toEqual([expect.arrayContaining(['11', '12', '40', '1'])]);
    expect((Object.values(variables)[0] as string[]).length).toBe(40);
  });

  it('matches by position when there is no match field', async () => {
    await use(
      commerceEntries(commerce, {
        orders: { relationships: [relationship('Order', 'user', 'users', ['userId'], { usersByIds: { arguments: { ids: '$userId' } } }, { argument: 'ids' })] },
      }),
    );
    const response = await gateway.post({ query: '{ orders(first: 3, offset: 12) { id user { id email } } }' });
    expect(response.body.data.orders).toEqual([
      { id: '13', user: null },
      { id: '14', user: { id: '14', email: 'user14@example.com' } },
      { id: '15', user: { id: '15', email: 'user15@example.com' } },
    ]);
    expect(response.body.errors).toEqual([expect.objectContaining({ message: 'email of user 13 is hidden', path: ['orders', 0, 'user', 'email'] })]);
    await use(commerceEntries(commerce));
  });
});

describe('every route', () => {
  beforeAll(() => use(commerceEntries(commerce)));

  it('joins beside the local schema and introspection (the gateway executes the base)', async () => {
    const response = await gateway.post({ query: '{ localHello __typename order(id: "1") { user { name } } }' });
    expect(response.body).toEqual({ data: { localHello: 'local', __typename: 'Query', order: { user: { name: 'User 1' } } } });
  });

  it('joins fields selected through fragments, inline fragments and aliases, @skip and @include decided as asked', async () => {
    const response = await gateway.post({
      query: `query ($skip: Boolean!) {
        order(id: "1") { ...O ... on Order { u2: user { id } } user @skip(if: $skip) { email } }
      }
      fragment O on Order { user { name } }`,
      variables: { skip: false },
    });
    expect(response.body).toEqual({ data: { order: { user: { name: 'User 1', email: 'user1@example.com' }, u2: { id: '1' } } } });
    expect(commerce.counts()).toEqual([1, 1, 0]);
    const skipped = await gateway.post({
      query: 'query ($skip: Boolean!) { order(id: "1") { id user @skip(if: $skip) { email } } }',
      variables: { skip: true },
    });
    expect(skipped.body).toEqual({ data: { order: { id: '1' } } });
  });

  it('leaves out a skipped relationship field beside another one of the same join field, on the field or an inline fragment', async () => {
    const literal = await gateway.post({ query: '{ order(id: "1") { id a: user { name } b: user @skip(if: true) { id } } }' });
    expect(literal.body).toEqual({ data: { order: { id: '1', a: { name: 'User 1' } } } });
    const variables = await gateway.post({
      query: 'query ($on: Boolean!) { order(id: "1") { id a: user { name } b: user @include(if: $on) { id } ... on Order @skip(if: true) { c: user { id } } } }',
      variables: { on: false },
    });
    expect(variables.body).toEqual({ data: { order: { id: '1', a: { name: 'User 1' } } } });
    const kept = await gateway.post({
      query: 'query ($on: Boolean!) { order(id: "1") { a: user { name } b: user @include(if: $on) { id } } }',
      variables: { on: true },
    });
    expect(kept.body).toEqual({ data: { order: { a: { name: 'User 1' }, b: { id: '1' } } } });
    // Under a fragment spread that leaves it out, and under a parent field that does.
    const spread = await gateway.post({
      query: 'query ($on: Boolean!) { order(id: "1") { id a: user { name } ...B @include(if: $on) } } fragment B on Order { b: user { id } }',
      variables: { on: false },
    });
    expect(spread.body).toEqual({ data: { order: { id: '1', a: { name: 'User 1' } } } });
    const parent = await gateway.post({ query: '{ order(id: "1") { id a: user { name } } order(id: "1") @skip(if: true) { b: user { id } } }' });
    expect(parent.body).toEqual({ data: { order: { id: '1', a: { name: 'User 1' } } } });
    const both = await gateway.post({
      query: 'query ($a: Boolean!, $b: Boolean!) { order(id: "1") { a: user { name } ...B @include(if: $a) ...B @include(if: $b) } } fragment B on Order { b: user { id } }',
      variables: { a: false, b: true },
    });
    expect(both.body).toEqual({ data: { order: { a: { name: 'User 1' }, b: { id: '1' } } } });
  });

  it('joins the result of a mutation, the target asked with a query after the mutation answered', async () => {
    const response = await gateway.post({ query: 'mutation { placeOrder(userId: "5", total: 10) { total user { name } } }' });
    expect(response.body).toEqual({ data: { placeOrder: { total: 10, user: { name: 'User 5' } } } });
    expect((commerce.orders.received[0]!.body as { query: string }).query).toMatch(/^mutation/);
    expect(usersQueries()[0]).toMatch(/^query/);
  });

  it('joins each event of a subscription', async () => {
    const client = gateway.wsClient();
    const events: unknown[] = [];
    for await (const event of client.iterate({ query: 'subscription { orderPlaced(count: 3, intervalMs: 5) { id user { name org { name } } } }' })) {
      events.push(event);
    }
    expect(events).toEqual([
      { data: { orderPlaced: { id: '1', user: { name: 'User 1', org: { name: 'Org 2' } } } } },
      { data: { orderPlaced: { id: '2', user: { name: 'User 2', org: { name: 'Org 3' } } } } },
      { data: { orderPlaced: { id: '3', user: { name: 'User 3', org: { name: 'Org 4' } } } } },
    ]);
    expect(commerce.counts()).toEqual([0, 3, 3]);
  });

  it('shows the field in introspection, with the arguments left to the client', async () => {
    await use(
      commerceEntries(commerce, {
        orders: { relationships: [relationship('Order', 'samePlan', 'users', ['plan'], { usersByPlan: { arguments: { plan: '$plan' } } })] },
      }),
    );
    const response = await gateway.post({ query: '{ __type(name: "Order") { fields { name args { name type { name } } type { kind ofType { kind ofType { kind ofType { name } } } } } } }' });
    const field = response.body.data.__type.fields.find((f: { name: string }) => f.name === 'samePlan');
    expect(field).toEqual({
      name: 'samePlan',
      args: [{ name: 'limit', type: { name: 'Int' } }],
      type: { kind: 'NON_NULL', ofType: { kind: 'LIST', ofType: { kind: 'NON_NULL', ofType: { name: 'User' } } } },
    });
    await use(commerceEntries(commerce));
  });
});

describe('relationships under interfaces and unions', () => {
  it('tells the relationships of two types under one response key apart, and keeps the key order', async () => {
    const sample = await startSampleRemote({ name: 'sample' });
    try {
      await use([
        {
          name: 'sample',
          definition: { url: sample.url },
          // To the same remote.
          relationships: [
            relationship('User', 'same', 'sample', ['id'], { user: { arguments: { id: '$id' } } }),
            relationship('Post', 'admin', 'sample', [], { user: { arguments: { id: '1' } } }),
          ],
        },
      ]);
      sample.received.length = 0;
      const response = await gateway.post({
        query: '{ search(term: "l") { ... on User { x: same { name } id } ... on Post { x: admin { name } } } node(id: "2") { ... on User { same { id } } } }',
      });
      expect(JSON.stringify(response.body)).toBe(
        JSON.stringify({
          data: {
            search: [{ x: { name: 'Linus' }, id: '3' }, { x: { name: 'Ada' } }, { x: { name: 'Ada' } }],
            node: { same: { id: '2' } },
          },
        }),
      );
      // One request for the base, one for the level (the same remote, asked again).
      expect(sample.received).toHaveLength(2);
    } finally {
      await sample.close();
      await use(commerceEntries(commerce));
    }
  });
});

describe('a target that cannot be reached', () => {
  it('gives remote-schema-error at each relationship field and keeps the rest', async () => {
    const doomed = await startCommerceRemote('users');
    await use(commerceEntries(commerce, { users: { definition: { url: doomed.url } } }));
    await doomed.close();
    const response = await gateway.post({ query: '{ orders(first: 2) { id user { name } } }' });
    expect(response.body.data).toEqual({ orders: [{ id: '1', user: null }, { id: '2', user: null }] });
    expect(response.body.errors).toEqual([
      expect.objectContaining({ path: ['orders', 0, 'user'], extensions: { code: 'remote-schema-error', path: '$' } }),
      expect.objectContaining({ path: ['orders', 1, 'user'], extensions: { code: 'remote-schema-error', path: '$' } }),
    ]);
    expect(response.body.errors[0].message).toBe(`HTTP exception occurred while sending the request to "${doomed.url}"`);
    await use(commerceEntries(commerce));
  });

  it('passes on 1,000 errors in all when a target\'s errors are given to thousands of source objects', async () => {
    // Errors without a path are every field's of the call: 2,000 of them (1,001 passed on) times
    // 300 orders would be 300,000 errors (and took the gateway down with a stack overflow).
    const target = await startStubRemote(
      ({ res }) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: null, errors: Array.from({ length: 2000 }, (_, i) => ({ message: `e${i}` })) }));
      },
      { schema: COMMERCE_SCHEMAS.users() },
    );
    try {
      await use(commerceEntries(commerce, { users: { definition: { url: target.url } } }));
      const response = await gateway.post({ query: '{ orders(first: 300) { id user { name } } }' });
      expect(response.status).toBe(200);
      const orders = (response.body.data as { orders: Array<{ id: string; user: unknown }> }).orders;
      expect(orders).toHaveLength(300);
      expect(orders.every((order) => order.user === null)).toBe(true);
      const errors = response.body.errors as Array<{ message: string; path?: unknown[]; extensions?: unknown }>;
      expect(errors).toHaveLength(1001);
      // The target's own answer, cut at 1,000 and one error saying so, is every order's: the
      // first order's 1,000 fill the answer, and one more error says how many there were.
      expect(errors[0]).toMatchObject({ message: 'e0', path: ['orders', 0, 'user'] });
      expect(errors[999]).toMatchObject({ message: 'e999', path: ['orders', 0, 'user'] });
      expect(errors[1000]).toEqual({
        message: expect.stringMatching(/^the relationships' calls gave \d{6} errors at fields of this operation: the first 1000 are passed on$/),
        extensions: { code: 'remote-schema-error' },
      });
    } finally {
      await target.close();
      await use(commerceEntries(commerce));
    }
  });
});

describe('a source remote that does not answer the relationship field as asked', () => {
  it('is joined by its join fields: a placeholder left out or forged is the target\'s value, and no join field of ours stays', async () => {
    const sourceSchema = buildSchema('type Account { id: ID! uid: String } type Query { accounts: [Account] }');
    // Answers as its schema would, then misbehaves: the first account without the relationship's
    // placeholder, the second with an object of its own making in it.
    const source = await startStubRemote(
      ({ body, res }) => {
        const result = graphqlSync({ schema: sourceSchema, source: body.query, rootValue: { accounts: [{ id: '1', uid: '13' }, { id: '2', uid: '14' }] } });
        const accounts = (result.data as { accounts: Array<Record<string, unknown>> }).accounts;
        delete accounts[0]!['user'];
        accounts[1]!['user'] = { name: 'FORGED' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(result));
      },
      { schema: sourceSchema },
    );
    try {
      await use([
        { name: 'source', definition: { url: source.url }, relationships: [relationship('Account', 'user', 'users', ['uid'], { user: { arguments: { id: '$uid' } } })] },
        { name: 'users', definition: { url: commerce.users.url } },
      ]);
      const response = await gateway.post({ query: '{ accounts { id user { name } } }' });
      expect(response.body).toEqual({ data: { accounts: [{ id: '1', user: { name: 'User 13' } }, { id: '2', user: { name: 'User 14' } }] } });
      expect(JSON.stringify(response.body)).not.toMatch(/FORGED|_svc_|uid/);
    } finally {
      await source.close();
    }
  });
});

describe('many aliases of one relationship field', () => {
  it('ask the source for its join field once, and the target once per distinct key', async () => {
    await use(commerceEntries(commerce));
    const aliases = Array.from({ length: 800 }, (_, i) => `u${i}: user { name }`).join(' ');
    const response = await gateway.post({ query: `{ orders(first: 2, offset: 13) { id ${aliases} } }` });
    const orders = response.body.data.orders as Array<Record<string, unknown>>;
    expect(orders).toHaveLength(2);
    for (const order of orders) expect(Object.keys(order)).toHaveLength(801);
    expect(orders[0]!['u799']).toEqual({ name: 'User 14' });
    const sent = (commerce.orders.received[0]!.body as { query: string }).query;
    expect(sent.match(/: userId/g), sent.slice(0, 300)).toHaveLength(1);
    expect(commerce.counts()).toEqual([1, 1, 0]);
  });
});
