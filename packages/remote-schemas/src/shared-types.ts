import {
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLUnionType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLFieldConfigMap,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLType,
} from 'graphql';

function argumentsOf(args: readonly GraphQLArgument[]): string {
  return args
    .map((a) => `${a.name}:${String(a.type)}=${JSON.stringify(a.defaultValue) ?? ''}`)
    .sort()
    .join(',');
}

/**
 * The shape of a named type, descriptions left out: two remotes whose types have the same name and
 * shape share one type (as Hasura does: "Types must be same").
 */
export function shapeOf(type: GraphQLNamedType): string {
  if (isScalarType(type)) return 'scalar';
  if (isEnumType(type)) return `enum ${type.getValues().map((v) => v.name).sort().join('|')}`;
  if (isUnionType(type)) return `union ${type.getTypes().map((t) => t.name).sort().join('|')}`;
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).map(
      (f: GraphQLInputField) => `${f.name}:${String(f.type)}=${JSON.stringify(f.defaultValue) ?? ''}`,
    );
    return `input ${fields.sort().join(';')}`;
  }
  const composite = type as GraphQLObjectType | GraphQLInterfaceType;
  const fields = Object.values(composite.getFields()).map(
    (f: GraphQLField<unknown, unknown>) => `${f.name}(${argumentsOf(f.args)}):${String(f.type)}`,
  );
  const kind = isObjectType(type) ? 'type' : 'interface';
  return `${kind} ${composite.getInterfaces().map((i) => i.name).sort().join('&')} ${fields.sort().join(';')}`;
}

/**
 * Copies of `types` whose references to the names in `shared` point to those shared instances
 * instead, so that the copies can sit in one schema next to them. Leaf types have no references
 * and are kept as they are; resolvers are kept. `extend` adds fields to object types (by name);
 * their types are rewired as the others.
 */
export function rewire(
  types: ReadonlyMap<string, GraphQLNamedType>,
  shared: ReadonlyMap<string, GraphQLNamedType>,
  extend?: ReadonlyMap<string, GraphQLFieldConfigMap<unknown, unknown>>,
): Map<string, GraphQLNamedType> {
  const out = new Map<string, GraphQLNamedType>();
  const named = <T extends GraphQLNamedType>(type: T): T => (shared.get(type.name) ?? out.get(type.name) ?? type) as T;
  const wrap = (type: GraphQLType): GraphQLType => {
    if (isListType(type)) return new GraphQLList(wrap(type.ofType));
    if (isNonNullType(type)) return new GraphQLNonNull(wrap(type.ofType) as never);
    return named(type);
  };
  for (const [name, type] of types) {
    if (shared.has(name)) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      const config = type.toConfig();
      const extra = extend?.get(name);
      const all = extra ? { ...config.fields, ...extra } : config.fields;
      const fields = () =>
        Object.fromEntries(
          Object.entries(all).map(([fieldName, field]) => [
            fieldName,
            {
              ...field,
              type: wrap(field.type) as never,
              args: Object.fromEntries(
                Object.entries(field.args ?? {}).map(([argName, arg]) => [argName, { ...arg, type: wrap(arg.type) as never }]),
              ),
            },
          ]),
        );
      const interfaces = () => config.interfaces.map((i) => named(i));
      out.set(
        name,
        isObjectType(type)
          ? new GraphQLObjectType({ ...(config as ReturnType<GraphQLObjectType['toConfig']>), fields, interfaces })
          : new GraphQLInterfaceType({ ...(config as ReturnType<GraphQLInterfaceType['toConfig']>), fields, interfaces }),
      );
    } else if (isUnionType(type)) {
      const config = type.toConfig();
      out.set(name, new GraphQLUnionType({ ...config, types: () => config.types.map((t) => named(t)) }));
    } else if (isInputObjectType(type)) {
      const config = type.toConfig();
      out.set(
        name,
        new GraphQLInputObjectType({
          ...config,
          fields: () =>
            Object.fromEntries(Object.entries(config.fields).map(([fieldName, f]) => [fieldName, { ...f, type: wrap(f.type) as never }])),
        }),
      );
    } else {
      out.set(name, type);
    }
  }
  return out;
}
