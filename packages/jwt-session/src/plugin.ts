import type { ExecutionResult } from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { JwtVerificationError, SessionError, sessionErrorFromToken } from './errors.js';
import { defaultLogger, RESOLVER_OPTION_KEYS, refuseUnknownOptions, type JwtSessionOptions, type Logger } from './options.js';
import type { HeadersInput } from './request-headers.js';
import { createSessionResolver, type SessionResolver } from './resolver.js';
import type { Session } from './session.js';
import { endStreamAt } from './subscription-expiry.js';

/**
 * The rendering of a {@link SessionError} as an HTTP answer: its status and headers, and the body
 * `{"errors":[{"message":M,"extensions":{"code":C,"path":"$"}}]}`.
 */
export function sessionErrorResponse(error: SessionError, ResponseCtor: typeof Response = Response): Response {
  return new ResponseCtor(JSON.stringify(error.toJSON()), {
    status: error.status,
    headers: { 'Content-Type': 'application/json', ...error.headers },
  });
}

function isSession(value: unknown): value is Session {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  const variables = s['variables'];
  return typeof s['role'] === 'string' && typeof s['isAdmin'] === 'boolean' && typeof variables === 'object' && variables !== null && !Array.isArray(variables);
}

/**
 * The last event of an HTTP subscription whose token expired: the body an expired token gets as a
 * request, `{"errors":[{"message":"Could not verify JWT: JWTExpired","extensions":{"code":"invalid-jwt","path":"$"}}]}`,
 * so a client refreshes its token on it as it would after a 401. A stream has no status or headers
 * to carry, hence only `code` and `path` in `extensions`.
 */
function expiredEvent(): ExecutionResult {
  const error = sessionErrorFromToken(new JwtVerificationError('JWTExpired'));
  return { errors: [createGraphQLError(error.message, { extensions: { code: error.code, path: '$' } })] };
}

/** Finds request headers in contexts built by other transports (graphql-ws, plain Envelop). */
function headersOf(context: Record<string, unknown>): HeadersInput | undefined {
  for (const holder of [context['request'], context['req'], (context['extra'] as Record<string, unknown> | undefined)?.['request']]) {
    const headers = (holder as { headers?: unknown } | undefined)?.headers;
    if (typeof headers === 'object' && headers !== null) return headers as HeadersInput;
  }
  return undefined;
}

/** A resolver or host answered something that is not a session. */
class NotASessionError extends Error {
  constructor() {
    super('Unexpected error.');
  }
}

const UNEXPECTED = { errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected', path: '$' } }] };

/** Options of {@link useJwtSession} beyond those of the session resolver. */
export interface JwtSessionPluginOptions {
  /**
   * The outcome of a session its host already resolved for an HTTP request, with the same
   * resolver, before the request reached Yoga (the reference server answers some requests in its
   * own `node:http` handler): the plugin takes it as if it had resolved it (no second
   * verification, no second `onJwtVerification`) and answers a {@link SessionError} as it answers
   * its own. Called in `onRequest` for each request to the GraphQL endpoint; `undefined` lets the
   * plugin resolve the request itself.
   */
  resolvedSession?: (request: Request, serverContext: object) => Session | SessionError | undefined;
}

/** What {@link useJwtSession} returns: the plugin, and the sessions it resolved. */
export interface JwtSessionPlugin extends Plugin<{ session: Session }> {
  /**
   * The session this plugin resolved for an HTTP request, from its `onRequest` on: for what is
   * chosen per session before the GraphQL context is built (a schema per role is chosen before
   * parsing and validation). `undefined` for a request this plugin did not resolve (one of
   * another plugin or app, a graphql-ws operation, one refused).
   */
  sessionOf(request: Request): Session | undefined;
}

/**
 * The Yoga/Envelop plugin: authenticates every GraphQL request and puts `context.session`.
 *
 * Over HTTP it resolves the session in `onRequest` for the GraphQL endpoint and answers failures
 * itself (status, JSON body and headers, see {@link sessionErrorResponse}), so no parsing or execution happens for a
 * rejected request. When the context already carries a `session` (the server sets one for
 * graphql-ws operations from {@link createGraphqlWsSession}), that session is used as is. Any other
 * context is resolved from the headers it carries (`request`, `req` or `extra.request`).
 *
 * An HTTP subscription (Server-Sent Events or multipart) of a session whose token expires ends
 * at that time plus `allowed_skew`, with a last event carrying the `JWTExpired` error, and the
 * source of its events is returned. graphql-ws connections are closed at expiry by
 * {@link createGraphqlWsSession} instead and are not touched here.
 *
 * Pass `{ resolver }` to share one resolver (and its JWKS cache) with the WebSocket helper; the
 * plugin then leaves disposing it to the caller.
 *
 * The sessions it resolves are its own: two plugins (in one app or two, from one copy of this
 * package or two) never see each other's. Read them with {@link JwtSessionPlugin.sessionOf}.
 */
export function useJwtSession(
  options: (JwtSessionOptions | { resolver: SessionResolver }) & JwtSessionPluginOptions,
): JwtSessionPlugin {
  if (typeof options !== 'object' || options === null) throw new TypeError('jwt-session: "options" must be an object');
  refuseUnknownOptions(options, [...RESOLVER_OPTION_KEYS, 'resolver', 'resolvedSession']);
  // Options are read by name, whatever object holds them (a class with getters, a prototype, a
  // Proxy): a copy by spreading would keep only own enumerable keys and could lose `jwt`.
  const { resolvedSession } = options;
  if (resolvedSession !== undefined && typeof resolvedSession !== 'function') throw new TypeError('jwt-session: "resolvedSession" must be a function');
  const given = (options as { resolver?: unknown }).resolver;
  const shared = given !== undefined || 'resolver' in options;
  // Without a logger of its own, the plugin reports through Yoga's logger once Yoga is up.
  let logTo: Logger = defaultLogger;
  const logger: Logger = {
    debug: (...args) => logTo.debug(...args),
    info: (...args) => logTo.info(...args),
    warn: (...args) => logTo.warn(...args),
    error: (...args) => logTo.error(...args),
  };
  let resolver: SessionResolver;
  if (shared) {
    if (typeof (given as SessionResolver | undefined)?.resolve !== 'function') throw new TypeError('jwt-session: "resolver" must be a resolver made by createSessionResolver');
    const alongside = RESOLVER_OPTION_KEYS.filter((key) => key in options);
    if (alongside.length > 0) throw new TypeError(`jwt-session: "resolver" is given with ${alongside.map((key) => `"${key}"`).join(', ')}: give the resolver its options instead`);
    resolver = given as SessionResolver;
  } else {
    const resolverOptions: Record<string, unknown> = {};
    for (const key of RESOLVER_OPTION_KEYS) {
      // Read by name: a Proxy may answer `get` without answering `has`.
      const value = (options as Record<string, unknown>)[key];
      if (value !== undefined || key in options) resolverOptions[key] = value;
    }
    resolverOptions['logger'] ??= logger;
    resolver = createSessionResolver(resolverOptions as JwtSessionOptions);
  }
  /**
   * A session from the resolver or the host, checked: anything else fails the request with an
   * unexpected error (never an open door), said in the log and not to the client.
   */
  const checked = (session: unknown): Session => {
    if (isSession(session)) return session;
    logger.error('jwt-session: the resolver gave something that is not a session ({ role, variables, isAdmin }); the request is refused');
    throw new NotASessionError();
  };
  /** The sessions this plugin resolved (or was handed), by HTTP request. */
  const sessions = new WeakMap<Request, Session>();
  let isGraphQLRequest: (url: URL) => boolean = () => true;

  return {
    onYogaInit({ yoga }) {
      logTo = yoga.logger;
      const endpoint = yoga.graphqlEndpoint;
      let pattern: { test(input: URL): boolean } | undefined;
      try {
        pattern = new yoga.fetchAPI.URLPattern({ pathname: endpoint });
      } catch {
        pattern = undefined;
      }
      // Only the GraphQL endpoint is ours: health checks and other plugins' routes pass untouched.
      isGraphQLRequest = (url) =>
        url.pathname === endpoint || url.pathname === `${endpoint}/` || pattern?.test(url) === true;
    },
    sessionOf: (request) => sessions.get(request),
    async onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      if (request.method === 'OPTIONS' || !isGraphQLRequest(url)) return;
      try {
        const outcome = resolvedSession?.(request, serverContext);
        if (outcome instanceof SessionError) {
          endResponse(sessionErrorResponse(outcome, fetchAPI.Response));
          return;
        }
        sessions.set(request, checked(outcome ?? (await resolver.resolve(request.headers))));
      } catch (error) {
        if (!(error instanceof SessionError)) {
          // A resolver or host that failed (or answered no session): nothing of it reaches the client.
          if (!(error instanceof NotASessionError)) logger.error('jwt-session: resolving the session failed; the request is refused:', error);
          endResponse(new fetchAPI.Response(JSON.stringify(UNEXPECTED), { status: 500, headers: { 'Content-Type': 'application/json' } }));
          return;
        }
        endResponse(sessionErrorResponse(error, fetchAPI.Response));
      }
    },
    onContextBuilding({ context, extendContext }) {
      const ctx = context as unknown as Record<string, unknown>;
      const request = ctx['request'];
      const resolved = request instanceof Object ? sessions.get(request as Request) : undefined;
      if (resolved !== undefined) {
        extendContext({ session: resolved });
        return;
      }
      if (isSession(ctx['session'])) return;
      return resolver.resolve(headersOf(ctx) ?? {}).then(
        (session) => extendContext({ session: checked(session) }),
        (error: unknown) => {
          if (!(error instanceof SessionError)) {
            if (!(error instanceof NotASessionError)) logger.error('jwt-session: resolving the session failed; the request is refused:', error);
            throw createGraphQLError('Unexpected error.', { extensions: { code: 'unexpected', path: '$' } });
          }
          throw createGraphQLError(error.message, {
            extensions: { code: error.code, path: '$', http: { status: error.status, headers: error.headers } },
          });
        },
      );
    },
    onSubscribe({ args }) {
      // Only sessions this plugin resolved from an HTTP request: a graphql-ws operation brings its
      // session in the context, and its socket is closed at expiry by the WebSocket helper.
      const session = sessions.get(args.contextValue.request);
      const expiresAt = session?.expiresAt;
      if (session === undefined || expiresAt === undefined) return;
      const skew = resolver.allowedSkewOf?.(session) ?? resolver.allowedSkew ?? 0;
      const endAt = expiresAt.getTime() + skew * 1000;
      return {
        onSubscribeResult({ result, setResult }) {
          // A single result (the subscription failed to start) has nothing left to end.
          if (isAsyncIterable(result)) setResult(endStreamAt(result, endAt, expiredEvent));
        },
      };
    },
    onDispose() {
      if (!shared) resolver.dispose();
    },
  };
}
