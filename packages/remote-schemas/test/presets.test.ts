import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';
import { createEchoSchema, echoUserPermission } from './utils/echo-remote.js';

const variables = {
  'x-svc-user-id': '7',
  'x-svc-tenant-id': '3',
  'x-svc-color': 'GREEN',
  'x-svc-ids': '[1, 2, 3]',
  'x-svc-meta': '{"a": [1, true]}',
};

function user(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const merged = Object.fromEntries(Object.entries({ ...variables, ...overrides }).filter(([, v]) => v !== undefined));
  return { 'x-test-session': JSON.stringify({ role: 'user', variables: merged }) };
}

let remote: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;
const logger = memoryLogger();

beforeAll(async () => {
  remote = await startSchemaServer(createEchoSchema());
  registry = createRemoteSchemaRegistry({
    logger,
    retry: false,
    enableRemoteSchemaPermissions: true,
    getSession: testGetSession,
  });
  gateway = await startGateway(registry);
  const permissions = [{ role: 'user', schema: echoUserPermission }];
  const plan = await registry.plan([
    // Without customization: operations on it alone take the fast path.
    { name: 'echo', definition: { url: remote.url }, permissions },
    // The same remote customized: always delegated.
    {
      name: 'custom',
      definition: { url: remote.url, customization: { root_fields_namespace: 'ns', type_names: { prefix: 'C_' } } },
      permissions,
    },
  ]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await remote.close();
});

beforeEach(() => {
  remote.received.length = 0;
});

/** The arguments the remote answered it received, by field (its fields echo them as JSON). */
function echoed(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? (v.startsWith('{') ? JSON.parse(v) : v) : echoed(v as Record<string, unknown>)]),
  );
}

async function ask(query: string, vars?: Record<string, unknown>, headers = user()) {
  const response = await gateway.post({ query, ...(vars ? { variables: vars } : {}) }, headers);
  expect(response.status).toBe(200);
  expect(response.body.errors).toBeUndefined();
  return echoed(response.body.data);
}

const sent = () => remote.received.map((r) => r.body as { query: string; variables: Record<string, unknown> | null });

describe('presets on the fast path', () => {
  it('fill root arguments from the session, coerced to Int, enum, list and custom scalar', async () => {
    expect(await ask('{ echo(note: "n") colors list json }')).toEqual({
      echo: { userId: 7, note: 'n' },
      colors: { color: 'GREEN' },
      list: { ids: [1, 2, 3] },
      json: { meta: { a: [1, true] } },
    });
    // One request, the rewritten document printed (the client's text lacks the presets).
    expect(sent()).toHaveLength(1);
    expect(sent()[0]?.query).toContain('echo(note: "n", userId: 7)');
    expect(sent()[0]?.query).toContain('colors(color: GREEN)');
    expect(sent()[0]?.query).toContain('list(ids: [1, 2, 3])');
    expect(sent()[0]?.query).toContain('json(meta: {a: [1, true]})');
  });

  it('use static presets as written, a string with the prefix included', async () => {
    expect(await ask('{ fixed }')).toEqual({ fixed: { tag: 'x-svc-not-a-variable', limit: 5 } });
  });

  it('fill nested input fields of literal objects, at any depth and in lists', async () => {
    expect(await ask('{ search(filter: {name: "n", range: {high: 9}}) searchMany(filters: [{name: "a"}, {color: RED}]) }')).toEqual({
      search: { filter: { owner: '7', name: 'n', range: { low: 0, high: 9 } } },
      searchMany: { filters: [{ owner: '7', name: 'a' }, { owner: '7', color: 'RED' }] },
    });
  });

  it('fill nested input fields inside variables, and send the client\'s text as it is when only variables change', async () => {
    const query = 'query Q($f: Filter, $fs: [Filter!]!) { search(filter: $f) searchMany(filters: $fs) }';
    expect(await ask(query, { f: { name: 'v', range: { high: 2 } }, fs: [{ name: 'w' }] })).toEqual({
      search: { filter: { owner: '7', name: 'v', range: { low: 0, high: 2 } } },
      searchMany: { filters: [{ owner: '7', name: 'w' }] },
    });
    expect(sent()).toEqual([
      {
        query,
        variables: { f: { name: 'v', range: { high: 2, low: 0 }, owner: '7' }, fs: [{ name: 'w', owner: '7' }] },
        operationName: null,
      },
    ]);
  });

  it('fill arguments selected in fragments, and input objects in a variable\'s default value', async () => {
    const query = 'query Q($f: Filter = {name: "default"}) { ...Root } fragment Root on Query { echo search(filter: $f) }';
    expect(await ask(query)).toEqual({ echo: { userId: 7 }, search: { filter: { owner: '7', name: 'default' } } });
    expect(sent()[0]?.query).toContain('$f: Filter = {name: "default", owner: "7"}');
  });

  it('send a hidden argument whose input type has nothing but presets, and presets into a remote default', async () => {
    expect(await ask('{ scoped(note: "s") ranged }')).toEqual({
      scoped: { tenant: { id: 3 }, note: 's' },
      ranged: { range: { low: 0, high: 2 } },
    });
  });

  it('bind each request\'s own session values into a document compiled once, wherever they go', async () => {
    const query = 'query Q($f: Filter = {name: "d"}) { a: echo(note: "n") scoped search(filter: $f) list }';
    const answers = [];
    // The same document for three sessions in turn, then the first again: no answer keeps another's value.
    for (const [userId, tenantId, ids] of [['7', '3', '[1]'], ['8', '4', '[2, 3]'], ['-9', '5', '[]'], ['7', '3', '[1]']] as const) {
      answers.push(await ask(query, undefined, user({ 'x-svc-user-id': userId, 'x-svc-tenant-id': tenantId, 'x-svc-ids': ids })));
    }
    expect(answers).toEqual(
      [[7, '7', 3, [1]], [8, '8', 4, [2, 3]], [-9, '-9', 5, []], [7, '7', 3, [1]]].map(([userId, owner, tenant, ids]) => ({
        a: { userId, note: 'n' },
        scoped: { tenant: { id: tenant } },
        search: { filter: { owner, name: 'd' } },
        list: { ids },
      })),
    );
    expect(sent().map((b) => b.query)).toEqual(
      [[7, '7', 3, '[1]'], [8, '8', 4, '[2, 3]'], [-9, '-9', 5, '[]'], [7, '7', 3, '[1]']].map(
        ([userId, owner, tenant, ids]) =>
          `query Q($f: Filter = {name: "d", owner: "${owner}"}) {\n  a: echo(note: "n", userId: ${userId})\n  scoped(tenant: {id: ${tenant}})\n  search(filter: $f)\n  list(ids: ${ids})\n}`,
      ),
    );
  });

  it('add presets to a variable\'s default value whether or not the variable is given (the remote checks it)', async () => {
    const query = 'query Q($f: Filter = {name: "d"}) { search(filter: $f) }';
    expect(await ask(query, { f: { name: 'given' } })).toEqual({ search: { filter: { owner: '7', name: 'given' } } });
    expect(await ask(query)).toEqual({ search: { filter: { owner: '7', name: 'd' } } });
    expect(await ask(query, { f: { name: 'again' } }, user({ 'x-svc-user-id': '8' }))).toEqual({ search: { filter: { owner: '8', name: 'again' } } });
    const printed = (owner: string) => `query Q($f: Filter = {name: "d", owner: "${owner}"}) {\n  search(filter: $f)\n}`;
    expect(sent().map((b) => b.query)).toEqual([printed('7'), printed('7'), printed('8')]);
    const missing = await gateway.post({ query }, user({ 'x-svc-user-id': undefined }));
    expect(missing.body.errors[0].message).toBe('"x-svc-user-id" session variable expected, but not found');
  });

  it('send a session value that reads like GraphQL syntax as a string literal, escaped', async () => {
    const tricky = 'a", userId: 1) { x } # \\" SVC_PRESET_0_x_0';
    expect(await ask('{ search(filter: {name: "n"}) }', undefined, user({ 'x-svc-user-id': tricky }))).toEqual({
      search: { filter: { owner: tricky, name: 'n' } },
    });
  });

  it('leave a document without presets as the client wrote it', async () => {
    const query = '{ items { id label } }';
    expect(await gateway.post({ query }, user())).toEqual({ status: 200, body: { data: { items: [{ id: '1', label: 'one' }] } } });
    expect(sent()).toEqual([{ query, variables: null, operationName: null }]);
  });

  it('reach mutations', async () => {
    expect(await ask('mutation { save(filter: {name: "m"}) }')).toEqual({ save: { filter: { owner: '7', name: 'm' } } });
  });

  it('reach fields resolved by delegation when an operation is not forwarded as it is', async () => {
    expect(await ask('{ __typename echo search(filter: {name: "d"}) }')).toEqual({
      __typename: 'Query',
      echo: { userId: 7 },
      search: { filter: { owner: '7', name: 'd' } },
    });
  });
});

describe('what a role cannot do with presets', () => {
  it('pass a preset argument or input field: graphql-js\'s own validation errors', async () => {
    const errors = async (query: string, vars?: Record<string, unknown>) =>
      (await gateway.post({ query, ...(vars ? { variables: vars } : {}) }, user())).body.errors.map((e: { message: string }) => e.message);
    expect(await errors('{ echo(userId: 1) }')).toEqual(['Unknown argument "userId" on field "Query.echo".']);
    expect(await errors('{ colors(color: RED) }')).toEqual(['Unknown argument "color" on field "Query.colors".']);
    expect(await errors('{ search(filter: {owner: "1"}) }')).toEqual(['Field "owner" is not defined by type "Filter".']);
    expect(await errors('{ search(filter: {range: {low: 5, high: 6}}) }')).toEqual(['Field "low" is not defined by type "Range".']);
    expect(await errors('{ scoped(tenant: {id: 1}) }')).toEqual(['Unknown argument "tenant" on field "Query.scoped".']);
    expect(await errors('query Q($f: Filter) { search(filter: $f) }', { f: { owner: '1' } })).toEqual([
      'Variable "$f" got invalid value { owner: "1" }; Field "owner" is not defined by type "Filter".',
    ]);
    expect(remote.received).toHaveLength(0);
  });

  it('go without a session variable a preset needs: the exact error, and the remote is not called', async () => {
    const response = await gateway.post({ query: '{ echo }' }, user({ 'x-svc-user-id': undefined }));
    expect(response).toEqual({
      status: 200,
      body: { errors: [{ message: '"x-svc-user-id" session variable expected, but not found', extensions: { code: 'not-found', path: '$' } }] },
    });
    const nested = await gateway.post({ query: '{ scoped }' }, user({ 'x-svc-tenant-id': undefined }));
    expect(nested.body.errors[0].message).toBe('"x-svc-tenant-id" session variable expected, but not found');
    expect(remote.received).toHaveLength(0);
  });

  it('use a session value that cannot be coerced to its target: coercion-error naming the variable only (the logs name the type and the field)', async () => {
    const failure = async (query: string, overrides: Record<string, string>) => {
      const response = await gateway.post({ query }, user(overrides));
      expect(response.status).toBe(200);
      expect(response.body.data).toBeUndefined();
      expect(response.body.errors).toHaveLength(1);
      expect(response.body.errors[0].extensions).toEqual({ code: 'coercion-error', path: '$' });
      return response.body.errors[0].message as string;
    };
    expect(await failure('{ echo }', { 'x-svc-user-id': 'abc' })).toBe('the value of session variable "x-svc-user-id" cannot be coerced');
    expect(await failure('{ colors }', { 'x-svc-color': 'BLUEISH' })).toBe('the value of session variable "x-svc-color" cannot be coerced');
    expect(await failure('{ list }', { 'x-svc-ids': '1,2' })).toBe('the value of session variable "x-svc-ids" cannot be coerced');
    expect(await failure('{ list }', { 'x-svc-ids': '[1, "x"]' })).toBe('the value of session variable "x-svc-ids" cannot be coerced');
    expect(remote.received).toHaveLength(0);
    expect(logger.lines.filter((line) => line.includes('cannot be coerced'))).toEqual([
      'warn remote schema "echo": role "user": the value of session variable "x-svc-user-id" cannot be coerced to type "Int" (preset of Query.echo(userId:)): not a 32-bit integer',
      expect.stringMatching(/^warn .*"x-svc-color" cannot be coerced to type "Color!"/),
      expect.stringMatching(/^warn .*"x-svc-ids" cannot be coerced to type "\[Int!\]!"/),
      expect.stringMatching(/^warn .*"x-svc-ids" cannot be coerced to type "\[Int!\]!"/),
    ]);
  });
});

describe('presets on a customized remote (delegation)', () => {
  it('fill root arguments and nested input fields, in literals and variables', async () => {
    expect(await ask('{ ns { echo(note: "d") colors search(filter: {name: "n", range: {high: 1}}) scoped } }')).toEqual({
      ns: {
        echo: { userId: 7, note: 'd' },
        colors: { color: 'GREEN' },
        search: { filter: { owner: '7', name: 'n', range: { low: 0, high: 1 } } },
        scoped: { tenant: { id: 3 } },
      },
    });
    expect(await ask('query Q($f: C_Filter) { ns { search(filter: $f) } }', { f: { name: 'v', range: { high: 4 } } })).toEqual({
      ns: { search: { filter: { owner: '7', name: 'v', range: { low: 0, high: 4 } } } },
    });
    expect(await ask('mutation { ns { save(filter: {color: GREEN}) } }')).toEqual({ ns: { save: { filter: { owner: '7', color: 'GREEN' } } } });
    // The role sees the customized names of its grant only.
    const errors = (await gateway.post({ query: '{ ns { echo(userId: 1) items { secret } } }' }, user())).body.errors.map(
      (e: { message: string }) => e.message,
    );
    expect(errors).toEqual(['Unknown argument "userId" on field "ns_query.echo".', 'Cannot query field "secret" on type "C_Item".']);
  });

  it('answer a missing session variable with the error at the field, the remote not called', async () => {
    const response = await gateway.post({ query: '{ ns { echo } }' }, user({ 'x-svc-user-id': undefined }));
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ ns: null });
    expect(response.body.errors).toEqual([
      expect.objectContaining({ message: '"x-svc-user-id" session variable expected, but not found', path: ['ns'] }),
    ]);
    expect(remote.received).toHaveLength(0);
  });
});

describe('presets on subscriptions over graphql-ws', () => {
  const sessionParam = (overrides: Record<string, string | undefined> = {}) => ({
    session: JSON.parse(user(overrides)['x-test-session']!) as unknown,
  });

  async function collect(query: string, overrides: Record<string, string | undefined> = {}, vars?: Record<string, unknown>) {
    const client = gateway.wsClient(sessionParam(overrides));
    const results: unknown[] = [];
    for await (const result of client.iterate({ query, ...(vars ? { variables: vars } : {}) })) results.push(result);
    return results;
  }

  it('fill arguments and input fields on the fast path', async () => {
    const results = await collect('subscription S($f: Filter) { ticks(filter: $f) }', {}, { f: { name: 's' } });
    expect(results).toEqual([{ data: { ticks: JSON.stringify({ userId: 7, filter: { owner: '7', name: 's' } }) } }]);
  });

  it('fill them under the namespace of a customized remote', async () => {
    const results = await collect('subscription { ns { ticks(filter: {name: "c"}) } }');
    expect(results).toEqual([{ data: { ns: { ticks: JSON.stringify({ userId: 7, filter: { owner: '7', name: 'c' } }) } } }]);
  });

  it('under a namespace, end with the error at the namespace field, as a query does', async () => {
    const results = await collect('subscription { ns { ticks } }', { 'x-svc-user-id': undefined });
    expect(results).toEqual([
      {
        data: { ns: null },
        errors: [
          {
            message: '"x-svc-user-id" session variable expected, but not found',
            path: ['ns'],
            extensions: { code: 'not-found', path: '$' },
          },
        ],
      },
    ]);
  });

  it('end with the error when a session variable is missing', async () => {
    const results = await collect('subscription { ticks }', { 'x-svc-user-id': undefined });
    expect(results).toEqual([
      { errors: [{ message: '"x-svc-user-id" session variable expected, but not found', extensions: { code: 'not-found', path: '$' } }] },
    ]);
  });
});
