import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { GraphQLError, getOperationAST, type DocumentNode, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { createYoga, isAsyncIterable, mapAsyncIterator } from 'graphql-yoga';
import type { ConnectionInitMessage, Context, OperationResult, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  createGraphqlWsSession,
  createSessionResolver,
  parseJwtConfig,
  parseJwtConfigs,
  sessionOfRequest,
  useJwtSession,
  type JwtConfig,
  type Session,
  type SessionResolver,
} from '@svc-graphql/jwt-session';
import { createRemoteSchemaRegistry, useRemoteSchemas, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import { createMetadataService, useMetadataApi } from '@svc-graphql/metadata-api';
import { createAdminErrorMasking } from './http/admin-errors.js';
import { errorMessage, ServerOptionError } from './errors.js';
import { resolveSettings, type ResolvedSettings, type ServerSettings } from './settings.js';
import { openStore } from './store.js';
import { corsAnswerHeaders, createOriginPolicy, ownOrigins, useCors, type OriginPolicy } from './http/cors.js';
import { graphiqlOptions, renderGraphiqlPage, useGraphiqlAssets } from './http/graphiql.js';
import { createDirectLane, useDirectLaneHandover } from './http/direct-lane.js';
import { boundedParserCaches, createLimitedParse, useOperationLimits, useRequestBodyLimit } from './http/limits.js';
import { createLogger, type Logger, type ServerLogger } from './observability/logger.js';
import { assignRequestId, clientErrorAnswer, countRemoteCall, noteOperation, trackRequests, upgradeLog, useRequestTracking } from './http/request-log.js';
import {
  backdateExecution,
  countDirectAnswer,
  countWebSocketRefusal,
  countWebSocketResult,
  ServerMetrics,
  useMetrics,
  useMetricsEndpoint,
} from './observability/metrics.js';
import { useServiceRoutes } from './http/routes.js';
import { VERSION } from './version.js';

/**
 * The options of {@link createServer}: every setting of the settings table (settings.ts, where each
 * is documented with its default; the CLI's flags are the same settings), and what only a program
 * can give.
 */
export interface ServerOptions extends ServerSettings {
  /** Replaces the stderr logger (`logLevel` and `logFormat` are then ignored). */
  logger?: Logger;
  /** How long `close()` lets in-flight requests finish. @default 10000 */
  shutdownTimeoutMs?: number;
  /** Most operations running at once on one WebSocket connection. @default 100 */
  maxOperationsPerConnection?: number;
  /**
   * Answer operations served by remotes alone, without errors, before Yoga's request pipeline
   * (the same answers, less CPU per request). `false` sends every request through Yoga. Defaults
   * to `true` unless the environment variable `SVC_GRAPHQL_DIRECT_LANE` is `off`.
   */
  directLane?: boolean;
}

/** A listening svc-graphql server. */
export interface SvcGraphqlServer {
  /** `http://HOST:PORT` */
  readonly url: string;
  /** `ws://HOST:PORT/v1/graphql` */
  readonly wsUrl: string;
  readonly host: string;
  readonly port: number;
  /**
   * Graceful stop: no new connections, in-flight requests finish (up to `shutdownTimeoutMs`),
   * WebSockets close with 1001, background work stops and the store is closed.
   */
  close(): Promise<void>;
}

const GRAPHQL_PATH = '/v1/graphql';
const DEFAULT_MAX_OPERATIONS_PER_CONNECTION = 100;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * Builds the reference server (session, remote schemas and metadata API in one Yoga app over
 * HTTP and graphql-ws), loads the metadata and listens. Throws {@link ServerOptionError} for bad
 * configuration, before anything listens.
 */
export async function createServer(options: ServerOptions = {}): Promise<SvcGraphqlServer> {
  const settings = resolveSettings(options, (name, code, message, cause) => new ServerOptionError(name, code, message, { cause }));
  const logger = options.logger ?? createLogger(settings.logLevel, undefined, settings.logFormat);
  // Only counted when the http-log entries that show them are written.
  const { enabled } = logger as Partial<ServerLogger>;
  const countsRemoteCalls = typeof enabled !== 'function' || enabled.call(logger, 'info');
  const { host, port } = settings;
  const shutdownTimeoutMs = nonNegativeInteger('shutdownTimeoutMs', options.shutdownTimeoutMs, DEFAULT_SHUTDOWN_TIMEOUT_MS);
  const jwt = jwtOption(settings);
  const limits = {
    maxRequestBodySize: settings.maxRequestBodySize,
    maxQueryTokens: settings.maxQueryTokens,
    maxRemoteResponseSize: settings.maxRemoteResponseSize,
  };
  const maxOperationsPerConnection = positiveInteger(
    'maxOperationsPerConnection',
    options.maxOperationsPerConnection,
    DEFAULT_MAX_OPERATIONS_PER_CONNECTION,
  );
  const wsReadCookie = settings.wsReadCookie;
  // Known once listening (port 0 picks one).
  let selfOrigins: ReadonlySet<string> = new Set();
  const origins = createOriginPolicy({
    corsDomain: settings.corsDomain,
    disableCors: settings.disableCors,
    ownOrigins: () => selfOrigins,
  });
  const masking = createAdminErrorMasking();
  const metrics = settings.disableMetrics ? undefined : new ServerMetrics();

  let resolver: SessionResolver;
  try {
    resolver = createSessionResolver({
      ...(jwt !== undefined && { jwt }),
      ...(settings.adminSecret !== undefined && { adminSecret: settings.adminSecret }),
      ...(settings.unauthorizedRole !== undefined && { unauthorizedRole: settings.unauthorizedRole }),
      ...(metrics && {
        hooks: {
          onJwtVerification: (result: string) => metrics.countJwtVerification(result),
          onJwksFetch: (outcome: 'ok' | 'error') => metrics.countJwksFetch(outcome),
        },
      }),
      logger,
    });
  } catch (error) {
    throw new ServerOptionError(settings.jwtSecrets === undefined ? 'jwtSecret' : 'jwtSecrets', 'ERR_INVALID_OPTION', errorMessage(error), { cause: error });
  }

  const cleanups: Array<() => Promise<void> | void> = [() => resolver.dispose()];
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.warn('error while shutting down:', error);
      }
    }
    cleanups.length = 0;
  };

  try {
    const store = openStore(settings.databaseUrl, (message) => logger.warn(message));
    const registry: RemoteSchemaRegistry = createRemoteSchemaRegistry({
      logger,
      maxResponseBytes: limits.maxRemoteResponseSize,
      getSession: sessionOfContext,
      enableRemoteSchemaPermissions: settings.enableRemoteSchemaPermissions,
      ...((metrics || countsRemoteCalls) && {
        hooks: {
          onRemoteRequest: (event, context) => {
            // The `remote_calls` of the request's http-log entry.
            if (countsRemoteCalls) countRemoteCall(context);
            metrics?.countRemoteRequest(event.remoteSchema, event.outcome, event.durationSeconds);
          },
          ...(metrics && { onSchemaSwap: (event) => metrics.countSchemaSwap(event.remoteSchemas) }),
        },
      }),
    });
    cleanups.push(() => registry.dispose());
    const service = createMetadataService({
      registry,
      store,
      remoteSchemaPermissions: settings.enableRemoteSchemaPermissions,
      logger,
    });
    cleanups.push(() => service.close());
    metrics?.setMetadata({
      inconsistentObjects: () => service.inconsistentObjects().length,
      resourceVersion: () => service.resourceVersion(),
    });
    try {
      await service.init();
    } catch (error) {
      throw new ServerOptionError('databaseUrl', 'ERR_STORE_UNAVAILABLE', errorMessage(error), { cause: error });
    }

    const parserCaches = boundedParserCaches();
    const limitedParse = createLimitedParse({ maxTokens: limits.maxQueryTokens });
    const handover = useDirectLaneHandover({ onExecutionStarted: backdateExecution });
    const yoga = createYoga({
      graphqlEndpoint: GRAPHQL_PATH,
      landingPage: false,
      logging: logger,
      // The browser page: GraphiQL from the installed packages (no CDN), headers never stored.
      graphiql: graphiqlOptions(),
      renderGraphiQL: renderGraphiqlPage,
      // Our own CORS, body limit and error masking below (exact headers, answers and admin rule).
      cors: false,
      maxRequestBodySize: false,
      maskedErrors: masking.maskedErrors,
      parserAndValidationCache: parserCaches,
      plugins: [
        // First: counts requests that a later plugin answers in onRequest (401, 413).
        ...(metrics ? [useMetrics(metrics, GRAPHQL_PATH)] : []),
        // First: `context.requestId`, and the operation and role of the http-log entry.
        useRequestTracking(),
        useCors(origins),
        useGraphiqlAssets(GRAPHQL_PATH),
        useServiceRoutes({
          version: VERSION,
          health: () =>
            !service.isStoreReachable()
              ? 'WARN: metadata store unreachable'
              : service.isConsistent()
                ? 'OK'
                : 'WARN: inconsistent metadata',
        }),
        ...(metrics ? [useMetricsEndpoint(metrics, { metricsSecret: settings.metricsSecret, adminSecret: settings.adminSecret })] : []),
        useMetadataApi({
          service,
          registry,
          store,
          logger,
          // A session's isAdmin is its role being `admin` (only the admin role may change metadata).
          authenticate: (request: Request) => resolver.resolve(request.headers),
          // A page in a browser must not change the metadata of a server on its visitor's machine:
          // only the server's own pages and listed origins (`*` lists none) may send an Origin.
          isAllowedOrigin: (origin: string) => origins.isOwn(origin) || origins.isListed(origin),
        }),
        // A request the direct lane handed over keeps the session it resolved.
        handover.session,
        useJwtSession({ resolver }),
        useRequestBodyLimit(limits.maxRequestBodySize),
        useOperationLimits({ parse: limitedParse }),
        masking.plugin,
        useRemoteSchemas(registry),
        // After the remote schemas plugin: a handed-over operation gets the remotes' answer already made.
        handover.execution,
      ],
    });
    const directLane = options.directLane ?? process.env['SVC_GRAPHQL_DIRECT_LANE'] !== 'off';
    const handler = directLane
      ? createDirectLane(yoga, {
          graphqlPath: GRAPHQL_PATH,
          maxBodyBytes: limits.maxRequestBodySize,
          resolver,
          registry,
          documentCache: parserCaches.documentCache,
          errorCache: parserCaches.errorCache,
          parse: limitedParse,
          corsHeaders: (origin) => corsAnswerHeaders(origins, origin),
          onOperation: noteOperation,
          ...(metrics && { onAnswered: (type: 'query' | 'mutation', seconds: number) => countDirectAnswer(metrics, type, seconds) }),
          requestId: assignRequestId,
          onUnexpectedError: (error) => logger.error('the direct lane failed to answer a request:', error),
        })
      : yoga;

    // Every answer carries `x-request-id`; one http-log entry per request; the SERVER span of a
    // GraphQL request is active while it runs.
    const httpServer = createHttpServer(trackRequests(handler, { logger, graphqlPath: GRAPHQL_PATH, metadataPath: '/v1/metadata' }));
    // Messages over the body limit close the socket with 1009 before they are buffered whole.
    const wsServer = new WebSocketServer({ noServer: true, path: GRAPHQL_PATH, maxPayload: limits.maxRequestBodySize });
    // What Node's parser refuses is answered with `x-request-id` and logged too.
    httpServer.on('clientError', clientErrorAnswer(logger));
    // One http-log entry per upgrade request, when its handshake is answered.
    const logUpgrade = upgradeLog(logger);
    // The 101 answer carries the connection's `x-request-id` too (printable ASCII: safe in a header).
    wsServer.on('headers', (headers: string[], request: IncomingMessage) => {
      headers.push(`x-request-id: ${assignRequestId(request)}`);
      logUpgrade(request, 101);
    });
    httpServer.on('upgrade', (request: IncomingMessage, socket, head) => {
      // The connection's id (its latency starts here): `context.requestId` of its operations, and
      // sent to remotes.
      const requestId = assignRequestId(request);
      // A page of another origin must never act with its visitor's cookie (the browser sends it
      // with the upgrade whatever page opened the socket).
      if (!readsUpgradeCookie(request, origins, wsReadCookie)) delete request.headers.cookie;
      // A refused handshake carries it too (the 101 gets it from the 'headers' event).
      withRequestIdOnRefusal(socket, requestId, (status) => logUpgrade(request, status));
      // Refuses other paths and bad handshakes itself.
      wsServer.handleUpgrade(request, socket, head, (ws) => {
        // `ws` emits 'error' for what a client did wrong (a message over the limit, a bad frame)
        // and closes the socket itself (1009, 1002, …). graphql-ws would print each one to the
        // console as an internal error: a client could fill the server's logs at will.
        const emit = ws.emit.bind(ws);
        ws.emit = (event: string | symbol, ...args: unknown[]): boolean => {
          if (event === 'message' && isServerMessage(args[0])) {
            // graphql-ws takes a server's message from a client for its own fault (4500 and a
            // console line); it is the client's: 4400, as for any other invalid message.
            ws.close(4400, 'Invalid message received');
            return true;
          }
          if (event !== 'error') return emit(event, ...args);
          logger.debug('WebSocket closed for a protocol error of the client:', describeError(args[0]));
          return true;
        };
        metrics?.trackWebSocket(ws);
        wsServer.emit('connection', ws, request);
      });
    });
    const wsSession = createGraphqlWsSession(resolver);
    /**
     * onSubscribe's work for an operation that may start: the arguments to execute it with (its
     * root value carries `operation`, told when it has started), or the errors that answer it.
     */
    const prepareOperation = async (
      ctx: Context<ConnectionInitMessage['payload'], Extra>,
      payload: SubscribePayload,
      operation: StartingOperation,
    ): Promise<ExecutionArgs | readonly GraphQLError[]> => {
      const upgrade = ctx.extra.request;
      const headers = new Headers();
      for (const [name, value] of Object.entries(upgrade.headers)) {
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
      // The Host header stays in `headers`; the URL only has to be valid, whatever a client sends.
      // POST: every operation may run over the socket, mutations included (Yoga refuses
      // mutations of GET requests).
      const request = new Request(`http://localhost${GRAPHQL_PATH}`, { method: 'POST', headers });
      const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
        ...ctx,
        req: upgrade,
        socket: ctx.extra.socket,
        request,
        params: payload,
        session: wsSession.getSession(ctx),
      });
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
      const args: ExecutionArgs = {
        schema,
        document,
        operationName: payload.operationName ?? null,
        variableValues: payload.variables ?? null,
        contextValue: await contextFactory(),
        rootValue: { execute, subscribe, operation } as EnvelopedRoot,
      };
      return args;
    };
    /** Per connection, the operations between onSubscribe and their start, by id. */
    const starting = new WeakMap<object, Map<string, StartingOperation>>();
    useServer(
      {
        // Error texts stay out of close reasons.
        isProd: true,
        // `extensions.http` tells Yoga the HTTP status; a socket has none to show.
        onError: (_ctx, _id, _payload, errors) => errors.map(formatForSocket),
        onNext: (_ctx, _id, _payload, _args, result): FormattedExecutionResult | undefined => {
          if (!result.errors?.some((error) => error.extensions?.['http'] !== undefined)) return undefined;
          const formatted: FormattedExecutionResult = { errors: result.errors.map(formatForSocket) };
          if (result.data !== undefined) formatted.data = result.data;
          if (result.extensions !== undefined) formatted.extensions = result.extensions;
          return formatted;
        },
        onConnect: (ctx) => wsSession.onConnect(ctx),
        onClose: (ctx) => wsSession.onClose(ctx),
        execute: (args) => settle(args, countWebSocketResult(metrics, args, failAlone(() => (args.rootValue as EnvelopedRoot).execute(args), logger))),
        subscribe: (args) => settle(args, countWebSocketResult(metrics, args, failAlone(() => (args.rootValue as EnvelopedRoot).subscribe(args), logger))),
        onSubscribe: async (ctx, id, payload) => {
          // `ctx.subscriptions` holds this connection's operations in flight, this one's id included.
          if (Object.keys(ctx.subscriptions).filter((key) => key !== id).length >= maxOperationsPerConnection) {
            countWebSocketRefusal(metrics, undefined, undefined);
            return [
              new GraphQLError(`too many operations at once on this connection (at most ${maxOperationsPerConnection})`, {
                extensions: { code: 'validation-failed', path: '$' },
              }),
            ];
          }
          // An id the client completed while its operation was still starting, sent again: graphql-ws
          // would attach the first operation's stream to the new one's id once it starts, where
          // nothing ends it (a remote subscription held open for good). The new one is refused
          // until the first has started, and the first is ended as it starts.
          let startingIds = starting.get(ctx);
          if (startingIds === undefined) {
            startingIds = new Map();
            starting.set(ctx, startingIds);
          }
          const earlier = startingIds.get(id);
          if (earlier !== undefined) {
            earlier.superseded = true;
            countWebSocketRefusal(metrics, undefined, undefined);
            return [
              new GraphQLError(`an operation with id "${id}" is still starting; send it again once it has ended`, {
                extensions: { code: 'validation-failed', path: '$' },
              }),
            ];
          }
          const ids = startingIds;
          const state: StartingOperation = { superseded: false, started: () => ids.delete(id) };
          ids.set(id, state);
          let handedOn = false;
          try {
            const outcome = await prepareOperation(ctx, payload, state);
            handedOn = !Array.isArray(outcome);
            return outcome;
          } finally {
            if (!handedOn) ids.delete(id);
          }
        },
      },
      wsServer,
    );
    await listen(httpServer, host, port);
    const address = httpServer.address();
    const boundPort = typeof address === 'object' && address ? address.port : port;
    selfOrigins = ownOrigins(host, boundPort);
    const urlHost = host.includes(':') ? `[${host}]` : host;
    const url = `http://${urlHost}:${boundPort}`;
    logger.info(`serving GraphQL at ${url}${GRAPHQL_PATH} and metadata at ${url}/v1/metadata`);

    let closing: Promise<void> | undefined;
    return {
      url,
      wsUrl: `ws://${urlHost}:${boundPort}${GRAPHQL_PATH}`,
      host,
      port: boundPort,
      close() {
        closing ??= (async () => {
          logger.info('shutting down: finishing in-flight requests');
          const stopped = new Promise<void>((done) => httpServer.close(() => done()));
          // A keep-alive connection whose request finishes after close() would otherwise stay open
          // until its client lets go.
          httpServer.closeIdleConnections();
          const reaper = setInterval(() => httpServer.closeIdleConnections(), 50);
          for (const socket of wsServer.clients as Set<WebSocket>) socket.close(1001, 'Server shutting down');
          wsServer.close();
          let timer: NodeJS.Timeout | undefined;
          const timedOut = new Promise<'timeout'>((done) => {
            timer = setTimeout(() => done('timeout'), shutdownTimeoutMs);
          });
          if ((await Promise.race([stopped, timedOut])) === 'timeout') {
            logger.warn(`requests still running after ${shutdownTimeoutMs} ms; closing their connections`);
            httpServer.closeAllConnections();
            for (const socket of wsServer.clients as Set<WebSocket>) socket.terminate();
            await stopped;
          }
          clearTimeout(timer);
          clearInterval(reaper);
          await cleanUp();
          logger.info('stopped');
        })();
        return closing;
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/**
 * The session of a GraphQL context: graphql-ws contexts and built contexts carry it; an HTTP
 * request's is known from `onRequest` on, before its context is built (a role's schema is chosen
 * before validation).
 */
function sessionOfContext(context: unknown): { role: string; variables: Record<string, string>; isAdmin: boolean } | undefined {
  const holder = context as { session?: Session; request?: unknown } | null | undefined;
  // Yoga's Request may be whatwg-node's own class, not the global one.
  const request = holder?.request;
  const session = holder?.session ?? (typeof request === 'object' && request !== null ? sessionOfRequest(request as Request) : undefined);
  return session && { role: session.role, variables: session.variables, isAdmin: session.isAdmin };
}

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
  const asResult = (error: unknown): ExecutionResult => {
    if (error instanceof GraphQLError) return { errors: [error] };
    logger.error('a WebSocket operation failed:', error);
    return { errors: [new GraphQLError('Unexpected error.', { extensions: { code: 'unexpected' } })] };
  };
  try {
    const result = await run();
    // A subscription's stream may throw too (on its first event, for such a document).
    return isAsyncIterable(result) ? mapAsyncIterator(result, (value) => value, asResult) : result;
  } catch (error) {
    return asResult(error);
  }
}

function formatForSocket(error: GraphQLError): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (formatted.extensions === undefined || !('http' in formatted.extensions)) return formatted;
  const { http: _http, ...extensions } = formatted.extensions;
  const { extensions: _all, ...rest } = formatted;
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}

function listen(server: HttpServer, host: string, port: number): Promise<void> {
  return new Promise((done, fail) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const reason =
        error.code === 'EADDRINUSE'
          ? `${host}:${port} is already in use`
          : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
            ? `cannot listen on ${host}: ${error.code}`
            : `cannot listen on ${host}:${port}: ${error.message}`;
      fail(
        error.code === 'EADDRINUSE'
          ? new ServerOptionError('port', 'ERR_ADDRESS_IN_USE', reason, { cause: error })
          : new ServerOptionError('host', 'ERR_ADDRESS_UNAVAILABLE', reason, { cause: error }),
      );
    };
    const onListening = () => {
      server.off('error', onError);
      done();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * Whether a WebSocket upgrade's `Cookie` may authenticate it: always with `--ws-read-cookie`, when no
 * `Origin` is sent (not a browser), or when the `Origin` is listed (with `*`: the server's own).
 */
function readsUpgradeCookie(request: IncomingMessage, origins: OriginPolicy, always: boolean): boolean {
  if (always) return true;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  // With a list, only its origins: the server's own origin too must be listed to be trusted.
  return origins.anyOrigin ? origins.isOwn(origin) : origins.isListed(origin);
}

/**
 * Adds `x-request-id` to the answer `ws` writes when it refuses a handshake (another path, a bad
 * key or version): `ws` ends the socket with that answer, status line and headers in one string,
 * as the first thing on the socket (an accepted one is written as a 101, which gets the header from
 * the 'headers' event). Only the first write or end is looked at.
 */
function withRequestIdOnRefusal(socket: Duplex, requestId: string, onRefusal: (status: number) => void): void {
  const { write, end } = socket;
  const restore = () => {
    socket.write = write;
    socket.end = end;
  };
  const withId = (chunk: unknown): unknown => {
    if (typeof chunk !== 'string' || !chunk.startsWith('HTTP/1.1 ') || chunk.startsWith('HTTP/1.1 101')) return chunk;
    const status = Number(chunk.slice(9, 12));
    if (Number.isInteger(status)) onRefusal(status);
    const lineEnd = chunk.indexOf('\r\n');
    return lineEnd === -1 ? chunk : `${chunk.slice(0, lineEnd + 2)}x-request-id: ${requestId}\r\n${chunk.slice(lineEnd + 2)}`;
  };
  socket.write = function firstWrite(this: Duplex, chunk: unknown, ...rest: unknown[]): boolean {
    restore();
    return (write as (...args: unknown[]) => boolean).call(this, withId(chunk), ...rest);
  } as Duplex['write'];
  socket.end = function firstEnd(this: Duplex, chunk?: unknown, ...rest: unknown[]): Duplex {
    restore();
    return (end as (...args: unknown[]) => Duplex).call(this, withId(chunk), ...rest);
  } as Duplex['end'];
}

function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ServerOptionError(option, 'ERR_INVALID_OPTION', `expected a positive whole number, but got ${String(value)}`);
  }
  return value;
}

function nonNegativeInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ServerOptionError(option, 'ERR_INVALID_OPTION', `expected a whole number of at least 0, but got ${String(value)}`);
  }
  return value;
}

const SERVER_MESSAGE_TYPES = new Set(['connection_ack', 'next', 'error']);

/** A graphql-ws message only a server may send (a client's `ping`, `pong`, `subscribe`, … pass). */
function isServerMessage(data: unknown): boolean {
  let message: unknown;
  try {
    message = JSON.parse(String(data));
  } catch {
    return false;
  }
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' && SERVER_MESSAGE_TYPES.has(type);
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The JWT configuration of the session: `jwtSecret` alone as one configuration, or `jwtSecrets` as
 * one per issuer with `jwtSecret`, when given too, first. Errors name the setting at fault.
 */
function jwtOption(settings: ResolvedSettings): JwtConfig | readonly JwtConfig[] | undefined {
  let single: JwtConfig | undefined;
  if (settings.jwtSecret !== undefined) {
    try {
      single = parseJwtConfig(settings.jwtSecret);
    } catch (error) {
      throw new ServerOptionError('jwtSecret', 'ERR_INVALID_OPTION', errorMessage(error), { cause: error });
    }
  }
  if (settings.jwtSecrets === undefined) return single;
  try {
    const list = parseJwtConfigs(settings.jwtSecrets);
    return single === undefined ? list : parseJwtConfigs([single, ...list]);
  } catch (error) {
    throw new ServerOptionError('jwtSecrets', 'ERR_INVALID_OPTION', errorMessage(error), { cause: error });
  }
}
