import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry } from '../src/index.js';
import { normalizeOptions } from '../src/options.js';
import { memoryLogger } from './utils/fixtures.js';

let sample: RunningRemote;
beforeAll(async () => {
  sample = await startSampleRemote();
});
afterAll(() => sample.close());

describe('createRemoteSchemaRegistry options', () => {
  it('refuses a bad option with a TypeError naming it', () => {
    expect(() => createRemoteSchemaRegistry({ retry: { initialDelayMs: -1 } })).toThrow(
      new TypeError('createRemoteSchemaRegistry: expected "retry.initialDelayMs" to be a positive number, but got -1'),
    );
    expect(() => createRemoteSchemaRegistry({ fetch: 'nope' as unknown as typeof fetch })).toThrow(
      new TypeError('createRemoteSchemaRegistry: expected "fetch" to be a function, but got string'),
    );
    expect(() => createRemoteSchemaRegistry({ enableRemoteSchemaPermissions: 'yes' as unknown as boolean })).toThrow(
      new TypeError('createRemoteSchemaRegistry: expected "enableRemoteSchemaPermissions" to be a boolean, but got string'),
    );
    expect(() => createRemoteSchemaRegistry({ maxRoleSchemas: 0 })).toThrow(
      new TypeError('createRemoteSchemaRegistry: expected "maxRoleSchemas" to be a positive integer, but got 0'),
    );
  });

  it('leaves remote schema permissions off and keeps 1000 role schemas by default', () => {
    const options = normalizeOptions({});
    expect(options.enableRemoteSchemaPermissions).toBe(false);
    expect(options.maxRoleSchemas).toBe(1000);
  });

  it('refuses an invalid local schema', () => {
    const invalid = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: {} }) });
    expect(() => createRemoteSchemaRegistry({ localSchema: invalid })).toThrow(/"localSchema" is invalid: Type Query must define one or more fields/);
  });

  it('keeps the local schema and its resolvers next to the remotes', async () => {
    const localSchema = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { version: { type: GraphQLString, resolve: () => '1.0' } } }),
    });
    const registry = createRemoteSchemaRegistry({ localSchema, retry: false });
    try {
      const plan = await registry.plan([{ name: 'sample', definition: { url: sample.url } }]);
      expect(plan.problems).toEqual([]);
      const fields = Object.keys(plan.schema.getQueryType()?.getFields() ?? {});
      expect(fields.slice(0, 2)).toEqual(['version', 'hello']);
      expect(fields).not.toContain('no_queries_available');
    } finally {
      await registry.dispose();
    }
  });

  it('sends every call through the given fetch', async () => {
    const calls: string[] = [];
    const registry = createRemoteSchemaRegistry({
      logger: memoryLogger(),
      fetch: (input, init) => {
        calls.push(String(input));
        return fetch(input, init);
      },
    });
    try {
      const plan = await registry.plan([{ name: 'sample', definition: { url: sample.url } }]);
      expect(plan.problems).toEqual([]);
      expect(calls).toEqual([sample.url]);
    } finally {
      await registry.dispose();
    }
  });
});

describe('limits', () => {
  it('default to 64 MiB per answer, 128 sockets and 20000 subscriptions per remote', () => {
    expect(normalizeOptions({})).toMatchObject({
      maxResponseBytes: 67108864,
      maxSocketsPerRemote: 128,
      maxSubscriptionsPerRemote: 20000,
    });
  });

  it('reads maxSubscriptionConnectionsPerRemote as maxSubscriptionsPerRemote when that one is not given', () => {
    expect(normalizeOptions({ maxSubscriptionConnectionsPerRemote: 7 }).maxSubscriptionsPerRemote).toBe(7);
    expect(normalizeOptions({ maxSubscriptionConnectionsPerRemote: 7, maxSubscriptionsPerRemote: 9 }).maxSubscriptionsPerRemote).toBe(9);
  });

  it.each(['maxResponseBytes', 'maxSocketsPerRemote', 'maxSubscriptionsPerRemote', 'maxSubscriptionConnectionsPerRemote'] as const)(
    'refuses a %s that is not a positive integer',
    (name) => {
      for (const value of [0, -1, 1.5, Number.POSITIVE_INFINITY, '10']) {
        expect(() => createRemoteSchemaRegistry({ [name]: value as number })).toThrow(
          new TypeError(`createRemoteSchemaRegistry: expected "${name}" to be a positive integer, but got ${String(value)}`),
        );
      }
    },
  );
});

describe('the default getSession', () => {
  const session = (value: unknown) => normalizeOptions({}).getSession({ session: value });

  it('takes isAdmin from context.session, true only when it is true', () => {
    expect(session({ role: 'admin', variables: {}, isAdmin: true })).toEqual({ role: 'admin', variables: {}, isAdmin: true });
    expect(session({ role: 'admin', variables: {} })).toEqual({ role: 'admin', variables: {}, isAdmin: false });
    expect(session({ role: 'user', variables: {}, isAdmin: 'true' })).toEqual({ role: 'user', variables: {}, isAdmin: false });
  });
});

describe('options an embedding app hands over', () => {
  it('are refused when misspelt, of the wrong kind or not an object, so that permissions are never left off by mistake', () => {
    expect(() => createRemoteSchemaRegistry({ enableRemoteSchemaPermission: true } as never)).toThrow(
      new TypeError('createRemoteSchemaRegistry: "enableRemoteSchemaPermission" is not an option'),
    );
    expect(() => createRemoteSchemaRegistry('abc' as never)).toThrow(new TypeError('createRemoteSchemaRegistry: expected the options to be an object'));
    expect(() => createRemoteSchemaRegistry({ enableRemoteSchemaPermissions: true, getSession: 5 as never })).toThrow(
      new TypeError('createRemoteSchemaRegistry: expected "getSession" to be a function, but got number'),
    );
    expect(() => createRemoteSchemaRegistry({ logger: {} as never })).toThrow(
      new TypeError('createRemoteSchemaRegistry: expected "logger" to have debug, info, warn and error functions'),
    );
  });

  it('read an app getSession answer as a session only when it has a string role; admin only when isAdmin is true', () => {
    const read = (value: unknown) => normalizeOptions({ getSession: () => value as never }).getSession({});
    expect(read({ role: 'user' })).toEqual({ role: 'user', variables: {}, isAdmin: false });
    expect(read({ role: 'user', variables: { 'x-svc-user-id': '1' }, isAdmin: 'true' })).toEqual({ role: 'user', variables: { 'x-svc-user-id': '1' }, isAdmin: false });
    expect(read({ role: 'admin', variables: {}, isAdmin: 1 })).toEqual({ role: 'admin', variables: {}, isAdmin: false });
    expect(read({ role: 5, isAdmin: true })).toBeUndefined();
    expect(read(null)).toBeUndefined();
    // Read once: a getter that would answer otherwise later is not asked again.
    let reads = 0;
    const flipping = {
      role: 'user',
      variables: {},
      get isAdmin() {
        return reads++ > 0;
      },
    };
    const session = read(flipping)!;
    expect([session.isAdmin, session.isAdmin]).toEqual([false, false]);
    expect(read({ role: 'user', variables: ['x'] })).toEqual({ role: 'user', variables: {}, isAdmin: false });
  });

  it('refuse a misspelt option on a prototype too', () => {
    expect(() => createRemoteSchemaRegistry(Object.create({ enableRemoteSchemaPermission: true }) as never)).toThrow(
      new TypeError('createRemoteSchemaRegistry: "enableRemoteSchemaPermission" is not an option'),
    );
  });
});
