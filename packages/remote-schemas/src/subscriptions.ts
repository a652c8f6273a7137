import { createHash } from 'node:crypto';
import type { ExecutionResult } from 'graphql';
import { mapAsyncIterator } from '@graphql-tools/utils';
import { asRequestErrors, fellBehindError, remoteErrors, remoteRemovedError, remoteSubscriptionError, tooManySubscriptionsError } from './errors.js';
import type { SentLocations } from './locations.js';
import type { Logger } from './options.js';
import { redactUrls } from './redact.js';
import { UpstreamConnection, type UpstreamSink } from './upstream-connection.js';

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
  /** Subscriptions open at once at most (each subscriber counts, shared upstream or not). */
  maxSubscriptions: number;
  /** Events waiting for one subscriber at most; past it, that subscriber's subscription ends. @default 1024 */
  maxQueuedEvents?: number;
  /**
   * What waits for one subscriber at most, as the length of the messages that brought the events;
   * past it, that subscriber's subscription ends (a client of an event stream that stops reading
   * holds its events here, as a WebSocket client's wait in its socket). @default 1 MiB
   */
  maxQueuedBytes?: number;
  /** A subscription was refused: `maxSubscriptions` are open. */
  onRefused?: () => void;
  /** Called when the first upstream connection opens (the pool was empty). */
  onBusy?: () => void;
  /** Called when the last upstream connection closed because its last subscriber left. */
  onIdle?: () => void;
}

/** One upstream graphql-ws connection: the subscriptions of one forwarded header set. */
interface Connection {
  readonly key: string;
  readonly client: UpstreamConnection;
  /** Upstream subscriptions running on it. */
  upstreams: number;
}

const DEFAULT_MAX_QUEUED_EVENTS = 1024;
const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024;

/** What the remote sent on a shared upstream subscription, as each of its subscribers reads it. */
type Item =
  | { kind: 'next'; value: RemoteResult; size: number }
  | { kind: 'error'; error: unknown }
  | { kind: 'complete' }
  /** The gateway ends it with this last result (its remote schema was removed). */
  | { kind: 'end'; result: ExecutionResult };

type RemoteResult = { data?: unknown; errors?: readonly unknown[] | undefined };

/**
 * A stream of results that can also hand them over as they come: after `listen`, each step goes
 * to the listener synchronously, the end (`done`) last and once, and `next()` is not called any
 * more; `return()` still ends it (the listener then gets the end). A server that writes each
 * result to a socket at once needs no promise per result this way, and a subscriber waiting for
 * its next event holds none.
 */
export interface PushableStream<T> extends AsyncIterableIterator<T> {
  listen(listener: (step: IteratorResult<T>) => void): void;
}

/** Whether `stream` is a {@link PushableStream}. */
export function isPushable<T>(stream: AsyncIterable<T> | AsyncIterator<T>): stream is PushableStream<T> {
  return typeof (stream as Partial<PushableStream<T>>).listen === 'function';
}

/**
 * `stream` with `map` applied to each result; a {@link PushableStream} stays one (its listener
 * gets each result mapped, synchronously), so that a server writing results as they come still can.
 */
export function mapResults<T, U>(stream: AsyncIterableIterator<T>, map: (value: T) => U): AsyncIterableIterator<U> {
  if (!isPushable(stream)) return mapAsyncIterator(stream, map) as AsyncIterableIterator<U>;
  const step = (result: IteratorResult<T>): IteratorResult<U> => (result.done === true ? result : { done: false, value: map(result.value) });
  const mapped: PushableStream<U> = {
    next: () => stream.next().then(step),
    return: () => (stream.return ? stream.return().then(step) : Promise.resolve({ done: true, value: undefined })),
    throw: (error: unknown) => (stream.throw ? stream.throw(error).then(step) : Promise.reject(error)),
    listen: (listener) => stream.listen((result) => listener(step(result))),
    [Symbol.asyncIterator]: () => mapped,
  };
  return mapped;
}

const DONE: IteratorResult<ExecutionResult> = Object.freeze({ done: true, value: undefined });

/**
 * What subscribers and upstream subscriptions ask of their pool: one object per pool, so that
 * neither holds closures of its own (a pool may hold tens of thousands of them).
 */
interface PoolSide {
  readonly maxQueued: number;
  deliver(upstream: Upstream, item: Item): void;
  leave(subscriber: Subscriber): void;
  /** The result that ends a subscription whose connection failed. */
  failure(admin: boolean): ExecutionResult;
  /** The result that ends a subscriber that fell behind (and its warning). */
  fellBehind(): ExecutionResult;
}

/**
 * One subscription on the remote, shared by every subscriber with the same forwarded headers,
 * document, variables and operation name: its events are handed to each of them.
 */
class Upstream implements UpstreamSink {
  readonly subscribers = new Set<Subscriber>();
  /** Its id on the connection, once it started. */
  id: string | undefined;
  ended = false;

  constructor(
    readonly key: string,
    readonly connection: Connection,
    readonly pool: PoolSide,
  ) {}

  next(value: unknown, size: number): void {
    this.pool.deliver(this, { kind: 'next', value: value as RemoteResult, size });
  }

  error(error: unknown): void {
    this.pool.deliver(this, { kind: 'error', error });
  }

  complete(): void {
    this.pool.deliver(this, { kind: 'complete' });
  }
}

/**
 * A subscriber's side: its results as an iterator, with what waits for it, bounded. Written as a
 * plain iterator, not an async generator: a generator that waits for the remote's next event
 * cannot be returned early, and a client that leaves must free the socket at once. Nor with async
 * methods: a reader waits for the next event for as long as the remote takes (a second, a minute),
 * so what it holds meanwhile is kept small (one promise, resolved by the pool's push), and ten
 * thousand subscribers do not make the garbage collector copy a suspended call frame each per event.
 */
class Subscriber implements PushableStream<ExecutionResult> {
  readonly queue: Item[] = [];
  /** The sizes of the events in {@link queue}. */
  queuedBytes = 0;
  /** Resolves the promise of the `next()` waiting for an item. */
  #reader: ((step: IteratorResult<ExecutionResult>) => void) | undefined = undefined;
  /** Given every step as it comes (see {@link PushableStream}), until the end. */
  #listener: ((step: IteratorResult<ExecutionResult>) => void) | undefined = undefined;
  /** The executor of that promise: made once, not once per event. */
  readonly #wait = (resolve: (step: IteratorResult<ExecutionResult>) => void): void => {
    this.#reader = resolve;
  };
  /** It read more than `maxQueuedEvents` behind: it ends. */
  overflowed = false;
  finished = false;

  constructor(
    readonly upstream: Upstream,
    readonly admin: boolean,
    readonly locations: SentLocations | undefined,
    readonly filter: EventFilter | undefined,
  ) {}

  /** Its filter may change the results it reads: it needs its own copy of a shared one. */
  get copies(): boolean {
    return this.filter !== undefined;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    const step = this.#step();
    return step === undefined ? new Promise(this.#wait) : Promise.resolve(step);
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.finish();
    this.wake();
    return Promise.resolve(DONE);
  }

  throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.finish();
    this.wake();
    return Promise.reject(error);
  }

  listen(listener: (step: IteratorResult<ExecutionResult>) => void): void {
    this.#listener = listener;
    this.#drain();
  }

  /** Something changed (an item pushed, the end): a waiting reader gets what there is now. */
  wake(): void {
    if (this.#listener !== undefined) {
      this.#drain();
      return;
    }
    const reader = this.#reader;
    if (reader === undefined) return;
    const step = this.#step();
    if (step === undefined) return;
    this.#reader = undefined;
    reader(step);
  }

  /**
   * Hands the listener what there is. It may end the stream while it is called (its client left,
   * or was too slow): the end is then handed over by that call, and this loop stops.
   */
  #drain(): void {
    const listener = this.#listener;
    while (listener !== undefined && listener === this.#listener) {
      const step = this.#step();
      if (step === undefined) return;
      if (step.done === true) this.#listener = undefined;
      listener(step);
    }
  }

  /** What a reader gets now: a result, the end, or `undefined` when it must wait. */
  #step(): IteratorResult<ExecutionResult> | undefined {
    if (this.finished) return DONE;
    const item = this.queue.shift();
    if (item) {
      if (item.kind === 'next') this.queuedBytes -= item.size;
      return this.#read(item);
    }
    if (this.overflowed) {
      this.finish();
      return { done: false, value: this.upstream.pool.fellBehind() };
    }
    return undefined;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.upstream.pool.leave(this);
  }

  /** A result the remote sent, through `filter`. */
  #fromUpstream(result: ExecutionResult): IteratorResult<ExecutionResult> {
    if (!this.filter) return { done: false, value: result };
    const filtered = this.filter(result);
    if (filtered.last) this.finish();
    return { done: false, value: filtered.result };
  }

  #read(item: Item): IteratorResult<ExecutionResult> {
    if (item.kind === 'next') return this.#fromUpstream(fromRemote(item.value, this.locations));
    this.finish();
    if (item.kind === 'complete') return DONE;
    if (item.kind === 'end') {
      // A role's subscription (guarded) whose remote is gone: its schema no longer allows it, and
      // its guard says so, on every route alike.
      const filtered = this.filter?.(item.result);
      return { done: false, value: filtered?.last === true ? filtered.result : item.result };
    }
    // The remote refused the operation (validation): its errors, as it wrote them.
    const { error } = item;
    if (Array.isArray(error)) return this.#fromUpstream({ errors: asRequestErrors(remoteErrors(error, this.locations)) });
    return { done: false, value: this.upstream.pool.failure(this.admin) };
  }
}

/**
 * Upstream graphql-ws connections of one remote: one per distinct forwarded header set (the headers
 * travel in `connection_init`, so subscribers with other headers cannot share a socket; each keeps
 * its own session), closed as soon as its last subscriber leaves. Identical subscriptions (same
 * headers, document, variables and operation name) share one upstream subscription, whose events
 * are fanned out; each subscriber has its own bounded queue. At most `maxSubscriptions`
 * subscribers at once.
 */
export class SubscriptionPool {
  readonly #connections = new Map<string, Connection>();
  readonly #upstreams = new Map<string, Upstream>();
  readonly #options: SubscriptionPoolOptions;
  readonly #maxQueued: number;
  readonly #maxQueuedBytes: number;
  readonly #wsUrl: string;
  readonly #adminWsUrl: string;
  readonly #publicWsUrl: string;
  readonly #side: PoolSide;
  #subscribers = 0;
  #disposed = false;

  constructor(options: SubscriptionPoolOptions) {
    this.#options = options;
    this.#maxQueued = options.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.#wsUrl = toWebSocketUrl(options.url);
    this.#adminWsUrl = toWebSocketUrl(options.adminUrl);
    this.#publicWsUrl = toWebSocketUrl(options.publicUrl);
    this.#side = {
      maxQueued: this.#maxQueued,
      deliver: (upstream, item) => this.#deliver(upstream, item),
      leave: (subscriber) => this.#leave(subscriber),
      failure: (admin) => this.#failure(admin),
      fellBehind: () => {
        this.#options.logger.warn(
          `remote subscription to "${this.#publicWsUrl}" ended: its client fell more than ${this.#maxQueued} events (or ${this.#maxQueuedBytes} bytes) behind`,
        );
        return { errors: [fellBehindError(this.#options.name)] };
      },
    };
  }

  /** Number of open upstream connections (for tests and diagnostics). */
  get size(): number {
    return this.#connections.size;
  }

  /** Number of subscribers (for tests and diagnostics). */
  get subscribers(): number {
    return this.#subscribers;
  }

  /** Number of subscriptions running on the remote (for tests and diagnostics). */
  get upstreams(): number {
    return this.#upstreams.size;
  }

  /** The result that ends a subscription whose connection failed: it names the WebSocket URL. */
  #failure(admin: boolean): ExecutionResult {
    return { errors: [remoteSubscriptionError(admin ? this.#adminWsUrl : this.#publicWsUrl)] };
  }

  #connection(key: string, headers: Record<string, string>): Connection {
    const existing = this.#connections.get(key);
    // A connection that failed ends its subscriptions at once; a new one starts afresh.
    if (existing && !existing.client.closed) return existing;
    const connection: Connection = {
      key,
      client: new UpstreamConnection({
        url: this.#wsUrl,
        connectionParams: { headers },
        maxPayload: this.#options.maxMessageBytes,
        timeoutMs: this.#options.timeoutMs,
      }),
      upstreams: 0,
    };
    this.#connections.set(key, connection);
    if (this.#connections.size === 1 && !existing) this.#options.onBusy?.();
    return connection;
  }

  /** The shared upstream subscription of `payload` with `headers`, started when it is the first. */
  #upstream(payload: SubscribePayload, headers: Record<string, string>): Upstream {
    const connectionKey = headersKey(headers);
    // No variables and `{}` ask the same: one upstream subscription for both.
    const variables = payload.variables && Object.keys(payload.variables).length > 0 ? payload.variables : null;
    const key = createHash('sha256')
      .update(JSON.stringify([connectionKey, payload.query, variables, payload.operationName ?? null]))
      .digest('base64');
    const existing = this.#upstreams.get(key);
    if (existing) return existing;
    const connection = this.#connection(connectionKey, headers);
    connection.upstreams++;
    const upstream = new Upstream(key, connection, this.#side);
    this.#upstreams.set(key, upstream);
    upstream.id = connection.client.subscribe(
      { query: payload.query, variables, operationName: payload.operationName ?? null },
      upstream,
    );
    return upstream;
  }

  #deliver(upstream: Upstream, item: Item): void {
    if (item.kind === 'error' && !Array.isArray(item.error)) {
      this.#options.logger.warn(`remote subscription to "${this.#publicWsUrl}" failed:`, describe(item.error));
    }
    const shared = upstream.subscribers.size > 1;
    for (const subscriber of upstream.subscribers) {
      this.#push(subscriber, shared && subscriber.copies && item.kind === 'next' ? { ...item, value: structuredClone(item.value) } : item);
    }
    if (item.kind !== 'next') this.#end(upstream, false);
  }

  #push(subscriber: Subscriber, item: Item): void {
    if (subscriber.overflowed) return;
    // One event waits whatever its size (within the remote's message bound); more wait only while
    // they fit in `maxQueuedBytes` together.
    const queue = subscriber.queue.length;
    if (item.kind === 'next' && (queue >= this.#maxQueued || (queue > 0 && subscriber.queuedBytes + item.size > this.#maxQueuedBytes))) {
      // Its consumer fell behind a remote that sends faster than it reads: it ends, nothing grows,
      // and its upstream subscription is released now (a consumer that reads no more, an event
      // stream's client that stopped reading, would otherwise hold it for ever).
      subscriber.overflowed = true;
      subscriber.queue.length = 0;
      subscriber.queuedBytes = 0;
      this.#leave(subscriber);
    } else {
      subscriber.queue.push(item);
      if (item.kind === 'next') subscriber.queuedBytes += item.size;
    }
    subscriber.wake();
  }

  /** The upstream subscription ended, or lost its last subscriber (`stop`: tell the remote). */
  #end(upstream: Upstream, stop: boolean): void {
    if (upstream.ended) return;
    upstream.ended = true;
    if (this.#upstreams.get(upstream.key) === upstream) this.#upstreams.delete(upstream.key);
    const connection = upstream.connection;
    if (stop && upstream.id !== undefined) connection.client.stop(upstream.id);
    connection.upstreams--;
    if (connection.upstreams === 0 && this.#connections.get(connection.key) === connection) {
      this.#connections.delete(connection.key);
      connection.client.dispose();
      if (this.#connections.size === 0) this.#options.onIdle?.();
    }
  }

  #leave(subscriber: Subscriber): void {
    const upstream = subscriber.upstream;
    if (!upstream.subscribers.delete(subscriber)) return;
    this.#subscribers--;
    if (upstream.subscribers.size === 0) this.#end(upstream, true);
  }

  #refused(admin: boolean): AsyncIterableIterator<ExecutionResult> {
    if (!this.#disposed) {
      this.#options.logger.warn(
        `remote subscription to "${this.#publicWsUrl}" refused: ${this.#options.maxSubscriptions} subscriptions to remote schema ` +
          `"${this.#options.name}" are open already (maxSubscriptionsPerRemote)`,
      );
      this.#options.onRefused?.();
    }
    return single(this.#disposed ? this.#failure(admin) : { errors: [tooManySubscriptionsError(this.#options.name)] });
  }

  /**
   * Results of one subscription on the remote; a connection failure ends it with one error result,
   * which names the remote's WebSocket URL as configured for admin (`admin`) and without
   * credentials for anyone else. The remote refusing the operation (graphql-ws `error` message) ends
   * it with the remote's errors, without `data`. `locations` places the locations of the remote's
   * errors in the client's document; `filter`, when given, sees every result the remote sends.
   */
  subscribe(
    payload: SubscribePayload,
    headers: Record<string, string>,
    admin: boolean,
    locations?: SentLocations,
    filter?: EventFilter,
  ): AsyncIterableIterator<ExecutionResult> {
    if (this.#disposed || this.#subscribers >= this.#options.maxSubscriptions) return this.#refused(admin);
    const upstream = this.#upstream(payload, headers);
    const subscriber = new Subscriber(upstream, admin, locations, filter);
    upstream.subscribers.add(subscriber);
    this.#subscribers++;
    return subscriber;
  }

  /**
   * Closes every upstream connection; their subscriptions end (`removed`: the remote schema was
   * removed, and each subscriber gets an error saying so before its end).
   */
  async dispose(removed = false): Promise<void> {
    this.#disposed = true;
    if (removed) {
      for (const upstream of [...this.#upstreams.values()]) this.#deliver(upstream, { kind: 'end', result: { errors: [remoteRemovedError(this.#options.name)] } });
    }
    const connections = [...this.#connections.values()];
    this.#connections.clear();
    for (const connection of connections) connection.client.dispose();
  }
}

/**
 * What chooses the connection: the forwarded headers but the request id, which differs from one
 * request to the next (a connection opened for a request carries that request's id in its
 * `connection_init`).
 */
function headersKey(headers: Record<string, string>): string {
  return JSON.stringify(
    Object.entries(headers)
      .filter(([name]) => name !== 'x-request-id')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** A stream of one result. */
export function single(result: ExecutionResult): AsyncIterableIterator<ExecutionResult> {
  let sent = false;
  const done: IteratorResult<ExecutionResult> = { done: true, value: undefined };
  return {
    next: async () => (sent ? done : ((sent = true), { done: false, value: result })),
    return: async () => done,
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * A result the remote sent: `data` as it is (a result without `data` is the remote refusing the
 * request, e.g. a variable value: its errors are request errors), errors with the client's locations.
 */
function fromRemote(value: RemoteResult, locations: SentLocations | undefined): ExecutionResult {
  const result: ExecutionResult = value.data === undefined ? {} : { data: value.data as Record<string, unknown> | null };
  // The connection lets only GraphQL results through (`errors` a list); checked again here, where a
  // list is relied on.
  if (Array.isArray(value.errors)) {
    const errors = remoteErrors(value.errors, locations);
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
