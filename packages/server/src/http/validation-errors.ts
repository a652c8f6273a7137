import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * graphql-js 16 throws from a validation rule or two instead of reporting (a subscription's root
 * field under `@skip(if: $variable)`: its single-field rule reads the directive without variables).
 * A thrown `GraphQLError` is reported as the validation error it is, so that it is answered as
 * every other one: no `data`, code `GRAPHQL_VALIDATION_FAILED`, 400 under
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
