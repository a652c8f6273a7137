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

/** What the conversion borrows from the importer, so that both convert alike. */
export interface LockdownConversion {
  /** `x-hasura-…` → `x-svc-…`. */
  rename(name: string): string;
  /** A plain copy with `null` members (Hasura's "not set") left out. */
  copyWithoutNulls(value: unknown): unknown;
  /** Called (and throws) when a part has the wrong shape. */
  fail(reason: string): never;
}

/** The parts of `metadata` (a Hasura export), converted. */
export function convertLockdownParts(metadata: JsonObject, conversion: LockdownConversion): ImportedLockdownParts {
  const { rename, copyWithoutNulls } = conversion;
  const parts: ImportedLockdownParts = {};
  for (const key of ['query_collections', 'allowlist'] as const) {
    const value = metadata[key];
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value)) conversion.fail(`"${key}" is not a list`);
    if (value.length > 0) parts[key] = copyWithoutNulls(value);
  }
  const limits = metadata['api_limits'];
  if (limits !== undefined && limits !== null) {
    if (!isObject(limits)) conversion.fail('"api_limits" is not an object');
    if (Object.keys(limits).length > 0) parts.api_limits = renameUniqueParams(copyWithoutNulls(limits) as JsonObject, rename);
  }
  const introspection = metadata['graphql_schema_introspection'];
  if (introspection !== undefined && introspection !== null) {
    if (!isObject(introspection)) conversion.fail('"graphql_schema_introspection" is not an object');
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
