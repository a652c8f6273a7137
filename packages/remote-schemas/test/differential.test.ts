import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLError, parse, print } from 'graphql';
import { createSchema } from 'graphql-yoga';
import { startSampleRemote, startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';
import {
  customizationArb,
  featuresOfCustomization,
  namingOf,
  type Naming,
} from './utils/differential-customization.js';
import {
  comparableErrors,
  documentFor,
  expectedFullAnswer,
  featuresOf,
  fullAnswer,
  operationArb,
  resolveOperation,
  type ResolvedOperation,
} from './utils/differential-operations.js';
import { startRecordingProxy, type RecordingProxy } from './utils/differential-recorder.js';

/**
 * Differential test of customization: an operation generated in the sample remote's own names is
 * sent to the remote as it is, and as a client of the customized remote writes it to the gateway;
 * the gateway must answer what the remote answered, renamed: the data, and the errors in full
 * (message, path, locations in the client's document, extensions, and `data` left out exactly when
 * the remote left it out, as for a variable value that cannot be coerced). Operations come with
 * and without customization, with invalid variable values and with every root field skipped.
 *
 * `DIFF_RUNS` sets the number of customizations tried (default 120), each with one to four
 * operations (about 300 operations in all); `DIFF_SEED` and `DIFF_PATH`, as printed with
 * a counterexample, replay a failure; `DIFF_STATS=1` prints how often each kind of case came up.
 */

const RUNS = Math.max(1, Number(process.env['DIFF_RUNS'] ?? 120));
const replay = {
  ...(process.env['DIFF_SEED'] !== undefined && { seed: Number(process.env['DIFF_SEED']) }),
  ...(process.env['DIFF_PATH'] !== undefined && { path: process.env['DIFF_PATH'] }),
};
const STATS = process.env['DIFF_STATS'] !== undefined && process.env['DIFF_STATS'] !== '';

const customized = (customization: RemoteSchemaCustomization) => Object.keys(customization).length > 0;

type Body = { data?: unknown; errors?: unknown };

async function postTo(url: string, body: unknown): Promise<{ status: number; body: Body }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Body };
}

/** Only the operations a remote received, introspection left out. */
function operationsReceived(remote: RunningRemote): string[] {
  return remote.received
    .map((r) => String((r.body as { query?: unknown }).query))
    .filter((query) => !query.includes('__schema'));
}

/**
 * The remote behind the gateway and the one asked directly. Both hold the same messages as long as
 * they are sent the same mutations, so a case that reads or writes messages gets a pair of its own.
 */
interface RemotePair {
  behindGateway: RunningRemote;
  direct: RunningRemote;
}

async function startPair(): Promise<RemotePair> {
  const [behindGateway, direct] = await Promise.all([startSampleRemote({ name: 'sample' }), startSampleRemote({ name: 'sample' })]);
  for (const remote of [behindGateway, direct]) {
    for (const input of ['{text: "first", author: "Ada"}', '{text: "second"}']) {
      await postTo(remote.url, { query: `mutation { addMessage(input: ${input}) { id } }` });
    }
  }
  return { behindGateway, direct };
}

async function closePair(pair: RemotePair): Promise<void> {
  await Promise.all([pair.behindGateway.close(), pair.direct.close()]);
}

describe('differential: the gateway answers as the remote does, renamed by the customization', () => {
  let shared: RemotePair;
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;
  const tally = new Map<string, number>();
  const count = (outcome: string) => tally.set(outcome, (tally.get(outcome) ?? 0) + 1);

  beforeAll(async () => {
    shared = await startPair();
    registry = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
    gateway = await startGateway(registry);
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
    await closePair(shared);
    if (STATS) {
      const lines = [...tally.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${String(n).padStart(6)}  ${k}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
  });

  it(
    'for generated operations and customizations',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          customizationArb,
          fc.array(fc.tuple(operationArb, fc.boolean()), { minLength: 1, maxLength: 4 }),
          async (customization, generated) => {
            const operations = generated.map(([operation]) => operation);
            const accepts = generated.map(([, graphqlResponse]) => graphqlResponse);
            const ops = operations.map(resolveOperation);
            const naming = namingOf(customization);
            // Loading a customized remote costs more than the operations sent to it: several per load.
            const pair = ops.some((op) => op.stateful) ? await startPair() : shared;
            try {
              const plan = await registry.plan([
                { name: 'sample', definition: { url: pair.behindGateway.url, timeout_seconds: 10, customization } },
              ]);
              if (plan.problems.length > 0) {
                // A customization the registry refuses as wrong on its own is skipped; any other
                // problem (a remote that could not be loaded) fails the case.
                expect(plan.problems.map((p) => p.code)).toEqual(['invalid-params']);
                count(`skipped: ${plan.problems[0]!.message.replace(/"[^"]*"/g, '"…"')}`);
                fc.pre(false);
              }
              registry.commit(plan);
              for (const feature of featuresOfCustomization(customization)) count(feature);
              // One after the other: both remotes see the mutations in the same order.
              for (const [i, op] of ops.entries()) {
                await checkOne(customization, naming, op, pair, accepts[i]!);
              }
            } finally {
              if (pair !== shared) await closePair(pair);
            }
          },
        ),
        // As many runs may be skipped as are run: more would mean the generator mostly makes
        // customizations the registry refuses, and the property tests little.
        { numRuns: RUNS, maxSkipsPerRun: 1, ...replay },
      );
    },
    60_000 + RUNS * 500,
  );

  async function checkOne(
    customization: RemoteSchemaCustomization,
    naming: Naming,
    op: ResolvedOperation,
    pair: RemotePair,
    graphqlResponse: boolean,
  ): Promise<void> {
    const clientQuery = documentFor(op, naming);
    const request = {
      variables: op.variables,
      ...(op.operationName !== undefined && { operationName: op.operationName }),
    };
    const accept = graphqlResponse ? 'application/graphql-response+json' : 'application/json';
    const [through, direct] = await Promise.all([
      gateway.post({ query: clientQuery, ...request }, { accept }),
      postTo(pair.direct.url, { query: op.remoteQuery, ...request }),
    ]);
    try {
      // The remote itself must have executed the operation, or refused an invalid variable value
      // before executing it: anything else is a generator bug.
      if (op.invalid) {
        expect(direct.body).not.toHaveProperty('data');
        expect(direct.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.stringMatching(/^Variable "\$v\d+"/) })]));
      } else {
        expect(direct.status).toBe(200);
        expect(direct.body.data).toBeDefined();
      }
      const expected = expectedFullAnswer(op, naming, clientQuery, direct.body);
      const actual = fullAnswer(through.body);
      // An error before execution: 400 for a client of the GraphQL over HTTP media type, 200 for application/json.
      expect(through.status).toBe(!expected.hasData && graphqlResponse ? 400 : 200);
      expect(actual).toEqual(expected);
      // Response keys in the order of the selection, as the remote orders them.
      expect(JSON.stringify(actual.data)).toBe(JSON.stringify(expected.data));
    } catch (error) {
      const context = [
        `customization: ${JSON.stringify(customization)}`,
        `client document:\n${print(parse(clientQuery))}`,
        `remote document:\n${print(parse(op.remoteQuery))}`,
        `variables: ${JSON.stringify(op.variables)}${op.operationName ? `, operationName: ${op.operationName}` : ''}`,
        `gateway answered: ${JSON.stringify(through.body)}`,
        `remote answered: ${JSON.stringify(direct.body)}`,
      ].join('\n');
      throw new Error(`${(error as Error).message}\n\n${context}`, { cause: error });
    }
    for (const feature of featuresOf(op)) count(feature);
    count(
      [
        customized(customization) ? 'customized' : 'uncustomized',
        op.kind,
        op.stateful ? 'own remotes' : 'shared remotes',
        op.invalid ? 'invalid variable' : comparableErrors(direct.body.errors).length > 0 ? 'with errors' : 'no errors',
      ].join(', '),
    );
  }
});

describe('aliases of one remote field', () => {
  let remote: RunningRemote;
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'sample' });
    registry = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
    gateway = await startGateway(registry);
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
    await remote.close();
  });

  const fifty = Array.from({ length: 50 }, (_, i) => i);

  // One request per remote per operation: the compiled plan forwards the `@include` of a fragment
  // around the aliases to the remote (delegation sent one request per root field).
  it.each<[string, RemoteSchemaCustomization | undefined, string, boolean, number]>([
    ['an uncustomized remote (sent as it is)', undefined, '', false, 1],
    ['a customized remote', { field_names: [{ parent_type: 'Query', prefix: 'q_' }] }, 'q_', false, 1],
    ['a namespaced remote', { root_fields_namespace: 'ns', field_names: [{ parent_type: 'Query', prefix: 'q_' }] }, 'q_', false, 1],
    ['a customized remote, in a fragment with @include', { field_names: [{ parent_type: 'Query', prefix: 'q_' }] }, 'q_', true, 1],
    ['a namespaced remote, in a fragment with @include', { root_fields_namespace: 'ns' }, '', true, 1],
  ])('answers 50 aliases of one field of %s', async (_, customization, prefix, conditional, requests) => {
    const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, ...(customization && { customization }) } }]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    remote.received.length = 0;
    const aliases = fifty.map((i) => `a${i}: ${prefix}hello(name: "n${i}")`).join(' ');
    const selections = conditional ? `... @include(if: true) { ${aliases} }` : aliases;
    const namespace = customization?.root_fields_namespace;
    const query = namespace ? `{ ${namespace} { ${selections} } }` : `{ ${selections} }`;
    const response = await gateway.post({ query });
    const answers = Object.fromEntries(fifty.map((i) => [`a${i}`, `Hello, n${i}!`]));
    expect(response).toEqual({ status: 200, body: { data: namespace ? { [namespace]: answers } : answers } });
    expect(Object.keys(namespace ? response.body.data[namespace] : response.body.data)).toEqual(fifty.map((i) => `a${i}`));
    expect(operationsReceived(remote)).toHaveLength(requests);
  });
});

describe('mutations over two remotes', () => {
  let a: RunningRemote;
  let b: RunningRemote;
  let proxies: RecordingProxy[];
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;
  const log: string[] = [];

  beforeAll(async () => {
    registry = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
    gateway = await startGateway(registry);
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
  });

  // Fresh remotes for each case, so that message ids start at 1.
  async function start(customizationOfB: RemoteSchemaCustomization): Promise<void> {
    a = await startSampleRemote({ name: 'a' });
    b = await startSampleRemote({ name: 'b' });
    // Each call is held 30 ms, so that calls made in parallel would overlap in the log.
    proxies = [await startRecordingProxy(a.url, 'A', log, 30), await startRecordingProxy(b.url, 'B', log, 30)];
    const plan = await registry.plan([
      { name: 'a', definition: { url: proxies[0]!.url } },
      { name: 'b', definition: { url: proxies[1]!.url, customization: customizationOfB } },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
    log.length = 0;
  }

  async function stop(): Promise<void> {
    await Promise.all([...proxies.map((p) => p.close()), a.close(), b.close()]);
  }

  /** The log as `<remote> <start|end> <texts of the messages the call adds>`. */
  const calls = () =>
    log.map((line) => {
      const [remote, event] = line.split(' ');
      const texts = [...line.matchAll(/text"?: ?"(\w+)"/g)].map((m) => m[1]);
      return `${remote} ${event} ${texts.join('+')}`;
    });

  const prefixed: RemoteSchemaCustomization = {
    type_names: { prefix: 'B_' },
    field_names: ['Query', 'Mutation', 'Subscription'].map((parent_type) => ({ parent_type, prefix: 'b_' })),
  };
  const namespaced: RemoteSchemaCustomization = { root_fields_namespace: 'b' };

  it.each<[string, RemoteSchemaCustomization, string]>([
    ['renamed root fields', prefixed, 'm2: b_addMessage(input: {text: "two"}) { id text }'],
    ['a namespace', namespaced, 'm2: b { addMessage(input: {text: "two"}) { id text } }'],
  ])('runs root fields of A, B, A in order, one after the other (B under %s)', async (_, customization, second) => {
    await start(customization);
    try {
      const response = await gateway.post({
        query: `mutation {
          m1: addMessage(input: {text: "one"}) { id text }
          ${second}
          m3: addMessage(input: {text: "three"}) { id text }
        }`,
      });
      const m2 = { id: '1', text: 'two' };
      expect(response).toEqual({
        status: 200,
        body: {
          data: {
            m1: { id: '1', text: 'one' },
            m2: customization === namespaced ? { addMessage: m2 } : m2,
            m3: { id: '2', text: 'three' },
          },
        },
      });
      expect(Object.keys(response.body.data)).toEqual(['m1', 'm2', 'm3']);
      expect(calls()).toEqual(['A start one', 'A end one', 'B start two', 'B end two', 'A start three', 'A end three']);
    } finally {
      await stop();
    }
  });

  it('sends consecutive root fields of one remote in one request, A A B as two calls', async () => {
    await start(prefixed);
    try {
      const response = await gateway.post({
        query: `mutation {
          m1: addMessage(input: {text: "one"}) { id text }
          m2: addMessage(input: {text: "two"}) { id text }
          m3: b_addMessage(input: {text: "three"}) { id text }
        }`,
      });
      expect(response).toEqual({
        status: 200,
        body: { data: { m1: { id: '1', text: 'one' }, m2: { id: '2', text: 'two' }, m3: { id: '1', text: 'three' } } },
      });
      expect(Object.keys(response.body.data)).toEqual(['m1', 'm2', 'm3']);
      expect(calls()).toEqual(['A start one+two', 'A end one+two', 'B start three', 'B end three']);
    } finally {
      await stop();
    }
  });
});

describe('errors through a namespace', () => {
  let remote: RunningRemote;
  let failing: RunningRemote;
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'sample' });
    // Fails below the root too, in an object and in a list.
    failing = await startSchemaServer(
      createSchema({
        typeDefs: /* GraphQL */ `
          type Item { id: ID! ok: String bad: String }
          type Query { item: Item items: [Item!]! }
        `,
        resolvers: {
          Item: {
            ok: (item: { id: string }) => `ok ${item.id}`,
            bad: (item: { id: string }) => {
              throw new GraphQLError(`bad ${item.id}`);
            },
          },
          Query: { item: () => ({ id: '1' }), items: () => [{ id: '1' }, { id: '2' }] },
        },
      }),
    );
    registry = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
    gateway = await startGateway(registry);
    const plan = await registry.plan([
      { name: 'sample', definition: { url: remote.url } },
      { name: 'named', definition: { url: remote.url, customization: { root_fields_namespace: 'ns' } } },
      {
        name: 'renamed',
        definition: {
          url: remote.url,
          customization: { root_fields_namespace: 'other', field_names: [{ parent_type: 'Query', mapping: { boom: 'kaboom' } }] },
        },
      },
      {
        name: 'failing',
        definition: {
          url: failing.url,
          customization: {
            root_fields_namespace: 'deep',
            type_names: { prefix: 'D_' },
            field_names: [{ parent_type: 'Item', mapping: { bad: 'broken' } }],
          },
        },
      },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
    await Promise.all([remote.close(), failing.close()]);
  });

  const BOOM = 'boom: this field always fails';
  const errorsOf = (body: { errors?: Array<{ message: string; path?: unknown }> }) =>
    comparableErrors(body.errors);

  it('keeps the path of a failing field inside a namespace, beside the fields that answer', async () => {
    const response = await gateway.post({ query: '{ ns { hello boom x: boom remoteName } }' });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ ns: { hello: 'Hello, world!', boom: null, x: null, remoteName: 'sample' } });
    expect(errorsOf(response.body)).toEqual(comparableErrors([
      { message: BOOM, path: ['ns', 'boom'] },
      { message: BOOM, path: ['ns', 'x'] },
    ]));
  });

  it('names the aliased namespace and the renamed field in the path, next to an unnamespaced failure', async () => {
    const response = await gateway.post({ query: '{ boom n: ns { boom } other { kaboom } }' });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ boom: null, n: { boom: null }, other: { kaboom: null } });
    expect(errorsOf(response.body)).toEqual(comparableErrors([
      { message: BOOM, path: ['boom'] },
      { message: BOOM, path: ['n', 'boom'] },
      { message: BOOM, path: ['other', 'kaboom'] },
    ]));
  });

  it('keeps the path of a failing field below the root, in an object and in a list', async () => {
    const response = await gateway.post({
      query: '{ deep { item { id broken } all: items { __typename ok b: broken } } }',
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      deep: {
        item: { id: '1', broken: null },
        all: [
          { __typename: 'D_Item', ok: 'ok 1', b: null },
          { __typename: 'D_Item', ok: 'ok 2', b: null },
        ],
      },
    });
    expect(errorsOf(response.body)).toEqual(comparableErrors([
      { message: 'bad 1', path: ['deep', 'item', 'broken'] },
      { message: 'bad 1', path: ['deep', 'all', 0, 'b'] },
      { message: 'bad 2', path: ['deep', 'all', 1, 'b'] },
    ]));
  });
});
