/**
 * The remote relationships of a Hasura remote schema, for `import-hasura-metadata`: those to
 * another remote schema (`to_remote_schema`) are kept as written (literals included); those to a database
 * (`to_source`) are left out and counted, as svc-graphql has no databases.
 */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface ConvertedRelationships {
  /** `[{type_name, relationships: [{name, definition}]}]` with the relationships kept; `undefined` when none is. */
  kept: JsonObject[] | undefined;
  /** Relationships left out (to a database, or not a relationship at all). */
  skipped: number;
}

/**
 * The `remote_relationships` of one remote schema of a Hasura export. The arguments of a
 * relationship are literals or `$field` values, never session variables: a string such as
 * `"x-hasura-tenant"` is a literal and is kept as written.
 */
export function convertRemoteRelationships(value: unknown): ConvertedRelationships {
  if (!Array.isArray(value)) return { kept: undefined, skipped: 0 };
  const kept: JsonObject[] = [];
  let skipped = 0;
  for (const group of value) {
    if (!isObject(group) || !Array.isArray(group['relationships'])) {
      skipped += 1;
      continue;
    }
    const relationships = group['relationships'].filter((relationship) => {
      const toRemoteSchema = isObject(relationship) && isObject(relationship['definition']) && isObject(relationship['definition']['to_remote_schema']);
      if (!toRemoteSchema) skipped += 1;
      return toRemoteSchema;
    });
    // As written: a `null` argument value means something (an explicit null).
    if (relationships.length > 0) kept.push({ type_name: group['type_name'], relationships });
  }
  return { kept: kept.length > 0 ? kept : undefined, skipped };
}
