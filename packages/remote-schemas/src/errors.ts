import { GraphQLError, type Source } from 'graphql';
import type { RemoteSchemaErrorCode } from './types.js';

/**
 * Why a remote schema cannot be used. The `code` is stable: the metadata API maps it to an HTTP 400
 * body, and a GraphQL request that fails on a remote carries it in `extensions.code`.
 */
export class RemoteSchemaError extends Error {
  override readonly name = 'RemoteSchemaError';
  readonly code: RemoteSchemaErrorCode;

  constructor(code: RemoteSchemaErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
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

interface RemoteErrorShape {
  message?: unknown;
  path?: unknown;
  locations?: unknown;
  extensions?: unknown;
}

/** The offset in `body` of a 1-based line and column, `undefined` past its end. */
export function offsetOf(body: string, line: number, column: number): number | undefined {
  let offset = 0;
  for (let current = 1; current < line; current++) {
    const next = body.indexOf('\n', offset);
    if (next === -1) return undefined;
    offset = next + 1;
  }
  const position = offset + column - 1;
  return position <= body.length ? position : undefined;
}

function positionsOf(source: Source, locations: unknown[]): number[] | undefined {
  const positions: number[] = [];
  for (const location of locations) {
    const { line, column } = (location ?? {}) as { line?: unknown; column?: unknown };
    if (typeof line !== 'number' || typeof column !== 'number') return undefined;
    const position = offsetOf(source.body, line, column);
    if (position === undefined) return undefined;
    positions.push(position);
  }
  return positions;
}

/**
 * Turns an error object from a remote's JSON answer into a `GraphQLError`, keeping its message,
 * path, locations and extensions (plain objects would be masked by Yoga as unexpected errors).
 * Yoga rebuilds errors from `source` and `positions` when it serializes them, so locations survive
 * only when the `source` the remote saw is given.
 */
export function toGraphQLError(raw: unknown, source?: Source): GraphQLError {
  const shape: RemoteErrorShape = raw && typeof raw === 'object' ? (raw as RemoteErrorShape) : {};
  const message = typeof shape.message === 'string' ? shape.message : 'Unknown error from the remote schema';
  const path = Array.isArray(shape.path)
    ? (shape.path as unknown[]).filter((s): s is string | number => typeof s === 'string' || typeof s === 'number')
    : undefined;
  const extensions =
    shape.extensions && typeof shape.extensions === 'object' && !Array.isArray(shape.extensions)
      ? withoutStack(shape.extensions as Record<string, unknown>)
      : undefined;
  const positions = source && Array.isArray(shape.locations) ? positionsOf(source, shape.locations as unknown[]) : undefined;
  const error = new GraphQLError(message, {
    ...(path ? { path } : {}),
    ...(extensions ? { extensions } : {}),
    ...(positions && source ? { source, positions } : {}),
  });
  if (!positions && Array.isArray(shape.locations)) {
    // GraphQLError derives locations from a source it does not have here; keep the remote's.
    Object.defineProperty(error, 'locations', { value: shape.locations, enumerable: true });
  }
  return error;
}

/** Where GraphQL servers put stack traces (`stack`, Apollo's `exception.stacktrace`): never passed on. */
const STACK_KEYS = new Set(['stack', 'stacktrace', 'exception']);

function withoutStack(extensions: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(extensions).some((key) => STACK_KEYS.has(key))) return extensions;
  return Object.fromEntries(Object.entries(extensions).filter(([key]) => !STACK_KEYS.has(key)));
}
