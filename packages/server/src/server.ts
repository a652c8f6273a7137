import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { GraphQLError, type DocumentNode, type ExecutionArgs } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { OperationResult } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  createGraphqlWsSession,
  createSessionResolver,
  useJwtSession,
  type SessionResolver,
} from '@svc-graphql/jwt-session';
import { createRemoteSchemaRegistry, useRemoteSchemas, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import {
  createFileMetadataStore,
  createMetadataService,
  createPostgresMetadataStore,
  useMetadataApi,
  type MetadataStore,
} from '@svc-graphql/metadata-api';
import {
  DEFAULT_DATABASE_URL,
  JWT_NEEDS_ADMIN_SECRET,
  parseDatabaseUrl,
  type LogLevel,
  type SettingName,
  type StoreLocation,
} from './config.js';
import { useDepthLimit } from './depth-limit.js';
import { createLogger, type Logger } from './logger.js';
import { useServiceRoutes } from './routes.js';
import { VERSION } from './version.js';

export interface ServerOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** `0` picks any free port. @default 8080 */
  port?: number;
  /**
   * Where metadata lives: `file:PATH` (the embedded store) or `postgres://…` / `postgresql://…`.
   * @default 'file:./.svc-graphql/metadata.json'
   */
  databaseUrl?: string;
  /** Secures the endpoint; without it every request is admin (CONTRACT 3). */
  adminSecret?: string;
  /** The JWT configuration (SPEC 2.1) as JSON text or an object. Requires `adminSecret`. */
  jwtSecret?: string | object;
  /** Role of requests that bring neither a valid admin secret nor a token. */
  unauthorizedRole?: string;
  /** @default false */
  enableRemoteSchemaPermissions?: boolean;
  /** @default 'info' */
  logLevel?: LogLevel;
  /** Replaces the stderr logger (`logLevel` is then ignored). */
  logger?: Logger;
  /** How long `close()` lets in-flight requests finish. @default 10000 */
  shutdownTimeoutMs?: number;
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

/**
 * A problem with one option that keeps the server from starting. `option` is the option's name;
 * the CLI turns it into the flag or environment variable the user set.
 */
export class ServerOptionError extends Error {
  override readonly name = 'ServerOptionError';
  constructor(
    readonly option: SettingName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const GRAPHQL_PATH = '/v1/graphql';
/** Far beyond any real operation, far below what exhausts the stack. */
const MAX_OPERATION_DEPTH = 256;

/**
 * Builds the reference server (session, remote schemas and metadata API in one Yoga app over
 * HTTP and graphql-ws), loads the metadata and listens. Throws {@link ServerOptionError} for bad
 * configuration, before anything listens.
 */
export async function createServer(options: ServerOptions = {}): Promise<SvcGraphqlServer> {
  const logger = options.logger ?? createLogger(options.logLevel ?? 'info');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;

  if (options.jwtSecret !== undefined && options.adminSecret === undefined) {
    throw new ServerOptionError('jwtSecret', JWT_NEEDS_ADMIN_SECRET);
  }

  let resolver: SessionResolver;
  try {
    resolver = createSessionResolver({
      ...(options.jwtSecret !== undefined && { jwt: options.jwtSecret }),
      ...(options.adminSecret !== undefined && { adminSecret: options.adminSecret }),
      ...(options.unauthorizedRole !== undefined && { unauthorizedRole: options.unauthorizedRole }),
      logger,
    });
  } catch (error) {
    throw new ServerOptionError('jwtSecret', errorMessage(error), { cause: error });
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
    const store = openStore(options.databaseUrl ?? DEFAULT_DATABASE_URL);
    const registry: RemoteSchemaRegistry = createRemoteSchemaRegistry({ logger });
    cleanups.push(() => registry.dispose());
    const service = createMetadataService({
      registry,
      store,
      remoteSchemaPermissions: options.enableRemoteSchemaPermissions ?? false,
      logger,
    });
    cleanups.push(() => service.close());
    try {
      await service.init();
    } catch (error) {
      throw new ServerOptionError('databaseUrl', errorMessage(error), { cause: error });
    }

    const yoga = createYoga({
      graphqlEndpoint: GRAPHQL_PATH,
      landingPage: false,
      logging: logger,
      graphiql: { subscriptionsProtocol: 'WS' },
      plugins: [
        useServiceRoutes({ version: VERSION, isConsistent: () => service.isConsistent() }),
        useMetadataApi({
          service,
          registry,
          store,
          logger,
          // A session's isAdmin is its role being `admin` (CONTRACT 5: only the admin role).
          authenticate: (request: Request) => resolver.resolve(request.headers),
        }),
        useJwtSession({ resolver }),
        useDepthLimit(MAX_OPERATION_DEPTH),
        useRemoteSchemas(registry),
      ],
    });

    const httpServer = createHttpServer(yoga);
    const wsServer = new WebSocketServer({ server: httpServer, path: GRAPHQL_PATH });
    const wsSession = createGraphqlWsSession(resolver);
    useServer(
      {
        onConnect: (ctx) => wsSession.onConnect(ctx),
        onClose: (ctx) => wsSession.onClose(ctx),
        execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
        subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args),
        onSubscribe: async (ctx, _id, payload) => {
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
          const request = new Request(`http://localhost${GRAPHQL_PATH}`, { headers });
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
            if (error instanceof GraphQLError) return [error];
            throw error;
          }
          const errors = validate(schema, document);
          if (errors.length > 0) return errors;
          const args: ExecutionArgs = {
            schema,
            document,
            operationName: payload.operationName ?? null,
            variableValues: payload.variables ?? null,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe } as EnvelopedRoot,
          };
          return args;
        },
      },
      wsServer,
    );

    await listen(httpServer, host, port);
    const address = httpServer.address();
    const boundPort = typeof address === 'object' && address ? address.port : port;
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

interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => OperationResult;
  subscribe: (args: ExecutionArgs) => OperationResult;
}

function openStore(databaseUrl: string): MetadataStore {
  let location: StoreLocation;
  try {
    location = parseDatabaseUrl(databaseUrl);
  } catch (error) {
    throw new ServerOptionError('databaseUrl', errorMessage(error), { cause: error });
  }
  return location.kind === 'postgres'
    ? createPostgresMetadataStore({ connectionString: location.connectionString })
    : createFileMetadataStore({ path: location.path });
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
      fail(new ServerOptionError(error.code === 'EADDRINUSE' ? 'port' : 'host', reason, { cause: error }));
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

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
