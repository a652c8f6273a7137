import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { forwardTarget, type ForwardTarget } from './fast-path.js';
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

function forward({ remote, operation }: ForwardTarget, args: ExecutionArgs): Promise<ExecutionResult> {
  // Yoga executes queries and mutations here; the kind decides whether a call may be resent.
  return remote.client.send(bodyOf(args), args.contextValue, operation === 'mutation' ? 'mutation' : 'query');
}

function forwardSubscription({ remote }: ForwardTarget, args: ExecutionArgs): AsyncIterableIterator<ExecutionResult> {
  return remote.client.subscribe(bodyOf(args), args.contextValue);
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
      const target = forwardTarget(args.schema, args.document, args.operationName);
      if (target) setExecuteFn((executionArgs) => forward(target, executionArgs));
    },
    onSubscribe({ args, setSubscribeFn }) {
      const target = forwardTarget(args.schema, args.document, args.operationName);
      if (target) setSubscribeFn((subscriptionArgs) => forwardSubscription(target, subscriptionArgs));
    },
  };
}
