import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLID, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, buildSchema, printSchema } from 'graphql';
import { startSampleRemote, startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { startStubRemote, waitFor } from './utils/fixtures.js';

let remote: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
  registry = createRemoteSchemaRegistry({ retry: false });
  gateway = await startGateway(registry);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await remote.close();
});

async function useOnly(customization: RemoteSchemaCustomization): Promise<void> {
  const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, customization } }]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
}

describe('type name prefix and suffix', () => {
  beforeAll(() => useOnly({ type_names: { prefix: 'S_', suffix: '_t' } }));

  it('renames every remote type except built-in scalars and root types', () => {
    const names = Object.keys(registry.schema.getTypeMap()).filter((n) => !n.startsWith('__'));
    expect(names.sort()).toEqual(
      ['Boolean', 'ID', 'Int', 'Mutation', 'Query', 'S_Message_t', 'S_MessageInput_t', 'S_Node_t', 'S_Post_t',
        'S_Role_t', 'S_SearchResult_t', 'S_User_t', 'String', 'Subscription'].sort(),
    );
  });

  it('answers __typename with the new names, through fragments on renamed types', async () => {
    const response = await gateway.post({
      query: `query Search($term: String!) {
        search(term: $term) { __typename ...U ... on S_Post_t { title } }
        node(id: "p1") { __typename ... on S_Node_t { id } }
      }
      fragment U on S_User_t { name role }`,
      variables: { term: 'l' },
    });
    expect(response).toEqual({
      status: 200,
      body: {
        data: {
          search: [
            { __typename: 'S_User_t', name: 'Linus', role: 'VIEWER' },
            { __typename: 'S_Post_t', title: 'Hello world' },
            { __typename: 'S_Post_t', title: 'Compilers' },
          ],
          node: { __typename: 'S_Post_t', id: 'p1' },
        },
      },
    });
  });

  it('takes variables of renamed enums and input types', async () => {
    const users = await gateway.post({
      query: 'query ($role: S_Role_t) { users(role: $role) { name } }',
      variables: { role: 'EDITOR' },
    });
    expect(users).toEqual({ status: 200, body: { data: { users: [{ name: 'Grace' }] } } });
    const added = await gateway.post({
      query: 'mutation Add($input: S_MessageInput_t!) { addMessage(input: $input) { __typename text author } }',
      variables: { input: { text: 'hi', author: 'ada' } },
      operationName: 'Add',
    });
    expect(added).toEqual({
      status: 200,
      body: { data: { addMessage: { __typename: 'S_Message_t', text: 'hi', author: 'ada' } } },
    });
  });
});

describe('type name mapping', () => {
  beforeAll(() => useOnly({ type_names: { prefix: 'S_', mapping: { User: 'Person', String: 'Text' } } }));

  it('wins over the prefix and may rename a built-in scalar', async () => {
    const sdl = printSchema(registry.schema);
    expect(sdl).toContain('type Person implements S_Node');
    expect(sdl).toContain('hello(name: Text): Text!');
    const response = await gateway.post({
      query: 'query ($name: Text) { hello(name: $name) user(id: "2") { __typename name } }',
      variables: { name: 'Bob' },
    });
    expect(response).toEqual({
      status: 200,
      body: { data: { hello: 'Hello, Bob!', user: { __typename: 'Person', name: 'Grace' } } },
    });
  });
});

describe('root fields namespace', () => {
  beforeAll(() => useOnly({ root_fields_namespace: 'sample' }));

  it('nests queries, mutations and subscriptions under one field', async () => {
    const fields = (type: GraphQLObjectType | null | undefined) => Object.keys(type?.getFields() ?? {});
    expect(fields(registry.schema.getQueryType())).toEqual(['sample']);
    expect(fields(registry.schema.getMutationType())).toEqual(['sample']);
    expect(fields(registry.schema.getSubscriptionType())).toEqual(['sample']);
    expect(fields(registry.schema.getType('sample_subscription') as GraphQLObjectType)).toEqual(['countdown', 'messageAdded', 'echoHeaders']);
    const query = await gateway.post({ query: '{ sample { hello remoteName user(id: "1") { name } } }' });
    expect(query).toEqual({
      status: 200,
      body: { data: { sample: { hello: 'Hello, world!', remoteName: 'sample', user: { name: 'Ada' } } } },
    });
    const mutation = await gateway.post({ query: 'mutation { sample { addMessage(input: {text: "ns"}) { text } } }' });
    expect(mutation).toEqual({ status: 200, body: { data: { sample: { addMessage: { text: 'ns' } } } } });
  });

  it('streams a subscription field nested under the namespace', async () => {
    const client = gateway.wsClient();
    const values: unknown[] = [];
    for await (const result of client.iterate({ query: 'subscription { sample { countdown(from: 2) } }' })) values.push(result);
    expect(values).toEqual([
      { data: { sample: { countdown: 2 } } },
      { data: { sample: { countdown: 1 } } },
      { data: { sample: { countdown: 0 } } },
    ]);
    await client.dispose();
  });

  it('keeps aliases, __typename and fragments inside the namespace, over graphql-ws and SSE', async () => {
    const request = {
      query: `subscription Count($from: Int!) { s: sample { __typename ...F } }
        fragment F on sample_subscription { c: countdown(from: $from, intervalMs: 1) }`,
      variables: { from: 1 },
      operationName: 'Count',
    };
    const want = [{ data: { s: { __typename: 'sample_subscription', c: 1 } } }, { data: { s: { __typename: 'sample_subscription', c: 0 } } }];
    const client = gateway.wsClient();
    const values: unknown[] = [];
    for await (const result of client.iterate(request)) values.push(result);
    await client.dispose();
    expect(values).toEqual(want);
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(request),
    });
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('event: next'));
    expect(events.map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)))).toEqual(want);
  });

  /** Every result of a subscription over graphql-ws, or what ended it otherwise. */
  const everyResult = async (request: { query: string; variables?: Record<string, unknown> }) => {
    const client = gateway.wsClient();
    const results: unknown[] = [];
    try {
      for await (const result of client.iterate(request)) results.push(result);
    } catch (error) {
      results.push({ thrown: error });
    } finally {
      await client.dispose();
    }
    return results;
  };
  const oneField = (count: number) => ({
    errors: [
      {
        message: `the operation cannot be executed: an anonymous subscription must select exactly one field inside namespace "sample", but it selects ${count}`,
        extensions: { code: 'validation-failed', path: '$' },
      },
    ],
  });

  it('refuses a subscription that selects two fields, or none, inside the namespace, before asking the remote', async () => {
    const before = remote.subscribed.length;
    expect(await everyResult({ query: 'subscription { sample { countdown(from: 1) echoHeaders } }' })).toEqual([oneField(2)]);
    expect(await everyResult({ query: 'subscription { sample { __typename } }' })).toEqual([oneField(0)]);
    // Decided for the variables when @skip / @include are among them.
    expect(
      await everyResult({
        query: 'subscription($a: Boolean!, $b: Boolean!) { sample { a: countdown(from: 1) @include(if: $a) b: countdown(from: 2) @include(if: $b) } }',
        variables: { a: true, b: true },
      }),
    ).toEqual([oneField(2)]);
    expect(remote.subscribed.length).toBe(before);
    // An error of the request: 400 where the client accepts application/graphql-response+json.
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: 'subscription { sample { countdown(from: 1) echoHeaders } }' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(oneField(2));
  });

  it('sends the remote only the field @skip / @include leave, without them or their variables', async () => {
    const before = remote.subscribed.length;
    expect(await everyResult({ query: 'subscription { sample { a: countdown(from: 1, intervalMs: 1) @skip(if: true) b: countdown(from: 0) } }' })).toEqual([
      { data: { sample: { b: 0 } } },
    ]);
    const query = `subscription($s: Boolean!, $from: Int!) {
      sample { ... @include(if: $s) { a: countdown(from: $from, intervalMs: 1) } b: countdown(from: 5) @skip(if: $s) }
    }`;
    expect(await everyResult({ query, variables: { s: true, from: 1 } })).toEqual([{ data: { sample: { a: 1 } } }, { data: { sample: { a: 0 } } }]);
    expect(await everyResult({ query, variables: { s: false, from: 1 } })).toHaveLength(6);
    expect(remote.subscribed.slice(before)).toEqual([
      expect.objectContaining({ query: expect.not.stringMatching(/@|\$s|\ba:/) }),
      { query: 'subscription ($from: Int!) {\n  a: countdown(from: $from, intervalMs: 1)\n}', variables: { from: 1 }, operationName: null },
      { query: 'subscription {\n  b: countdown(from: 5)\n}', variables: null, operationName: null },
    ]);
  });

  it('answers a request error when the only field inside the namespace is left out', async () => {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { sample { __typename countdown(from: 1) @skip(if: true) } }' }),
    });
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('event: next'));
    expect(events.map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)))).toEqual([
      {
        errors: [
          {
            message: 'Anonymous Subscription must select one top level field, but every one is left out by @skip or @include.',
            locations: [{ line: 1, column: 55 }],
          },
        ],
      },
    ]);
  });
});

describe('root fields namespace with renamed types', () => {
  beforeAll(() => useOnly({ root_fields_namespace: 'chat', type_names: { prefix: 'C_' }, field_names: [{ parent_type: 'Subscription', prefix: 'on_' }] }));

  it('renames the fields inside the namespace and the types of each event, for every subscriber of one upstream subscription', async () => {
    const first = gateway.wsClient();
    const second = gateway.wsClient();
    const before = remote.subscribed.length;
    // Two clients whose subscriptions differ only outside the namespace share one upstream subscription.
    const a = first.iterate({ query: 'subscription { a: chat { m: on_messageAdded { __typename text } } }' });
    const nextA = a.next();
    expect(await waitFor(() => remote.subscribed.length === before + 1)).toBe(true);
    const b = second.iterate({ query: 'subscription { b: chat { __typename m: on_messageAdded { __typename text } } }' });
    const nextB = b.next();
    // The second joins the running upstream subscription when its message arrives: add messages until it has one.
    let sent = 0;
    let received: IteratorResult<unknown> | undefined;
    while (received === undefined && sent < 100) {
      await gateway.post({ query: `mutation { chat { addMessage(input: {text: "hi ${sent++}"}) { id } } }` });
      received = await Promise.race([nextB, new Promise<undefined>((resolve) => setTimeout(resolve, 50))]);
    }
    expect((await nextA).value).toEqual({ data: { a: { m: { __typename: 'C_Message', text: 'hi 0' } } } });
    expect(received?.value).toEqual({
      data: { b: { __typename: 'chat_subscription', m: { __typename: 'C_Message', text: `hi ${sent - 1}` } } },
    });
    expect(remote.subscribed.length).toBe(before + 1);
    expect(remote.subscribed[before]).toMatchObject({ query: expect.stringContaining('m: messageAdded') });
    await a.return?.();
    await b.return?.();
    await first.dispose();
    await second.dispose();
  });
});

describe('a namespaced remote that fails', () => {
  beforeAll(async () => {
    const plan = await registry.plan([
      { name: 'sample', definition: { url: remote.url } },
      { name: 'slow', definition: { url: remote.url, timeout_seconds: 0.3, customization: { root_fields_namespace: 'ns' } } },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
  });

  it('costs only its own namespace field, not the data of the fields beside it', async () => {
    const response = await gateway.post({ query: '{ hello ns { slow(ms: 1000) } }' });
    expect(response).toMatchObject({
      status: 200,
      body: {
        data: { hello: 'Hello, world!', ns: null },
        errors: [
          {
            message: `HTTP exception occurred while sending the request to "${remote.url}"`,
            path: ['ns'],
            extensions: { code: 'remote-schema-error' },
          },
        ],
      },
    });
  });
});

describe('a namespaced remote that answers null for a non-null field', () => {
  it('nulls the namespace field, with the error execution would raise, and keeps the remote\'s own error', async () => {
    // `hello` is `String!`: a remote that answers null for it without an error is at fault.
    const stub = await startStubRemote(({ body, res }) => {
      const withError = body.query.includes('remoteName');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          withError
            ? { data: { hello: null, remoteName: 'stub' }, errors: [{ message: 'no greeting', path: ['hello'] }] }
            : { data: { hello: null } },
        ),
      );
    });
    try {
      const plan = await registry.plan([{ name: 'stub', definition: { url: stub.url, customization: { root_fields_namespace: 'ns' } } }]);
      expect(plan.problems).toEqual([]);
      registry.commit(plan);
      expect(await gateway.post({ query: '{ ns { hello } }' })).toEqual({
        status: 200,
        body: { data: { ns: null }, errors: [{ message: 'Cannot return null for non-nullable field ns_query.hello.', path: ['ns', 'hello'] }] },
      });
      expect(await gateway.post({ query: '{ ns { hello remoteName } }' })).toEqual({
        status: 200,
        body: { data: { ns: null }, errors: [{ message: 'no greeting', path: ['ns', 'hello'] }] },
      });
    } finally {
      await stub.close();
    }
  });
});

describe('field names', () => {
  beforeAll(() =>
    useOnly({
      field_names: [
        { parent_type: 'User', mapping: { name: 'fullName' } },
        { parent_type: 'Message', prefix: 'msg_', mapping: { text: 'body' } },
        { parent_type: 'Query', mapping: { hello: 'greet' } },
      ],
    }),
  );

  it('renames fields per original parent type, mapping first', async () => {
    const response = await gateway.post({
      query: '{ greet(name: "x") user(id: "1") { id fullName role } search(term: "Lin") { ... on User { fullName } } }',
    });
    expect(response).toEqual({
      status: 200,
      body: { data: { greet: 'Hello, x!', user: { id: '1', fullName: 'Ada', role: 'ADMIN' }, search: [{ fullName: 'Linus' }] } },
    });
    const added = await gateway.post({ query: 'mutation { addMessage(input: {text: "t", author: "a"}) { msg_id body msg_author } }' });
    expect(added).toEqual({ status: 200, body: { data: { addMessage: { msg_id: expect.any(String), body: 't', msg_author: 'a' } } } });
  });

  it('refuses field names that break an interface with invalid-params', async () => {
    const plan = await registry.plan([
      { name: 'bad', definition: { url: remote.url, customization: { field_names: [{ parent_type: 'User', prefix: 'u_' }] } } },
    ]);
    expect(plan.problems).toEqual([
      {
        name: 'bad',
        code: 'invalid-params',
        message:
          'field name customization of "id" differs between interface "Node" (to "id") and "User", which implements it ' +
          '(to "u_id"); rename it alike on both',
      },
    ]);
  });
});

describe('all customizations at once', () => {
  beforeAll(() =>
    useOnly({
      root_fields_namespace: 'svc',
      type_names: { prefix: 'P_', suffix: '_s', mapping: { Role: 'Rank' } },
      field_names: [{ parent_type: 'User', mapping: { name: 'userName' } }, { parent_type: 'Query', prefix: 'q_' }],
    }),
  );

  it('key field names by the original type name and rename everything else around them', async () => {
    const response = await gateway.post({
      query: `query ($rank: Rank) {
        svc { q_users(role: $rank) { __typename userName role } q_node(id: "1") { __typename ... on P_User_s { userName } } }
      }`,
      variables: { rank: 'VIEWER' },
    });
    expect(response).toEqual({
      status: 200,
      body: {
        data: {
          svc: {
            q_users: [{ __typename: 'P_User_s', userName: 'Linus', role: 'VIEWER' }],
            q_node: { __typename: 'P_User_s', userName: 'Ada' },
          },
        },
      },
    });
  });
});

describe('customization that is wrong on its own', () => {
  const cases: Array<[string, RemoteSchemaCustomization, RegExp]> = [
    ['a type mapping that is not distinct', { type_names: { mapping: { User: 'X', Post: 'X' } } }, /not distinct/],
    ['a prefix that makes two types one', { type_names: { prefix: 'A', mapping: { User: 'APost' } } }, /not distinct/],
    ['a field mapping that is not distinct', { field_names: [{ parent_type: 'User', mapping: { id: 'k', name: 'k' } }] }, /not distinct/],
    ['a __ namespace', { root_fields_namespace: '__ns' }, /"__ns" starts with "__"/],
    ['a __ type name', { type_names: { mapping: { User: '__User' } } }, /starts with "__"/],
    ['a type name that is not a GraphQL name', { type_names: { mapping: { User: 'my-user' } } }, /not a valid GraphQL name/],
    ['a prefix that is not a GraphQL name', { type_names: { prefix: '1x' } }, /not a valid GraphQL name/],
  ];
  it.each(cases)('refuses %s with invalid-params', async (_, customization, message) => {
    const plan = await registry.plan([{ name: 'bad', definition: { url: remote.url, customization } }]);
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]).toMatchObject({ name: 'bad', code: 'invalid-params' });
    expect(plan.problems[0]?.message).toMatch(message);
  });
});

describe('customization under which two names become one', () => {
  const cases: Array<[string, RemoteSchemaCustomization, string]> = [
    [
      'a field mapped to the name of another field',
      { field_names: [{ parent_type: 'User', mapping: { name: 'id' } }] },
      'field names of type "User" are not distinct after customization: "id" and "name" both become "id"',
    ],
    [
      'a field mapped to the prefixed name of another',
      { field_names: [{ parent_type: 'Message', prefix: 'msg_', mapping: { text: 'msg_id' } }] },
      'field names of type "Message" are not distinct after customization: "id" and "text" both become "msg_id"',
    ],
    [
      'a root field mapped to the suffixed name of another',
      { field_names: [{ parent_type: 'Query', suffix: '_q', mapping: { hello: 'user_q' } }] },
      'field names of type "Query" are not distinct after customization: "hello" and "user" both become "user_q"',
    ],
    [
      'a subscription field mapped to another under the namespace',
      { root_fields_namespace: 'ns', field_names: [{ parent_type: 'Subscription', mapping: { countdown: 'messageAdded' } }] },
      'field names of type "Subscription" are not distinct after customization: "countdown" and "messageAdded" both become "messageAdded"',
    ],
    [
      'a type mapped to the prefixed name of another',
      { type_names: { prefix: 'S_', mapping: { Role: 'S_User' } } },
      'type names are not distinct after customization: "Role" and "User" both become "S_User"',
    ],
    [
      'a type mapped to the suffixed name of another',
      { type_names: { suffix: '_t', mapping: { Post: 'User_t' } } },
      'type names are not distinct after customization: "User" and "Post" both become "User_t"',
    ],
    [
      'a type mapped to a built-in scalar',
      { type_names: { mapping: { Role: 'String' } } },
      'type names are not distinct after customization: "String" and "Role" both become "String"',
    ],
    [
      'a built-in scalar mapped to another',
      { type_names: { mapping: { Boolean: 'Int' } } },
      'type names are not distinct after customization: "Int" and "Boolean" both become "Int"',
    ],
    [
      'a built-in scalar mapped to a type of the remote',
      { type_names: { mapping: { String: 'User' } } },
      'type names are not distinct after customization: "User" and "String" both become "User"',
    ],
    [
      'a built-in scalar mapped to a type of the remote that is renamed in turn',
      { type_names: { prefix: 'S_', mapping: { String: 'User' } } },
      'type name mapping of built-in scalar "String" to "User" clashes with the remote\'s own type "User"',
    ],
    [
      'a type mapped to the original name of another type renamed in turn',
      { type_names: { suffix: '_t', mapping: { User: 'Post' } } },
      'type name mapping of "User" to "Post" names another type of the remote; map to a name the remote does not use',
    ],
    [
      'a type mapped to the type of the namespace field',
      { root_fields_namespace: 'ns', type_names: { mapping: { Message: 'ns_mutation' } } },
      'type names are not distinct after customization: "Message" becomes "ns_mutation", the type of root fields namespace "ns"',
    ],
    [
      'a type mapped to the type of the subscription namespace field',
      { root_fields_namespace: 'ns', type_names: { mapping: { Message: 'ns_subscription' } } },
      'type names are not distinct after customization: "Message" becomes "ns_subscription", the type of root fields namespace "ns"',
    ],
  ];
  it.each(cases)('refuses %s with invalid-params, naming both', async (_, customization, message) => {
    const plan = await registry.plan([
      { name: 'sample', definition: { url: remote.url } },
      { name: 'bad', definition: { url: remote.url, customization } },
    ]);
    expect(plan.problems).toEqual([{ name: 'bad', code: 'invalid-params', message }]);
  });

  it('accepts names that end distinct, a built-in scalar renamed next to the remote\'s types', async () => {
    const plan = await registry.plan([
      {
        name: 'fine',
        definition: {
          url: remote.url,
          customization: {
            root_fields_namespace: 'ns',
            type_names: { prefix: 'S_', mapping: { String: 'Text', User: 'S_Role', Role: 'Rank' } },
            field_names: [{ parent_type: 'Message', mapping: { text: 'author', author: 'text' } }],
          },
        },
      },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    const user = await gateway.post({ query: '{ ns { user(id: "1") { __typename name role } } }' });
    expect(user).toEqual({ status: 200, body: { data: { ns: { user: { __typename: 'S_Role', name: 'Ada', role: 'ADMIN' } } } } });
    const swapped = await gateway.post({ query: 'mutation { ns { addMessage(input: {text: "t", author: "a"}) { text author } } }' });
    expect(swapped).toEqual({ status: 200, body: { data: { ns: { addMessage: { text: 'a', author: 't' } } } } });
  });
});

describe('clashes', () => {
  it('refuses a remote whose root field is already taken', async () => {
    const plan = await registry.plan([
      { name: 'first', definition: { url: remote.url } },
      { name: 'second', definition: { url: remote.url, customization: { type_names: { prefix: 'Two' } } } },
    ]);
    expect(plan.problems).toEqual([
      { name: 'second', code: 'invalid-configuration', message: "Inconsistent object: Duplicate remote field 'hello'" },
    ]);
    expect(Object.keys(plan.schema.getQueryType()?.getFields() ?? {})).toContain('hello');
  });

  it('shares types of the same name and shape between remotes, as Hasura does', async () => {
    const plan = await registry.plan([
      { name: 'first', definition: { url: remote.url } },
      { name: 'second', definition: { url: remote.url, customization: { root_fields_namespace: 'two' } } },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    const response = await gateway.post({
      query: '{ user(id: "1") { __typename name } two { user(id: "2") { __typename name } search(term: "Lin") { ... on User { name } } } }',
    });
    expect(response).toEqual({
      status: 200,
      body: {
        data: {
          user: { __typename: 'User', name: 'Ada' },
          two: { user: { __typename: 'User', name: 'Grace' }, search: [{ name: 'Linus' }] },
        },
      },
    });
    const mutation = await gateway.post({
      query: 'mutation ($input: MessageInput!) { two { addMessage(input: $input) { text } } }',
      variables: { input: { text: 'shared input type' } },
    });
    expect(mutation).toEqual({ status: 200, body: { data: { two: { addMessage: { text: 'shared input type' } } } } });
  });

  it('refuses a remote that defines a taken type name with another shape', async () => {
    const other = await startSchemaServer(buildSchema('type User { id: ID! email: String } type Role { name: String } type Query { other: User role: Role }'));
    try {
      const plan = await registry.plan([
        { name: 'first', definition: { url: remote.url } },
        { name: 'second', definition: { url: other.url } },
      ]);
      expect(plan.problems).toEqual([
        {
          name: 'second',
          code: 'invalid-configuration',
          message: "Inconsistent object: Conflicting types: 'User', 'Role' already exist in the schema with another definition",
        },
      ]);
    } finally {
      await other.close();
    }
  });

  it('never shares a type with the local schema', async () => {
    const local = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { version: { type: GraphQLString } } }),
      types: [new GraphQLObjectType({ name: 'Message', fields: { id: { type: new GraphQLNonNull(GraphQLID) }, text: { type: new GraphQLNonNull(GraphQLString) }, author: { type: GraphQLString } } })],
    });
    const withLocal = createRemoteSchemaRegistry({ localSchema: local, retry: false });
    try {
      const plan = await withLocal.plan([{ name: 'sample', definition: { url: remote.url } }]);
      expect(plan.problems).toEqual([
        {
          name: 'sample',
          code: 'invalid-configuration',
          message: "Inconsistent object: Conflicting types: 'Message' already exist in the schema with another definition",
        },
      ]);
    } finally {
      await withLocal.dispose();
    }
  });

  it('refuses a clash with the local schema', async () => {
    const local = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { hello: { type: GraphQLString, resolve: () => 'local' } } }),
    });
    const withLocal = createRemoteSchemaRegistry({ localSchema: local, retry: false });
    try {
      const plan = await withLocal.plan([{ name: 'sample', definition: { url: remote.url } }]);
      expect(plan.problems).toEqual([
        { name: 'sample', code: 'invalid-configuration', message: "Inconsistent object: Duplicate remote field 'hello'" },
      ]);
      const ok = await withLocal.plan([
        { name: 'sample', definition: { url: remote.url, customization: { root_fields_namespace: 'remote' } } },
      ]);
      expect(ok.problems).toEqual([]);
      expect(Object.keys(ok.schema.getQueryType()?.getFields() ?? {})).toEqual(['hello', 'remote']);
    } finally {
      await withLocal.dispose();
    }
  });

  it('lets two remotes coexist once one is customized apart', async () => {
    const plan = await registry.plan([
      { name: 'first', definition: { url: remote.url } },
      {
        name: 'second',
        definition: { url: remote.url, customization: { root_fields_namespace: 'two', type_names: { prefix: 'Two_' } } },
      },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    const response = await gateway.post({ query: '{ hello two { hello user(id: "3") { __typename name } } }' });
    expect(response).toEqual({
      status: 200,
      body: { data: { hello: 'Hello, world!', two: { hello: 'Hello, world!', user: { __typename: 'Two_User', name: 'Linus' } } } },
    });
  });
});

describe('field names of an interface', () => {
  const rename = { mapping: { id: 'key' } };

  it('are renamed on the interface as on the types implementing it, and answer through both', async () => {
    await useOnly({
      field_names: [
        { parent_type: 'Node', ...rename },
        { parent_type: 'User', ...rename },
        { parent_type: 'Post', ...rename },
      ],
    });
    const node = registry.schema.getType('Node') as GraphQLObjectType;
    expect(Object.keys(node.getFields())).toEqual(['key']);
    const response = await gateway.post({
      query: `{
        node(id: "p1") { __typename key ... on Post { title } }
        users: search(term: "l") { ... on Node { key } ... on User { key name } }
        user(id: "3") { ...N }
      }
      fragment N on Node { key }`,
    });
    expect(response).toEqual({
      status: 200,
      body: {
        data: {
          node: { __typename: 'Post', key: 'p1', title: 'Hello world' },
          users: [{ key: '3', name: 'Linus' }, { key: 'p1' }, { key: 'p2' }],
          user: { key: '3' },
        },
      },
    });
  });

  it.each([
    ['on the interface alone', [{ parent_type: 'Node', ...rename }], /"id" differs between interface "Node" \(to "key"\) and "(Post|User)", which implements it \(to "id"\)/],
    ['on one implementing type alone', [{ parent_type: 'User', ...rename }], /"id" differs between interface "Node" \(to "id"\) and "User", which implements it \(to "key"\)/],
  ])('must be alike on the interface and its types: refused %s with invalid-params', async (_, fieldNames, message) => {
    const plan = await registry.plan([{ name: 'bad', definition: { url: remote.url, customization: { field_names: fieldNames } } }]);
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]).toMatchObject({ name: 'bad', code: 'invalid-params' });
    expect(plan.problems[0]?.message).toMatch(message);
  });
});
