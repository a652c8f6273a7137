import {
  GraphQLDirective,
  GraphQLError,
  GraphQLList,
  GraphQLNonNull,
  GraphQLSchema,
  getNamedType,
  isListType,
  isNonNullType,
  isInterfaceType,
  isObjectType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLNamedType,
  type GraphQLType,
} from 'graphql';
import { inheritRouting } from '../compose.js';
import type { LoadedRemote } from '../loaded-remote.js';
import type { InputValueGrant, TypeGrant } from '../permissions/grant.js';
import type { RemoteAccess } from '../permissions/role-schema.js';
import { renamingOf } from '../plan/renaming.js';
import { rewire } from '../shared-types.js';
import type { RemoteSchemaEntry, RemoteSchemaProblem } from '../types.js';
import { compileRelationship, relationshipMessage, type CompiledRelationship } from './validate.js';

/** A relationship field of one schema: the relationship, and the names it has there. */
export interface RelationshipBinding {
  readonly compiled: CompiledRelationship;
  /** The source type's public name. */
  readonly parentType: string;
  /** The public names of the join fields on the source type, in the order of `compiled.joinFields`. */
  readonly joinFields: readonly string[];
  /** The relationship field's type is non-null. */
  readonly nonNull: boolean;
}

/** Public type name -> relationship field name -> binding. */
export type RelationshipIndex = ReadonlyMap<string, ReadonlyMap<string, RelationshipBinding>>;

const indexes = new WeakMap<GraphQLSchema, RelationshipIndex>();

/** The relationship fields of a schema built by a registry; `undefined` when it has none. */
export function relationshipsOf(schema: GraphQLSchema): RelationshipIndex | undefined {
  return indexes.get(schema);
}

/** The public name of each of the remote's own type names (customization applied). */
const publicNames = new WeakMap<GraphQLSchema, Map<string, string>>();

export function publicTypeName(remote: LoadedRemote, own: string): string {
  let names = publicNames.get(remote.base);
  if (!names) {
    names = new Map([...renamingOf(remote).typeToOwn].map(([publicName, ownName]) => [ownName, publicName]));
    publicNames.set(remote.base, names);
  }
  return names.get(own) ?? own;
}

/** The public name of field `own` of the remote's own object type `type`. */
export function publicFieldName(remote: LoadedRemote, type: string, own: string): string {
  const renamed = renamingOf(remote).fieldsToOwn.get(publicTypeName(remote, type));
  if (renamed) for (const [publicName, ownName] of renamed) if (ownName === own) return publicName;
  return own;
}

/** `type` (in `remote`'s own names) as the type of the same name in `schema`, or `undefined` when it has none. */
function publicType(type: GraphQLType, remote: LoadedRemote, schema: GraphQLSchema): GraphQLType | undefined {
  if (isNonNullType(type)) {
    const inner = publicType(type.ofType, remote, schema);
    return inner && new GraphQLNonNull(inner as never);
  }
  if (isListType(type)) {
    const inner = publicType(type.ofType, remote, schema);
    return inner && new GraphQLList(inner);
  }
  return schema.getType(publicTypeName(remote, (type as GraphQLNamedType).name)) ?? undefined;
}

function neverExecuted(): never {
  // Operations with relationship fields are split before execution (see relationships/join-plan.ts).
  throw new GraphQLError('a remote relationship field was executed without its join plan', { extensions: { code: 'unexpected' } });
}

/** What a role may use of a relationship: `undefined` for everyone (no permissions). */
type Filter = (compiled: CompiledRelationship) => { visible: boolean; argument: (name: string) => boolean };

/**
 * `schema` with the relationship fields added (a copy: every type that refers to a changed one is
 * rewired), and the index execution reads; `schema` itself when none fits. A relationship whose
 * field cannot be built in `schema` (its types are not there, a field of that name exists after
 * customization) is left out and its reason returned.
 */
function extend(
  schema: GraphQLSchema,
  relationships: readonly CompiledRelationship[],
  filter: Filter | undefined,
): { schema: GraphQLSchema; refused: Map<CompiledRelationship, string> } {
  const refused = new Map<CompiledRelationship, string>();
  const extras = new Map<string, GraphQLFieldConfigMap<unknown, unknown>>();
  const index = new Map<string, Map<string, RelationshipBinding>>();
  for (const compiled of relationships) {
    const access = filter?.(compiled);
    if (access && !access.visible) continue;
    const parentType = publicTypeName(compiled.source, compiled.typeName);
    const parent = schema.getType(parentType);
    if (!isObjectType(parent)) continue;
    const taken = extras.get(parentType);
    if (Object.hasOwn(parent.getFields(), compiled.name) || (taken && Object.hasOwn(taken, compiled.name))) {
      refused.set(compiled, `field "${compiled.name}" already exists on type "${compiled.typeName}"`);
      continue;
    }
    const type = publicType(compiled.type, compiled.target, schema);
    const args: GraphQLFieldConfigArgumentMap = {};
    let complete = type !== undefined;
    for (const arg of compiled.clientArguments) {
      if (access && !access.argument(arg.name)) continue;
      const argType = publicType(arg.type, compiled.target, schema);
      if (!argType) {
        complete = false;
        break;
      }
      args[arg.name] = {
        type: argType as never,
        description: arg.description,
        defaultValue: arg.defaultValue,
        deprecationReason: arg.deprecationReason,
      };
    }
    if (!complete) {
      // Only a role's schema lacks a type the target's public schema has.
      if (!filter) refused.set(compiled, `the type of field "${compiled.name}" is not in the schema`);
      continue;
    }
    const config: GraphQLFieldConfig<unknown, unknown> = { type: type as never, args, resolve: neverExecuted };
    extras.set(parentType, { ...(taken ?? {}), [compiled.name]: config });
    let fields = index.get(parentType);
    if (!fields) index.set(parentType, (fields = new Map()));
    fields.set(compiled.name, {
      compiled,
      parentType,
      joinFields: compiled.joinFields.map((field) => publicFieldName(compiled.source, compiled.typeName, field.name)),
      nonNull: isNonNullType(type),
    });
  }
  if (extras.size === 0) return { schema, refused };
  const types = new Map<string, GraphQLNamedType>();
  for (const [name, type] of Object.entries(schema.getTypeMap())) if (!name.startsWith('__')) types.set(name, type);
  const copies = rewire(types, new Map(), extras);
  const root = (type: GraphQLNamedType | null | undefined) => (type ? (copies.get(type.name) as never) : null);
  const config = schema.toConfig();
  const extended = new GraphQLSchema({
    ...config,
    query: root(schema.getQueryType()),
    mutation: root(schema.getMutationType()),
    subscription: root(schema.getSubscriptionType()),
    types: [...copies.values()],
    directives: config.directives.map((directive) => rewireDirective(directive, copies)),
    assumeValid: true,
  });
  inheritRouting(schema, extended);
  indexes.set(extended, index);
  return { schema: extended, refused };
}

/** A directive whose arguments name a type that was copied, rebuilt to name the copy. */
function rewireDirective(directive: GraphQLDirective, copies: ReadonlyMap<string, GraphQLNamedType>): GraphQLDirective {
  const stale = directive.args.some((arg) => {
    const named = getNamedType(arg.type);
    return copies.get(named.name) !== named;
  });
  if (!stale) return directive;
  const wrap = (type: GraphQLType): GraphQLType => {
    if (isNonNullType(type)) return new GraphQLNonNull(wrap(type.ofType) as never);
    if (isListType(type)) return new GraphQLList(wrap(type.ofType));
    return copies.get(type.name) ?? type;
  };
  const config = directive.toConfig();
  const args = Object.fromEntries(Object.entries(config.args).map(([name, arg]) => [name, { ...arg, type: wrap(arg.type) as never }]));
  return new GraphQLDirective({ ...config, args });
}

/**
 * Checks the relationships of every remote of `desired` against the remotes `included` in the
 * composed `schema`, and adds the fields of those that fit. Each one that does not is a problem of
 * its remote: its source or target is not part of the schema, or it does not fit them.
 */
export function addRelationships(
  schema: GraphQLSchema,
  desired: readonly RemoteSchemaEntry[],
  included: readonly LoadedRemote[],
): { schema: GraphQLSchema; relationships: CompiledRelationship[]; problems: RemoteSchemaProblem[] } {
  const problems: RemoteSchemaProblem[] = [];
  const compiled: CompiledRelationship[] = [];
  const byName = new Map(included.map((remote) => [remote.name, remote]));
  const names = new Set(desired.map((entry) => entry.name));
  const seen = new Set<string>();
  for (const entry of desired) {
    if (seen.has(entry.name)) continue;
    seen.add(entry.name);
    const source = byName.get(entry.name);
    const identities = new Set<string>();
    for (const relationship of entry.relationships ?? []) {
      const problem = (reason: string, code: RemoteSchemaProblem['code'] = 'invalid-configuration') =>
        problems.push({
          name: entry.name,
          relationship: { type_name: relationship.type_name, name: relationship.name },
          code,
          message: relationshipMessage(relationship.name, reason),
        });
      const identity = JSON.stringify([relationship.type_name, relationship.name]);
      if (identities.has(identity)) {
        problem(`field "${relationship.name}" already exists on type "${relationship.type_name}"`);
        continue;
      }
      identities.add(identity);
      if (!source) {
        problem(`remote schema "${entry.name}" is inconsistent`);
        continue;
      }
      const outcome = compileRelationship(relationship, source, (target) =>
        byName.get(target) ?? (names.has(target) ? 'inconsistent' : 'missing'),
      );
      if ('reason' in outcome) problem(outcome.reason, outcome.code);
      else compiled.push(outcome);
    }
  }
  const { schema: extended, refused } = extend(schema, compiled, undefined);
  for (const [relationship, reason] of refused) {
    problems.push({
      name: relationship.source.name,
      relationship: { type_name: relationship.typeName, name: relationship.name },
      code: 'invalid-configuration',
      message: relationshipMessage(relationship.name, reason),
    });
  }
  return { schema: extended, relationships: compiled.filter((c) => !refused.has(c)), problems };
}

/**
 * A role's schema with the relationship fields it may use: its permission on the source has the
 * type and every join field, and its permission on the target has every field of `remote_field`
 * with the arguments the definition fixes. The field's arguments are those the role may pass
 * (granted, without a preset). Any other relationship is absent.
 */
export function addRoleRelationships(
  schema: GraphQLSchema,
  relationships: readonly CompiledRelationship[],
  access: ReadonlyMap<string, RemoteAccess>,
): GraphQLSchema {
  if (relationships.length === 0) return schema;
  return extend(schema, relationships, (compiled) => roleAccess(compiled, access)).schema;
}

function roleAccess(compiled: CompiledRelationship, access: ReadonlyMap<string, RemoteAccess>): ReturnType<Filter> {
  const hidden = { visible: false, argument: () => false };
  const source = access.get(compiled.source.name)?.grant.types.get(compiled.typeName);
  if (source?.kind !== 'object' || !compiled.joinFields.every((field) => source.fields.has(field.name))) return hidden;
  const target = access.get(compiled.target.name);
  let parent: GraphQLNamedType | null | undefined = compiled.target.own.getQueryType();
  if (!target || !parent || target.grant.roots.query !== parent.name) return hidden;
  let last: ReadonlyMap<string, InputValueGrant> | undefined;
  for (const level of compiled.levels) {
    const grant: TypeGrant | undefined = parent ? target.grant.types.get(parent.name) : undefined;
    const field = grant && (grant.kind === 'object' || grant.kind === 'interface') ? grant.fields.get(level.field) : undefined;
    if (!field || !parent || !(isObjectType(parent) || isInterfaceType(parent))) return hidden;
    if (!level.args.every((arg) => field.args.has(arg.name))) return hidden;
    last = field.args;
    parent = getNamedType(parent.getFields()[level.field]!.type);
  }
  return { visible: true, argument: (name) => last?.get(name) !== undefined && last.get(name)?.preset === undefined };
}
