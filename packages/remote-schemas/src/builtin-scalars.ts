import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLScalarType,
  GraphQLString,
  Kind,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import { MapperKind, mapSchema, type ExecutionRequest, type Executor } from '@graphql-tools/utils';

export const BUILT_IN_SCALARS: ReadonlySet<string> = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);

/** The part of a type name mapping that renames built-in scalars (`{ String: 'Text' }`). */
export function builtInScalarMapping(mapping: Record<string, string> | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const [from, to] of Object.entries(mapping ?? {})) {
    if (BUILT_IN_SCALARS.has(from) && to !== from) out.set(from, to);
  }
  return out;
}

interface TypeRef {
  name?: string | null;
  ofType?: TypeRef | null;
}

/**
 * graphql-tools cannot rename built-in scalars (its schema mapper never hands them out), so a
 * mapping such as `String -> Text` is applied to the introspection result instead: the remote then
 * looks as if it had a custom scalar `Text`.
 */
export function renameInIntrospection(introspection: ExecutionResult, mapping: Map<string, string>): ExecutionResult {
  const rename = (ref: TypeRef | null | undefined): void => {
    for (let current = ref; current; current = current.ofType) {
      if (current.name && mapping.has(current.name)) current.name = mapping.get(current.name) ?? current.name;
    }
  };
  const copy = structuredClone(introspection) as ExecutionResult;
  const schema = (copy.data as { __schema?: Record<string, unknown> } | null | undefined)?.__schema;
  if (!schema) return copy;
  const values = (list: unknown) => (Array.isArray(list) ? (list as Array<{ type?: TypeRef }>) : []);
  const types = values(schema['types']) as Array<Record<string, unknown>>;
  // The built-in scalar stays too: directive arguments and introspection still refer to it.
  const kept = types.filter((t) => typeof t['name'] === 'string' && mapping.has(t['name'])).map((t) => ({ ...t }));
  for (const type of types) {
    rename(type as TypeRef);
    for (const field of values(type['fields']) as Array<{ type?: TypeRef; args?: unknown }>) {
      rename(field.type);
      for (const arg of values(field.args)) rename(arg.type);
    }
    for (const input of values(type['inputFields'])) rename(input.type);
    for (const ref of values(type['interfaces'])) rename(ref as TypeRef);
    for (const ref of values(type['possibleTypes'])) rename(ref as TypeRef);
  }
  // Directive arguments keep the built-in scalar (graphql-tools' schema mapper does not rewire them).
  types.push(...kept);
  return copy;
}

/** Names the built-in scalars by their remote names again in every document sent to the remote. */
export function restoreInRequests(executor: Executor, mapping: Map<string, string>): Executor {
  const reverse = new Map([...mapping].map(([from, to]) => [to, from]));
  return ((request: ExecutionRequest) => {
    const document: DocumentNode = visit(request.document, {
      [Kind.NAMED_TYPE]: (node) => {
        const original = reverse.get(node.name.value);
        return original ? { ...node, name: { ...node.name, value: original } } : undefined;
      },
    });
    return executor({ ...request, document });
  }) as Executor;
}

const BUILT_IN_SCALAR_TYPES: ReadonlyMap<string, GraphQLScalarType> = new Map(
  [GraphQLString, GraphQLInt, GraphQLFloat, GraphQLBoolean, GraphQLID].map((type) => [type.name, type]),
);

/**
 * The renamed built-in scalars of `schema` (`mapping`: built-in -> new name; custom scalars in the
 * renamed introspection result, which graphql-tools' wrapping leaves without coercion) coerce
 * values as the built-in does: a variable or literal the remote would
 * refuse (`"NOPE"` for an `Int` mapped to `Count`) is refused by the gateway before anything is
 * sent, with graphql-js's own message, on every route.
 */
export function withBuiltInCoercion(schema: GraphQLSchema, mapping: Map<string, string>): GraphQLSchema {
  if (mapping.size === 0) return schema;
  const builtInOf = new Map([...mapping].map(([builtIn, renamed]) => [renamed, BUILT_IN_SCALAR_TYPES.get(builtIn)!]));
  return mapSchema(schema, {
    [MapperKind.SCALAR_TYPE]: (type) => {
      const builtIn = builtInOf.get(type.name);
      if (!builtIn) return type;
      return new GraphQLScalarType({
        ...type.toConfig(),
        serialize: builtIn.serialize,
        parseValue: builtIn.parseValue,
        parseLiteral: builtIn.parseLiteral,
      });
    },
  });
}
