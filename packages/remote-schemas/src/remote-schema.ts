import {
  GraphQLSchema,
  OperationTypeNode,
  buildClientSchema,
  isObjectType,
  validateSchema,
  type ExecutionResult,
  type GraphQLObjectType,
  type IntrospectionQuery,
} from 'graphql';
import { defaultMergedResolver, delegateToSchema, type SubschemaConfig } from '@graphql-tools/delegate';
import { RenameObjectFields, RenameRootFields, RenameTypes, WrapFields, wrapSchema } from '@graphql-tools/wrap';
import type { Transform } from '@graphql-tools/delegate';
import { BUILT_IN_SCALARS } from './builtin-scalars.js';
import { RemoteSchemaError } from './errors.js';
import type { RemoteSchemaCustomization } from './types.js';

/**
 * Builds and checks the remote's own schema from its introspection result; anything graphql-js
 * would refuse is a `remote-schema-error` that says what is wrong.
 */
export function buildRemoteSchema(name: string, introspection: ExecutionResult): GraphQLSchema {
  const data = introspection.data as IntrospectionQuery | null | undefined;
  if (!data || typeof data !== 'object' || !data.__schema) {
    throw new RemoteSchemaError('remote-schema-error', `remote schema "${name}": the introspection result has no "__schema"`);
  }
  let schema: GraphQLSchema;
  try {
    schema = buildClientSchema(data);
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new RemoteSchemaError('remote-schema-error', `remote schema "${name}" is invalid: ${message}`, { cause });
  }
  const errors = validateSchema(schema);
  if (errors.length > 0) {
    throw new RemoteSchemaError(
      'remote-schema-error',
      `remote schema "${name}" is invalid: ${errors.map((e) => e.message).join('; ')}`,
    );
  }
  return schema;
}

/** A remote's schema as clients see it: customized, with resolvers that reach the remote. */
export interface PublicRemoteSchema {
  schema: GraphQLSchema;
  /** The remote root types (public shape), by operation. */
  roots: Partial<Record<'query' | 'mutation' | 'subscription', GraphQLObjectType>>;
}

/** The root operation types a schema has, by operation. */
export function rootsOf(schema: GraphQLSchema): PublicRemoteSchema['roots'] {
  const roots: PublicRemoteSchema['roots'] = {};
  const query = schema.getQueryType();
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  if (query) roots.query = query;
  if (mutation) roots.mutation = mutation;
  if (subscription) roots.subscription = subscription;
  return roots;
}

/**
 * Without customization the remote's own types are the public ones: resolvers are attached in place
 * (linear in the number of fields), which is several times cheaper than `wrapSchema`'s copy of every
 * type and matters for remotes with thousands of types.
 */
function attachProxyResolvers(schema: GraphQLSchema, subschema: SubschemaConfig): void {
  const rootOperations = new Map<GraphQLObjectType, OperationTypeNode>();
  const roots = rootsOf(schema);
  if (roots.query) rootOperations.set(roots.query, OperationTypeNode.QUERY);
  if (roots.mutation) rootOperations.set(roots.mutation, OperationTypeNode.MUTATION);
  if (roots.subscription) rootOperations.set(roots.subscription, OperationTypeNode.SUBSCRIPTION);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const operation = rootOperations.get(type);
    for (const field of Object.values(type.getFields())) {
      if (!operation) {
        field.resolve = defaultMergedResolver;
      } else if (operation === OperationTypeNode.SUBSCRIPTION) {
        field.subscribe = (root, args, context, info) =>
          delegateToSchema({ schema: subschema, operation, rootValue: root, args, context, info });
        field.resolve = (payload: unknown) => payload;
      } else {
        field.resolve = (root, args, context, info) =>
          delegateToSchema({ schema: subschema, operation, rootValue: root, args, context, info });
      }
    }
  }
}

function affix(prefix: string | undefined, name: string, suffix: string | undefined): string {
  return `${prefix ?? ''}${name}${suffix ?? ''}`;
}


/**
 * The final name of every type of `schema` under `customization` (mapping wins; prefix and suffix
 * never touch built-in scalars, root types or `__` names). Two types with one final name:
 * `invalid-params`.
 */
export function typeRenamer(
  schema: GraphQLSchema,
  customization: RemoteSchemaCustomization | undefined,
  renamedScalars: ReadonlySet<string> = new Set(),
): (name: string) => string {
  const typeNames = customization?.type_names;
  if (!typeNames) return (name) => name;
  const mapping = typeNames.mapping ?? {};
  const roots = new Set(Object.values(rootsOf(schema)).map((t) => t.name));
  const rename = (name: string): string => {
    // Built-in scalars mapped elsewhere were renamed in the introspection result already.
    if (renamedScalars.has(name) || BUILT_IN_SCALARS.has(name)) return name;
    const mapped = Object.hasOwn(mapping, name) ? mapping[name] : undefined;
    if (mapped !== undefined) return mapped;
    if (name.startsWith('__') || roots.has(name)) return name;
    return affix(typeNames.prefix, name, typeNames.suffix);
  };
  const seen = new Map<string, string>();
  for (const name of Object.keys(schema.getTypeMap())) {
    if (name.startsWith('__')) continue;
    const renamed = rename(name);
    const other = seen.get(renamed);
    if (other !== undefined) {
      throw new RemoteSchemaError(
        'invalid-params',
        `type names are not distinct after customization: "${other}" and "${name}" both become "${renamed}"`,
      );
    }
    seen.set(renamed, name);
  }
  return rename;
}

/** Builds the public schema of a remote; `executor` reaches it. */
export function publicRemoteSchema(
  remoteSchema: GraphQLSchema,
  executor: NonNullable<SubschemaConfig['executor']>,
  customization: RemoteSchemaCustomization | undefined,
  renamedScalars: ReadonlySet<string> = new Set(),
): PublicRemoteSchema {
  if (!customization) {
    attachProxyResolvers(remoteSchema, { schema: remoteSchema, executor });
    return { schema: remoteSchema, roots: rootsOf(remoteSchema) };
  }
  const transforms: Transform[] = [];
  const fieldNames = new Map((customization.field_names ?? []).map((f) => [f.parent_type, f]));
  if (fieldNames.size > 0) {
    transforms.push(
      new RenameObjectFields((typeName, fieldName) => {
        const rule = fieldNames.get(typeName);
        if (!rule || fieldName.startsWith('__')) return fieldName;
        const mapped = rule.mapping && Object.hasOwn(rule.mapping, fieldName) ? rule.mapping[fieldName] : undefined;
        return mapped ?? affix(rule.prefix, fieldName, rule.suffix);
      }),
    );
  }
  if (customization.type_names) {
    const rename = typeRenamer(remoteSchema, customization, renamedScalars);
    transforms.push(new RenameTypes(rename, { renameBuiltins: false, renameScalars: true }));
  }
  const namespace = customization.root_fields_namespace;
  if (namespace) {
    const query = remoteSchema.getQueryType();
    const mutation = remoteSchema.getMutationType();
    // Nullable, so that a failing remote costs only its own namespace field, not the whole
    // response's data (other remotes' fields answered beside it).
    const nullable = { isNullable: true };
    if (query) transforms.push(new WrapFields(query.name, [namespace], [`${namespace}_query`], undefined, undefined, nullable));
    if (mutation) {
      transforms.push(new WrapFields(mutation.name, [namespace], [`${namespace}_mutation`], undefined, undefined, nullable));
    }
    // A subscription's root field must be the event stream itself, so it cannot be nested: its
    // fields are prefixed with the namespace instead (`<namespace>_<field>`).
    if (remoteSchema.getSubscriptionType()) {
      transforms.push(
        new RenameRootFields((operation, name) => (operation === 'Subscription' ? `${namespace}_${name}` : name)),
      );
    }
  }
  const schema = wrapSchema({ schema: remoteSchema, executor, transforms, batch: false });
  // The wrapped schema inherits "already validated" from the remote's; check the renamed shape anew.
  const errors = validateSchema(new GraphQLSchema({ ...schema.toConfig(), assumeValid: false }));
  if (errors.length > 0) {
    throw new RemoteSchemaError(
      'invalid-params',
      `the customization makes the schema invalid: ${errors.map((e) => e.message).join('; ')}`,
    );
  }
  return { schema, roots: rootsOf(schema) };
}

