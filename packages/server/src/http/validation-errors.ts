import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * An operation whose type the schema has no root for (a mutation, or a subscription, of a role
 * whose schema has none): a validation error, as graphql-js 17 makes it, rather than graphql-js
 * 16's execution error with `data: null` and no code.
 */
export const knownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation) == null) {
      context.reportError(new GraphQLError(`Schema is not configured to execute ${node.operation} operation.`, { nodes: node }));
    }
  },
});

/** Adds {@link knownOperationTypes} to the validation of every operation. */
export function useKnownOperationTypes(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(knownOperationTypes);
    },
  };
}

/**
 * graphql-js 16 throws from a validation rule or two instead of reporting (a subscription's root
 * field under `@skip(if: $variable)`: its single-field rule reads the directive without variables).
 * A thrown `GraphQLError` is reported as the validation error it is, so that it is answered as
 * every other one: no `data`, code `validation-failed`, 400 under
 * `application/graphql-response+json`, an `error` message over graphql-ws.
 */
export function useThrownValidationErrors(): Plugin {
  return {
    onValidate({ setValidationFn, validateFn }) {
      setValidationFn((...args: Parameters<typeof validateFn>) => {
        try {
          return validateFn(...args);
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
      });
    },
  };
}

/** Hasura's codes for an error before execution (Yoga's are `GRAPHQL_PARSE_FAILED` / `GRAPHQL_VALIDATION_FAILED`). */
const HASURA_CODES: Readonly<Record<string, string>> = { GRAPHQL_PARSE_FAILED: 'parse-failed', GRAPHQL_VALIDATION_FAILED: 'validation-failed' };

function withHasuraCode(error: GraphQLError, fallback: 'parse-failed' | 'validation-failed'): void {
  const extensions = error.extensions as Record<string, unknown>;
  const code = extensions['code'];
  if (code === undefined || (typeof code === 'string' && Object.hasOwn(HASURA_CODES, code))) {
    extensions['code'] = code === undefined ? fallback : HASURA_CODES[code as string];
    extensions['path'] ??= '$';
  }
}

/**
 * Parse and validation errors carry Hasura's codes, `parse-failed` and `validation-failed`, with
 * `path` `$`, over HTTP (Yoga's path, which the direct lane hands them to) and graphql-ws alike.
 */
export function useHasuraErrorCodes(): Plugin {
  return {
    onParse() {
      return ({ result }) => {
        if (result instanceof GraphQLError) withHasuraCode(result, 'parse-failed');
      };
    },
    onValidate() {
      return ({ valid, result }) => {
        if (!valid) for (const error of result) withHasuraCode(error, 'validation-failed');
      };
    },
  };
}
