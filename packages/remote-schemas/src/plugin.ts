import {
  GraphQLError,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { isAsyncIterable, mapAsyncIterator } from '@graphql-tools/utils';
import { forwardTarget, type ForwardTarget } from './fast-path.js';
import { roleSchemaInfo } from './permissions/role-schema.js';
import { printCached, type RemoteRequest } from './remote-client.js';
import { executePlan } from './plan/execute.js';
import { planFor } from './plan/cache.js';
import { loggerOf, permissionHooksOf, type PermissionHooks } from './registry.js';
import type { Logger } from './options.js';
import { executeJoins } from './relationships/join-execute.js';
import { clientLocations } from './relationships/locations.js';
import { joinPlanFor, type JoinPlan, type JoinRefusal } from './relationships/join-plan.js';
import type { RemoteSchemaRegistry } from './types.js';

/**
 * Yoga keeps the request's parameters in the context: sending the client's own text keeps the
 * locations of remote errors right for the client (and saves printing the document).
 */
function queryTextOf(args: ExecutionArgs): string | undefined {
  const params = (args.contextValue as { params?: { query?: unknown } } | null | undefined)?.params;
  return typeof params?.query === 'string' ? params.query : undefined;
}

/** `clientText`: the document is the client's own (not one the gateway derived from it), its text may be sent. */
function requestOf(args: ExecutionArgs, clientText = true): RemoteRequest {
  return {
    document: args.document,
    text: clientText ? queryTextOf(args) : undefined,
    variables: args.variableValues,
    operationName: args.operationName,
    schema: args.schema,
  };
}

/**
 * The fast path skips the gateway's execution, and with it the coercion of variables: on a role's
 * schema, the values are checked against it here, so that a variable cannot carry an input field
 * or enum value the role is not granted (or a preset one). `undefined`: they are fine.
 */
function variableErrors(args: ExecutionArgs): ExecutionResult | undefined {
  if (!roleSchemaInfo(args.schema)) return undefined;
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation?.variableDefinitions?.length) return undefined;
  const coerced = getVariableValues(args.schema, operation.variableDefinitions, args.variableValues ?? {}, { maxErrors: 50 });
  return coerced.errors ? { errors: coerced.errors } : undefined;
}

function forward({ remote, operation }: ForwardTarget, args: ExecutionArgs, clientText = true): Promise<ExecutionResult> {
  const refused = variableErrors(args);
  if (refused) return Promise.resolve(refused);
  // Yoga executes queries and mutations here; the kind decides whether a call may be resent.
  return remote.client.send(requestOf(args, clientText), args.contextValue, operation === 'mutation' ? 'mutation' : 'query');
}

function forwardSubscription(
  { remote }: ForwardTarget,
  args: ExecutionArgs,
  clientText = true,
): AsyncIterableIterator<ExecutionResult> | ExecutionResult {
  return variableErrors(args) ?? remote.client.subscribe(requestOf(args, clientText), args.contextValue);
}

/**
 * A request of a role that is not served its role's schema (the session was not found when the
 * schema was chosen, or another plugin chose one) would see and reach more than its grant: it is
 * refused, whatever it asks.
 */
function misplaced(hooks: PermissionHooks, args: ExecutionArgs): ExecutionResult | undefined {
  const session = hooks.getSession(args.contextValue);
  if (!session || session.isAdmin === true || roleSchemaInfo(args.schema)?.role === session.role) return undefined;
  hooks.logger.error(
    `remote schemas: a request of role "${session.role}" does not run on that role's schema; refused ` +
      '(getSession must find the session from the context Envelop\'s onEnveloped sees, before the context is built)',
  );
  return { errors: [new GraphQLError('Unexpected error.', { extensions: { code: 'unexpected' } })] };
}

type Runner = (args: ExecutionArgs) => Promise<ExecutionResult>;

/**
 * How an operation is answered by remotes alone: sent as it is (the fast path) or by a compiled
 * plan; `undefined` when the gateway's execution is needed (local fields, introspection, what a
 * plan cannot express). `clientText`: `document` is the client's own.
 */
function remoteRunner(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger | undefined,
  clientText: boolean,
): Runner | undefined {
  const target = forwardTarget(schema, document, operationName);
  // A document of ours is sent printed: its errors' locations are moved back into the client's.
  if (target && !clientText) return async (args) => clientLocations(await forward(target, args, false), document, printCached(document));
  if (target) return (args) => forward(target, args, clientText);
  const plan = planFor(schema, document, operationName, logger);
  if (!plan || plan.calls.some((call) => call.local)) return undefined;
  return (args) => executePlan(plan, args);
}

/** The arguments of the base operation of a join plan: its document, and only the variables it defines. */
function baseArgs(joins: JoinPlan, args: ExecutionArgs): ExecutionArgs {
  const given = args.variableValues;
  let variableValues: Record<string, unknown> | undefined;
  if (given) {
    variableValues = {};
    for (const name of joins.baseVariables) if (Object.hasOwn(given, name)) variableValues[name] = given[name];
  }
  return { ...args, document: joins.base, variableValues };
}

/** Runs the base operation with `run`, then its joins. */
function withJoins(joins: JoinPlan, run: (args: ExecutionArgs) => unknown): Runner {
  return async (args) => executeJoins(joins, (await run(baseArgs(joins, args))) as ExecutionResult, args);
}

function joinRefused(joins: JoinRefusal): ExecutionResult {
  return { errors: [new GraphQLError(`the operation cannot be executed: ${joins.refusal}`, { extensions: { code: 'validation-failed' } })] };
}

/**
 * How `registry` answers an operation that needs nothing of the gateway's own execution: a query
 * or mutation whose root fields all belong to remotes (the fast path, or a compiled plan without
 * the local schema's fields or introspection). The returned function does what `useRemoteSchemas`
 * does for it in `onExecute` (role check, variables checked, presets, one request per remote,
 * answers mapped back); `undefined` for any other operation (subscriptions, local fields, what a
 * plan cannot express). `schema` is the schema the document was validated against: the registry's
 * live schema, or `registry.schemaFor(session)` with permissions.
 *
 * For servers that answer such operations before Yoga's request pipeline (the reference server's
 * direct lane); the arguments are those `execute` would get.
 */
export function remoteOperationRunner(
  registry: RemoteSchemaRegistry,
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): ((args: ExecutionArgs) => Promise<ExecutionResult>) | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation === 'subscription') return undefined;
  const hooks = permissionHooksOf(registry);
  const refusedOr = (run: (args: ExecutionArgs) => Promise<ExecutionResult>) => (args: ExecutionArgs) => {
    const refused = hooks && misplaced(hooks, args);
    return refused ? Promise.resolve(refused) : run(args);
  };
  const logger = loggerOf(registry);
  const joins = joinPlanFor(schema, document, operationName, logger);
  if (joins) {
    if ('refusal' in joins) return refusedOr(() => Promise.resolve(joinRefused(joins)));
    const base = remoteRunner(schema, joins.base, operationName, logger, false);
    return base && refusedOr(withJoins(joins, base));
  }
  const run = remoteRunner(schema, document, operationName, logger, true);
  return run && refusedOr(run);
}

/**
 * Serves the registry's live schema in a Yoga (or Envelop) app and follows its swaps with
 * `setSchema`: each request keeps the schema it started with. With remote schema permissions
 * enabled, each request is served `registry.schemaFor(session)` instead, chosen in `onEnveloped`
 * (before parsing and validation) from the registry's `getSession` of the context at hand.
 * An operation whose root fields all belong to one remote without customization is sent to it as
 * it is, in one request (no delegation); other queries and mutations over remotes follow a
 * compiled plan (one request per remote, in the remote's own names); what a plan cannot express,
 * and subscriptions off the fast path, are executed on the stitched schema (delegation).
 *
 * Do not also pass a `schema` to `createYoga`: this plugin provides it.
 */
export function useRemoteSchemas(registry: RemoteSchemaRegistry): Plugin {
  const hooks = permissionHooksOf(registry);
  const logger = loggerOf(registry);
  // The schema Envelop holds as far as this plugin knows: setSchema is skipped when it would not
  // change it (every plugin's onSchemaChange would run otherwise).
  let current: GraphQLSchema | undefined;
  return {
    onPluginInit({ setSchema }) {
      current = registry.schema;
      setSchema(current);
      registry.onSchemaChange((schema) => {
        current = schema;
        setSchema(schema);
      });
    },
    onSchemaChange({ schema }) {
      current = schema;
    },
    ...(hooks
      ? {
          onEnveloped({ context, setSchema }) {
            const schema = registry.schemaFor(hooks.getSession(context));
            if (schema === current) return;
            current = schema;
            setSchema(schema);
          },
        }
      : {}),
    onExecute({ args, setExecuteFn, executeFn }) {
      const refused = hooks && misplaced(hooks, args);
      if (refused) {
        setExecuteFn(() => refused);
        return;
      }
      const joins = joinPlanFor(args.schema, args.document, args.operationName, logger);
      if (joins) {
        if ('refusal' in joins) {
          setExecuteFn(() => joinRefused(joins));
          return;
        }
        const plan = planFor(args.schema, joins.base, args.operationName, logger);
        // Sent as it is, by a plan, or executed on the stitched schema, then joined.
        const base =
          remoteRunner(args.schema, joins.base, args.operationName, logger, false) ??
          (plan ? (executionArgs: ExecutionArgs) => executePlan(plan, executionArgs, executeFn) : executeFn);
        setExecuteFn(withJoins(joins, base));
        return;
      }
      const target = forwardTarget(args.schema, args.document, args.operationName);
      if (target) {
        setExecuteFn((executionArgs) => forward(target, executionArgs));
        return;
      }
      const plan = planFor(args.schema, args.document, args.operationName, logger);
      // The local schema's root fields in a plan are executed as the operation would have been.
      if (plan) setExecuteFn((executionArgs) => executePlan(plan, executionArgs, executeFn));
    },
    onSubscribe({ args, setSubscribeFn, subscribeFn }) {
      const refused = hooks && misplaced(hooks, args);
      if (refused) {
        setSubscribeFn(() => refused);
        return;
      }
      const joins = joinPlanFor(args.schema, args.document, args.operationName, logger);
      if (joins) {
        if ('refusal' in joins) {
          setSubscribeFn(() => joinRefused(joins));
          return;
        }
        const target = forwardTarget(args.schema, joins.base, args.operationName);
        // Each event of the base subscription is joined before it is sent.
        setSubscribeFn(async (subscriptionArgs) => {
          const base = baseArgs(joins, subscriptionArgs);
          const stream = target ? forwardSubscription(target, base, false) : await subscribeFn(base);
          if (!isAsyncIterable(stream)) return stream;
          return mapAsyncIterator(stream as AsyncIterable<ExecutionResult>, (event) => executeJoins(joins, event, subscriptionArgs));
        });
        return;
      }
      const target = forwardTarget(args.schema, args.document, args.operationName);
      if (target) setSubscribeFn((subscriptionArgs) => forwardSubscription(target, subscriptionArgs));
    },
  };
}
