/**
 * The lock-down parts of a Hasura metadata export, as `import-hasura-metadata` keeps them: query
 * collections, the allow list, API limits and introspection options. They are kept as written
 * (`null` members left out, as Hasura writes "not set"), except the session variable names of
 * `rate_limit.unique_params`, whose `x-hasura-` prefix becomes `x-svc-`. `replace_metadata`
 * validates them.
 */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The top-level keys read here, in the order the svc-graphql document shows them. */
export const LOCKDOWN_KEYS = ['query_collections', 'allowlist', 'api_limits', 'graphql_schema_introspection'] as const;

/** What an imported document holds of them; each only when the export has something in it. */
export type ImportedLockdownParts = Partial<Record<(typeof LOCKDOWN_KEYS)[number], unknown>>;

/** A plain copy with `null` members left out; `Object.fromEntries` keeps a `__proto__` key a key. */
function copyWithoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyWithoutNulls);
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, member]) => member !== null)
        .map(([key, member]) => [key, copyWithoutNulls(member)]),
    );
  }
  return value;
}

/**
 * The parts of `metadata` (a Hasura export), converted. `rename` turns `x-hasura-…` into `x-svc-…`.
 * `fail(reason)` is called (and must throw) when a part has the wrong shape.
 */
export function convertLockdownParts(metadata: JsonObject, rename: (name: string) => string, fail: (reason: string) => never): ImportedLockdownParts {
  const parts: ImportedLockdownParts = {};
  for (const key of ['query_collections', 'allowlist'] as const) {
    const value = metadata[key];
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value)) fail(`"${key}" is not a list`);
    if (value.length > 0) parts[key] = copyWithoutNulls(value);
  }
  const limits = metadata['api_limits'];
  if (limits !== undefined && limits !== null) {
    if (!isObject(limits)) fail('"api_limits" is not an object');
    if (Object.keys(limits).length > 0) parts.api_limits = renameUniqueParams(copyWithoutNulls(limits) as JsonObject, rename);
  }
  const introspection = metadata['graphql_schema_introspection'];
  if (introspection !== undefined && introspection !== null) {
    if (!isObject(introspection)) fail('"graphql_schema_introspection" is not an object');
    const roles = introspection['disabled_for_roles'];
    // Hasura exports `{disabled_for_roles: []}` for "not set".
    if (!(Array.isArray(roles) && roles.length === 0) && Object.keys(introspection).length > 0) {
      parts.graphql_schema_introspection = copyWithoutNulls(introspection);
    }
  }
  return parts;
}

/** `rate_limit.{global, per_role.*}.unique_params`: session variable names renamed; "IP" and anything else as written. */
function renameUniqueParams(limits: JsonObject, rename: (name: string) => string): JsonObject {
  const rate = limits['rate_limit'];
  if (!isObject(rate)) return limits;
  const renameConfig = (config: unknown) => {
    if (isObject(config) && Array.isArray(config['unique_params'])) {
      config['unique_params'] = config['unique_params'].map((name: unknown) => (typeof name === 'string' ? rename(name) : name));
    }
  };
  renameConfig(rate['global']);
  if (isObject(rate['per_role'])) for (const config of Object.values(rate['per_role'])) renameConfig(config);
  return limits;
}
