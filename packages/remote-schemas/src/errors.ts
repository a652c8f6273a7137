import { GraphQLError } from 'graphql';
import type { SentLocations } from './locations.js';
import type { RemoteSchemaErrorCode } from './types.js';

/**
 * Why a remote schema cannot be used. The `code` is stable: the metadata API maps it to an HTTP 400
 * body, and a GraphQL request that fails on a remote carries it in `extensions.code`.
 */
export class RemoteSchemaError extends Error {
  override readonly name = 'RemoteSchemaError';
  readonly code: RemoteSchemaErrorCode;
  /** The part of the remote's definition at fault, as keys and indexes from the definition (`['headers', 1, 'value_from_env']`). */
  readonly field: ReadonlyArray<string | number> | undefined;

  constructor(code: RemoteSchemaErrorCode, message: string, options?: { cause?: unknown; field?: ReadonlyArray<string | number> }) {
    super(message, options);
    this.code = code;
    this.field = options?.field;
  }
}

/**
 * The message a client sees when a remote failed, timed out or answered garbage, kept to the letter
 * (Hasura's, which clients match on).
 */
export function httpExceptionMessage(url: string): string {
  return `HTTP exception occurred while sending the request to "${url}"`;
}

/** The GraphQL error of a failed remote call (the response status stays 200). */
export function remoteCallError(url: string): GraphQLError {
  return new GraphQLError(httpExceptionMessage(url), {
    extensions: { code: 'remote-schema-error', path: '$' },
  });
}

/**
 * The message of a subscription whose graphql-ws connection to the remote failed (closed, refused,
 * no `connection_ack` in time, a message over `maxResponseBytes`): it names the transport used.
 */
export function webSocketExceptionMessage(url: string): string {
  return `WebSocket exception occurred while subscribing to "${url}"`;
}

/** The GraphQL error of a failed graphql-ws connection to a remote (a subscription ends with it). */
export function remoteSubscriptionError(url: string): GraphQLError {
  return new GraphQLError(webSocketExceptionMessage(url), {
    extensions: { code: 'remote-schema-error', path: '$' },
  });
}

/**
 * The last result of a subscription whose client reads its events more slowly than the remote sends
 * them, once too many wait for it.
 */
export function fellBehindError(name: string): GraphQLError {
  return new GraphQLError(`the subscription fell too far behind remote schema "${name}"`, {
    extensions: { code: 'remote-schema-error', path: '$' },
  });
}

/** The last result of a subscription whose remote schema was removed from the metadata. */
export function remoteRemovedError(name: string): GraphQLError {
  return new GraphQLError(`remote schema "${name}" was removed`, {
    extensions: { code: 'remote-schema-error', path: '$' },
  });
}

/** The GraphQL error of a subscription refused because the remote has its most subscriptions open. */
export function tooManySubscriptionsError(name: string): GraphQLError {
  return new GraphQLError(`too many subscriptions to remote schema "${name}"`, {
    extensions: { code: 'remote-schema-error', path: '$' },
  });
}

const requestErrors = new WeakSet<GraphQLError>();

/**
 * Marks `errors` as errors of the request itself, raised before execution (a variable value that
 * cannot be coerced, a document a remote refused, a subscription left without a root field): the
 * result that carries them has no `data`. Yoga answers them 400 under
 * `Accept: application/graphql-response+json` and 200 under `application/json` (GraphQL over HTTP),
 * from an `http` extension that is not enumerable: it tells Yoga the status and is never
 * serialized, so that the client sees the error's extensions as they were.
 */
export function asRequestErrors<T extends readonly GraphQLError[]>(errors: T): T {
  for (const error of errors) {
    requestErrors.add(error);
    if (!Object.hasOwn(error.extensions, 'http')) {
      Object.defineProperty(error.extensions, 'http', { value: { spec: true, status: 400 }, enumerable: false });
    }
  }
  return errors;
}

/** Whether `error` was raised before execution (see {@link asRequestErrors}). */
export function isRequestError(error: GraphQLError): boolean {
  return requestErrors.has(error);
}

interface RemoteErrorShape {
  message?: unknown;
  path?: unknown;
  locations?: unknown;
  extensions?: unknown;
}

/** The errors of one remote answer passed on at most: a remote can answer millions. */
export const MAX_REMOTE_ERRORS = 1000;

/**
 * The errors of a remote's answer (`toGraphQLError` each), the first {@link MAX_REMOTE_ERRORS}
 * of them; past that, one more error says how many the remote answered (each costs the gateway
 * tens of microseconds, and a hostile remote could answer a million within the size bound).
 */
export function remoteErrors(raw: readonly unknown[], sent?: SentLocations): GraphQLError[] {
  if (raw.length <= MAX_REMOTE_ERRORS) return raw.map((error) => toGraphQLError(error, sent));
  const kept = raw.slice(0, MAX_REMOTE_ERRORS).map((error) => toGraphQLError(error, sent));
  kept.push(
    new GraphQLError(`the remote answered ${String(raw.length)} errors: the first ${String(MAX_REMOTE_ERRORS)} are passed on`, {
      extensions: { code: 'remote-schema-error' },
    }),
  );
  return kept;
}

/**
 * Turns an error object from a remote's JSON answer into a `GraphQLError`, keeping its message,
 * path and extensions (plain objects would be masked by Yoga as unexpected errors). Its
 * locations, which point into the text the remote received, are moved into the client's document
 * through `sent`; a location in nothing the client wrote is left out. Without `sent` (the text was
 * not a client's: introspection), the remote's locations are kept.
 */
export function toGraphQLError(raw: unknown, sent?: SentLocations): GraphQLError {
  const shape: RemoteErrorShape = raw && typeof raw === 'object' ? (raw as RemoteErrorShape) : {};
  const message = typeof shape.message === 'string' ? shape.message : 'Unknown error from the remote schema';
  const path = Array.isArray(shape.path)
    ? (shape.path as unknown[]).filter((s): s is string | number => typeof s === 'string' || typeof s === 'number')
    : undefined;
  const extensions =
    shape.extensions && typeof shape.extensions === 'object' && !Array.isArray(shape.extensions)
      ? withoutStack(shape.extensions as Record<string, unknown>)
      : undefined;
  const locations = Array.isArray(shape.locations) ? (shape.locations as unknown[]) : undefined;
  const positions = sent?.source && locations ? clientPositions(sent, locations) : undefined;
  // A copy: the error's own `http` mark (asRequestErrors) must never land in the parsed answer.
  const error = new GraphQLError(message, {
    ...(path ? { path } : {}),
    ...(extensions ? { extensions: { ...extensions } } : {}),
    ...(positions && positions.length > 0 ? { source: sent!.source!, positions } : {}),
  });
  if (!sent && locations) {
    // GraphQLError derives locations from a source it does not have here; keep the remote's.
    Object.defineProperty(error, 'locations', { value: locations, enumerable: true });
  }
  return error;
}

function clientPositions(sent: SentLocations, locations: unknown[]): number[] {
  const positions: number[] = [];
  for (const location of locations) {
    const { line, column } = (location ?? {}) as { line?: unknown; column?: unknown };
    if (typeof line !== 'number' || typeof column !== 'number') continue;
    const position = sent.position(line, column);
    if (position !== undefined) positions.push(position);
  }
  return positions;
}

/** Where GraphQL servers put stack traces (`stack`, Apollo's `exception.stacktrace`): never passed on. */
const STACK_KEYS = new Set(['stack', 'stacktrace', 'exception']);

function withoutStack(extensions: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(extensions).some((key) => STACK_KEYS.has(key))) return extensions;
  return Object.fromEntries(Object.entries(extensions).filter(([key]) => !STACK_KEYS.has(key)));
}
