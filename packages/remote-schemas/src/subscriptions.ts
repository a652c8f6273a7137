import type { ExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { remoteCallError, toGraphQLError } from './errors.js';
import type { Logger } from './options.js';

interface PooledClient {
  client: Client;
  subscribers: number;
}

export interface SubscribePayload {
  query: string;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
}

/** `http(s)://` → `ws(s)://`, the rest of the URL unchanged. */
export function toWebSocketUrl(url: string): string {
  return url.replace(/^http/i, 'ws');
}

/**
 * Upstream graphql-ws connections of one remote: one per distinct header set (the headers travel in
 * `connection_init`, so subscribers with other headers cannot share a socket), closed as soon as its
 * last subscriber leaves.
 */
export class SubscriptionPool {
  readonly #clients = new Map<string, PooledClient>();
  readonly #wsUrl: string;
  readonly #httpUrl: string;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #disposed = false;

  constructor(httpUrl: string, timeoutMs: number, logger: Logger) {
    this.#httpUrl = httpUrl;
    this.#wsUrl = toWebSocketUrl(httpUrl);
    this.#timeoutMs = timeoutMs;
    this.#logger = logger;
  }

  /** Number of open upstream clients (for tests and diagnostics). */
  get size(): number {
    return this.#clients.size;
  }

  #acquire(headers: Record<string, string>): [string, PooledClient] {
    const key = JSON.stringify(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let pooled = this.#clients.get(key);
    if (!pooled) {
      pooled = {
        client: createClient({
          url: this.#wsUrl,
          webSocketImpl: WebSocket,
          connectionParams: { headers },
          lazy: true,
          retryAttempts: 0,
          connectionAckWaitTimeout: this.#timeoutMs,
        }),
        subscribers: 0,
      };
      this.#clients.set(key, pooled);
    }
    pooled.subscribers++;
    return [key, pooled];
  }

  #release(key: string, pooled: PooledClient): void {
    pooled.subscribers--;
    if (pooled.subscribers === 0 && this.#clients.get(key) === pooled) {
      this.#clients.delete(key);
      void pooled.client.dispose();
    }
  }

  /**
   * Results of one subscription on the remote; a connection failure ends it with one error result.
   * Written as a plain iterator, not an async generator: a generator that waits for the remote's
   * next event cannot be returned early, and a client that leaves must free the socket at once.
   */
  subscribe(payload: SubscribePayload, headers: Record<string, string>): AsyncIterableIterator<ExecutionResult> {
    const done: IteratorResult<ExecutionResult> = { done: true, value: undefined };
    if (this.#disposed) {
      let sent = false;
      const failure = { errors: [remoteCallError(this.#httpUrl)] };
      return {
        next: async () => (sent ? done : ((sent = true), { done: false, value: failure })),
        return: async () => done,
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    }
    const [key, pooled] = this.#acquire(headers);
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
          const result: ExecutionResult = { data: (step.value.data ?? null) as Record<string, unknown> | null };
          if (step.value.errors) result.errors = step.value.errors.map((error) => toGraphQLError(error));
          return { done: false, value: result };
        } catch (error) {
          if (finished) return done;
          finish();
          this.#logger.warn(`remote subscription to "${this.#wsUrl}" failed:`, describe(error));
          return { done: false, value: { errors: [remoteCallError(this.#httpUrl)] } };
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

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && 'code' in error) {
    const event = error as { code: unknown; reason?: unknown };
    return `connection closed with ${String(event.code)} ${String(event.reason ?? '')}`.trim();
  }
  return String(error);
}
