import {
  GraphQLID,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLFieldConfigMap,
} from 'graphql';

export interface GeneratedSchemaOptions {
  /** Number of object types besides `Query`. */
  types: number;
  /** Prepended to every type and root field name, so that several generated remotes can coexist. @default '' */
  prefix?: string;
}

/**
 * A schema of `types` object types `<prefix>T<i>`, each with a scalar field or two and a link to the
 * next type, and one root field `<prefix>t<i>` per type. Used by the swap benchmark and tests.
 */
export function createGeneratedSchema(options: GeneratedSchemaOptions): GraphQLSchema {
  const prefix = options.prefix ?? '';
  const count = Math.max(1, Math.floor(options.types));
  const types: GraphQLObjectType[] = new Array<GraphQLObjectType>(count);
  for (let i = 0; i < count; i++) {
    const index = i;
    types[i] = new GraphQLObjectType({
      name: `${prefix}T${i}`,
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = {
          id: { type: new GraphQLNonNull(GraphQLID), resolve: () => `${prefix}${index}` },
          name: { type: GraphQLString, resolve: () => `${prefix}T${index}` },
          value: { type: GraphQLInt, resolve: () => index },
        };
        const next = types[(index + 1) % count];
        if (next) fields['next'] = { type: next, resolve: () => ({}) };
        return fields;
      },
    });
  }
  const queryFields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (let i = 0; i < count; i++) {
    const type = types[i];
    if (type) queryFields[`${prefix}t${i}`] = { type, resolve: () => ({}) };
  }
  return new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: queryFields }) });
}
