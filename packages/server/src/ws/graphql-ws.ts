import type { IncomingMessage } from 'node:http';
import { CloseCode, MessageType, type Server } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../observability/logger.js';
import type { ClientRequest } from '../request-record.js';

/**
 * The graphql-ws transport over `ws` sockets: graphql-ws's protocol server (`makeServer`) given the
 * sockets a {@link WebSocketServer} accepts, as graphql-ws's own `use/ws` adapter does, with three
 * differences a public server needs:
 *
 * - A socket error is the client's doing (`ws` reports a message over `maxPayload`, a bad frame or
 *   a bad UTF-8 text, and closes the socket itself with 1009, 1002 or 1007): logged at debug, never
 *   printed to the console, so a client cannot fill the server's logs.
 * - A message only a server may send (`connection_ack`, `next`, `error`) coming from a client is
 *   the client's fault: closed with 4400 `Invalid message received`, as graphql-ws closes any
 *   other invalid message (it would take it for its own failure: 4500).
 * - A failure of the server's own hooks closes with 4500 `Internal server error`, logged as an
 *   error, with no detail in the close reason.
 *
 * Sockets are pinged every `keepAliveMs` and terminated when the pong does not come back within as
 * long (the `use/ws` default, 12 seconds), by one timer for all of them rather than one per socket.
 *
 * Backpressure: a message is handed to the socket without waiting for it to be flushed, and a
 * socket that still has more than {@link MAX_WAITING_BYTES} waiting when the next message comes
 * (a client that stopped reading) is closed with 1013 `Try Again Later`; its operations end at once
 * (their upstream subscriptions are released) rather than when the close handshake ends.
 */
export interface GraphqlWsTransportOptions {
  logger: Logger;
  /** @default 12000 */
  keepAliveMs?: number;
  /** A socket was accepted (metrics count it until it closes). */
  onSocket?: (socket: WebSocket) => void;
  /** A socket accepted here closed. */
  onSocketClosed?: () => void;
  /** A socket was closed with 1013: too much was waiting to be sent to it. */
  onSlowClient?: () => void;
  /**
   * A connection keeps its upgrade request's headers and address (`kept`), not the request: told
   * here, so that what was noted on the request (its record) follows.
   */
  onUpgradeKept?: (request: IncomingMessage, kept: ClientRequest) => void;
  /**
   * Sees each message before graphql-ws does: `true` when it took the message (graphql-ws never
   * sees it). The server's graphql-ws lane takes its subscriptions this way (ws/lane-operations.ts).
   */
  intercept?: (text: string, extra: SocketExtra) => boolean;
}

/** Bytes waiting to be sent to one client past which it is closed with 1013. */
export const MAX_WAITING_BYTES = 1024 * 1024;
/** The close code of a client too slow to read what it is sent (RFC 6455 registry: Try Again Later). */
export const SLOW_CLIENT_CLOSE_CODE = 1013;

/** What graphql-ws gives its hooks as `ctx.extra`. */
export interface SocketExtra {
  readonly socket: WebSocket;
  /** The upgrade request's headers and address (the request itself is not kept). */
  readonly request: ClientRequest;
  /** Sends a message as graphql-ws sends its own (held to {@link MAX_WAITING_BYTES} waiting). */
  readonly send: (data: string) => void;
}

const DEFAULT_KEEP_ALIVE_MS = 12_000;
const SERVER_MESSAGE_TYPES: ReadonlySet<string> = new Set([MessageType.ConnectionAck, MessageType.Next, MessageType.Error]);

/** Serves graphql-ws on every socket `wsServer` accepts from now on. */
export function serveGraphqlWs(wsServer: WebSocketServer, server: Server<SocketExtra>, options: GraphqlWsTransportOptions): void {
  const { logger, onSocket } = options;
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  if (keepAliveMs > 0) keepAlive(wsServer, keepAliveMs);

  wsServer.on('connection', (socket: WebSocket, upgrade: IncomingMessage) => {
    const request: ClientRequest = { headers: upgrade.headers, socket: { remoteAddress: upgrade.socket.remoteAddress } };
    options.onUpgradeKept?.(upgrade, request);
    onSocket?.(socket);
    socket.on('error', (error) => logger.debug('WebSocket closed for a protocol error of the client:', describeError(error)));
    if (keepAliveMs > 0) socket.on('pong', answered);
    let ended: Promise<void> | undefined;
    const end = (code: number, reason: string) => {
      ended ??= closed(code, reason).catch((error: unknown) => logger.error('closing a graphql-ws connection failed:', error));
    };
    // Not async: graphql-ws awaits what it returns, and a promise per event is garbage to collect.
    const send = (data: string): void => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount > MAX_WAITING_BYTES) {
        const reason = 'Try Again Later';
        logger.warn(`WebSocket closed with ${SLOW_CLIENT_CLOSE_CODE}: more than ${MAX_WAITING_BYTES} bytes were waiting to be sent to it`);
        options.onSlowClient?.();
        socket.close(SLOW_CLIENT_CLOSE_CODE, reason);
        end(SLOW_CLIENT_CLOSE_CODE, reason);
        return;
      }
      // Not waiting for the flush: a slow client is found by what waits for it (above).
      socket.send(data);
    };
    const extra: SocketExtra = { socket, request, send };
    const { intercept } = options;
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send,
        close: (code, reason) => {
          // graphql-ws ends a connection for the client's protocol errors with a 44xx code.
          if (code !== undefined && code >= 4400 && code < 4500) logger.debug(`WebSocket closed with ${String(code)}: ${String(reason)}`);
          socket.close(code, reason);
        },
        onMessage: (handle) =>
          socket.on('message', (data) => {
            const text = String(data);
            if (intercept !== undefined) {
              let taken: boolean;
              try {
                taken = intercept(text, extra);
              } catch (error) {
                logger.error('a graphql-ws message failed:', error);
                socket.close(CloseCode.InternalServerError, 'Internal server error');
                return;
              }
              if (taken) return;
            }
            handle(text).catch((error: unknown) => {
              if (isServerMessage(text)) {
                socket.close(CloseCode.BadRequest, 'Invalid message received');
                return;
              }
              logger.error('a graphql-ws message failed:', error);
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            });
          }),
      },
      extra,
    );
    socket.once('close', (code, reason) => {
      options.onSocketClosed?.();
      end(code, String(reason));
    });
  });
}

/** Sockets pinged by {@link keepAlive} that have not answered yet. */
const awaitingPong = new WeakSet<WebSocket>();

function answered(this: WebSocket): void {
  awaitingPong.delete(this);
}

/** Sockets pinged in one turn of the event loop at most (see {@link keepAlive}). */
const PING_SLICE = 256;

/**
 * Every `intervalMs`, each open socket of `wsServer` that answered its last ping is pinged again,
 * and one that did not is terminated: one timer for the server, until it closes. The sockets are
 * gone through {@link PING_SLICE} at a time, a turn of the event loop each, so that a server with
 * ten thousand clients does not stop delivering events for the time it takes to ping them all
 * (a frame and a socket write each); each socket keeps its place in the round, so it still has
 * about `intervalMs` to answer.
 */
function keepAlive(wsServer: WebSocketServer, intervalMs: number): void {
  let closed = false;
  let sweeping = false;
  const sweep = (sockets: readonly WebSocket[], from: number): void => {
    const end = Math.min(from + PING_SLICE, sockets.length);
    for (let index = from; index < end; index++) {
      const socket = sockets[index]!;
      if (socket.readyState !== socket.OPEN) continue;
      if (awaitingPong.has(socket)) {
        socket.terminate();
        continue;
      }
      awaitingPong.add(socket);
      socket.ping();
    }
    if (end < sockets.length && !closed) setImmediate(sweep, sockets, end);
    else sweeping = false;
  };
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweep([...wsServer.clients], 0);
  }, intervalMs);
  timer.unref();
  wsServer.once('close', () => {
    closed = true;
    clearInterval(timer);
  });
}

/** A graphql-ws message only a server may send (a client's `ping`, `pong`, `subscribe`, … are not). */
function isServerMessage(text: string): boolean {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return false;
  }
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' && SERVER_MESSAGE_TYPES.has(type);
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
