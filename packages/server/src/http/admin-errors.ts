import { GraphQLError, type ExecutionResult } from 'graphql';
import { handleStreamOrSingleExecutionResult, maskError, type Plugin, type YogaServerOptions } from 'graphql-yoga';

/**
 * Errors are masked for every role but admin, who sees the original message (never a stack).
 *
 * Yoga's `maskError` is not told whose request an error belongs to, so this plugin marks the errors
 * of an admin's results as they leave execution (it is listed before Yoga's masking plugin, whose
 * hook runs after ours), and `maskedErrors` lets marked errors through with their own message.
 */
export function createAdminErrorMasking(): { plugin: Plugin; maskedErrors: NonNullable<YogaServerOptions<object, object>['maskedErrors']> } {
  const adminErrors = new WeakSet<object>();
  const mark = ({ result }: { result: ExecutionResult }) => {
    for (const error of result.errors ?? []) adminErrors.add(error);
  };
  const isAdmin = (context: unknown) =>
    (context as { session?: { isAdmin?: unknown } } | null | undefined)?.session?.isAdmin === true;

  const plugin: Plugin = {
    onExecute({ args }) {
      if (!isAdmin(args.contextValue)) return undefined;
      return { onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, mark) };
    },
    onSubscribe({ args }) {
      if (!isAdmin(args.contextValue)) return undefined;
      return {
        onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, mark),
        // The event stream itself failing (not a result with errors).
        onSubscribeError: ({ error }) => {
          if (typeof error === 'object' && error !== null) adminErrors.add(error);
        },
      };
    },
  };

  return {
    plugin,
    maskedErrors: {
      isDev: false,
      maskError(error, message) {
        if (error instanceof GraphQLError && error.extensions['code'] === 'OPERATION_RESOLUTION_FAILURE') return operationNotChosen(error);
        if (typeof error !== 'object' || error === null || !adminErrors.has(error)) return requestError(maskError(error, message, false));
        if (!(error instanceof GraphQLError)) {
          return new GraphQLError(error instanceof Error ? error.message : message, { extensions: { code: 'unexpected' } });
        }
        const original = error.originalError;
        if (original === undefined || original === null || original instanceof GraphQLError) return error;
        // The original message, where the error happened; no stack, no internals beyond the message.
        return new GraphQLError(original.message, {
          nodes: error.nodes ?? null,
          source: error.source ?? null,
          positions: error.positions ?? null,
          path: error.path ?? null,
          extensions: { ...error.extensions, code: error.extensions['code'] ?? 'unexpected' },
        });
      },
    },
  };
}

/**
 * No operation of the document could be chosen (several and no `operationName`, or an unknown
 * one): an error before execution like a validation error, whoever sent it and however, so
 * `path: "$"` and the status of such an error (400 under `application/graphql-response+json`, 200
 * under `application/json`, as Hasura answers it).
 */
function operationNotChosen(error: GraphQLError): GraphQLError {
  // Reshaped in place: Yoga logs, as a failure of the server, every error its masking replaces.
  (error as { extensions: Record<string, unknown> }).extensions = { ...error.extensions, path: '$', http: { spec: true, status: 400 } };
  return error;
}

/**
 * An error Yoga raises about the HTTP request itself (a body that is not JSON, a parameter of the
 * wrong type: it carries the `http` status to answer with, and no locations) in the shape of the server's other
 * errors: with `path: "$"`, and without the `originalError` Yoga's JSON parser adds (the parser's
 * own message, an internal).
 */
function requestError(error: Error): Error {
  // About the request itself: an `http` status and no place in a document (an error of a
  // variable's value points at the variable, and is answered as on every other route).
  if (!(error instanceof GraphQLError) || error.extensions['http'] === undefined || error.locations !== undefined) return error;
  // A remote's refusal before execution carries its status as a hidden `http` (remote-schemas'
  // request errors): it keeps its extensions exactly as the remote sent them.
  if (!Object.prototype.propertyIsEnumerable.call(error.extensions, 'http')) return error;
  const { originalError: internal, ...extensions } = error.extensions;
  if (internal === undefined && extensions['path'] !== undefined) return error;
  if (internal !== undefined) {
    // Yoga answers 400 for such an error because of its original error; without it, the `http`
    // status must stand on its own (`spec` would let an `application/json` answer be 200).
    const { spec: _spec, ...http } = extensions['http'] as Record<string, unknown>;
    extensions['http'] = http;
  }
  // Reshaped in place: Yoga logs, as a failure of the server, every error its masking replaces,
  // and a client's malformed request is not one (nor should a client be able to flood the log).
  (error as { extensions: Record<string, unknown> }).extensions = { ...extensions, path: extensions['path'] ?? '$' };
  return error;
}
