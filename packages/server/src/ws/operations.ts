import { GraphQLError, getOperationAST, type DocumentNode, type ExecutionArgs, type FormattedExecutionResult } from 'graphql';
import type { ConnectionInitMessage, Context, OperationResult, ServerOptions, SubscribePayload } from 'graphql-ws';
import { isAsyncIterable, mapAsyncIterator, type YogaServerInstance } from 'graphql-yoga';
import type { GraphqlWsSession } from '@svc-graphql/jwt-session';
import type { Lockdown } from '../lockdown/enforce.js';
import { rejectionError } from '../lockdown/plugin.js';
import type { Rejection } from '../lockdown/rejections.js';
import type { Logger } from '../observability/logger.js';
import type { ServerMetrics } from '../observability/metrics.js';
import { countWebSocketRefusal, countWebSocketResult } from '../observability/metrics-plugin.js';
import type { RequestRecords } from '../request-record.js';
import type { SocketExtra } from './graphql-ws.js';
import type { LaneOperations } from './lane-operations.js';
import { failureResult, formatForSocket, socketResult, tooManyOperations } from './messages.js';

/**
 * What graphql-ws does with each connection and operation: the session at `connection_init`, and
 * each operation run through the same Envelop pipeline as an HTTP request (Yoga's `getEnveloped`:
 * the role's schema, the limits, masking, the remotes), bounded per connection.
 */
export interface GraphqlWsHooksOptions {
  records: RequestRecords;
  getEnveloped: YogaServerInstance<object, object>['getEnveloped'];
  session: GraphqlWsSession;
  graphqlPath: string;
  /** Most operations running at once on one connection. */
  maxOperationsPerConnection: number;
  metrics: ServerMetrics | undefined;
  logger: Logger;
  /**
   * The lock-down checks, at the same points as over HTTP: the rate limit before the document is
   * parsed, the allow list, introspection, depth and nodes before it is validated. A refused
   * operation gets an `error` message; the connection stays open.
   */
  lockdown?: Lockdown;
  /**
   * The graphql-ws lane's operations (ws/lane-operations.ts), which run beside graphql-ws: told
   * when a connection is acknowledged and when it closes.
   */
  laneOperations?: LaneOperations;
}

type WsContext = Context<ConnectionInitMessage['payload'], SocketExtra>;

interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => OperationResult;
  subscribe: (args: ExecutionArgs) => OperationResult;
  operation: StartingOperation;
}

/** A graphql-ws operation between its `subscribe` message and its start. */
interface StartingOperation {
  /** Its id was sent again meanwhile (after a `complete`): it is ended as it starts. */
  superseded: boolean;
  /** It started (or failed to): its id may be used again. */
  started: () => void;
}

/** The options of graphql-ws's `makeServer` for this server. */
export function graphqlWsHooks(options: GraphqlWsHooksOptions): ServerOptions<ConnectionInitMessage['payload'], SocketExtra> {
  const { records, getEnveloped, session, graphqlPath, maxOperationsPerConnection, metrics, logger, lockdown, laneOperations } = options;
  /** Per connection, the operations between onSubscribe and their start, by id. */
  const starting = new WeakMap<object, Map<string, StartingOperation>>();
  /**
   * onSubscribe's work for an operation that may start: the arguments to execute it with (its
   * root value carries `operation`, told when it has started), or the errors that answer it.
   */
  const prepareOperation = async (ctx: WsContext, payload: SubscribePayload, operation: StartingOperation): Promise<ExecutionArgs | readonly GraphQLError[]> => {
    const upgrade = ctx.extra.request;
    const operationSession = session.getSession(ctx);
    if (lockdown !== undefined && operationSession !== undefined) {
      const rejection = await lockdown.checkRate(operationSession, upgrade);
      if (rejection !== undefined) return refused(rejection, undefined, undefined);
    }
    const headers = operationHeaders(ctx);
    // The Host header stays in `headers`; the URL only has to be valid, whatever a client sends.
    // POST: every operation may run over the socket, mutations included (Yoga refuses
    // mutations of GET requests).
    const request = new Request(`http://localhost${graphqlPath}`, { method: 'POST', headers });
    const context = { ...ctx, req: upgrade, socket: ctx.extra.socket, request, params: payload, session: operationSession };
    records.openOperation(context, records.open(upgrade), headers, operationSession);
    const { schema, execute, subscribe, contextFactory, parse, validate } = getEnveloped(context);
    let document: DocumentNode;
    try {
      document = parse(payload.query);
    } catch (error) {
      // A syntax error (or an operation refused before parsing) fails this operation only,
      // not the whole connection.
      countWebSocketRefusal(metrics, undefined, undefined);
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    const rejection = lockdown !== undefined && operationSession !== undefined ? lockdown.checkDocument(operationSession, document, payload.operationName) : undefined;
    if (rejection !== undefined) return refused(rejection, document, payload.operationName);
    let errors: readonly GraphQLError[];
    try {
      errors = validate(schema, document);
    } catch (error) {
      // graphql-js 16 throws from a rule or two (a subscription root field under @skip whose
      // argument is a variable) instead of reporting: fail this operation, not the connection.
      countWebSocketRefusal(metrics, document, payload.operationName);
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    if (errors.length > 0) {
      countWebSocketRefusal(metrics, document, payload.operationName);
      return errors;
    }
    // graphql-ws would answer this itself, without executing (and so without `started`).
    if (!getOperationAST(document, payload.operationName ?? undefined)) {
      countWebSocketRefusal(metrics, document, payload.operationName);
      return [new GraphQLError('Unable to identify operation')];
    }
    return {
      schema,
      document,
      operationName: payload.operationName ?? null,
      variableValues: payload.variables ?? null,
      contextValue: await contextFactory(),
      rootValue: { execute, subscribe, operation } as EnvelopedRoot,
    };
  };

  const refused = (rejection: Rejection, document: DocumentNode | undefined, operationName: string | null | undefined): readonly GraphQLError[] => {
    countWebSocketRefusal(metrics, document, operationName);
    return [rejectionError(rejection)];
  };

  const run = (args: ExecutionArgs, kind: 'execute' | 'subscribe') =>
    settle(args, countWebSocketResult(metrics, records.of(args.contextValue), failAlone(() => (args.rootValue as EnvelopedRoot)[kind](args), logger)));

  return {
    onConnect: async (ctx) => {
      const accepted = await session.onConnect(ctx);
      if (accepted) laneOperations?.connected(ctx);
      return accepted;
    },
    onClose: (ctx) => {
      laneOperations?.closed(ctx);
      return session.onClose(ctx);
    },
    // `extensions.http` tells Yoga the HTTP status; a socket has none to show.
    onError: (_ctx, _id, _payload, errors) => errors.map(formatForSocket),
    onNext: (_ctx, _id, _payload, _args, result): FormattedExecutionResult | undefined => {
      // A result without errors is sent as it is (graphql-ws would copy it into a new object first).
      if (result.errors === undefined) return result as FormattedExecutionResult;
      if (!result.errors.some((error) => error.extensions?.['http'] !== undefined)) return undefined;
      return socketResult(result);
    },
    execute: (args) => run(args, 'execute'),
    subscribe: (args) => run(args, 'subscribe'),
    onSubscribe: async (ctx, id, payload) => {
      // `ctx.subscriptions` holds this connection's operations in flight, this one's id included.
      // The lane's subscriptions run beside graphql-ws (ws/lane-operations.ts) and count too.
      const running = Object.keys(ctx.subscriptions).filter((key) => key !== id).length + (laneOperations?.count(ctx) ?? 0);
      if (running >= maxOperationsPerConnection) {
        countWebSocketRefusal(metrics, undefined, undefined);
        return [tooManyOperations(maxOperationsPerConnection)];
      }
      // An id the client completed while its operation was still starting, sent again: graphql-ws
      // would attach the first operation's stream to the new one's id once it starts, where
      // nothing ends it (a remote subscription held open for good). The new one is refused
      // until the first has started, and the first is ended as it starts.
      let ids = starting.get(ctx);
      if (ids === undefined) {
        ids = new Map();
        starting.set(ctx, ids);
      }
      const earlier = ids.get(id);
      if (earlier !== undefined) {
        earlier.superseded = true;
        countWebSocketRefusal(metrics, undefined, undefined);
        return [
          new GraphQLError(`an operation with id "${id}" is still starting; send it again once it has ended`, {
            extensions: { code: 'validation-failed', path: '$' },
          }),
        ];
      }
      const startingIds = ids;
      // Once none is starting, the connection holds no map for them (a subscriber may stay for hours).
      const release = () => {
        startingIds.delete(id);
        if (startingIds.size === 0 && starting.get(ctx) === startingIds) starting.delete(ctx);
      };
      const state: StartingOperation = { superseded: false, started: release };
      startingIds.set(id, state);
      let handedOn = false;
      try {
        const outcome = await prepareOperation(ctx, payload, state);
        handedOn = !Array.isArray(outcome);
        return outcome;
      } finally {
        if (!handedOn) release();
      }
    },
  };
}

/**
 * Per connection, its headers ({@link operationHeaders}) as a plain record, made once: what the
 * lane's operations forward.
 */
export function plainHeadersOf(): (ctx: WsContext) => Record<string, string> {
  const made = new WeakMap<object, Record<string, string>>();
  return (ctx) => {
    let headers = made.get(ctx);
    if (headers === undefined) {
      headers = Object.fromEntries(operationHeaders(ctx));
      made.set(ctx, headers);
    }
    return headers;
  };
}

/** The upgrade request's headers, overridden by `connection_init` `payload.headers` (as the session reads them). */
function operationHeaders(ctx: WsContext): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.extra.request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  const initHeaders = (ctx.connectionParams as { headers?: unknown } | undefined)?.headers;
  if (initHeaders && typeof initHeaders === 'object') {
    for (const [name, value] of Object.entries(initHeaders)) {
      if (typeof value !== 'string') continue;
      try {
        headers.set(name, value);
      } catch {
        // Not a valid header name or value (connection_init is free-form JSON): left out.
      }
    }
  }
  return headers;
}

/**
 * A stream that yields nothing until it is returned (ending it on its own would make graphql-ws
 * send `complete` for an id the client may be using again).
 */
function emptyStream(): AsyncIterableIterator<never> {
  const done: IteratorResult<never> = { done: true, value: undefined };
  let over = false;
  let finish: ((result: IteratorResult<never>) => void) | undefined;
  return {
    next: () =>
      over
        ? Promise.resolve(done)
        : new Promise<IteratorResult<never>>((resolve) => {
            finish = resolve;
          }),
    return: async () => {
      over = true;
      finish?.(done);
      return done;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * `pending`, after which the operation of `args` counts as started. A superseded operation's stream
 * is ended at once, and graphql-ws, which may attach it to the id's new slot, gets an empty one.
 */
async function settle<T>(args: ExecutionArgs, pending: Promise<T>): Promise<T> {
  const { operation } = args.rootValue as EnvelopedRoot;
  let result: T;
  try {
    result = await pending;
  } finally {
    operation.started();
  }
  if (!operation.superseded || !isAsyncIterable(result)) return result;
  void (result as unknown as AsyncIterableIterator<unknown>).return?.();
  return emptyStream() as T;
}

/**
 * An operation that throws instead of answering (graphql-js throws some errors from its field
 * collection, e.g. a directive's variable without a value) fails alone with an error result:
 * graphql-ws would close the whole connection with 4500.
 */
async function failAlone(run: () => OperationResult, logger: Logger): Promise<Awaited<OperationResult>> {
  const asResult = (error: unknown) => failureResult(error, logger);
  try {
    const result = await run();
    // A subscription's stream may throw too (on its first event, for such a document).
    return isAsyncIterable(result) ? mapAsyncIterator(result, (value) => value, asResult) : result;
  } catch (error) {
    return asResult(error);
  }
}
