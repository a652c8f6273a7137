import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createYoga } from 'graphql-yoga';
import { parse, type GraphQLSchema } from 'graphql';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import {
  createRemoteSchemaRegistry,
  remoteOperationRunner,
  useRemoteSchemas,
  type RemoteSchemaRegistry,
} from '../src/index.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';

/**
 * An embedding app may hand the plugin a wrapper of the registry (a Proxy, a decorator that logs):
 * the permission contract travels through the registry's public members, so a wrapper is served
 * exactly as the registry it wraps, and one that drops the contract is refused.
 */

const userPermission = /* GraphQL */ `
  type User {
    id: ID!
    name: String!
  }
  type Query {
    hello(name: String @preset(value: "x-svc-user-name")): String!
    user(id: ID!): User
  }
  type Subscription {
    countdown(from: Int! @preset(value: 1), intervalMs: Int): Int!
  }
`;

const session = (role: string, variables: Record<string, string> = {}, isAdmin = false) => ({
  'x-test-session': JSON.stringify({ role, variables, ...(isAdmin ? { isAdmin } : {}) }),
});

/** A decorator as an app writes one: every member passed on one by one, calls counted. */
class CountingRegistry implements RemoteSchemaRegistry {
  readonly calls = new Map<string, number>();
  listeners = 0;
  readonly #inner: RemoteSchemaRegistry;
  constructor(inner: RemoteSchemaRegistry) {
    this.#inner = inner;
  }
  #count(name: string): void {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }
  get schema() {
    return this.#inner.schema;
  }
  get permissions() {
    return this.#inner.permissions;
  }
  get logger() {
    return this.#inner.logger;
  }
  schemaFor(session: Parameters<RemoteSchemaRegistry['schemaFor']>[0]) {
    this.#count('schemaFor');
    return this.#inner.schemaFor(session);
  }
  onSchemaChange(listener: (schema: GraphQLSchema) => void) {
    this.listeners++;
    const off = this.#inner.onSchemaChange(listener);
    let on = true;
    return () => {
      if (on) this.listeners--;
      on = false;
      off();
    };
  }
  plan(...args: Parameters<RemoteSchemaRegistry['plan']>) {
    return this.#inner.plan(...args);
  }
  commit(plan: Parameters<RemoteSchemaRegistry['commit']>[0]) {
    this.#inner.commit(plan);
  }
  problems() {
    return this.#inner.problems();
  }
  introspect(name: string) {
    return this.#inner.introspect(name);
  }
  dispose() {
    return this.#inner.dispose();
  }
}

let sample: RunningRemote;
beforeAll(async () => {
  sample = await startSampleRemote();
});
afterAll(() => sample.close());

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function permittedRegistry(): Promise<RemoteSchemaRegistry> {
  const registry = createRemoteSchemaRegistry({
    logger: memoryLogger(),
    retry: false,
    enableRemoteSchemaPermissions: true,
    getSession: testGetSession,
  });
  cleanups.push(() => registry.dispose());
  const plan = await registry.plan([{ name: 'sample', definition: { url: sample.url }, permissions: [{ role: 'user', schema: userPermission }] }]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  return registry;
}

async function served(gateway: Gateway, headers: Record<string, string>, query: string): Promise<unknown> {
  const response = await gateway.post({ query }, headers);
  expect(response.status).toBe(200);
  return response.body;
}

/** The messages of a request refused before execution (no `data`). */
async function refusal(gateway: Gateway, headers: Record<string, string>, query: string): Promise<string[]> {
  const body = (await served(gateway, headers, query)) as { data?: unknown; errors: Array<{ message: string }> };
  expect(body.data).toBeUndefined();
  return body.errors.map((error) => error.message);
}

async function firstEvent(gateway: Gateway, sessionParams: Record<string, unknown>, query: string): Promise<unknown> {
  const client = gateway.wsClient({ session: sessionParams });
  const iterator = client.iterate({ query });
  try {
    return (await iterator.next()).value;
  } finally {
    await iterator.return?.();
  }
}

const wrappers: Array<[string, (registry: RemoteSchemaRegistry) => RemoteSchemaRegistry]> = [
  ['a Proxy without traps', (registry) => new Proxy(registry, {})],
  [
    'a Proxy whose traps log every read',
    (registry) =>
      new Proxy(registry, {
        get(target, property, receiver) {
          return Reflect.get(target, property, receiver);
        },
      }),
  ],
  ['a decorator that passes each member on', (registry) => new CountingRegistry(registry)],
];

describe.each(wrappers)('a registry wrapped in %s, with permissions on', (_, wrap) => {
  it('serves each role only its part, with its presets, over HTTP and graphql-ws', async () => {
    const gateway = await startGateway(wrap(await permittedRegistry()));
    cleanups.push(() => gateway.close());
    const user = session('user', { 'x-svc-user-name': 'Grace' });

    expect(await served(gateway, user, '{ __schema { queryType { fields { name } } } }')).toEqual({
      data: { __schema: { queryType: { fields: [{ name: 'hello' }, { name: 'user' }] } } },
    });
    expect(await served(gateway, user, '{ hello user(id: "1") { id name } }')).toEqual({
      data: { hello: 'Hello, Grace!', user: { id: '1', name: 'Ada' } },
    });
    expect(await refusal(gateway, user, '{ user(id: "1") { role } }')).toEqual(['Cannot query field "role" on type "User".']);
    expect(await refusal(gateway, user, '{ remoteName }')).toEqual(['Cannot query field "remoteName" on type "Query".']);
    // Another role sees nothing of the remote; admin sees all of it.
    expect(await refusal(gateway, session('stranger'), '{ hello }')).toEqual(['Cannot query field "hello" on type "Query".']);
    expect(await served(gateway, session('admin', {}, true), '{ remoteName hello(name: "Ada") }')).toEqual({
      data: { remoteName: 'sample', hello: 'Hello, Ada!' },
    });

    const userParams = { role: 'user', variables: { 'x-svc-user-name': 'Grace' } };
    expect(await firstEvent(gateway, userParams, '{ hello }')).toEqual({ data: { hello: 'Hello, Grace!' } });
    // The preset `from: 1` is the role's, whatever it would pass.
    expect(await firstEvent(gateway, userParams, 'subscription { countdown(intervalMs: 1) }')).toEqual({ data: { countdown: 1 } });
    // graphql-ws answers a validation error with its `error` message: the iterator throws the errors.
    await expect(firstEvent(gateway, userParams, 'subscription { messageAdded { id } }')).rejects.toEqual([
      expect.objectContaining({ message: 'Cannot query field "messageAdded" on type "Subscription".' }),
    ]);
  });

  it('answers the direct lane\'s operations as the plugin does: presets, and a role off its schema refused', async () => {
    const registry = await permittedRegistry();
    const wrapped = wrap(registry);
    const query = parse('{ hello }');
    const contextValue = { session: { role: 'user', variables: { 'x-svc-user-name': 'Grace' } } };
    const roleSchema = wrapped.schemaFor({ role: 'user' });
    const run = remoteOperationRunner(wrapped, roleSchema, query, undefined);
    expect(run).toBeDefined();
    expect(await run!({ schema: roleSchema, document: query, contextValue })).toEqual({ data: { hello: 'Hello, Grace!' } });

    // The live schema handed to a role's request (a host that chose the wrong schema) is refused.
    const live = remoteOperationRunner(wrapped, wrapped.schema, query, undefined);
    const result = await live!({ schema: wrapped.schema, document: query, contextValue });
    expect(result.errors?.map((e) => [e.message, e.extensions['code']])).toEqual([['Unexpected error.', 'unexpected']]);
    expect(result.data).toBeUndefined();
  });
});

describe('a wrapper that does not pass the permission contract on', () => {
  it('is refused by useRemoteSchemas and remoteOperationRunner, instead of serving every role everything', async () => {
    const registry = await permittedRegistry();
    // A decorator written against an older interface: the members it lists, nothing else.
    const forgetful = {
      get schema() {
        return registry.schema;
      },
      schemaFor: registry.schemaFor,
      onSchemaChange: registry.onSchemaChange,
      plan: registry.plan,
      commit: registry.commit,
      problems: registry.problems,
      introspect: registry.introspect,
      dispose: registry.dispose,
      logger: registry.logger,
    } as unknown as RemoteSchemaRegistry;
    expect(() => useRemoteSchemas(forgetful)).toThrow(
      new TypeError(
        'useRemoteSchemas: expected "registry.permissions" to be null (permissions off) or an object with a getSession function, ' +
          'but got undefined; a registry wrapper must pass this member on',
      ),
    );
    expect(() => remoteOperationRunner(forgetful, registry.schema, parse('{ hello }'), undefined)).toThrow(TypeError);
    const noLogger = { ...forgetful, permissions: registry.permissions, schema: registry.schema, logger: undefined } as unknown as RemoteSchemaRegistry;
    expect(() => useRemoteSchemas(noLogger)).toThrow(/expected "registry.logger" to be a logger/);
  });

  it('is served as it is when it says permissions are off (null)', async () => {
    const registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false });
    cleanups.push(() => registry.dispose());
    expect(registry.permissions).toBeNull();
    expect(() => useRemoteSchemas(new Proxy(registry, {}))).not.toThrow();
  });
});

describe('the plugin\'s listener on the registry', () => {
  it('is removed when the Yoga app is disposed', async () => {
    const counting = new CountingRegistry(await permittedRegistry());
    const yoga = createYoga({ logging: false, plugins: [useRemoteSchemas(counting)] });
    const response = await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...session('admin', {}, true) },
      body: JSON.stringify({ query: '{ remoteName }' }),
    });
    expect(await response.json()).toEqual({ data: { remoteName: 'sample' } });
    expect(counting.listeners).toBe(1);
    await yoga.dispose();
    expect(counting.listeners).toBe(0);
  });
});
