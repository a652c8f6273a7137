import {
  GraphQLSchema,
  OperationTypeNode,
  buildClientSchema,
  isInterfaceType,
  isObjectType,
  validateSchema,
  type ExecutionResult,
  type GraphQLObjectType,
  type IntrospectionQuery,
} from 'graphql';
import { defaultMergedResolver, delegateToSchema, type SubschemaConfig } from '@graphql-tools/delegate';
import { RenameInterfaceFields, RenameObjectFields, RenameTypes, WrapFields, wrapSchema } from '@graphql-tools/wrap';
import type { Transform } from '@graphql-tools/delegate';
import { BUILT_IN_SCALARS, builtInScalarMapping, withBuiltInCoercion } from './builtin-scalars.js';
import { buildClientSchemaInSteps } from './client-schema.js';
import { SLICE_MS, runInSlices } from './slices.js';
import { RemoteSchemaError } from './errors.js';
import type { FieldNamesCustomization, RemoteSchemaCustomization } from './types.js';

/**
 * Builds and checks the remote's own schema from its introspection result; anything graphql-js
 * would refuse is a `remote-schema-error` that says what is wrong.
 */
export function buildRemoteSchema(name: string, introspection: ExecutionResult): GraphQLSchema {
  const schema = buildUncheckedRemoteSchema(name, introspection);
  checkRemoteSchema(name, schema);
  return schema;
}

/** The first half of {@link buildRemoteSchema}: the schema, not yet validated. */
export function buildUncheckedRemoteSchema(name: string, introspection: ExecutionResult): GraphQLSchema {
  const data = introspectionData(name, introspection);
  try {
    return buildClientSchema(data);
  } catch (cause) {
    throw invalidRemoteSchema(name, cause);
  }
}

/**
 * {@link buildUncheckedRemoteSchema} in slices of about `SLICE_MS` with the event loop let through
 * between them (a remote of thousands of types takes 100 ms and more to build).
 */
export async function buildUncheckedRemoteSchemaInSlices(name: string, introspection: ExecutionResult): Promise<GraphQLSchema> {
  const data = introspectionData(name, introspection);
  try {
    return await runInSlices(buildClientSchemaInSteps(data), SLICE_MS);
  } catch (cause) {
    throw invalidRemoteSchema(name, cause);
  }
}

function introspectionData(name: string, introspection: ExecutionResult): IntrospectionQuery {
  const data = introspection.data as IntrospectionQuery | null | undefined;
  if (!data || typeof data !== 'object' || !data.__schema) {
    throw new RemoteSchemaError('remote-schema-error', `remote schema "${name}": the introspection result has no "__schema"`);
  }
  return data;
}

function invalidRemoteSchema(name: string, cause: unknown): RemoteSchemaError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new RemoteSchemaError('remote-schema-error', `remote schema "${name}" is invalid: ${message}`, { cause });
}

/** The second half of {@link buildRemoteSchema}: throws for a schema that is not valid. */
export function checkRemoteSchema(name: string, schema: GraphQLSchema): void {
  const errors = validateSchema(schema);
  if (errors.length > 0) {
    throw new RemoteSchemaError(
      'remote-schema-error',
      `remote schema "${name}" is invalid: ${errors.map((e) => e.message).join('; ')}`,
    );
  }
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

/** A type's final name; `mapping` wins, prefix and suffix never touch built-in scalars, roots or `__` names. */
function finalTypeName(
  name: string,
  typeNames: NonNullable<RemoteSchemaCustomization['type_names']>,
  roots: ReadonlySet<string>,
): string {
  const mapped = typeNames.mapping && Object.hasOwn(typeNames.mapping, name) ? typeNames.mapping[name] : undefined;
  if (mapped !== undefined) return mapped;
  if (BUILT_IN_SCALARS.has(name) || name.startsWith('__') || roots.has(name)) return name;
  return affix(typeNames.prefix, name, typeNames.suffix);
}

export function fieldRenamer(rule: FieldNamesCustomization): (name: string) => string {
  return (name) => {
    if (name.startsWith('__')) return name;
    const mapped = rule.mapping && Object.hasOwn(rule.mapping, name) ? rule.mapping[name] : undefined;
    return mapped ?? affix(rule.prefix, name, rule.suffix);
  };
}

function notDistinct(what: string, first: string, second: string, final: string): RemoteSchemaError {
  return new RemoteSchemaError('invalid-params', `${what} are not distinct after customization: "${first}" and "${second}" both become "${final}"`);
}

/**
 * Refuses with `invalid-params` a customization under which two types of the remote, or two fields
 * of one type, end with the same name: graphql-tools would let one silently replace the other.
 * `schema` is the remote's own schema, before any renaming. Built-in scalars always keep their
 * name (a mapping that renames one adds a type, the built-in stays for directive arguments), and
 * the namespace types (`<namespace>_query`, `<namespace>_mutation`, `<namespace>_subscription`)
 * count too.
 */
export function checkDistinctNames(schema: GraphQLSchema, customization: RemoteSchemaCustomization | undefined): void {
  if (!customization) return;
  const roots = rootsOf(schema);
  const typeNames = customization.type_names;
  const namespace = customization.root_fields_namespace || undefined;
  if (typeNames || namespace) {
    const rootNames = new Set(Object.values(roots).map((t) => t.name));
    const owners = new Map<string, string>();
    const claim = (final: string, name: string) => {
      const other = owners.get(final);
      if (other !== undefined && other !== name) throw notDistinct('type names', other, name, final);
      owners.set(final, name);
    };
    for (const scalar of BUILT_IN_SCALARS) claim(scalar, scalar);
    const names = Object.keys(schema.getTypeMap()).filter((name) => !name.startsWith('__'));
    for (const name of names) claim(typeNames ? finalTypeName(name, typeNames, rootNames) : name, name);
    if (namespace) {
      for (const [operation, root] of [['query', roots.query], ['mutation', roots.mutation], ['subscription', roots.subscription]] as const) {
        const wrapper = `${namespace}_${operation}`;
        const taken = owners.get(wrapper);
        if (root && taken !== undefined) {
          throw new RemoteSchemaError(
            'invalid-params',
            `type names are not distinct after customization: "${taken}" becomes "${wrapper}", the type of root fields namespace "${namespace}"`,
          );
        }
      }
    }
    // graphql-tools renames types one at a time and skips a new name that some type still has: a
    // mapping to the original name of another of the remote's types (`User` → `Post` while `Post`
    // itself becomes `Post_t`) would leave `User` as it was.
    for (const [from, target] of Object.entries(typeNames?.mapping ?? {})) {
      if (target !== from && schema.getType(target) && !BUILT_IN_SCALARS.has(target) && !BUILT_IN_SCALARS.has(from)) {
        throw new RemoteSchemaError(
          'invalid-params',
          `type name mapping of "${from}" to "${target}" names another type of the remote; map to a name the remote does not use`,
        );
      }
    }
    // A built-in scalar is renamed in the introspection result, before the types are: a mapping to
    // the name of one of the remote's own types would merge the two there, even when that type is
    // renamed in turn.
    for (const [scalar, target] of builtInScalarMapping(typeNames?.mapping)) {
      if (schema.getType(target) && !BUILT_IN_SCALARS.has(target)) {
        throw new RemoteSchemaError(
          'invalid-params',
          `type name mapping of built-in scalar "${scalar}" to "${target}" clashes with the remote's own type "${target}"`,
        );
      }
    }
  }
  const rules = new Map((customization.field_names ?? []).map((rule) => [rule.parent_type, rule]));
  const types = new Set([...rules.keys()]);
  for (const typeName of types) {
    const type = schema.getType(typeName);
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    const rule = rules.get(typeName);
    const rename = rule ? fieldRenamer(rule) : (name: string) => name;
    const owners = new Map<string, string>();
    for (const name of Object.keys(type.getFields())) {
      const final = rename(name);
      const other = owners.get(final);
      if (other !== undefined) throw notDistinct(`field names of type "${typeName}"`, other, name, final);
      owners.set(final, name);
    }
  }
  checkInterfaceFieldNames(schema, rules);
}

/**
 * A field an interface declares keeps one name across the interface and every type implementing
 * it: its renaming (or none) must be the same on each of them, as in Hasura.
 */
function checkInterfaceFieldNames(schema: GraphQLSchema, rules: ReadonlyMap<string, FieldNamesCustomization>): void {
  if (rules.size === 0) return;
  const finalName = (typeName: string, field: string) => {
    const rule = rules.get(typeName);
    return rule ? fieldRenamer(rule)(field) : field;
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isInterfaceType(type) || type.name.startsWith('__')) continue;
    const { objects, interfaces } = schema.getImplementations(type);
    for (const implementation of [...objects, ...interfaces]) {
      if (!rules.has(type.name) && !rules.has(implementation.name)) continue;
      for (const field of Object.keys(type.getFields())) {
        const declared = finalName(type.name, field);
        const implemented = finalName(implementation.name, field);
        if (declared !== implemented) {
          throw new RemoteSchemaError(
            'invalid-params',
            `field name customization of "${field}" differs between interface "${type.name}" (to "${declared}") and ` +
              `"${implementation.name}", which implements it (to "${implemented}"); rename it alike on both`,
          );
        }
      }
    }
  }
}

/**
 * The final name of every type of `schema` under `customization` (mapping wins; prefix and suffix
 * never touch built-in scalars, root types or `__` names). `checkDistinctNames` has made sure that
 * no two types end with one name.
 */
export function typeRenamer(
  schema: GraphQLSchema,
  customization: RemoteSchemaCustomization | undefined,
  renamedScalars: ReadonlySet<string> = new Set(),
): (name: string) => string {
  const typeNames = customization?.type_names;
  if (!typeNames) return (name) => name;
  const roots = new Set(Object.values(rootsOf(schema)).map((t) => t.name));
  // Built-in scalars mapped elsewhere were renamed in the introspection result already.
  return (name) => (renamedScalars.has(name) || BUILT_IN_SCALARS.has(name) ? name : finalTypeName(name, typeNames, roots));
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
  const fieldNames = new Map((customization.field_names ?? []).map((f) => [f.parent_type, fieldRenamer(f)]));
  if (fieldNames.size > 0) {
    const renameField = (typeName: string, fieldName: string) => fieldNames.get(typeName)?.(fieldName) ?? fieldName;
    transforms.push(new RenameObjectFields(renameField), new RenameInterfaceFields(renameField));
  }
  if (customization.type_names) {
    const rename = typeRenamer(remoteSchema, customization, renamedScalars);
    transforms.push(new RenameTypes(rename, { renameBuiltins: false, renameScalars: true }));
  }
  const namespace = customization.root_fields_namespace;
  if (namespace) {
    // Nullable, so that a failing remote costs only its own namespace field, not the whole
    // response's data (other remotes' fields answered beside it). A subscription's namespace field
    // stands for the one field selected inside it: the gateway subscribes to that field on the
    // remote and nests each event under the namespace's key (see plan/compile.ts); graphql-tools'
    // own delegation is never asked to run it.
    const nullable = { isNullable: true };
    const roots = rootsOf(remoteSchema);
    for (const operation of ['query', 'mutation', 'subscription'] as const) {
      const root = roots[operation];
      if (root) transforms.push(new WrapFields(root.name, [namespace], [`${namespace}_${operation}`], undefined, undefined, nullable));
    }
  }
  // graphql-tools' wrapping leaves scalars without coercion: renamed built-ins get theirs back.
  const schema = withBuiltInCoercion(
    wrapSchema({ schema: remoteSchema, executor, transforms, batch: false }),
    builtInScalarMapping(customization.type_names?.mapping),
  );
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

