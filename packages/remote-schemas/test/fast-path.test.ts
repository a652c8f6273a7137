import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { startSampleRemote, startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';

/** A remote that names its root `query_root`, as Hasura does. */
function hasuraLikeSchema(): GraphQLSchema {
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'query_root',
      fields: { greeting: { type: GraphQLString, resolve: () => 'hi from query_root' } },
    }),
  });
}

let sample: RunningRemote;
let hasura: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

beforeAll(async () => {
  sample = await startSampleRemote();
  hasura = await startSchemaServer(hasuraLikeSchema());
  registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false });
  gateway = await startGateway(registry);
  registry.commit(
    await registry.plan([
      { name: 'sample', definition: { url: sample.url } },
      { name: 'hasura', definition: { url: hasura.url } },
    ]),
  );
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await hasura.close();
  await sample.close();
});

function clear() {
  sample.received.length = 0;
  hasura.received.length = 0;
}

describe('the fast path', () => {
  it('forwards the client\'s document to a remote whose root type has another name', async () => {
    clear();
    const query = 'query G { greeting }';
    expect(await gateway.post({ query })).toEqual({ status: 200, body: { data: { greeting: 'hi from query_root' } } });
    expect(hasura.received.map((r) => r.body)).toEqual([{ query, variables: null, operationName: null }]);
  });

  it('delegates when a fragment names our root type, which that remote does not know', async () => {
    clear();
    const query = 'query G { ...Root } fragment Root on Query { greeting }';
    expect(await gateway.post({ query })).toEqual({ status: 200, body: { data: { greeting: 'hi from query_root' } } });
    expect(hasura.received).toHaveLength(1);
    expect(JSON.stringify(hasura.received[0]?.body)).not.toContain('on Query');
  });

  it('delegates an operation that spans two remotes, one request each', async () => {
    clear();
    const response = await gateway.post({ query: '{ greeting hello }' });
    expect(response).toEqual({ status: 200, body: { data: { greeting: 'hi from query_root', hello: 'Hello, world!' } } });
    expect(hasura.received).toHaveLength(1);
    expect(sample.received).toHaveLength(1);
  });

  it('delegates a document with several operations (the remote would validate them all)', async () => {
    clear();
    const response = await gateway.post({ query: 'query A { greeting } query B { hello }', operationName: 'B' });
    expect(response).toEqual({ status: 200, body: { data: { hello: 'Hello, world!' } } });
    expect(JSON.stringify(sample.received[0]?.body)).not.toContain('greeting');
  });

  it('follows the schema the request started with after a swap', async () => {
    registry.commit(await registry.plan([{ name: 'hasura', definition: { url: hasura.url } }]));
    const response = await gateway.post({ query: '{ hello }' });
    expect(response.status).toBe(200);
    expect(response.body.errors[0].message).toBe('Cannot query field "hello" on type "Query".');
    registry.commit(
      await registry.plan([
        { name: 'sample', definition: { url: sample.url } },
        { name: 'hasura', definition: { url: hasura.url } },
      ]),
    );
    expect(await gateway.post({ query: '{ hello }' })).toEqual({ status: 200, body: { data: { hello: 'Hello, world!' } } });
  });
});
