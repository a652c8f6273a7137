/**
 * Whether `value` has the shape of a GraphQL response (an HTTP answer, or a graphql-ws `next`
 * payload): an object with `data` (an object or null) and/or `errors` (a list). Anything else
 * (`{"errors":"x"}`, `{"data":[1]}`, a list) is not the answer of a GraphQL server.
 */
export function isGraphQLResponseShape(value: unknown): value is { data?: Record<string, unknown> | null; errors?: unknown[]; extensions?: unknown } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { data, errors } = value as { data?: unknown; errors?: unknown };
  if (data === undefined && errors === undefined) return false;
  if (data !== undefined && data !== null && (typeof data !== 'object' || Array.isArray(data))) return false;
  return errors === undefined || Array.isArray(errors);
}
