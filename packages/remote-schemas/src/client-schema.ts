import {
  GraphQLDirective,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLUnionType,
  assertInterfaceType,
  assertNullableType,
  assertObjectType,
  buildClientSchema,
  introspectionTypes,
  isInputType,
  isInterfaceType,
  isObjectType,
  isOutputType,
  isUnionType,
  isInputObjectType,
  parseValue,
  specifiedScalarTypes,
  valueFromAST,
  type DirectiveLocation,
  type GraphQLArgumentConfig,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLNamedType,
  type GraphQLType,
  type IntrospectionDirective,
  type IntrospectionField,
  type IntrospectionInputObjectType,
  type IntrospectionInputValue,
  type IntrospectionInterfaceType,
  type IntrospectionObjectType,
  type IntrospectionUnionType,
  type IntrospectionQuery,
  type IntrospectionType,
  type IntrospectionTypeRef,
} from 'graphql';

/**
 * `buildClientSchema(introspection)` of graphql-js, with the expensive part (building every type's
 * fields and arguments) done type by type so that it can be paused: graphql-js builds them all in
 * the schema's constructor, one block of 100-300 ms for 5,000 types.
 *
 * Only the happy path is ours. Anything unexpected (a malformed or incomplete result, a type
 * reference that does not resolve) makes it fall back to graphql-js's own `buildClientSchema`, so
 * that errors, and the schema of any result we do not build the same way, are graphql-js's.
 */
export function* buildClientSchemaInSteps(introspection: IntrospectionQuery): Generator<void, GraphQLSchema, void> {
  let schema: GraphQLSchema | undefined;
  try {
    schema = yield* build(introspection);
  } catch {
    // Below: graphql-js says what is wrong, in its words.
  }
  return schema ?? buildClientSchema(introspection);
}

type Named = Record<string, GraphQLNamedType>;

function* build(introspection: IntrospectionQuery): Generator<void, GraphQLSchema, void> {
  const source = introspection.__schema;
  const byName: Named = Object.create(null) as Named;
  let count = 0;
  for (const type of source.types) {
    byName[type.name] = defineType(type, byName);
    if (++count % 64 === 0) yield;
  }
  // As graphql-js: the standard scalars and introspection types are its own instances.
  for (const standard of [...specifiedScalarTypes, ...introspectionTypes]) {
    if (byName[standard.name] !== undefined) byName[standard.name] = standard;
  }
  const types = Object.values(byName);
  // The fields, arguments, interfaces and members of every type, one type per step.
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      type.getFields();
      type.getInterfaces();
    } else if (isUnionType(type)) {
      type.getTypes();
    } else if (isInputObjectType(type)) {
      type.getFields();
    }
    yield;
  }
  const root = (ref: { name: string } | null | undefined) => (ref ? assertObjectType(namedType(ref, byName)) : null);
  return new GraphQLSchema({
    description: source.description,
    query: root(source.queryType),
    mutation: root(source.mutationType),
    subscription: root(source.subscriptionType),
    types,
    directives: source.directives ? source.directives.map((directive) => defineDirective(directive, byName)) : [],
  });
}

function namedType(ref: { name?: string }, byName: Named): GraphQLNamedType {
  // As graphql-js: an empty or missing name is no reference (never the type named "null").
  const type = ref.name ? byName[ref.name] : undefined;
  if (type === undefined) throw new Error('unknown type');
  return type;
}

function typeOf(ref: IntrospectionTypeRef, byName: Named): GraphQLType {
  if (ref.kind === 'LIST') return new GraphQLList(typeOf(present(ref.ofType), byName));
  if (ref.kind === 'NON_NULL') return new GraphQLNonNull(assertNullableType(typeOf(present(ref.ofType), byName)));
  return namedType(ref, byName);
}

/** `value`, which graphql-js requires to be truthy (an empty string is as missing as null). */
function present<T>(value: T | null | undefined): T {
  if (!value) throw new Error('missing');
  return value;
}

function defineType(type: IntrospectionType, byName: Named): GraphQLNamedType {
  const { name, description } = type;
  switch (type.kind) {
    case 'SCALAR':
      return new GraphQLScalarType({ name, description, specifiedByURL: type.specifiedByURL });
    case 'OBJECT':
      return new GraphQLObjectType({
        name,
        description,
        interfaces: interfacesOf(type, byName),
        fields: fieldsOf(type, byName),
      });
    case 'INTERFACE':
      return new GraphQLInterfaceType({
        name,
        description,
        interfaces: interfacesOf(type, byName),
        fields: fieldsOf(type, byName),
      });
    case 'UNION':
      present(type.possibleTypes);
      return new GraphQLUnionType({ name, description, types: membersOf(type, byName) });
    case 'ENUM': {
      const values: Record<string, { description: string | null | undefined; deprecationReason: string | null | undefined }> = Object.create(null);
      for (const value of present(type.enumValues)) {
        values[value.name] = { description: value.description, deprecationReason: value.deprecationReason };
      }
      return new GraphQLEnumType({ name, description, values });
    }
    case 'INPUT_OBJECT':
      present(type.inputFields);
      return new GraphQLInputObjectType({ name, description, fields: inputFieldsOf(type, byName), isOneOf: type.isOneOf });
    default:
      throw new Error('unknown kind');
  }
}

// The thunks below are made by functions of their own: thousands are made per remote, and a
// closure written inline in a property would be given a name at run time by some loaders (tsx).

function interfacesOf(type: IntrospectionObjectType | IntrospectionInterfaceType, byName: Named): () => GraphQLInterfaceType[] {
  // graphql-js accepts `interfaces: null` on an interface (older servers send it).
  return () =>
    (type.kind === 'INTERFACE' && type.interfaces === null ? [] : present(type.interfaces)).map((ref) =>
      assertInterfaceType(namedType(ref, byName)),
    );
}

function fieldsOf(type: IntrospectionObjectType | IntrospectionInterfaceType, byName: Named): () => GraphQLFieldConfigMap<unknown, unknown> {
  return () => defineFields(present(type.fields), byName);
}

function membersOf(type: IntrospectionUnionType, byName: Named): () => GraphQLObjectType[] {
  return () => type.possibleTypes.map((ref) => assertObjectType(namedType(ref, byName)));
}

function inputFieldsOf(type: IntrospectionInputObjectType, byName: Named): () => Record<string, GraphQLArgumentConfig> {
  return () => defineInputValues(type.inputFields, byName);
}

function defineFields(fields: readonly IntrospectionField[], byName: Named): GraphQLFieldConfigMap<unknown, unknown> {
  const result: GraphQLFieldConfigMap<unknown, unknown> = Object.create(null);
  for (const field of fields) {
    const type = typeOf(field.type, byName);
    if (!isOutputType(type)) throw new Error('not an output type');
    const config: GraphQLFieldConfig<unknown, unknown> = {
      description: field.description,
      deprecationReason: field.deprecationReason,
      type,
      args: defineInputValues(present(field.args), byName),
    };
    result[field.name] = config;
  }
  return result;
}

function defineInputValues(values: readonly IntrospectionInputValue[], byName: Named): Record<string, GraphQLArgumentConfig> {
  const result: Record<string, GraphQLArgumentConfig> = Object.create(null);
  for (const value of values) {
    const type = typeOf(value.type, byName);
    if (!isInputType(type)) throw new Error('not an input type');
    result[value.name] = {
      description: value.description,
      type,
      defaultValue: value.defaultValue !== null && value.defaultValue !== undefined ? valueFromAST(parseValue(value.defaultValue), type) : undefined,
      deprecationReason: value.deprecationReason,
    };
  }
  return result;
}

function defineDirective(directive: IntrospectionDirective, byName: Named): GraphQLDirective {
  return new GraphQLDirective({
    name: directive.name,
    description: directive.description,
    isRepeatable: directive.isRepeatable,
    deprecationReason: directive.deprecationReason,
    locations: present(directive.locations).slice() as DirectiveLocation[],
    args: defineInputValues(present(directive.args), byName),
  });
}
