import type { FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { MessageType } from 'graphql-ws';
import type { PushableStream } from '@svc-graphql/remote-schemas';
import type { Logger } from '../observability/logger.js';

const DONE: IteratorResult<never> = Object.freeze({ done: true, value: undefined });

/** A result as graphql-js, graphql-ws and Yoga each type it. */
export interface AnyResult {
  data?: Record<string, unknown> | null | undefined;
  errors?: readonly GraphQLError[] | undefined;
  extensions?: Record<string, unknown> | undefined;
}

/**
 * A subscription of the graphql-ws lane whose results are written to the client's socket as the
 * remote's events come (a `next` message each, as graphql-ws writes them), instead of being read
 * by graphql-ws's loop: that loop costs several promises and objects per event, and a waiting read
 * it keeps for a second or more between events outlives the young generation of the garbage
 * collector, once per event and subscriber (measured at 9,900 subscribers: most of what the
 * gateway promoted).
 *
 * graphql-ws is handed this object as the operation's stream: its one read waits until the
 * subscription ends, and graphql-ws then sends `complete` as for any stream. It is reading (so the
 * operation holds its id) before the first result is written. The client's `complete` and the
 * socket's close end it through `return()`, as any stream.
 */
export class PushedSubscription implements AsyncIterableIterator<never> {
  #end: ((step: IteratorResult<never>) => void) | undefined = undefined;
  #ended = false;
  #listening = false;
  readonly #wait = (resolve: (step: IteratorResult<never>) => void): void => {
    this.#end = resolve;
  };
  readonly #onStep = (step: IteratorResult<AnyResult>): void => {
    if (step.done === true) {
      this.#finish();
      return;
    }
    if (this.#ended) return;
    let message: string;
    try {
      message = nextMessage(this.id, step.value);
    } catch (error) {
      this.logger.error('a subscription result could not be written to its WebSocket; the subscription ended:', error);
      void this.return();
      return;
    }
    this.send(message);
  };

  constructor(
    readonly stream: PushableStream<AnyResult>,
    readonly id: string,
    readonly send: (data: string) => void,
    readonly logger: Logger,
  ) {}

  next(): Promise<IteratorResult<never>> {
    if (this.#ended) return Promise.resolve(DONE);
    const waiting = new Promise<IteratorResult<never>>(this.#wait);
    if (!this.#listening) {
      this.#listening = true;
      this.stream.listen(this.#onStep);
    }
    return waiting;
  }

  return(): Promise<IteratorResult<never>> {
    if (!this.#ended) {
      this.#ended = true;
      void Promise.resolve(this.stream.return?.()).catch(() => {});
      this.#finish();
    }
    return Promise.resolve(DONE);
  }

  throw(): Promise<IteratorResult<never>> {
    return this.return();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<never> {
    return this;
  }

  #finish(): void {
    this.#ended = true;
    const end = this.#end;
    this.#end = undefined;
    end?.(DONE);
  }
}

/** The `next` message of operation `id` with `result`, as graphql-ws writes it. */
export function nextMessage(id: string, result: AnyResult): string {
  return JSON.stringify({ id, type: MessageType.Next, payload: socketResult(result) });
}

/**
 * A result as a socket carries it: errors in their JSON form, without the `extensions.http` that
 * tells Yoga an HTTP status (a socket has none to show).
 */
export function socketResult(result: AnyResult): FormattedExecutionResult {
  if (result.errors === undefined) return result as FormattedExecutionResult;
  const formatted: FormattedExecutionResult = { errors: result.errors.map(formatForSocket) };
  if (result.data !== undefined) formatted.data = result.data;
  if (result.extensions !== undefined) formatted.extensions = result.extensions;
  return formatted;
}

export function formatForSocket(error: GraphQLError): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (formatted.extensions === undefined || !('http' in formatted.extensions)) return formatted;
  const { http: _http, ...extensions } = formatted.extensions;
  const { extensions: _all, ...rest } = formatted;
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}
