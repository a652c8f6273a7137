// Server module: a gateway built with @graphql-tools/stitch over the orders, users and
// organizations remotes, for `pnpm bench joins`. `Order.user` and `User.org` are schema extensions
// resolved with batch delegation (`batchDelegateToSchema` with `argsFromKeys`, what stitching's
// type merging runs for a batched merged type), and the subschemas batch their calls
// (`batch: true`): each level of an operation is one request to each remote.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { batchDelegateToSchema } from '@graphql-tools/batch-delegate';
import type { SubschemaConfig } from '@graphql-tools/delegate';
import { buildHTTPExecutor } from '@graphql-tools/executor-http';
import { stitchSchemas } from '@graphql-tools/stitch';
import { schemaFromExecutor } from '@graphql-tools/wrap';
import type { GraphQLResolveInfo } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { StartedServer } from './child-protocol.js';

export interface StitchGatewayOptions {
  readonly orders: string;
  readonly users: string;
  readonly orgs: string;
}

async function subschema(endpoint: string): Promise<SubschemaConfig> {
  const executor = buildHTTPExecutor({ endpoint });
  return { schema: await schemaFromExecutor(executor), executor, batch: true };
}

export async function start(raw: unknown): Promise<StartedServer> {
  const options = raw as StitchGatewayOptions;
  const [orders, users, orgs] = await Promise.all([subschema(options.orders), subschema(options.users), subschema(options.orgs)]);
  const join =
    (target: SubschemaConfig, fieldName: string, key: string) =>
    (parent: Record<string, unknown>, _args: unknown, context: Record<string, unknown>, info: GraphQLResolveInfo) =>
      parent[key] == null
        ? null
        : batchDelegateToSchema({ schema: target, operation: 'query' as never, fieldName, key: parent[key], argsFromKeys: (ids) => ({ ids }), context, info });
  const schema = stitchSchemas({
    subschemas: [orders, users, orgs],
    typeDefs: 'extend type Order { user: User } extend type User { org: Org }',
    resolvers: {
      Order: { user: { selectionSet: '{ userId }', resolve: join(users, 'usersByIds', 'userId') } },
      User: { org: { selectionSet: '{ orgId }', resolve: join(orgs, 'orgs', 'orgId') } },
    },
  });
  const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', logging: false, landingPage: false, graphiql: false });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
