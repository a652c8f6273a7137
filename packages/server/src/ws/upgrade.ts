import { STATUS_CODES, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { handleProtocols } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { OriginPolicy } from '../http/cors.js';

/**
 * The WebSocket upgrade of `/v1/graphql`: which handshakes are accepted, and what every answer to
 * one carries.
 *
 * - Every answer, the 101 and each refusal, carries the upgrade's `x-request-id`, and each upgrade
 *   gets one http-log entry when its handshake is answered (`onAnswered`).
 * - The `Cookie` of an upgrade from a page of an origin that is not trusted is dropped before
 *   anything reads it (see {@link readsUpgradeCookie}).
 * - Only the subprotocol `graphql-transport-ws` is chosen (graphql-ws's `handleProtocols`); a
 *   message over `maxPayload` bytes closes the socket with 1009 before it is buffered whole.
 * - `ws` checks the handshake (method, `Upgrade`, key, version, subprotocol and extension headers)
 *   and hands what it refuses to its documented `wsClientError` event, answered here as `ws`
 *   would (405 for another method, else 400, its message as the body); another path is refused
 *   through `verifyClient` with 400 `Bad Request`; an upgrade that arrives after `close()` is
 *   answered 503.
 */
export interface UpgradeOptions {
  path: string;
  /** Largest message, in bytes. */
  maxPayload: number;
  origins: OriginPolicy;
  /** Read the `Cookie` of every upgrade, whatever its origin (`--ws-read-cookie`). */
  readCookieAlways: boolean;
  /** The upgrade's request id (the one its operations see). */
  requestId: (request: IncomingMessage) => string;
  /** The handshake was answered with `status` (101, or a refusal). */
  onAnswered: (request: IncomingMessage, status: number) => void;
}

export interface WebSocketEndpoint {
  /** The server graphql-ws serves (its `connection` event gives each accepted socket). */
  readonly server: WebSocketServer;
  /** Refuses further upgrades (503) and closes every socket with `code` and `reason`. */
  close(code: number, reason: string): void;
  /** Drops every socket at once. */
  terminate(): void;
}

/** Accepts WebSocket upgrades of `httpServer` as {@link UpgradeOptions} says. */
export function acceptUpgrades(httpServer: HttpServer, options: UpgradeOptions): WebSocketEndpoint {
  const { path, origins, readCookieAlways, requestId, onAnswered } = options;
  let closed = false;
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayload,
    handleProtocols: (protocols) => handleProtocols(protocols),
    // The path is checked here rather than with ws's `path` option, whose refusal has no headers of ours.
    verifyClient: ({ req }: { req: IncomingMessage }, verified: (ok: boolean, status?: number, message?: string, headers?: Record<string, string>) => void) => {
      if (pathOf(req.url) === path) return verified(true);
      onAnswered(req, 400);
      verified(false, 400, undefined, { 'x-request-id': requestId(req) });
    },
  });
  server.on('wsClientError', (error: Error, socket: Duplex, request: IncomingMessage) => {
    refuse(socket, request, request.method === 'GET' ? 400 : 405, error.message);
  });
  // The 101 answer carries the connection's `x-request-id` too (printable ASCII: safe in a header).
  server.on('headers', (headers: string[], request: IncomingMessage) => {
    headers.push(`x-request-id: ${requestId(request)}`);
    onAnswered(request, 101);
  });

  /** Answers a refused handshake as `ws` does, with the request id, and ends the socket. */
  function refuse(socket: Duplex, request: IncomingMessage, status: number, message: string): void {
    const headers = [`Connection: close`, 'Content-Type: text/html', `Content-Length: ${Buffer.byteLength(message)}`];
    const version = Number(request.headers['sec-websocket-version']);
    if (status === 400 && version !== 13 && version !== 8) headers.push('Sec-WebSocket-Version: 13, 8');
    headers.push(`x-request-id: ${requestId(request)}`);
    onAnswered(request, status);
    socket.once('finish', () => socket.destroy());
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${headers.join('\r\n')}\r\n\r\n${message}`);
  }

  httpServer.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // The connection's id (its latency starts here): `context.requestId` of its operations, and
    // sent to remotes.
    requestId(request);
    if (closed) {
      // Node leaves an upgraded socket without an error listener: a reset must not throw.
      socket.on('error', () => socket.destroy());
      refuse(socket, request, 503, STATUS_CODES[503] as string);
      return;
    }
    // A page of another origin must never act with its visitor's cookie (the browser sends it
    // with the upgrade whatever page opened the socket).
    if (!readsUpgradeCookie(request, origins, readCookieAlways)) delete request.headers.cookie;
    server.handleUpgrade(request, socket, head, (ws) => server.emit('connection', ws, request));
  });

  return {
    server,
    close(code, reason) {
      closed = true;
      for (const socket of server.clients as Set<WebSocket>) socket.close(code, reason);
      server.close();
    },
    terminate() {
      for (const socket of server.clients as Set<WebSocket>) socket.terminate();
    },
  };
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

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
