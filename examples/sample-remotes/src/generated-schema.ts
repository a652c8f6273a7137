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
 * A schema of `types` object types `<prefix>T<i>`, each with a few scalar fields and a link to a
 * `parent` type, and one root field `<prefix>t<i>` per type. Used by the swap benchmark and tests.
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
        // A link to the parent in a binary tree: types reference each other, but reference chains
        // stay logarithmic (graphql-js walks them recursively).
        const parent = types[index === 0 ? 0 : Math.floor((index - 1) / 2)];
        if (parent) fields['parent'] = { type: parent, resolve: () => ({}) };
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
