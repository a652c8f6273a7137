import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { forwardTarget } from './fast-path.js';
import type { LoadedRemote } from './loaded-remote.js';
import { printCached, type GraphQLRequestBody } from './remote-client.js';
import type { RemoteSchemaRegistry } from './types.js';

/**
 * Yoga keeps the request's parameters in the context: sending the client's own text keeps the
 * locations of remote errors right for the client (and saves printing the document).
 */
function queryTextOf(args: ExecutionArgs): string {
  const params = (args.contextValue as { params?: { query?: unknown } } | null | undefined)?.params;
  return typeof params?.query === 'string' ? params.query : printCached(args.document);
}

function bodyOf(args: ExecutionArgs): GraphQLRequestBody {
  return {
    query: queryTextOf(args),
    variables: (args.variableValues ?? null) as Record<string, unknown> | null,
    operationName: args.operationName ?? null,
  };
}

function forward(remote: LoadedRemote, args: ExecutionArgs): Promise<ExecutionResult> {
  return remote.client.post(bodyOf(args), remote.client.headersFor(args.contextValue));
}

function forwardSubscription(remote: LoadedRemote, args: ExecutionArgs): AsyncIterableIterator<ExecutionResult> {
  return remote.client.subscriptions.subscribe(bodyOf(args), remote.client.headersFor(args.contextValue));
}

/**
 * Serves the registry's live schema in a Yoga (or Envelop) app and follows its swaps with
 * `setSchema`: each request keeps the schema it started with. An operation whose root fields all
 * belong to one remote without customization is sent to it as it is, in one request (no
 * delegation); everything else is executed on the stitched schema.
 *
 * Do not also pass a `schema` to `createYoga`: this plugin provides it.
 */
export function useRemoteSchemas(registry: RemoteSchemaRegistry): Plugin {
  return {
    onPluginInit({ setSchema }) {
      setSchema(registry.schema);
      registry.onSchemaChange((schema) => setSchema(schema));
    },
    onExecute({ args, setExecuteFn }) {
      const remote = forwardTarget(args.schema, args.document, args.operationName);
      if (remote) setExecuteFn((executionArgs) => forward(remote, executionArgs));
    },
    onSubscribe({ args, setSubscribeFn }) {
      const remote = forwardTarget(args.schema, args.document, args.operationName);
      if (remote) setSubscribeFn((subscriptionArgs) => forwardSubscription(remote, subscriptionArgs));
    },
  };
}
