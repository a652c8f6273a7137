import WebSocket from 'ws';
import { jsonNestedDeeperThan } from './json-depth.js';
import { isGraphQLResponseShape } from './response-shape.js';

/** The graphql-ws protocol (graphql-transport-ws), the only one spoken upstream. */
export const GRAPHQL_TRANSPORT_WS = 'graphql-transport-ws';

/** What an upstream subscription tells its owner. Exactly one of `error` and `complete` ends it. */
export interface UpstreamSink {
  /** An event: its payload, and the length of the message that carried it (in UTF-16 units). */
  next(value: unknown, size: number): void;
  /**
   * The remote refused the operation (the array of its `error` message), or the connection failed:
   * the socket's `Error`, or `{ code, reason }` of its close.
   */
  error(error: unknown): void;
  complete(): void;
}

export interface UpstreamPayload {
  query: string;
  variables: Record<string, unknown> | null;
  operationName: string | null;
}

export interface UpstreamConnectionOptions {
  /** `ws(s)://` URL of the remote. */
  url: string;
  /** The `payload` of `connection_init`. */
  connectionParams: Record<string, unknown>;
  /** Largest message taken from the remote, in bytes: a larger one fails the connection (ws closes it with 1009). */
  maxPayload: number;
  /** Bounds the handshake, and then again the wait for `connection_ack`. */
  timeoutMs: number;
}

interface Operation {
  readonly payload: UpstreamPayload;
  readonly sink: UpstreamSink;
}

const BAD_RESPONSE = 4400;
const ACK_TIMEOUT = 4504;

/**
 * One graphql-ws connection to a remote carrying any number of subscriptions: the client side of
 * graphql-transport-ws on a bare `ws` socket (no permessage-deflate), with one listener set per
 * connection and no timer once it is acknowledged. It connects on the first `subscribe`. It
 * behaves as graphql-ws's `createClient` with `lazy: true` and `retryAttempts: 0`, which it
 * replaces: a remote's `ping` is answered with `pong`; a connection that fails ends every
 * subscription on it with `error` (the socket's error, or its close code and reason), except a
 * close with 1000 while subscriptions are running, after which it connects again at once and
 * subscribes them again; `dispose()` completes them.
 */
export class UpstreamConnection {
  readonly #options: UpstreamConnectionOptions;
  readonly #operations = new Map<string, Operation>();
  #socket: WebSocket | undefined;
  #acknowledged = false;
  #ackTimer: NodeJS.Timeout | undefined;
  #nextId = 1;
  #closed = false;

  constructor(options: UpstreamConnectionOptions) {
    this.#options = options;
  }

  /** It failed or was disposed: it takes no more subscriptions. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Subscriptions running on it. */
  get size(): number {
    return this.#operations.size;
  }

  /**
   * Starts `payload` on the remote; its id is what {@link stop} takes. On a closed connection, `sink`
   * is told the error in a microtask (never before this returns).
   */
  subscribe(payload: UpstreamPayload, sink: UpstreamSink): string {
    const id = String(this.#nextId++);
    if (this.#closed) {
      queueMicrotask(() => sink.error(new Error('the connection is closed')));
      return id;
    }
    this.#operations.set(id, { payload, sink });
    if (this.#socket === undefined) this.#connect();
    else if (this.#acknowledged) this.#send({ id, type: 'subscribe', payload });
    return id;
  }

  /** Stops the subscription `id` (sends `complete` while it runs); its sink is told nothing more. */
  stop(id: string): void {
    if (!this.#operations.delete(id)) return;
    if (this.#acknowledged) this.#send({ id, type: 'complete' });
  }

  /** Closes the socket (1000); the subscriptions still running complete. */
  dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    const socket = this.#detach();
    socket?.close(1000, 'Normal Closure');
    for (const operation of this.#takeOperations()) operation.sink.complete();
  }

  #connect(): void {
    const { url, maxPayload, timeoutMs } = this.#options;
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, GRAPHQL_TRANSPORT_WS, { maxPayload, handshakeTimeout: timeoutMs, perMessageDeflate: false });
    } catch (error) {
      // A URL `ws` refuses: the subscriptions fail as for any connection, once their owner holds them.
      this.#closed = true;
      queueMicrotask(() => {
        for (const operation of this.#takeOperations()) operation.sink.error(error);
      });
      return;
    }
    this.#socket = socket;
    this.#acknowledged = false;
    // Listeners shared by every connection (`this` is the socket): none is made per connection.
    owners.set(socket, this);
    socket.on('open', onOpen);
    socket.on('message', onMessage);
    socket.on('error', onError);
    socket.on('close', onClose);
  }

  /** The socket is open: `connection_init`, and the wait for its `connection_ack`. */
  opened(): void {
    this.#send({ type: 'connection_init', payload: this.#options.connectionParams });
    const socket = this.#socket;
    this.#ackTimer = setTimeout(() => {
      socket?.close(ACK_TIMEOUT, 'Connection acknowledgement timeout');
      this.#fail({ code: ACK_TIMEOUT, reason: 'Connection acknowledgement timeout' });
    }, this.#options.timeoutMs);
  }

  /**
   * `ws` reports an error (a refused connection, a message over maxPayload, a handshake timeout)
   * and then closes: the error says more than the close.
   */
  errored(error: Error): void {
    this.#fail(error);
  }

  closedBy(code: number, reason: string): void {
    if (code === 1000 && this.#operations.size > 0 && !this.#closed) {
      this.#detach();
      this.#connect();
      return;
    }
    this.#fail({ code, reason });
  }

  receive(text: string): void {
    const message = parseMessage(text);
    if (message === undefined) {
      this.#badResponse(`Invalid message received`);
      return;
    }
    if (message.type === 'ping') {
      this.#send(message.payload === undefined ? { type: 'pong' } : { type: 'pong', payload: message.payload });
      return;
    }
    if (message.type === 'pong') return;
    if (!this.#acknowledged) {
      if (message.type !== 'connection_ack') {
        this.#badResponse(`First message cannot be of type ${message.type}`);
        return;
      }
      this.#acknowledged = true;
      clearTimeout(this.#ackTimer);
      this.#ackTimer = undefined;
      for (const [id, { payload }] of this.#operations) this.#send({ id, type: 'subscribe', payload });
      return;
    }
    if (message.type === 'connection_ack') {
      this.#badResponse('Unexpected connection_ack');
      return;
    }
    const operation = this.#operations.get(message.id);
    if (operation === undefined) return;
    if (message.type === 'next') {
      operation.sink.next(message.payload, text.length);
      return;
    }
    this.#operations.delete(message.id);
    if (message.type === 'error') operation.sink.error(message.payload);
    else operation.sink.complete();
  }

  #badResponse(reason: string): void {
    this.#socket?.close(BAD_RESPONSE, reason);
    this.#fail({ code: BAD_RESPONSE, reason });
  }

  /** The connection failed: it ends every subscription on it with `error`. */
  #fail(error: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    const socket = this.#detach();
    if (socket && socket.readyState !== WebSocket.CLOSED && socket.readyState !== WebSocket.CLOSING) socket.terminate();
    for (const operation of this.#takeOperations()) operation.sink.error(error);
  }

  /** Forgets the socket (its later events are ignored) and its timer. */
  #detach(): WebSocket | undefined {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#acknowledged = false;
    clearTimeout(this.#ackTimer);
    this.#ackTimer = undefined;
    // A late error of a socket given up must not be thrown.
    if (socket) {
      owners.delete(socket);
      socket.removeAllListeners();
      socket.on('error', ignore);
    }
    return socket;
  }

  #takeOperations(): Operation[] {
    const operations = [...this.#operations.values()];
    this.#operations.clear();
    return operations;
  }

  #send(message: object): void {
    const socket = this.#socket;
    if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }
}

/** The connection of each socket, for the shared listeners below. */
const owners = new WeakMap<WebSocket, UpstreamConnection>();

function onOpen(this: WebSocket): void {
  owners.get(this)?.opened();
}

function onMessage(this: WebSocket, data: WebSocket.RawData): void {
  owners.get(this)?.receive(String(data));
}

function onError(this: WebSocket, error: Error): void {
  owners.get(this)?.errored(error);
}

function onClose(this: WebSocket, code: number, reason: Buffer): void {
  owners.get(this)?.closedBy(code, String(reason));
}

function ignore(): void {}

type ServerMessage =
  | { type: 'connection_ack'; payload?: unknown }
  | { type: 'ping'; payload?: unknown }
  | { type: 'pong'; payload?: unknown }
  | { type: 'next'; id: string; payload: unknown }
  | { type: 'error'; id: string; payload: unknown[] }
  | { type: 'complete'; id: string };

/** A message a graphql-ws server may send, or `undefined`. */
function parseMessage(text: string): ServerMessage | undefined {
  // Nested deeper than any operation's answer: not a message of a GraphQL server.
  if (jsonNestedDeeperThan(text)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (message === null || typeof message !== 'object') return undefined;
  const { type, id, payload } = message as { type?: unknown; id?: unknown; payload?: unknown };
  switch (type) {
    case 'connection_ack':
    case 'ping':
    case 'pong':
      return payload === undefined || payload === null || typeof payload === 'object' ? (message as ServerMessage) : undefined;
    case 'next':
      return typeof id === 'string' && isGraphQLResponseShape(payload) ? (message as ServerMessage) : undefined;
    case 'error':
      return typeof id === 'string' && Array.isArray(payload) && payload.length > 0 ? (message as ServerMessage) : undefined;
    case 'complete':
      return typeof id === 'string' ? (message as ServerMessage) : undefined;
    default:
      return undefined;
  }
}
