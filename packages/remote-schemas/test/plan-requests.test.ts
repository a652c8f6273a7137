import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLObjectType, GraphQLSchema, GraphQLString, execute, parse } from 'graphql';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaEntry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger, startStubRemote, type StubRemote, type StubRequest } from './utils/fixtures.js';

let remote: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;
const logger = memoryLogger();

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
  registry = createRemoteSchemaRegistry({ retry: false, logger });
  gateway = await startGateway(registry);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await remote.close();
});

async function use(entries: RemoteSchemaEntry[]): Promise<void> {
  const plan = await registry.plan(entries);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  remote.received.length = 0;
}

/** The same sample remote twice: once as it is, once customized (`two`); one request log for both. */
function both(customization: RemoteSchemaCustomization): RemoteSchemaEntry[] {
  return [
    { name: 'sample', definition: { url: remote.url } },
    { name: 'two', definition: { url: remote.url, customization } },
  ];
}

const bodies = () => remote.received.map((r) => r.body as { query: string; variables: Record<string, unknown> | null; operationName: string | null });

describe('one HTTP request per remote', () => {
  it('sends 50 aliases of a field of a customized remote in one request, keys in the client\'s order', async () => {
    await use([{ name: 'sample', definition: { url: remote.url, customization: { field_names: [{ parent_type: 'Query', prefix: 'q_' }] } } }]);
    const keys = Array.from({ length: 50 }, (_, i) => `a${i}`);
    const query = `{ ${keys.map((k, i) => `${k}: q_hello(name: "n${i}")`).join(' ')} }`;
    const response = await gateway.post({ query });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data)).toEqual(keys);
    expect(response.body.data.a49).toBe('Hello, n49!');
    expect(remote.received).toHaveLength(1);
    expect(bodies()[0]?.query).toContain('a0: hello(name: "n0")');
  });

  it('sends an operation over two remotes as one request to each, the answers merged in the client\'s order', async () => {
    await use(both({ root_fields_namespace: 'two', type_names: { prefix: 'Two_' } }));
    const response = await gateway.post({
      query: '{ a: hello(name: "a") two { user(id: "1") { __typename name } b: hello(name: "b") } c: remoteName two { d: hello(name: "d") } }',
    });
    expect(response).toEqual({
      status: 200,
      body: {
        data: {
          a: 'Hello, a!',
          two: { user: { __typename: 'Two_User', name: 'Ada' }, b: 'Hello, b!', d: 'Hello, d!' },
          c: 'sample',
        },
      },
    });
    expect(Object.keys(response.body.data)).toEqual(['a', 'two', 'c']);
    expect(Object.keys(response.body.data.two)).toEqual(['user', 'b', 'd']);
    expect(remote.received).toHaveLength(2);
  });

  it('sends each remote only the variables and fragments it uses', async () => {
    await use(both({ root_fields_namespace: 'two', type_names: { prefix: 'Two_' } }));
    const response = await gateway.post({
      query: `query Q($mine: String, $theirs: ID!) {
        hello(name: $mine)
        two { user(id: $theirs) { ...P } }
      }
      query Other($unused: ID!) { two { node(id: $unused) { ...Unused } } }
      fragment P on Two_User { name }
      fragment Unused on Two_Post { title }`,
      variables: { mine: 'm', theirs: '2' },
      operationName: 'Q',
    });
    expect(response).toEqual({ status: 200, body: { data: { hello: 'Hello, m!', two: { user: { name: 'Grace' } } } } });
    const sent = bodies().sort((x, y) => x.query.localeCompare(y.query));
    expect(sent).toEqual([
      { query: 'query Q($mine: String) {\n  hello(name: $mine)\n}', variables: { mine: 'm' }, operationName: 'Q' },
      { query: 'query Q($theirs: ID!) {\n  user(id: $theirs) {\n    ...P\n  }\n}\n\nfragment P on User {\n  name\n}', variables: { theirs: '2' }, operationName: 'Q' },
    ]);
  });

  it('calls the remotes of one query in parallel', async () => {
    // Each stub answers only once both have received their request: sequential calls would time out.
    const waiting: StubRequest[] = [];
    const hold = (request: StubRequest) => {
      waiting.push(request);
      if (waiting.length === 2) for (const r of waiting) r.answer();
    };
    const stubs: StubRemote[] = [await startStubRemote(hold), await startStubRemote(hold)];
    const parallel = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
    const server = await startGateway(parallel);
    try {
      const plan = await parallel.plan([
        { name: 'one', definition: { url: stubs[0]!.url, timeout_seconds: 2 } },
        { name: 'other', definition: { url: stubs[1]!.url, timeout_seconds: 2, customization: { root_fields_namespace: 'other', type_names: { prefix: 'O_' } } } },
      ]);
      expect(plan.problems).toEqual([]);
      parallel.commit(plan);
      const response = await server.post({ query: '{ hello other { hello(name: "o") } }' });
      expect(response).toEqual({ status: 200, body: { data: { hello: 'Hello, world!', other: { hello: 'Hello, o!' } } } });
      expect(stubs.map((s) => s.operations.length)).toEqual([1, 1]);
    } finally {
      await server.close();
      await parallel.dispose();
      await Promise.all(stubs.map((s) => s.close()));
    }
  });
});

describe('mutations', () => {
  it('keep their order: consecutive root fields of one remote in one request, another remote in between splits them', async () => {
    await use(both({ root_fields_namespace: 'two' }));
    const response = await gateway.post({
      query: `mutation {
        a: addMessage(input: {text: "a"}) { id text }
        b: addMessage(input: {text: "b"}) { id text }
        two { c: addMessage(input: {text: "c"}) { id text } }
        d: addMessage(input: {text: "d"}) { id text }
      }`,
    });
    expect(response.status).toBe(200);
    const { a, b, two, d } = response.body.data;
    expect([a.text, b.text, two.c.text, d.text]).toEqual(['a', 'b', 'c', 'd']);
    // One message list behind both names: ids tell the order the remote ran them in.
    expect([Number(a.id), Number(b.id), Number(two.c.id), Number(d.id)]).toEqual([1, 2, 3, 4].map((i) => i + Number(a.id) - 1));
    expect(bodies().map((b) => b.query.match(/\w+: addMessage/g))).toEqual([['a: addMessage', 'b: addMessage'], ['c: addMessage'], ['d: addMessage']]);
  });
});

describe('errors', () => {
  it('are put back at the client\'s paths: under the namespace, with the client\'s aliases', async () => {
    await use(both({ root_fields_namespace: 'two', field_names: [{ parent_type: 'Query', mapping: { boom: 'bang' } }] }));
    const response = await gateway.post({ query: '{ hello two { x: bang hello } boom }' });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ hello: 'Hello, world!', two: { x: null, hello: 'Hello, world!' }, boom: null });
    expect(response.body.errors.map((e: { path: unknown; extensions: unknown }) => [e.path, e.extensions])).toEqual(
      expect.arrayContaining([
        [['two', 'x'], { code: 'BOOM' }],
        [['boom'], { code: 'BOOM' }],
      ]),
    );
  });

  it('of a call that fails cost only that remote\'s fields, the error at its namespace field', async () => {
    await use([
      { name: 'sample', definition: { url: remote.url } },
      { name: 'slow', definition: { url: remote.url, timeout_seconds: 0.2, customization: { root_fields_namespace: 'ns' } } },
    ]);
    const response = await gateway.post({ query: '{ hello ns { slow(ms: 1000) } }' });
    expect(response.body).toEqual({
      data: { hello: 'Hello, world!', ns: null },
      errors: [
        {
          message: `HTTP exception occurred while sending the request to "${remote.url}"`,
          path: ['ns'],
          extensions: { code: 'remote-schema-error', path: '$' },
        },
      ],
    });
  });

  it('of a call that fails is given to every root field of that remote, a non-null one nulling the answer', async () => {
    const prefixed: RemoteSchemaCustomization = { field_names: ['Query', 'Mutation', 'Subscription'].map((parent_type) => ({ parent_type, prefix: 'p_' })) };
    await use([
      { name: 'sample', definition: { url: remote.url } },
      { name: 'slow', definition: { url: remote.url, timeout_seconds: 0.2, customization: prefixed } },
    ]);
    const error = (path: string[]) => ({
      message: `HTTP exception occurred while sending the request to "${remote.url}"`,
      path,
      extensions: { code: 'remote-schema-error', path: '$' },
    });
    // Nullable fields: each is null with the error, the other remote's field stands.
    const nullable = await gateway.post({ query: '{ hello a: p_slow(ms: 1000) b: p_user(id: "1") { id } c: p_boom }' });
    expect(nullable.body).toEqual({ data: { hello: 'Hello, world!', a: null, b: null, c: null }, errors: [error(['a']), error(['b']), error(['c'])] });
    // A non-null field (p_hello: String!) among them: the answer is null, every field has its error.
    const nonNull = await gateway.post({ query: '{ hello a: p_slow(ms: 1000) p_hello }' });
    expect(nonNull.body).toEqual({ data: null, errors: [error(['a']), error(['p_hello'])] });
  });
});

describe('customized remotes', () => {
  const cases: Array<[string, RemoteSchemaCustomization]> = [
    ['prefix and suffix', { type_names: { prefix: 'S_', suffix: '_t' } }],
    ['a mapping, a built-in scalar included', { type_names: { prefix: 'S_', mapping: { User: 'Person', String: 'Text' } } }],
    ['a namespace', { root_fields_namespace: 'ns' }],
    ['field names', { field_names: [{ parent_type: 'User', mapping: { name: 'fullName' } }, { parent_type: 'Query', prefix: 'q_' }, { parent_type: 'Post', mapping: { title: 'headline' } }] }],
    [
      'all at once',
      {
        root_fields_namespace: 'svc',
        type_names: { prefix: 'P_', suffix: '_s', mapping: { Role: 'Rank' } },
        field_names: [{ parent_type: 'User', mapping: { name: 'userName' } }, { parent_type: 'Query', prefix: 'q_' }],
      },
    ],
  ];

  /** The operation in the customized names, written from the remote's own. */
  function operation(customization: RemoteSchemaCustomization): { query: string; variables: Record<string, unknown> } {
    const mapping = customization.type_names?.mapping ?? {};
    const type = (name: string) =>
      mapping[name] ?? (['String', 'ID'].includes(name) ? name : `${customization.type_names?.prefix ?? ''}${name}${customization.type_names?.suffix ?? ''}`);
    const field = (parent: string, name: string) => {
      const rule = customization.field_names?.find((r) => r.parent_type === parent);
      if (!rule) return name;
      return rule.mapping?.[name] ?? `${rule.prefix ?? ''}${name}${rule.suffix ?? ''}`;
    };
    const q = (name: string) => field('Query', name);
    const body = `
      ${q('search')}(term: $term) { __typename ...U ... on ${type('Post')} { t: ${field('Post', 'title')} ${field('Post', 'author')} { ${field('User', 'name')} } } }
      ${q('node')}(id: "p1") { __typename id ... on ${type('Node')} { id } ... on ${type('User')} { ${field('User', 'name')} } }
      n2: ${q('node')}(id: "2") { ... on ${type('User')} { __typename ${field('User', 'role')} posts { ${field('Post', 'id')} __typename } } }
      ${q('users')}(role: $role) { ...U }
      ${q('hello')}(name: $name)`;
    const ns = customization.root_fields_namespace;
    return {
      query: `query Q($term: ${type('String')}!, $role: ${type('Role')}, $name: ${type('String')}) {
        ${ns ? `${ns} { ${body} }` : body}
      }
      fragment U on ${type('User')} { __typename ${field('User', 'name')} ${field('User', 'role')} }`,
      variables: { term: 'l', role: 'EDITOR', name: 'N' },
    };
  }

  it.each(cases)('answer as delegation does: %s', async (_, customization) => {
    await use([{ name: 'sample', definition: { url: remote.url, customization } }]);
    const { query, variables } = operation(customization);
    const response = await gateway.post({ query, variables, operationName: 'Q' });
    expect(remote.received).toHaveLength(1);
    // Delegation: the registry's schema executed by graphql-js, each root field delegated.
    const delegated = await execute({ schema: registry.schema, document: parse(query), variableValues: variables, contextValue: {} });
    expect(response.body.errors).toBeUndefined();
    expect(JSON.stringify(response.body)).toBe(JSON.stringify({ data: delegated.data }));
  });
});

describe('operations that once went to delegation', () => {
  const operationsSent = () => bodies().map((b) => b.query);

  it('execute the local schema\'s root fields and introspection in the gateway, next to one request per remote', async () => {
    const local = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { version: { type: GraphQLString, resolve: () => 'v1' } } }),
      mutation: new GraphQLObjectType({
        name: 'Mutation',
        // How many requests the remote had received when this ran.
        fields: { seen: { type: GraphQLString, resolve: () => String(remote.received.length) } },
      }),
    });
    const withLocal = createRemoteSchemaRegistry({ localSchema: local, retry: false, logger: memoryLogger() });
    const server = await startGateway(withLocal);
    try {
      withLocal.commit(
        await withLocal.plan([
          { name: 'sample', definition: { url: remote.url } },
          { name: 'two', definition: { url: remote.url, customization: { root_fields_namespace: 'ns' } } },
        ]),
      );
      remote.received.length = 0;
      const query = `query Mixed($v: Boolean!) {
        a: hello(name: "a") version
        t: __type(name: "User") { name }
        ns { hello(name: "ns") }
        again: version @include(if: $v)
        b: hello(name: "b")
        __typename
      }`;
      const on = await server.post({ query, variables: { v: true } });
      expect(on).toEqual({
        status: 200,
        body: { data: { a: 'Hello, a!', version: 'v1', t: { name: 'User' }, ns: { hello: 'Hello, ns!' }, again: 'v1', b: 'Hello, b!', __typename: 'Query' } },
      });
      expect(Object.keys(on.body.data)).toEqual(['a', 'version', 't', 'ns', 'again', 'b', '__typename']);
      // One request for `sample` (a and b), one for `two` (the namespace).
      expect(remote.received).toHaveLength(2);
      const off = await server.post({ query, variables: { v: false } });
      expect(Object.keys(off.body.data)).toEqual(['a', 'version', 't', 'ns', 'b', '__typename']);
      expect(remote.received).toHaveLength(4);
      // A mutation over the local schema and remotes keeps its order: the local field runs between the calls.
      remote.received.length = 0;
      const mutation = await server.post({
        query: `mutation { a: addMessage(input: {text: "a"}) { text } first: seen ns { b: addMessage(input: {text: "b"}) { text } } second: seen }`,
      });
      expect(mutation).toEqual({
        status: 200,
        body: { data: { a: { text: 'a' }, first: '1', ns: { b: { text: 'b' } }, second: '2' } },
      });
      expect(remote.received).toHaveLength(2);
    } finally {
      await server.close();
      await withLocal.dispose();
    }
  });

  it('send a namespace selected under two response keys in one request, its fields aliased apart', async () => {
    await use(both({ root_fields_namespace: 'two' }));
    const response = await gateway.post({
      query: '{ a: two { hello(name: "a") boom } b: two { hello(name: "b") x: remoteName boom __typename } two { hello } }',
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      a: { hello: 'Hello, a!', boom: null },
      b: { hello: 'Hello, b!', x: 'sample', boom: null, __typename: 'two_query' },
      two: { hello: 'Hello, world!' },
    });
    expect(response.body.errors.map((e: { path: unknown }) => e.path)).toEqual([
      ['a', 'boom'],
      ['b', 'boom'],
    ]);
    expect(operationsSent()).toEqual([
      '{\n  hello(name: "a")\n  boom\n  hello_2: hello(name: "b")\n  x: remoteName\n  boom_2: boom\n  hello_3: hello\n}',
    ]);
  });

  it('forward @skip and @include of fragments and namespace fields to the remote, which decides, in one request', async () => {
    await use(both({ root_fields_namespace: 'two', type_names: { prefix: 'Two_' } }));
    const query = `query Q($yes: Boolean!, $no: Boolean!) {
      ...F @include(if: $no)
      two @skip(if: $no) { hello ... @include(if: $yes) { hello x: remoteName } ... @include(if: $no) { boom } }
      t2: two @include(if: $no) { hello }
      ... @include(if: $yes) { remoteName }
    }
    fragment F on Query { hello }`;
    const response = await gateway.post({ query, variables: { yes: true, no: false } });
    expect(response).toEqual({ status: 200, body: { data: { two: { hello: 'Hello, world!', x: 'sample' }, remoteName: 'sample' } } });
    expect(Object.keys(response.body.data)).toEqual(['two', 'remoteName']);
    expect(remote.received).toHaveLength(2);
    const flipped = await gateway.post({ query, variables: { yes: false, no: true } });
    expect(flipped.status).toBe(200);
    expect(flipped.body.data).toEqual({ hello: 'Hello, world!', t2: { hello: 'Hello, world!' } });
    expect(remote.received).toHaveLength(4);
  });

  it('never run a mutation in a skipped fragment under a namespace, nor twice when it is selected twice', async () => {
    await use(both({ root_fields_namespace: 'two' }));
    const texts = async () =>
      ((await gateway.post({ query: '{ messages { text } }' })).body.data.messages as Array<{ text: string }>).map((m) => m.text);
    const before = await texts();
    const response = await gateway.post({
      query: `mutation M($no: Boolean!) {
        two {
          ... @include(if: $no) { skipped: addMessage(input: {text: "skipped"}) { id } }
          ...S @skip(if: true)
          once: addMessage(input: {text: "once"}) { id }
          ... @include(if: true) { once: addMessage(input: {text: "once"}) { text } }
        }
      }
      fragment S on two_mutation { s: addMessage(input: {text: "spread"}) { id } }`,
      variables: { no: false },
    });
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    expect(Object.keys(response.body.data.two)).toEqual(['once']);
    expect(response.body.data.two.once.text).toBe('once');
    expect(await texts()).toEqual([...before, 'once']);
  });

  it('run mutation fields in the order execution gives them, a key first met in a skipped fragment later', async () => {
    await use(both({ field_names: ['Query', 'Mutation', 'Subscription'].map((parent_type) => ({ parent_type, prefix: 'm_' })) }));
    const response = await gateway.post({
      query: `mutation {
        ... @include(if: false) { a: m_addMessage(input: {text: "a"}) { id } }
        b: m_addMessage(input: {text: "b"}) { id text }
        a: m_addMessage(input: {text: "a"}) { id text }
      }`,
    });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data)).toEqual(['b', 'a']);
    expect(Number(response.body.data.a.id)).toBe(Number(response.body.data.b.id) + 1);
    expect(remote.received).toHaveLength(1);
  });

  it('keep a field selected twice with @skip on the first, on a customized remote, under a conditional fragment', async () => {
    await use(both({ root_fields_namespace: 'two', type_names: { prefix: 'Two_' }, field_names: [{ parent_type: 'User', mapping: { name: 'fullName' } }] }));
    const response = await gateway.post({ query: '{ two { ... @include(if: true) { user(id: "1") { fullName @skip(if: true) fullName } } } }' });
    expect(response).toEqual({ status: 200, body: { data: { two: { user: { fullName: 'Ada' } } } } });
    expect(remote.received).toHaveLength(1);
  });
});

describe('a subscription to a remote with renamed types and fields (no namespace)', () => {
  it('is planned: the remote gets it in its own names, each event comes back renamed, nothing is delegated', async () => {
    const lines = memoryLogger();
    const other = createRemoteSchemaRegistry({ retry: false, logger: lines });
    const server = await startGateway(other);
    const client = server.wsClient();
    try {
      const customization: RemoteSchemaCustomization = {
        type_names: { prefix: 'R_' },
        field_names: [
          { parent_type: 'Subscription', prefix: 'r_' },
          { parent_type: 'Mutation', prefix: 'r_' },
          { parent_type: 'Message', mapping: { text: 'body' } },
        ],
      };
      other.commit(await other.plan([{ name: 'sample', definition: { url: remote.url, customization } }]));
      remote.subscribed.length = 0;
      const events: unknown[] = [];
      const listening = new Promise<void>((resolve, reject) => {
        client.subscribe(
          { query: 'subscription Added { added: r_messageAdded { ...M } } fragment M on R_Message { __typename id body }' },
          {
            next: (event) => {
              events.push(event);
              resolve();
            },
            error: reject,
            complete: () => {},
          },
        );
      });
      await expect.poll(() => remote.subscribed.length).toBe(1);
      // Published once the remote holds the subscription; sent until one event arrives.
      const publish = async () => {
        while (events.length === 0) {
          const sent = await server.post({ query: 'mutation { r_addMessage(input: { text: "hi" }) { id } }' });
          expect(sent.status).toBe(200);
          await Promise.race([listening, new Promise((resolve) => setTimeout(resolve, 50))]);
        }
      };
      await publish();
      expect(events[0]).toEqual({ data: { added: { __typename: 'R_Message', id: expect.any(String), body: 'hi' } } });
      expect(remote.subscribed).toEqual([
        { query: expect.stringMatching(/^subscription Added \{\s*added: messageAdded \{/), operationName: 'Added', variables: null },
      ]);
      const sent = (remote.subscribed[0] as { query: string }).query;
      // The remote's own field under the client's name, its own type in the fragment.
      expect(sent).toContain('body: text');
      expect(sent).toContain('fragment M on Message');
      expect(sent).not.toMatch(/R_|r_/);
      expect(lines.lines.filter((line) => line.includes('executed with delegation'))).toEqual([]);
    } finally {
      await client.dispose();
      await server.close();
      await other.dispose();
    }
  });
});

describe('what is not planned', () => {
  it('one response key that is __typename in one place and a field in another, on a remote that renames types: delegation, and a debug line says why', async () => {
    const lines = memoryLogger();
    const other = createRemoteSchemaRegistry({ retry: false, logger: lines });
    const server = await startGateway(other);
    try {
      other.commit(await other.plan([{ name: 'sample', definition: { url: remote.url, customization: { type_names: { prefix: 'P_' } } } }]));
      const response = await server.post({
        query: 'query Mixed { a: node(id: "1") { ... on P_User { x: __typename } ... on P_Post { x: title } } b: node(id: "p1") { ...X } } fragment X on P_Node { ... on P_Post { x: title } ... on P_User { x: __typename } }',
      });
      expect(response).toEqual({ status: 200, body: { data: { a: { x: 'P_User' }, b: { x: 'Hello world' } } } });
      expect(lines.lines, lines.lines.join('\n')).toContain(
        'debug remote schemas: operation "Mixed" executed with delegation: response key "x" is both __typename and a field',
      );
    } finally {
      await server.close();
      await other.dispose();
    }
  });
});
