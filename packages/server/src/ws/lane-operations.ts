import { GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { CloseCode, MessageType, parseMessage, type ConnectionInitMessage, type Context, type Message } from 'graphql-ws';
import { isAsyncIterable } from 'graphql-yoga';
import type { GraphqlWsSession, Session } from '@svc-graphql/jwt-session';
import { isPushable } from '@svc-graphql/remote-schemas';
import type { Lockdown } from '../lockdown/enforce.js';
import { rejectionError } from '../lockdown/plugin.js';
import type { Logger } from '../observability/logger.js';
import type { ServerMetrics } from '../observability/metrics.js';
import { countWebSocketRefusal, countWebSocketResult } from '../observability/metrics-plugin.js';
import { SUBSCRIPTION } from '../observability/metrics.js';
import { noteOperation } from '../http/request-log.js';
import type { RequestRecords } from '../request-record.js';
import type { SocketExtra } from './graphql-ws.js';
import type { LaneOperation, SubscriptionLane } from './lane.js';
import { failureResult, formatForSocket, nextMessage, tooManyOperations, type AnyResult } from './messages.js';

type WsContext = Context<ConnectionInitMessage['payload'], SocketExtra>;

/**
 * The graphql-ws lane's subscriptions, run beside graphql-ws rather than through its operation
 * handling. A `subscribe` message whose subscription the lane takes (ws/lane.ts) never reaches
 * graphql-ws: it is checked here as graphql-ws and the server's hooks check any other (the
 * protocol's rules on ids, the bound on operations per connection, the lock-down checks), and its
 * results are written to the socket as the remote's events come, as graphql-ws writes them: a
 * `next` message each, `complete` at the end, `error` for a refusal. What this saves is what
 * graphql-ws holds per running operation for its whole life (a suspended call with the message,
 * the arguments and its emitters, and a read waiting for the next result): a few KiB per
 * subscriber, which ten thousand subscribers multiply, and which its garbage collector has to
 * mark again and again.
 *
 * The ids of a connection are one space: a `subscribe` reusing an id that is running here or in
 * graphql-ws closes the socket with 4409, a `complete` ends the operation wherever it runs. The
 * socket's close ends every operation here (their upstream subscriptions are released).
 */
export interface LaneOperationsOptions {
  lane: SubscriptionLane;
  records: RequestRecords;
  session: GraphqlWsSession;
  maxOperationsPerConnection: number;
  metrics: ServerMetrics | undefined;
  logger: Logger;
  lockdown: Lockdown | undefined;
  /** The headers an operation of `ctx` sees (the upgrade's, overridden by `connection_init`'s). */
  headersOf: (ctx: WsContext) => Record<string, string>;
}

export interface LaneOperations {
  /** For serveGraphqlWs: whether the message was taken here. */
  intercept(text: string, extra: SocketExtra): boolean;
  /** The connection was acknowledged: its operations may be taken from now on. */
  connected(ctx: WsContext): void;
  /** The connection closed: its operations end. */
  closed(ctx: WsContext): void;
  /** How many of the connection's operations run here (they count toward the bound per connection). */
  count(ctx: WsContext): number;
}

/** One subscription the lane runs. */
class Running {
  ended = false;
  /** Its stream, once started. */
  stream: AsyncIterator<unknown> | undefined = undefined;
  constructor(
    readonly id: string,
    readonly connection: Connection,
  ) {}
}

/** What the lane keeps of one acknowledged connection. */
interface Connection {
  readonly ctx: WsContext;
  readonly running: Map<string, Running>;
}

export function createLaneOperations(options: LaneOperationsOptions): LaneOperations {
  const { lane, records, session, maxOperationsPerConnection, metrics, logger, lockdown, headersOf } = options;
  const connections = new WeakMap<SocketExtra, Connection>();

  const send = (connection: Connection, message: string) => connection.ctx.extra.send(message);
  const sendErrors = (connection: Connection, id: string, errors: readonly GraphQLError[]) =>
    send(connection, JSON.stringify({ id, type: MessageType.Error, payload: errors.map(formatForSocket) }));

  /** Ends `running` (its upstream subscription released); `notify`: the client is sent `complete`. */
  const end = (running: Running, notify: boolean): void => {
    if (running.ended) return;
    running.ended = true;
    const { connection, id } = running;
    if (connection.running.get(id) === running) connection.running.delete(id);
    const stream = running.stream;
    if (stream !== undefined) {
      metrics?.subscriptionEnded();
      void Promise.resolve(stream.return?.()).catch(() => {});
    }
    if (notify) send(connection, JSON.stringify({ id, type: MessageType.Complete }));
  };

  /** A result written as a `next` message; `false` when it could not be (the operation ended). */
  const write = (running: Running, result: AnyResult): boolean => {
    let message: string;
    try {
      message = nextMessage(running.id, result);
    } catch (error) {
      logger.error('a subscription result could not be written to its WebSocket; the subscription ended:', error);
      end(running, true);
      return false;
    }
    send(running.connection, message);
    return true;
  };

  /** Reads a stream that cannot push (a refusal the pool answers as a stream of one result). */
  const pull = async (running: Running, stream: AsyncIterator<unknown>): Promise<void> => {
    try {
      for (;;) {
        const step = await stream.next();
        if (running.ended) return;
        if (step.done === true) break;
        if (!write(running, step.value as AnyResult)) return;
      }
    } catch (error) {
      if (running.ended) return;
      write(running, failureResult(error, logger));
    }
    end(running, true);
  };

  const start = async (running: Running, found: LaneOperation, payload: Payload, operationSession: Session): Promise<void> => {
    const { ctx } = running.connection;
    if (lockdown !== undefined) {
      const rejection = await lockdown.checkRate(operationSession, ctx.extra.request);
      if (running.ended) return;
      // Counted before the document is looked at, as on graphql-ws's own path: of unknown type.
      if (rejection !== undefined) return refuse(running, [rejectionError(rejection)], undefined, payload);
    }
    const rejection = lockdown?.checkDocument(operationSession, found.document, payload.operationName);
    if (rejection !== undefined) return refuse(running, [rejectionError(rejection)], found, payload);
    // What remote-schemas reads of a context is on the operation's record (session, id, headers).
    const contextValue = {};
    const record = records.openOperation(contextValue, records.open(ctx.extra.request), headersOf(ctx), operationSession);
    record.role = operationSession.role;
    record.countedType = SUBSCRIPTION;
    noteOperation(record, 'subscription', found.name);
    const args: ExecutionArgs = {
      schema: found.schema,
      document: found.document,
      operationName: payload.operationName ?? null,
      variableValues: payload.variables ?? null,
      contextValue,
    };
    let result: ExecutionResult | AsyncIterableIterator<ExecutionResult>;
    try {
      result = found.subscribe(args);
    } catch (error) {
      result = failureResult(error, logger);
    }
    void countWebSocketResult(metrics, record, Promise.resolve(result));
    if (!isAsyncIterable(result)) {
      if (running.ended) return;
      write(running, result);
      end(running, true);
      return;
    }
    if (running.ended) {
      void Promise.resolve(result.return?.()).catch(() => {});
      return;
    }
    running.stream = result;
    metrics?.subscriptionStarted();
    if (!isPushable(result)) {
      void pull(running, result);
      return;
    }
    result.listen((step) => {
      if (running.ended) return;
      if (step.done === true) end(running, true);
      else write(running, step.value);
    });
  };

  const refuse = (running: Running, errors: readonly GraphQLError[], found: LaneOperation | undefined, payload: Payload): void => {
    countWebSocketRefusal(metrics, found?.document, payload.operationName);
    if (running.ended) return;
    running.ended = true;
    running.connection.running.delete(running.id);
    sendErrors(running.connection, running.id, errors);
  };

  return {
    connected(ctx) {
      connections.set(ctx.extra, { ctx, running: new Map() });
    },

    count(ctx) {
      return connections.get(ctx.extra)?.running.size ?? 0;
    },

    closed(ctx) {
      const connection = connections.get(ctx.extra);
      if (connection === undefined) return;
      connections.delete(ctx.extra);
      for (const running of [...connection.running.values()]) end(running, false);
    },

    intercept(text, extra) {
      const connection = connections.get(extra);
      if (connection === undefined || !connection.ctx.acknowledged) return false;
      let message: Message;
      try {
        message = parseMessage(text);
      } catch {
        // Not a valid message: graphql-ws closes the socket as it should.
        return false;
      }
      if (message.type === MessageType.Complete) {
        const running = connection.running.get(message.id);
        if (running === undefined) return false;
        // The client ended it: no `complete` back, as graphql-ws does.
        end(running, false);
        return true;
      }
      if (message.type !== MessageType.Subscribe) return false;
      const { id, payload } = message;
      const { ctx, running: mine } = connection;
      // An id graphql-ws runs: graphql-ws closes the socket itself.
      if (id in ctx.subscriptions) return false;
      if (mine.has(id)) {
        extra.socket.close(CloseCode.SubscriberAlreadyExists, `Subscriber for ${id} already exists`);
        return true;
      }
      const operationSession = session.getSession(ctx);
      if (operationSession === undefined) return false;
      const found = lane.find(operationSession, payload.query, payload.operationName ?? null);
      if (found === undefined) return false;
      const running = new Running(id, connection);
      if (Object.keys(ctx.subscriptions).length + mine.size >= maxOperationsPerConnection) {
        mine.set(id, running);
        refuse(running, [tooManyOperations(maxOperationsPerConnection)], undefined, payload);
        return true;
      }
      mine.set(id, running);
      start(running, found, payload, operationSession).catch((error: unknown) => {
        if (running.ended) return;
        running.ended = true;
        mine.delete(id);
        sendErrors(connection, id, (failureResult(error, logger).errors ?? []) as GraphQLError[]);
      });
      return true;
    },
  };
}

type Payload = Extract<Message, { type: MessageType.Subscribe }>['payload'];
