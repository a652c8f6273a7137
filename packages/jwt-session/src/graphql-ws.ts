import { SessionError } from './errors.js';
import type { SessionResolver } from './resolver.js';
import type { Session } from './session.js';

/** graphql-ws closes a connection it refuses with this code. */
export const FORBIDDEN_CLOSE_CODE = 4403;
/** RFC 6455 5.5: a close frame's reason fits in 123 bytes of UTF-8. */
const MAX_CLOSE_REASON_BYTES = 123;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The parts of a graphql-ws `Context` the helper reads: `connectionParams` (the `connection_init`
 * payload) and, with `graphql-ws/use/ws`, `extra.socket` and `extra.request` (the upgrade request).
 */
export interface GraphqlWsContextLike {
  readonly connectionParams?: Readonly<Record<string, unknown>> | undefined;
  readonly extra?: unknown;
}

/** Options of {@link createGraphqlWsSession}. */
export interface GraphqlWsSessionOptions {
  /**
   * Where refusals and expiry closes are reported (debug lines).
   * @default none: they are not reported
   */
  logger?: { debug(...args: unknown[]): void };
}

/** What a graphql-ws server needs to authenticate connections; see {@link createGraphqlWsSession}. */
export interface GraphqlWsSession {
  /**
   * graphql-ws `onConnect`: resolves the session from `connection_init` `payload.headers` (names
   * case-insensitive), over the upgrade request's headers. On failure closes the socket with 4403
   * and `Forbidden: <message>` (at most 123 bytes) and returns `false`.
   */
  onConnect(ctx: GraphqlWsContextLike): Promise<boolean>;
  /** graphql-ws `onClose`: clears the expiry timer of the connection. */
  onClose(ctx: GraphqlWsContextLike): void;
  /** The session of an acknowledged connection; `undefined` once its token expired. */
  getSession(ctx: GraphqlWsContextLike): Session | undefined;
}

interface Connection {
  readonly session: Session;
  /** When the connection must be closed (ms since epoch), if its token expires. */
  readonly closeAt: number | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Authentication for graphql-ws: the token is checked once at
 * `connection_init` and the connection is closed with 4403 `Forbidden: JWTExpired` when it expires
 * (plus `allowed_skew`). Pass `getSession(ctx)` into the Yoga context as `session`; `useJwtSession`
 * then uses it instead of reading headers again.
 *
 * @example
 * const ws = createGraphqlWsSession(resolver);
 * useServer({ onConnect: ws.onConnect, onClose: ws.onClose,
 *   onSubscribe: (ctx, _id, params) => { … yoga.getEnveloped({ ...ctx, params, session: ws.getSession(ctx) }) … } }, wsServer);
 */
const SILENT = { debug(): void {} };

export function createGraphqlWsSession(resolver: SessionResolver, options: GraphqlWsSessionOptions = {}): GraphqlWsSession {
  const logger = options.logger ?? SILENT;
  const connections = new WeakMap<GraphqlWsContextLike, Connection>();

  function arm(ctx: GraphqlWsContextLike, connection: Connection): void {
    if (connection.closeAt === undefined) return;
    const left = connection.closeAt - Date.now();
    connection.timer = setTimeout(
      () => {
        connection.timer = undefined;
        if (connection.closeAt !== undefined && Date.now() < connection.closeAt) {
          arm(ctx, connection);
          return;
        }
        logger.debug('jwt-session: closing a graphql-ws connection whose token expired');
        closeSocket(ctx, 'Forbidden: JWTExpired');
      },
      Math.max(0, Math.min(left, MAX_TIMER_MS)),
    );
    connection.timer.unref?.();
  }

  return {
    async onConnect(ctx) {
      let session: Session;
      try {
        session = await resolver.resolve(connectionHeaders(ctx));
      } catch (error) {
        const message = error instanceof SessionError ? error.message : 'internal error';
        if (!(error instanceof SessionError)) logger.debug('jwt-session: graphql-ws authentication failed', error);
        closeSocket(ctx, truncateUtf8(`Forbidden: ${message}`, MAX_CLOSE_REASON_BYTES));
        return false;
      }
      // The leeway of the configuration that verified this token (several issuers may differ).
      const skewMs = (resolver.allowedSkewOf?.(session) ?? resolver.allowedSkew ?? 0) * 1000;
      const closeAt = session.expiresAt === undefined ? undefined : session.expiresAt.getTime() + skewMs;
      const connection: Connection = { session, closeAt, timer: undefined };
      connections.set(ctx, connection);
      arm(ctx, connection);
      return true;
    },
    onClose(ctx) {
      const connection = connections.get(ctx);
      if (connection?.timer !== undefined) clearTimeout(connection.timer);
      connections.delete(ctx);
    },
    getSession(ctx) {
      const connection = connections.get(ctx);
      if (connection === undefined) return undefined;
      if (connection.closeAt !== undefined && Date.now() >= connection.closeAt) return undefined;
      return connection.session;
    },
  };
}

function closeSocket(ctx: GraphqlWsContextLike, reason: string): void {
  const socket = (ctx.extra as { socket?: { close?: (code: number, reason: string) => void } } | undefined)?.socket;
  // graphql-ws closes refused connections with a bare 'Forbidden'; closing first keeps our reason.
  if (typeof socket?.close === 'function') socket.close(FORBIDDEN_CLOSE_CODE, reason);
}

/** Upgrade request headers, overridden by `connection_init` `payload.headers`, names lower-cased. */
function connectionHeaders(ctx: GraphqlWsContextLike): Record<string, string> {
  const headers: Record<string, string> = {};
  const upgrade = (ctx.extra as { request?: { headers?: unknown } } | undefined)?.request?.headers;
  copyHeaders(upgrade, headers);
  const payload = ctx.connectionParams?.['headers'];
  copyHeaders(payload, headers);
  return headers;
}

function copyHeaders(source: unknown, target: Record<string, string>): void {
  if (typeof source !== 'object' || source === null) return;
  const entries =
    typeof (source as Headers).entries === 'function' && typeof (source as Headers).get === 'function'
      ? [...(source as Headers).entries()]
      : Object.entries(source as Record<string, unknown>);
  for (const [name, value] of entries) {
    if (typeof value === 'string') target[name.toLowerCase()] = value;
    else if (Array.isArray(value)) target[name.toLowerCase()] = value.filter((v) => typeof v === 'string').join(', ');
  }
}

/** Cuts `text` to at most `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = 0;
  let out = '';
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    out += char;
  }
  return out;
}
