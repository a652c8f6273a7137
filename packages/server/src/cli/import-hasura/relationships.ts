/**
 * The remote relationships of a Hasura remote schema, for `import-hasura-metadata`: those to
 * another remote schema (`to_remote_schema`) are kept as written; those to a database
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

/** `value` with `rename` applied to every string in it (at any depth). */
function renameStrings(value: unknown, rename: (text: string) => string): unknown {
  if (typeof value === 'string') return rename(value);
  if (Array.isArray(value)) return value.map((item) => renameStrings(item, rename));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renameStrings(item, rename)]));
  return value;
}

/**
 * The `remote_relationships` of one remote schema of a Hasura export. `rename` is applied to the
 * string values of the arguments (`x-hasura-…` becomes `x-svc-…`, as everywhere in the import).
 */
export function convertRemoteRelationships(value: unknown, rename: (text: string) => string): ConvertedRelationships {
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
    // As written (a `null` argument value means something, an explicit null), but the prefix.
    if (relationships.length > 0) kept.push({ type_name: group['type_name'], relationships: relationships.map((r) => renameArguments(r as JsonObject, rename)) });
  }
  return { kept: kept.length > 0 ? kept : undefined, skipped };
}

/** The relationship with `rename` applied to the strings of the arguments of every level of its `remote_field`. */
function renameArguments(relationship: JsonObject, rename: (text: string) => string): JsonObject {
  const definition = relationship['definition'] as JsonObject;
  const target = definition['to_remote_schema'] as JsonObject;
  const renameLevel = (level: unknown, depth: number): unknown => {
    if (!isObject(level) || depth > 64) return level;
    return Object.fromEntries(
      Object.entries(level).map(([field, call]) => {
        if (!isObject(call)) return [field, call];
        const renamed: JsonObject = { ...call };
        if (call['arguments'] !== undefined) renamed['arguments'] = renameStrings(call['arguments'], rename);
        if (call['field'] !== undefined) renamed['field'] = renameLevel(call['field'], depth + 1);
        return [field, renamed];
      }),
    );
  };
  return { ...relationship, definition: { ...definition, to_remote_schema: { ...target, remote_field: renameLevel(target['remote_field'], 0) } } };
}
