import {
  GraphQLError,
  getOperationAST,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { isAsyncIterable, mapAsyncIterator } from '@graphql-tools/utils';
import { forwardTarget, type ForwardTarget } from './fast-path.js';
import { roleSchemaInfo } from './permissions/role-schema.js';
import type { RemoteRequest } from './remote-client.js';
import { executePlan } from './plan/execute.js';
import { refusedSubscription, subscribePlan } from './plan/subscription.js';
import { planFor, subscriptionPlanFor } from './plan/cache.js';
import { coerceVariables, emptySubscription } from './request-errors.js';
import { holdsNonFiniteNumber } from './json-depth.js';
import type { Logger } from './options.js';
import { SubscriptionGuard } from './permissions/subscription-guard.js';
import { executeJoins } from './relationships/join-execute.js';
import { joinPlanFor, type JoinPlan, type JoinRefusal } from './relationships/join-plan.js';
import type { RegistryPermissions, RemoteSchemaRegistry } from './types.js';

/** The request sent as it is: the operation and its fragments, with where their text comes from. */
function requestOf({ sent }: ForwardTarget, args: ExecutionArgs): RemoteRequest {
  return {
    document: sent.document,
    text: sent.text,
    locations: sent.locations,
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
  // A number JSON cannot write would reach the remote as null: coerced here, it is refused.
  if (!roleSchemaInfo(args.schema) && !holdsNonFiniteNumber(args.variableValues)) return undefined;
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return undefined;
  const outcome = coerceVariables(args.schema, operation, args.variableValues);
  return 'result' in outcome ? outcome.result : undefined;
}

function forward(target: ForwardTarget, args: ExecutionArgs): Promise<ExecutionResult> {
  const refused = variableErrors(args);
  if (refused) return Promise.resolve(refused);
  // Yoga executes queries and mutations here; the kind decides whether a call may be resent.
  return target.remote.client.send(requestOf(target, args), args.contextValue, target.operation === 'mutation' ? 'mutation' : 'query');
}

/** A subscription sent as it is (its variables checked by {@link refusedBeforeExecution} first). */
function forwardSubscription(target: ForwardTarget, args: ExecutionArgs): AsyncIterableIterator<ExecutionResult> {
  return target.remote.client.subscribe(requestOf(target, args), args.contextValue);
}

type SubscriptionStart = (args: ExecutionArgs) => AsyncIterableIterator<ExecutionResult> | ExecutionResult;

/**
 * How a subscription reaches its remote without the gateway's execution: sent as it is (no
 * customization), or by its plan (its root field is a namespace field), or refused (a namespace
 * field the plan cannot serve); `undefined`: executed on the stitched schema (delegation).
 */
function subscriptionStart(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger,
): SubscriptionStart | undefined {
  const target = forwardTarget(schema, document, operationName);
  if (target) return (args) => forwardSubscription(target, args);
  const plan = subscriptionPlanFor(schema, document, operationName, logger);
  if (!plan) return undefined;
  if ('refusal' in plan) {
    const { refusal } = plan;
    return () => refusedSubscription(refusal);
  }
  return (args) => subscribePlan(plan, args);
}

/**
 * What answers a request before execution, on the routes where the gateway's own execution does
 * not (Yoga's execution of the local schema's fields and delegation, joins, and every
 * subscription): its variable values that cannot be coerced, or a subscription left without a
 * root field. Checked here so that these errors look the same on every route (Yoga's executor
 * would add an HTTP status to them, and a `BAD_USER_INPUT` code to a subscription's).
 * `undefined`: execution may start.
 */
function refusedBeforeExecution(args: ExecutionArgs): ExecutionResult | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return undefined;
  const outcome = coerceVariables(args.schema, operation, args.variableValues);
  if ('result' in outcome) return outcome.result;
  return emptySubscription(args.schema, args.document, operation, outcome.coerced);
}

/** What the plugin reads of a registry, checked once when the plugin (or a runner) is made. */
interface Contract {
  permissions: RegistryPermissions | null;
  logger: Logger;
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/**
 * The registry's permission contract and logger. An object without them (a wrapper that does not
 * pass them on) is refused: serving it would serve every role the whole of every remote.
 */
function contractOf(registry: RemoteSchemaRegistry, caller: string): Contract {
  if (!registry || typeof registry !== 'object') {
    throw new TypeError(`${caller}: expected a remote schema registry, but got ${kindOf(registry)}`);
  }
  const { permissions, logger } = registry;
  if (permissions !== null && (typeof permissions !== 'object' || typeof permissions?.getSession !== 'function')) {
    throw new TypeError(
      `${caller}: expected "registry.permissions" to be null (permissions off) or an object with a getSession function, ` +
        `but got ${kindOf(permissions)}; a registry wrapper must pass this member on`,
    );
  }
  if (!logger || typeof logger !== 'object' || typeof logger.error !== 'function' || typeof logger.debug !== 'function') {
    throw new TypeError(
      `${caller}: expected "registry.logger" to be a logger ({ debug, info, warn, error }), but got ${kindOf(logger)}; ` +
        'a registry wrapper must pass this member on',
    );
  }
  return { permissions, logger };
}

/**
 * A request of a role that is not served its role's schema (the session was not found when the
 * schema was chosen, or another plugin chose one) would see and reach more than its grant: it is
 * refused, whatever it asks.
 */
function misplaced({ permissions, logger }: Contract, args: ExecutionArgs): ExecutionResult | undefined {
  if (!permissions) return undefined;
  const session = permissions.getSession(args.contextValue);
  if (!session || session.isAdmin === true || roleSchemaInfo(args.schema)?.role === session.role) return undefined;
  logger.error(
    `remote schemas: a request of role "${session.role}" does not run on that role's schema; refused ` +
      '(getSession must find the session from the context Envelop\'s onEnveloped sees, before the context is built)',
  );
  return { errors: [new GraphQLError('Unexpected error.', { extensions: { code: 'unexpected' } })] };
}

type Runner = (args: ExecutionArgs) => Promise<ExecutionResult>;

/** What an `onSubscribe` hook may return: hooks on the subscription's result. */
type SubscribeHookResult = Exclude<Awaited<ReturnType<NonNullable<Plugin['onSubscribe']>>>, void>;

/**
 * How an operation is answered by remotes alone: sent as it is (the fast path) or by a compiled
 * plan; `undefined` when the gateway's execution is needed (local fields, introspection, what a
 * plan cannot express). `document` may be the client's, or one derived from it (a join plan's
 * base): what is sent knows where each of its nodes came from in the client's text.
 */
function remoteRunner(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger | undefined,
): Runner | undefined {
  const target = forwardTarget(schema, document, operationName);
  if (target) return (args) => forward(target, args);
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

/**
 * Runs the base operation with `run`, then its joins; the client's variables are checked first
 * (the base and the joins' calls each send only part of them).
 */
function withJoins(joins: JoinPlan, run: (args: ExecutionArgs) => unknown): Runner {
  return async (args) => refusedBeforeExecution(args) ?? executeJoins(joins, (await run(baseArgs(joins, args))) as ExecutionResult, args);
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
  const contract = contractOf(registry, 'remoteOperationRunner');
  const refusedOr = (run: (args: ExecutionArgs) => Promise<ExecutionResult>) => (args: ExecutionArgs) => {
    const refused = misplaced(contract, args);
    return refused ? Promise.resolve(refused) : run(args);
  };
  const { logger } = contract;
  const joins = joinPlanFor(schema, document, operationName, logger);
  if (joins) {
    if ('refusal' in joins) return refusedOr(() => Promise.resolve(joinRefused(joins)));
    const base = remoteRunner(schema, joins.base, operationName, logger);
    return base && refusedOr(withJoins(joins, base));
  }
  const run = remoteRunner(schema, document, operationName, logger);
  return run && refusedOr(run);
}

/** One guard per registry, shared by its plugins and subscription runners, validating again after every swap. */
const guards = new WeakMap<RemoteSchemaRegistry, SubscriptionGuard>();

function guardOf(registry: RemoteSchemaRegistry, { logger }: Contract): SubscriptionGuard {
  let guard = guards.get(registry);
  if (guard === undefined) {
    // It listens to the registry's swaps only while a subscription is open.
    guard = new SubscriptionGuard((role) => registry.schemaFor({ role }), logger, (onSwap) => registry.onSchemaChange(onSwap));
    guards.set(registry, guard);
  }
  return guard;
}

/** `stream`, handed to the guard when it is a role's (not admin's) with permissions on. */
function guardedStream(
  registry: RemoteSchemaRegistry,
  contract: Contract,
  args: ExecutionArgs,
  stream: AsyncIterableIterator<ExecutionResult>,
): AsyncIterableIterator<ExecutionResult> {
  const session = contract.permissions?.getSession(args.contextValue);
  if (!session || session.isAdmin === true) return stream;
  return guardOf(registry, contract).track(session.role, args, stream);
}

/**
 * How `registry` answers a subscription sent to one remote as it is (the fast path: every root
 * field of that remote, no customization, no relationship) or by its plan (its root field is a
 * remote's `root_fields_namespace` field): the returned function does what
 * `useRemoteSchemas` does for it in `onSubscribe` (role check, variables checked, the shared
 * upstream subscription, the role's subscription validated again after each swap) and returns the
 * stream of results, or a single result that refuses it. `undefined` for any other operation.
 * `schema` is the schema the document was validated against, as for {@link remoteOperationRunner}.
 *
 * For servers that start such subscriptions without Envelop's per-operation hooks (the reference
 * server's graphql-ws lane); the arguments are those `subscribe` would get.
 */
export function remoteSubscriptionRunner(
  registry: RemoteSchemaRegistry,
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): ((args: ExecutionArgs) => ExecutionResult | AsyncIterableIterator<ExecutionResult>) | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation !== 'subscription') return undefined;
  const contract = contractOf(registry, 'remoteSubscriptionRunner');
  if (joinPlanFor(schema, document, operationName, contract.logger)) return undefined;
  const start = subscriptionStart(schema, document, operationName, contract.logger);
  if (!start) return undefined;
  return (args) => {
    const refused = misplaced(contract, args) ?? refusedBeforeExecution(args);
    if (refused) return refused;
    const stream = start(args);
    return isAsyncIterable(stream) ? guardedStream(registry, contract, args, stream) : stream;
  };
}

/**
 * Serves the registry's live schema in a Yoga (or Envelop) app and follows its swaps with
 * `setSchema`: each request keeps the schema it started with. With remote schema permissions
 * enabled (`registry.permissions` is not `null`), each request is served
 * `registry.schemaFor(session)` instead, chosen in `onEnveloped` (before parsing and validation)
 * with `registry.permissions.getSession` of the context at hand; a role's answers are checked on
 * the way back from its remotes, and its open subscriptions are validated again after every swap
 * (one that no longer validates ends with an `access-denied` error). Everything is read through
 * `registry`'s public members, so a wrapper of the registry works as the registry itself; one
 * without `permissions` is refused with a `TypeError`.
 * An operation whose root fields all belong to one remote without customization is sent to it as
 * it is, in one request (no delegation); other queries and mutations over remotes follow a
 * compiled plan (one request per remote, in the remote's own names), as are subscriptions under a
 * namespace field; what a plan cannot express, and other subscriptions off the fast path, are
 * executed on the stitched schema (delegation).
 *
 * Do not also pass a `schema` to `createYoga`: this plugin provides it.
 */
export function useRemoteSchemas(registry: RemoteSchemaRegistry): Plugin {
  const contract = contractOf(registry, 'useRemoteSchemas');
  const { permissions, logger } = contract;
  // The schema Envelop holds as far as this plugin knows: setSchema is skipped when it would not
  // change it (every plugin's onSchemaChange would run otherwise).
  let current: GraphQLSchema | undefined;
  const unsubscribes: Array<() => void> = [];
  // Roles' open subscriptions, validated again after each swap: a permission may have changed.
  const guard = permissions ? guardOf(registry, contract) : undefined;
  /** The hook that hands a role's subscription stream to the guard (`undefined`: admin, no session, permissions off). */
  const guarded = (args: ExecutionArgs): SubscribeHookResult | undefined => {
    const session = guard && permissions?.getSession(args.contextValue);
    if (!guard || !session || session.isAdmin === true) return undefined;
    return {
      onSubscribeResult({ result, setResult }) {
        if (isAsyncIterable(result)) setResult(guard.track(session.role, args, result as AsyncIterable<ExecutionResult>));
      },
    };
  };
  return {
    onPluginInit({ setSchema }) {
      current = registry.schema;
      setSchema(current);
      unsubscribes.push(
        registry.onSchemaChange((schema) => {
          current = schema;
          setSchema(schema);
        }),
      );
    },
    onSchemaChange({ schema }) {
      current = schema;
    },
    ...(permissions
      ? {
          onEnveloped({ context, setSchema }) {
            const schema = registry.schemaFor(permissions.getSession(context));
            if (schema === current) return;
            current = schema;
            setSchema(schema);
          },
        }
      : {}),
    onExecute({ args, setExecuteFn, executeFn }) {
      const refused = misplaced(contract, args);
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
          remoteRunner(args.schema, joins.base, args.operationName, logger) ??
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
      else setExecuteFn((executionArgs) => refusedBeforeExecution(executionArgs) ?? executeFn(executionArgs));
    },
    onSubscribe({ args, setSubscribeFn, subscribeFn }) {
      const refused = misplaced(contract, args);
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
        const start = subscriptionStart(args.schema, joins.base, args.operationName, logger);
        // Each event of the base subscription is joined before it is sent.
        setSubscribeFn(async (subscriptionArgs) => {
          const refusedBefore = refusedBeforeExecution(subscriptionArgs);
          if (refusedBefore) return refusedBefore;
          const base = baseArgs(joins, subscriptionArgs);
          const stream = start ? start(base) : await subscribeFn(base);
          if (!isAsyncIterable(stream)) return stream;
          return mapAsyncIterator(stream as AsyncIterable<ExecutionResult>, (event) => executeJoins(joins, event, subscriptionArgs));
        });
        return guarded(args);
      }
      const start = subscriptionStart(args.schema, args.document, args.operationName, logger);
      setSubscribeFn((subscriptionArgs) => {
        const refusedBefore = refusedBeforeExecution(subscriptionArgs);
        if (refusedBefore) return refusedBefore;
        return start ? start(subscriptionArgs) : subscribeFn(subscriptionArgs);
      });
      return guarded(args);
    },
    onDispose() {
      // Yoga's dispose(): the registry may outlive this app, and must not keep it (or call it).
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
    },
  };
}
