import type { ExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { asRequestErrors, remoteSubscriptionError, toGraphQLError, tooManySubscriptionsError } from './errors.js';
import type { SentLocations } from './locations.js';
import type { Logger } from './options.js';
import { redactUrls } from './redact.js';

interface PooledClient {
  client: Client;
  subscribers: number;
}

/**
 * Applied to each result the remote sends (not to the failures the pool answers itself): the result
 * to pass on, and whether the subscription ends after it.
 */
export type EventFilter = (event: ExecutionResult) => { result: ExecutionResult; last: boolean };

export interface SubscribePayload {
  query: string;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
}

/**
 * `http(s)://` → `ws(s)://`, the rest of the URL unchanged but the fragment, which is never sent
 * and which `ws` refuses.
 */
export function toWebSocketUrl(url: string): string {
  const hash = url.indexOf('#');
  return (hash === -1 ? url : url.slice(0, hash)).replace(/^http/i, 'ws');
}

/** How graphql-ws constructs its socket: `new WebSocketImpl(url, protocol)`. */
type WebSocketConstructor = new (address: string | URL, protocols?: string | string[]) => WebSocket;

/**
 * `ws` with a `maxPayload`: a message over it is refused from its frame header, before it is
 * buffered, and the connection closes (1009). With a `handshakeTimeout` too: a remote that accepts
 * the connection but never answers the upgrade must not hold a subscription (and a connection slot)
 * forever; graphql-ws's own `connectionAckWaitTimeout` only starts once the socket is open.
 * graphql-ws passes no options to the socket it constructs, so they travel in a subclass.
 */
export function boundedWebSocket(maxPayload: number, handshakeTimeout: number): WebSocketConstructor {
  return class BoundedWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { maxPayload, handshakeTimeout });
    }
  };
}

export interface SubscriptionPoolOptions {
  /** The remote schema's name (for the error of a refused subscription). */
  name: string;
  /** The remote's URL as configured (`http(s)://`). */
  url: string;
  /** The URL admin's errors name (see `RemoteClient.adminUrl`). */
  adminUrl: string;
  /** The same without credentials: for errors shown to anyone but admin, and for logs. */
  publicUrl: string;
  timeoutMs: number;
  logger: Logger;
  /** The largest message taken from the remote, in bytes. */
  maxMessageBytes: number;
  /** Upstream connections at most (one per distinct header set). */
  maxConnections: number;
  /** Called when the first upstream connection opens (the pool was empty). */
  onBusy?: () => void;
  /** Called when the last upstream connection closed because its last subscriber left. */
  onIdle?: () => void;
}

/**
 * Upstream graphql-ws connections of one remote: one per distinct header set (the headers travel in
 * `connection_init`, so subscribers with other headers cannot share a socket), closed as soon as its
 * last subscriber leaves.
 */
export class SubscriptionPool {
  readonly #clients = new Map<string, PooledClient>();
  readonly #options: SubscriptionPoolOptions;
  readonly #wsUrl: string;
  readonly #adminWsUrl: string;
  readonly #publicWsUrl: string;
  readonly #webSocketImpl: WebSocketConstructor;
  #disposed = false;

  constructor(options: SubscriptionPoolOptions) {
    this.#options = options;
    this.#wsUrl = toWebSocketUrl(options.url);
    this.#adminWsUrl = toWebSocketUrl(options.adminUrl);
    this.#publicWsUrl = toWebSocketUrl(options.publicUrl);
    this.#webSocketImpl = boundedWebSocket(options.maxMessageBytes, options.timeoutMs);
  }

  /** Number of open upstream clients (for tests and diagnostics). */
  get size(): number {
    return this.#clients.size;
  }

  /** The result that ends a subscription whose connection failed: it names the WebSocket URL. */
  #failure(admin: boolean): ExecutionResult {
    return { errors: [remoteSubscriptionError(admin ? this.#adminWsUrl : this.#publicWsUrl)] };
  }

  #acquire(headers: Record<string, string>): [string, PooledClient] | undefined {
    // The request id differs from one request to the next: it does not choose the connection
    // (one opened for a request carries that request's id in its `connection_init`).
    const key = JSON.stringify(
      Object.entries(headers)
        .filter(([name]) => name !== 'x-request-id')
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    let pooled = this.#clients.get(key);
    if (!pooled) {
      if (this.#clients.size >= this.#options.maxConnections) return undefined;
      pooled = {
        client: createClient({
          url: this.#wsUrl,
          webSocketImpl: this.#webSocketImpl,
          connectionParams: { headers },
          lazy: true,
          retryAttempts: 0,
          connectionAckWaitTimeout: this.#options.timeoutMs,
        }),
        subscribers: 0,
      };
      this.#clients.set(key, pooled);
      if (this.#clients.size === 1) this.#options.onBusy?.();
    }
    pooled.subscribers++;
    return [key, pooled];
  }

  #release(key: string, pooled: PooledClient): void {
    pooled.subscribers--;
    if (pooled.subscribers === 0 && this.#clients.get(key) === pooled) {
      this.#clients.delete(key);
      void pooled.client.dispose();
      if (this.#clients.size === 0) this.#options.onIdle?.();
    }
  }

  /**
   * Results of one subscription on the remote; a connection failure ends it with one error result,
   * which names the remote's WebSocket URL as configured for admin (`admin`) and without
   * credentials for anyone else. The remote refusing the operation (graphql-ws `error` message) ends
   * it with the remote's errors, without `data`. `locations` places the locations of the remote's
   * errors in the client's document; `filter`, when given, sees every result the remote sends.
   * Written as a plain iterator, not an async generator: a generator that waits for the remote's
   * next event cannot be returned early, and a client that leaves must free the socket at once.
   */
  subscribe(
    payload: SubscribePayload,
    headers: Record<string, string>,
    admin: boolean,
    locations?: SentLocations,
    filter?: EventFilter,
  ): AsyncIterableIterator<ExecutionResult> {
    const done: IteratorResult<ExecutionResult> = { done: true, value: undefined };
    const acquired = this.#disposed ? undefined : this.#acquire(headers);
    if (!acquired) {
      if (!this.#disposed) {
        this.#options.logger.warn(
          `remote subscription to "${this.#publicWsUrl}" refused: ${this.#options.maxConnections} upstream connections ` +
            'are open already (maxSubscriptionConnectionsPerRemote)',
        );
      }
      let sent = false;
      const failure: ExecutionResult = this.#disposed ? this.#failure(admin) : { errors: [tooManySubscriptionsError(this.#options.name)] };
      return {
        next: async () => (sent ? done : ((sent = true), { done: false, value: failure })),
        return: async () => done,
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    }
    const [key, pooled] = acquired;
    const upstream = pooled.client.iterate({
      query: payload.query,
      variables: payload.variables ?? null,
      operationName: payload.operationName ?? null,
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      // Tells the remote to stop (`complete`) when our consumer leaves first.
      void upstream.return?.();
      this.#release(key, pooled);
    };
    /** A result the remote sent, through `filter`. */
    const fromUpstream = (result: ExecutionResult): IteratorResult<ExecutionResult> => {
      if (!filter) return { done: false, value: result };
      const filtered = filter(result);
      if (filtered.last) finish();
      return { done: false, value: filtered.result };
    };
    return {
      next: async (): Promise<IteratorResult<ExecutionResult>> => {
        if (finished) return done;
        try {
          const step = await upstream.next();
          if (finished) return done;
          if (step.done) {
            finish();
            return done;
          }
          return fromUpstream(fromRemote(step.value, locations));
        } catch (error) {
          if (finished) return done;
          finish();
          // The remote refused the operation (validation): its errors, as it wrote them.
          if (Array.isArray(error)) return fromUpstream({ errors: asRequestErrors(error.map((e: unknown) => toGraphQLError(e, locations))) });
          this.#options.logger.warn(`remote subscription to "${this.#publicWsUrl}" failed:`, describe(error));
          return { done: false, value: this.#failure(admin) };
        }
      },
      return: async () => {
        finish();
        return done;
      },
      throw: async (error: unknown) => {
        finish();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** Closes every upstream connection; their subscriptions end. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(clients.map((c) => c.client.dispose()));
  }
}

/**
 * A result the remote sent: `data` as it is (a result without `data` is the remote refusing the
 * request, e.g. a variable value: its errors are request errors), errors with the client's locations.
 */
function fromRemote(value: { data?: unknown; errors?: readonly unknown[] | undefined }, locations: SentLocations | undefined): ExecutionResult {
  const result: ExecutionResult = value.data === undefined ? {} : { data: value.data as Record<string, unknown> | null };
  if (value.errors) {
    const errors = value.errors.map((error) => toGraphQLError(error, locations));
    result.errors = value.data === undefined ? asRequestErrors(errors) : errors;
  }
  return result;
}

/** What went wrong, for a log line: an `Error`, a socket's `ErrorEvent`, or a `CloseEvent`. */
function describe(error: unknown): string {
  if (error instanceof Error) return redactUrls(error.message);
  if (error && typeof error === 'object') {
    const event = error as { code?: unknown; reason?: unknown; message?: unknown; error?: unknown };
    if (event.error instanceof Error) return redactUrls(event.error.message);
    if (typeof event.message === 'string') return redactUrls(event.message);
    if (event.code !== undefined) {
      return redactUrls(`connection closed with ${String(event.code)} ${String(event.reason ?? '')}`.trim());
    }
  }
  return redactUrls(String(error));
}
