/** The messages graphql-ws sends, written as graphql-ws writes them (for the lane's operations). */
import { GraphQLError, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { MessageType } from 'graphql-ws';
import type { Logger } from '../observability/logger.js';

/** A result as graphql-js, graphql-ws and Yoga each type it. */
export interface AnyResult {
  data?: Record<string, unknown> | null | undefined;
  errors?: readonly GraphQLError[] | undefined;
  extensions?: Record<string, unknown> | undefined;
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
  // No operation could be chosen: an error about the request, with `path: "$"` as over HTTP.
  if (formatted.extensions?.['code'] === 'OPERATION_RESOLUTION_FAILURE' && formatted.extensions['path'] === undefined) {
    (formatted as { extensions: Record<string, unknown> }).extensions = { ...formatted.extensions, path: '$' };
  }
  if (formatted.extensions === undefined || !('http' in formatted.extensions)) return formatted;
  const { http: _http, ...extensions } = formatted.extensions;
  const { extensions: _all, ...rest } = formatted;
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}

/**
 * An operation that throws instead of answering fails alone with an error result (graphql-ws
 * would close the whole connection with 4500): a GraphQL error as it is, anything else logged and
 * answered `Unexpected error.`.
 */
export function failureResult(error: unknown, logger: Logger): ExecutionResult {
  if (error instanceof GraphQLError) return { errors: [error] };
  logger.error('a WebSocket operation failed:', error);
  return { errors: [new GraphQLError('Unexpected error.', { extensions: { code: 'unexpected' } })] };
}

/** The refusal of an operation past the bound of operations running at once on one connection. */
export function tooManyOperations(max: number): GraphQLError {
  return new GraphQLError(`too many operations at once on this connection (at most ${max})`, { extensions: { code: 'validation-failed', path: '$' } });
}
