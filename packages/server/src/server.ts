import { createServer as createHttpServer } from 'node:http';
import { makeServer } from 'graphql-ws';
import { createYoga } from 'graphql-yoga';
import { createGraphqlWsSession, useJwtSession } from '@svc-graphql/jwt-session';
import { useMetadataApi } from '@svc-graphql/metadata-api';
import { useRemoteSchemas } from '@svc-graphql/remote-schemas';
import { ServerOptionError } from './errors.js';
import { createAdminErrorMasking } from './http/admin-errors.js';
import { loadConsole, useConsole } from './http/console.js';
import { corsAnswerHeaders, createOriginPolicy, ownOrigins, useCors } from './http/cors.js';
import { createDirectLane, handedOverSession, useDirectLaneHandover } from './http/direct-lane.js';
import { graphiqlOptions, renderGraphiqlPage, useGraphiqlAssets } from './http/graphiql.js';
import {
  boundedParserCaches,
  cachedDocuments,
  createLimitedParse,
  useOperationLimits,
  useRequestBodyLimit,
  useRequestParameterJson,
  useUnsupportedMediaType,
} from './http/limits.js';
import { useBatchConcurrency } from './http/batch-concurrency.js';
import { clientErrorAnswer, noteOperation, remoteCallCounter, trackRequests, upgradeLog, useRequestTracking } from './http/request-log.js';
import { useServiceRoutes } from './http/routes.js';
import { useConfigRoute } from './http/config-route.js';
import { useSessionRoute } from './http/session-route.js';
import { guardedRoute } from './http/guarded-route.js';
import { useHasuraErrorCodes, useKnownOperationTypes, useThrownValidationErrors } from './http/validation-errors.js';
import { Cleanups, listen, shutDown } from './lifecycle.js';
import { createLockdown } from './lockdown/enforce.js';
import { useLockdown, useTimeLimit } from './lockdown/plugin.js';
import { OperationSignals } from './lockdown/time-limit.js';
import { healthOf, openMetadata } from './metadata.js';
import { createLogger, type Logger, type ServerLogger } from './observability/logger.js';
import { ServerMetrics } from './observability/metrics.js';
import { backdateExecution, countDirectAnswer, useMetrics, useMetricsEndpoint } from './observability/metrics-plugin.js';
import { RequestRecords } from './request-record.js';
import { createServerSessionResolver, useSessionRecord } from './session.js';
import { resolveSettings, type ServerSettings } from './settings.js';
import { VERSION } from './version.js';
import { serveGraphqlWs } from './ws/graphql-ws.js';
import { createSubscriptionLane } from './ws/lane.js';
import { createLaneOperations } from './ws/lane-operations.js';
import { graphqlWsHooks, plainHeadersOf } from './ws/operations.js';
import { acceptUpgrades } from './ws/upgrade.js';

/**
 * The options of {@link createServer}: every setting of the settings table (settings.ts, where each
 * is documented with its default; the CLI's flags are the same settings), and a logger.
 */
export interface ServerOptions extends ServerSettings {
  /** Replaces the stderr logger (`logLevel` and `logFormat` are then ignored). */
  logger?: Logger;
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
const METADATA_PATH = '/v1/metadata';

/**
 * Builds the reference server (session, remote schemas and metadata API in one Yoga app over
 * HTTP and graphql-ws), loads the metadata and listens. Throws {@link ServerOptionError} for bad
 * configuration, before anything listens.
 */
export async function createServer(options: ServerOptions = {}): Promise<SvcGraphqlServer> {
  const settings = resolveSettings(options, (name, code, message, cause) => new ServerOptionError(name, code, message, { cause }));
  const logger = options.logger ?? createLogger(settings.logLevel, undefined, settings.logFormat);
  // Remote calls are counted only when the http-log entries that show them are written.
  const { enabled } = logger as Partial<ServerLogger>;
  const countsRemoteCalls = typeof enabled !== 'function' || enabled.call(logger, 'info');
  const { host, port } = settings;
  // The server's own origins are known once it listens (port 0 picks one).
  let selfOrigins: ReadonlySet<string> = new Set();
  const origins = createOriginPolicy({ corsDomain: settings.corsDomain, disableCors: settings.disableCors, ownOrigins: () => selfOrigins });
  const metrics = settings.disableMetrics ? undefined : new ServerMetrics();
  const resolver = createServerSessionResolver(settings, logger, metrics);
  const cleanups = new Cleanups(logger);
  cleanups.add(() => resolver.dispose(), 'stopping the JWKS refresh');
  // One record per request, for every part of the server (request log, metrics, session, lane).
  const records = new RequestRecords();
  // The abort signal of each operation under a time limit, where its remote calls find it.
  const signals = new OperationSignals();

  try {
    const { store, registry, service } = await openMetadata(settings, {
      logger,
      metrics,
      records,
      signals,
      onRemoteCall: countsRemoteCalls ? remoteCallCounter(records) : undefined,
      cleanups,
    });
    const lockdown = createLockdown({
      document: () => service.document(),
      onDocumentChange: (listener) => service.onDocumentChange(listener),
      enableAllowlist: settings.enableAllowlist,
      trustProxy: settings.trustProxy,
      rateLimitRedisUrl: settings.rateLimitRedisUrl,
      rateLimitKeyPrefix: settings.rateLimitKeyPrefix,
      logger,
      ...(metrics && { onRejected: (reason) => metrics.countRejectedOperation(reason) }),
    });
    cleanups.add(() => lockdown.dispose(), 'closing the rate limit store');
    // The console's build, read once (`enableConsole`); a missing build stops the start.
    const consoleFiles = settings.enableConsole ? await loadConsole(settings.consoleRoot) : undefined;
    const parserCaches = boundedParserCaches();
    const limitedParse = createLimitedParse({ maxTokens: settings.maxQueryTokens });
    const masking = createAdminErrorMasking();
    // Takes the session the direct lane resolved for a request it handed over, else resolves it.
    const jwt = useJwtSession({ resolver, resolvedSession: handedOverSession(records) });

    // The plugins in the order their hooks run; a plugin's place is part of what it does.
    const plugins = [
      // 1. Metrics first: a request that a later plugin answers in onRequest (401, 413) still counts.
      ...(metrics ? [useMetrics(metrics, GRAPHQL_PATH, records)] : []),
      // 2. `context.requestId`, and the operation and role of the http-log entry, for every request below.
      useRequestTracking(records),
      // 3. CORS before any route: preflights are answered here, and every answer below gets its headers.
      useCors(origins),
      // 4. Routes answered before any authentication: GraphiQL's files, the console, /v1/session
      //    (which resolves the caller's own session itself), /healthz, /v1/version, /v1/metrics.
      //    A route that throws answers a masked 500, never its stack.
      ...[
        useGraphiqlAssets(GRAPHQL_PATH),
        ...(consoleFiles ? [useConsole(consoleFiles)] : []),
        useSessionRoute({ resolve: (headers) => resolver.resolve(headers), logger }),
        useConfigRoute({ resolve: (headers) => resolver.resolve(headers), logger, version: VERSION, settings }),
        useServiceRoutes({ version: VERSION, health: () => healthOf(service, lockdown.warning()) }),
        ...(metrics ? [useMetricsEndpoint(metrics, { metricsSecret: settings.metricsSecret, adminSecret: settings.adminSecret })] : []),
      ].map((route) => guardedRoute(route, logger)),
      // 5. /v1/metadata authenticates on its own (admin only) and never reaches GraphQL.
      useMetadataApi({
        service,
        registry,
        store,
        logger,
        maxBodyBytes: settings.maxMetadataBodySize,
        // A session's isAdmin is its role being `admin` (only the admin role may change metadata).
        authenticate: (request: Request) => resolver.resolve(request.headers),
        // A page in a browser must not change the metadata of a server on its visitor's machine:
        // only the server's own pages and listed origins (`*` lists none) may send an Origin.
        isAllowedOrigin: (origin: string) => origins.isOwn(origin) || origins.isListed(origin),
      }),
      // 6. The session, before the body is read: a refused request costs no parsing. Then onto the
      //    request's record, where the registry (step 9) and the http-log entry find it.
      jwt,
      useSessionRecord(records, jwt),
      // 7. Then the body, bounded, and the document, bounded (tokens, depth) as it is parsed.
      useRequestBodyLimit(settings.maxRequestBodySize),
      useUnsupportedMediaType(),
      useRequestParameterJson(),
      useOperationLimits({ parse: limitedParse }),
      //    graphql-js 16 throws from validation for a few documents instead of reporting: reported.
      useThrownValidationErrors(),
      useKnownOperationTypes(),
      useHasuraErrorCodes(),
      // 8. Marks an admin's errors as they leave execution, before Yoga's masking (which runs after).
      masking.plugin,
      //    The rate limit of each operation (of a batch too) before its document is parsed, then the
      //    allow list, introspection, depth and nodes before it is validated: before any remote is called.
      useLockdown(lockdown, records, { documentOf: cachedDocuments(parserCaches, limitedParse) }),
      // 9. The role's schema (chosen in onEnveloped, from the session above) and the remotes' execution.
      useRemoteSchemas(registry),
      // 10. After it: an operation the direct lane already ran gets the remotes' answer it has.
      useDirectLaneHandover(records, { onExecutionStarted: backdateExecution }),
      // 11. The role's time limit around the execution the plugins above chose.
      useTimeLimit(lockdown, records, signals),
      // 12. Last: the operations of one batch take their turn before any of that starts.
      useBatchConcurrency(),
    ];
    const yoga = createYoga({
      graphqlEndpoint: GRAPHQL_PATH,
      landingPage: false,
      logging: logger,
      // The browser page: GraphiQL from the installed packages (no CDN), headers never stored.
      graphiql: graphiqlOptions(),
      renderGraphiQL: renderGraphiqlPage,
      // Our own CORS, body limit and error masking (exact headers, answers and admin rule).
      cors: false,
      maxRequestBodySize: false,
      // Hasura's batches: a JSON array of operations (bounded by the body limit and the roles' batch limits).
      batching: { limit: Number.MAX_SAFE_INTEGER },
      maskedErrors: masking.maskedErrors,
      parserAndValidationCache: parserCaches,
      plugins,
    });

    const handler = settings.directLane
      ? createDirectLane(yoga, {
          records,
          graphqlPath: GRAPHQL_PATH,
          maxBodyBytes: settings.maxRequestBodySize,
          resolver,
          registry,
          documentCache: parserCaches.documentCache,
          errorCache: parserCaches.errorCache,
          parse: limitedParse,
          corsHeaders: (origin) => corsAnswerHeaders(origins, origin),
          onOperation: noteOperation,
          lockdown,
          ...(metrics && { onAnswered: (type: 'query' | 'mutation', seconds: number) => countDirectAnswer(metrics, type, seconds) }),
          onUnexpectedError: (error) => logger.error('the direct lane failed to answer a request:', error),
        })
      : yoga;
    // Every answer carries `x-request-id`; one http-log entry per request; the SERVER span of a
    // GraphQL request is active while it runs.
    const httpServer = createHttpServer(trackRequests(handler, { records, logger, graphqlPath: GRAPHQL_PATH, metadataPath: METADATA_PATH }));
    // What Node's parser refuses is answered with `x-request-id` and logged too.
    httpServer.on('clientError', clientErrorAnswer(logger, records));
    const webSockets = acceptUpgrades(httpServer, {
      path: GRAPHQL_PATH,
      maxPayload: settings.maxRequestBodySize,
      origins,
      readCookieAlways: settings.wsReadCookie,
      requestId: (request) => records.open(request).id,
      onAnswered: upgradeLog(logger, records),
    });
    const wsSession = createGraphqlWsSession(resolver, { logger });
    // The graphql-ws lane: subscriptions one remote answers as they are sent run beside graphql-ws.
    const laneOperations = settings.directLane
      ? createLaneOperations({
          lane: createSubscriptionLane({ registry, documentOf: cachedDocuments(parserCaches, limitedParse) }),
          records,
          session: wsSession,
          maxOperationsPerConnection: settings.maxOperationsPerConnection,
          metrics,
          logger,
          lockdown,
          headersOf: plainHeadersOf(),
        })
      : undefined;
    const graphqlWs = makeServer(
      graphqlWsHooks({
        records,
        getEnveloped: yoga.getEnveloped,
        session: wsSession,
        graphqlPath: GRAPHQL_PATH,
        maxOperationsPerConnection: settings.maxOperationsPerConnection,
        metrics,
        logger,
        lockdown,
        ...(laneOperations && { laneOperations }),
      }),
    );
    serveGraphqlWs(webSockets.server, graphqlWs, {
      logger,
      ...(laneOperations && { intercept: laneOperations.intercept }),
      onUpgradeKept: (request, kept) => records.share(request, kept),
      ...(metrics && {
        onSocket: () => metrics.webSocketOpened(),
        onSocketClosed: () => metrics.webSocketClosed(),
        onSlowClient: () => metrics.countSlowClientClose(),
      }),
    });

    await listen(httpServer, host, port);
    const address = httpServer.address();
    const boundPort = typeof address === 'object' && address ? address.port : port;
    selfOrigins = ownOrigins(host, boundPort);
    const urlHost = host.includes(':') ? `[${host}]` : host;
    const url = `http://${urlHost}:${boundPort}`;
    logger.info(`serving GraphQL at ${url}${GRAPHQL_PATH} and metadata at ${url}${METADATA_PATH}`);
    let closing: Promise<void> | undefined;
    return {
      url,
      wsUrl: `ws://${urlHost}:${boundPort}${GRAPHQL_PATH}`,
      host,
      port: boundPort,
      close: () => (closing ??= shutDown(httpServer, webSockets, cleanups, settings.shutdownTimeoutMs, logger)),
    };
  } catch (error) {
    await cleanups.run();
    throw error;
  }
}
