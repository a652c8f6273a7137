import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLUnionType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  specifiedDirectives,
  validateSchema,
  type GraphQLArgumentConfig,
  type GraphQLEnumValueConfigMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLNamedType,
  type GraphQLType,
} from 'graphql';
import type { RoleGrant } from './grant.js';
import { presetShapeOf } from './presets.js';

/** What a request of a role may do on one remote: its grant, and the remote's own schema it is checked against. */
export interface RemoteAccess {
  readonly grant: RoleGrant;
  /** The remote's own schema (introspected, before customization): presets are added in its names. */
  readonly schema: GraphQLSchema;
}

/** A schema built for one role by a registry: the role, and its access to each remote it contains, by remote name. */
export interface RoleSchemaInfo {
  readonly role: string;
  readonly remotes: ReadonlyMap<string, RemoteAccess>;
}

const roleSchemas = new WeakMap<GraphQLSchema, RoleSchemaInfo>();

/**
 * Records that `schema` is the schema of `info.role`. Grants travel with the schema, so that a
 * request keeps the grants of the schema it started with whatever is committed meanwhile.
 */
export function recordRoleSchema(schema: GraphQLSchema, info: RoleSchemaInfo): void {
  roleSchemas.set(schema, info);
}

/** The role and grants of a role schema; `undefined` for any other schema (the live one included). */
export function roleSchemaInfo(schema: GraphQLSchema | undefined): RoleSchemaInfo | undefined {
  return schema === undefined ? undefined : roleSchemas.get(schema);
}

/**
 * The part of `remote` that `grant` lets a role see, as a schema of its own: only the granted
 * types, fields, arguments, enum values, input fields, union members and interfaces, with the
 * remote's descriptions, deprecations and default values. Preset arguments and input fields are
 * left out (the gateway sets them), and so is an argument or input field whose input type has
 * nothing left but presets. Resolvers are not copied: the caller attaches its own.
 *
 * Only the granted types are built (the remote's other types are never visited), so the cost
 * follows the size of the grant, not of the remote. Built-in scalars and custom scalars are
 * shared with `remote`; so is an enum whose values are all granted. Throws when the grant does
 * not fit `remote` or the result is not a valid schema.
 */
export function buildRoleSchema(remote: GraphQLSchema, grant: RoleGrant): GraphQLSchema {
  const { hidden } = presetShapeOf(grant, remote);
  const built = new Map<string, GraphQLNamedType>();

  const named = (name: string): GraphQLNamedType => {
    const existing = built.get(name);
    if (existing) return existing;
    const type = remote.getType(name);
    if (!type) throw new Error(`type "${name}" of the grant does not exist in the remote schema`);
    // Scalars have nothing to hide; a remote's built-in scalars may also carry another name (a
    // customization mapping String to Text renames them in the remote schema before this).
    if (isScalarType(type)) {
      built.set(name, type);
      return type;
    }
    const typeGrant = grant.types.get(name);
    if (!typeGrant) throw new Error(`type "${name}" is used by the grant but not granted`);
    let copy: GraphQLNamedType;
    if (isObjectType(type) || isInterfaceType(type)) {
      if (typeGrant.kind !== 'object' && typeGrant.kind !== 'interface') throw kindMismatch(name);
      const remoteFields = type.getFields();
      const fields = (): GraphQLFieldConfigMap<unknown, unknown> => {
        const out: GraphQLFieldConfigMap<unknown, unknown> = {};
        for (const [fieldName, fieldGrant] of typeGrant.fields) {
          const field = remoteFields[fieldName];
          if (!field) throw new Error(`field "${name}.${fieldName}" of the grant does not exist in the remote schema`);
          const args: Record<string, GraphQLArgumentConfig> = {};
          for (const arg of field.args) {
            const argGrant = fieldGrant.args.get(arg.name);
            if (!argGrant || argGrant.preset || hidden.has(namedTypeOf(arg.type))) continue;
            args[arg.name] = {
              type: wrap(arg.type) as GraphQLArgumentConfig['type'],
              description: arg.description,
              defaultValue: arg.defaultValue,
              deprecationReason: arg.deprecationReason,
            };
          }
          out[fieldName] = {
            type: wrap(field.type) as GraphQLFieldConfigMap<unknown, unknown>[string]['type'],
            args,
            description: field.description,
            deprecationReason: field.deprecationReason,
          };
        }
        return out;
      };
      const interfaces = () => typeGrant.interfaces.map((i) => named(i) as GraphQLInterfaceType);
      const config = { name, description: type.description, fields, interfaces };
      copy = isObjectType(type) ? new GraphQLObjectType(config) : new GraphQLInterfaceType(config);
    } else if (isInputObjectType(type)) {
      if (typeGrant.kind !== 'input') throw kindMismatch(name);
      const remoteFields = type.getFields();
      const fields = (): GraphQLInputFieldConfigMap => {
        const out: GraphQLInputFieldConfigMap = {};
        for (const [fieldName, fieldGrant] of typeGrant.fields) {
          const field = remoteFields[fieldName];
          if (!field) throw new Error(`input field "${name}.${fieldName}" of the grant does not exist in the remote schema`);
          if (fieldGrant.preset || hidden.has(namedTypeOf(field.type))) continue;
          out[fieldName] = {
            type: wrap(field.type) as GraphQLInputFieldConfigMap[string]['type'],
            description: field.description,
            defaultValue: field.defaultValue,
            deprecationReason: field.deprecationReason,
          };
        }
        return out;
      };
      copy = new GraphQLInputObjectType({ name, description: type.description, fields });
    } else if (isEnumType(type)) {
      if (typeGrant.kind !== 'enum') throw kindMismatch(name);
      const values = type.getValues();
      if (values.every((v) => typeGrant.values.has(v.name))) {
        copy = type;
      } else {
        const kept: GraphQLEnumValueConfigMap = {};
        for (const value of values) {
          if (!typeGrant.values.has(value.name)) continue;
          kept[value.name] = { value: value.value, description: value.description, deprecationReason: value.deprecationReason };
        }
        copy = new GraphQLEnumType({ name, description: type.description, values: kept });
      }
    } else if (isUnionType(type)) {
      if (typeGrant.kind !== 'union') throw kindMismatch(name);
      copy = new GraphQLUnionType({
        name,
        description: type.description,
        types: () => typeGrant.members.map((m) => named(m) as GraphQLObjectType),
      });
    } else {
      throw new Error(`type "${name}" is of an unknown kind`);
    }
    built.set(name, copy);
    return copy;
  };

  const wrap = (type: GraphQLType): GraphQLType => {
    if (isNonNullType(type)) return new GraphQLNonNull(wrap(type.ofType) as never);
    if (isListType(type)) return new GraphQLList(wrap(type.ofType));
    return named(type.name);
  };

  const root = (name: string | undefined): GraphQLObjectType | undefined => {
    if (name === undefined) return undefined;
    const type = named(name);
    if (!isObjectType(type)) throw new Error(`root type "${name}" is not an object type`);
    return type;
  };
  const query = root(grant.roots.query);
  const mutation = root(grant.roots.mutation);
  const subscription = root(grant.roots.subscription);
  const types: GraphQLNamedType[] = [];
  for (const name of grant.types.keys()) {
    if (name.startsWith('__')) continue;
    // A type of the grant that only input presets use (hidden from the role) is left out.
    if (hidden.has(name)) continue;
    types.push(named(name));
  }
  const schema = new GraphQLSchema({
    query: query ?? null,
    mutation: mutation ?? null,
    subscription: subscription ?? null,
    types,
    directives: specifiedDirectives,
    ...(remote.description ? { description: remote.description } : {}),
  });
  // Cheap (the role's part only), and it keeps a grant that slipped past validation from reaching
  // clients as a broken schema.
  const errors = validateSchema(schema);
  if (errors.length > 0) throw new Error(`the role's schema is invalid: ${errors.map((e) => e.message).join('; ')}`);
  return schema;
}

const whole = new WeakMap<RoleGrant, boolean>();

/**
 * Whether `grant` gives everything of `remote` (its own schema) without a preset: then the role's
 * part is the remote's public schema itself, shared with admin instead of copied. Linear in the
 * size of the remote, once per grant.
 */
export function grantsWholeRemote(remote: GraphQLSchema, grant: RoleGrant): boolean {
  let answer = whole.get(grant);
  if (answer === undefined) {
    answer = !grant.hasPresets && coversAll(remote, grant);
    whole.set(grant, answer);
  }
  return answer;
}

function coversAll(remote: GraphQLSchema, grant: RoleGrant): boolean {
  for (const operation of ['query', 'mutation', 'subscription'] as const) {
    if (remote.getRootType(operation as never)?.name !== grant.roots[operation]) return false;
  }
  for (const [name, type] of Object.entries(remote.getTypeMap())) {
    // Scalars have nothing to hide, and a grant names only those it uses.
    if (name.startsWith('__') || isScalarType(type)) continue;
    const typeGrant = grant.types.get(name);
    if (!typeGrant) return false;
    if (isObjectType(type) || isInterfaceType(type)) {
      if (typeGrant.kind !== 'object' && typeGrant.kind !== 'interface') return false;
      const fields = Object.values(type.getFields());
      if (fields.length !== typeGrant.fields.size || type.getInterfaces().length !== typeGrant.interfaces.length) return false;
      for (const field of fields) {
        const fieldGrant = typeGrant.fields.get(field.name);
        if (!fieldGrant || fieldGrant.args.size !== field.args.length) return false;
        if (!field.args.every((arg) => fieldGrant.args.has(arg.name))) return false;
      }
    } else if (isInputObjectType(type)) {
      if (typeGrant.kind !== 'input') return false;
      const fields = Object.keys(type.getFields());
      if (fields.length !== typeGrant.fields.size || !fields.every((f) => typeGrant.fields.has(f))) return false;
    } else if (isEnumType(type)) {
      if (typeGrant.kind !== 'enum' || !type.getValues().every((v) => typeGrant.values.has(v.name))) return false;
    } else if (isUnionType(type)) {
      if (typeGrant.kind !== 'union' || type.getTypes().length !== typeGrant.members.length) return false;
    }
  }
  return true;
}

function namedTypeOf(type: GraphQLType): string {
  let current = type;
  while (isNonNullType(current) || isListType(current)) current = current.ofType;
  return current.name;
}

function kindMismatch(name: string): Error {
  return new Error(`type "${name}" is granted as another kind than the remote's`);
}
