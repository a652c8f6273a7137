import {
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  specifiedDirectives,
  type GraphQLFieldConfig,
  type GraphQLNamedType,
} from 'graphql';
import type { LoadedRemote } from './loaded-remote.js';
import { rootsOf } from './remote-schema.js';
import { rewire, shapeOf } from './shared-types.js';
import type { RemoteSchemaProblem } from './types.js';

export type RootOperation = 'query' | 'mutation' | 'subscription';
const OPERATIONS: readonly RootOperation[] = ['query', 'mutation', 'subscription'];

/** Which remote owns each root field of a composed schema (the fast path reads it). */
export interface Routing {
  rootTypeNames: Record<RootOperation, string>;
  fields: Record<RootOperation, Map<string, LoadedRemote>>;
}

const routingBySchema = new WeakMap<GraphQLSchema, Routing>();

/** The routing of a schema built by a registry, `undefined` for any other schema. */
export function routingOf(schema: GraphQLSchema): Routing | undefined {
  return routingBySchema.get(schema);
}

/** `derived` (a copy of `schema` with fields added to some types) routes its root fields as `schema` does. */
export function inheritRouting(schema: GraphQLSchema, derived: GraphQLSchema): void {
  const routing = routingBySchema.get(schema);
  if (routing) routingBySchema.set(derived, routing);
}

export const PLACEHOLDER_FIELD = 'no_queries_available';

/** Hasura's schema before any remote is added. */
export function createPlaceholderSchema(): GraphQLSchema {
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: { [PLACEHOLDER_FIELD]: { type: GraphQLString, resolve: () => null } },
    }),
  });
}

export interface Composition {
  schema: GraphQLSchema;
  included: LoadedRemote[];
  problems: RemoteSchemaProblem[];
}

type FieldConfig = GraphQLFieldConfig<unknown, unknown>;


/**
 * Puts the local schema and the remotes side by side, in order. A remote whose root field is
 * already taken, or that defines a type of a taken name with another shape (or one of the local
 * schema), is left out with an `invalid-configuration` problem. Types are used by reference, so the
 * work is linear in the number of types.
 */
export function compose(local: GraphQLSchema, placeholder: boolean, remotes: readonly LoadedRemote[]): Composition {
  const steps = composeInSteps(local, placeholder, remotes);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link compose} with a chance to pause (a `yield`) after each remote is gathered and before the
 * schema is built, which for thousands of types are steps of tens of milliseconds each.
 */
export function* composeInSteps(local: GraphQLSchema, placeholder: boolean, remotes: readonly LoadedRemote[]): Generator<void, Composition, void> {
  const localRoots = rootsOf(local);
  const rootTypeNames: Record<RootOperation, string> = {
    query: localRoots.query?.name ?? 'Query',
    mutation: localRoots.mutation?.name ?? 'Mutation',
    subscription: localRoots.subscription?.name ?? 'Subscription',
  };
  const rootNames = new Set(Object.values(rootTypeNames));
  const fields: Record<RootOperation, Map<string, FieldConfig>> = { query: new Map(), mutation: new Map(), subscription: new Map() };
  const owners: Record<RootOperation, Map<string, LoadedRemote>> = { query: new Map(), mutation: new Map(), subscription: new Map() };
  const types = new Map<string, GraphQLNamedType>();
  const localRootTypes = new Set<GraphQLNamedType>(Object.values(localRoots));

  for (const operation of OPERATIONS) {
    const root = localRoots[operation];
    if (!root) continue;
    for (const [name, config] of Object.entries(root.toConfig().fields)) fields[operation].set(name, config);
  }
  for (const [name, type] of Object.entries(local.getTypeMap())) {
    if (!name.startsWith('__') && !localRootTypes.has(type)) types.set(name, type);
  }

  const localNames = new Set(types.keys());
  const problems: RemoteSchemaProblem[] = [];
  const included: LoadedRemote[] = [];
  for (const remote of remotes) {
    const remoteRoots = new Set<GraphQLNamedType>(Object.values(remote.public.roots));
    const own = new Map<string, GraphQLNamedType>();
    for (const [name, type] of Object.entries(remote.public.schema.getTypeMap())) {
      if (!name.startsWith('__') && !remoteRoots.has(type)) own.set(name, type);
    }
    const outcome = clash(remote, own, fields, types, localNames, rootNames, placeholder);
    if (typeof outcome === 'string') {
      problems.push({ name: remote.name, code: 'invalid-configuration', message: outcome });
      continue;
    }
    included.push(remote);
    let roots = remote.public.roots;
    let added: ReadonlyMap<string, GraphQLNamedType> = own;
    if (outcome.size > 0) {
      // Types of the same name and shape as earlier remotes' are shared: this remote's other types
      // are copied to refer to the shared instances (only then, so the common case stays free).
      const all = new Map(own);
      for (const root of remoteRoots) all.set(root.name, root);
      const rewired = rewire(all, outcome);
      roots = {};
      for (const operation of OPERATIONS) {
        const root = remote.public.roots[operation];
        if (root) roots[operation] = rewired.get(root.name) as GraphQLObjectType;
      }
      for (const root of remoteRoots) rewired.delete(root.name);
      added = rewired;
    }
    for (const [name, type] of added) types.set(name, type);
    for (const operation of OPERATIONS) {
      const root = roots[operation];
      if (!root) continue;
      for (const [name, config] of Object.entries(root.toConfig().fields)) {
        fields[operation].set(name, config);
        owners[operation].set(name, remote);
      }
    }
    yield;
  }
  if (placeholder && owners.query.size > 0 && !owners.query.has(PLACEHOLDER_FIELD)) fields.query.delete(PLACEHOLDER_FIELD);
  yield;

  // Every part is valid on its own (the local schema is checked at registry creation, each remote
  // when loaded) and no name is taken twice, so the whole is valid: `assumeValid` spares Yoga a
  // full validation of a schema with thousands of types on the first request after a swap.
  // graphql-js can still refuse the whole (e.g. a remote that references its own root type by a
  // name we use for ours): leave the latest remote out and try again.
  const schema = build(local, rootTypeNames, fields, types);
  if (!(schema instanceof Error)) {
    routingBySchema.set(schema, { rootTypeNames, fields: owners });
    return { schema, included, problems };
  }
  const culprit = included[included.length - 1];
  if (!culprit) throw schema;
  const rest = yield* composeInSteps(local, placeholder, remotes.filter((r) => r !== culprit));
  const order = new Map(remotes.map((r, i) => [r.name, i]));
  const all = [
    ...rest.problems,
    { name: culprit.name, code: 'invalid-configuration' as const, message: `Inconsistent object: ${schema.message}` },
  ].sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
  return { ...rest, problems: all };
}

/**
 * Why `remote` cannot join (a message), or the types it shares with earlier remotes: same name and
 * same shape, as Hasura allows. A type of the local schema is never shared: its resolvers are not
 * the remote's.
 */
function clash(
  remote: LoadedRemote,
  own: ReadonlyMap<string, GraphQLNamedType>,
  fields: Record<RootOperation, Map<string, FieldConfig>>,
  types: ReadonlyMap<string, GraphQLNamedType>,
  localNames: ReadonlySet<string>,
  rootNames: ReadonlySet<string>,
  placeholder: boolean,
): string | Map<string, GraphQLNamedType> {
  for (const operation of OPERATIONS) {
    const root = remote.public.roots[operation];
    if (!root) continue;
    for (const name of Object.keys(root.getFields())) {
      if (placeholder && operation === 'query' && name === PLACEHOLDER_FIELD) continue;
      if (fields[operation].has(name)) return `Inconsistent object: Duplicate remote field '${name}'`;
    }
  }
  const conflicts: string[] = [];
  const shared = new Map<string, GraphQLNamedType>();
  for (const [name, type] of own) {
    const existing = types.get(name);
    if (rootNames.has(name)) conflicts.push(name);
    else if (existing === undefined || existing === type) continue;
    else if (!localNames.has(name) && shapeOf(existing) === shapeOf(type)) shared.set(name, existing);
    else conflicts.push(name);
  }
  if (conflicts.length > 0) {
    return `Inconsistent object: Conflicting types: ${conflicts.map((c) => `'${c}'`).join(', ')} already exist in the schema with another definition`;
  }
  return shared;
}

function build(
  local: GraphQLSchema,
  rootTypeNames: Record<RootOperation, string>,
  fields: Record<RootOperation, Map<string, FieldConfig>>,
  types: Map<string, GraphQLNamedType>,
): GraphQLSchema | Error {
  const localRoots = rootsOf(local);
  const root = (operation: RootOperation): GraphQLObjectType | undefined => {
    const map = fields[operation];
    if (map.size === 0) return undefined;
    const base = localRoots[operation]?.toConfig();
    return new GraphQLObjectType({
      ...(base ?? {}),
      name: rootTypeNames[operation],
      fields: Object.fromEntries(map),
      interfaces: base?.interfaces ?? [],
    });
  };
  try {
    const query = root('query');
    const mutation = root('mutation');
    const subscription = root('subscription');
    return new GraphQLSchema({
      query: query ?? null,
      mutation: mutation ?? null,
      subscription: subscription ?? null,
      types: [...types.values()],
      directives: local.getDirectives().length > 0 ? local.getDirectives() : specifiedDirectives,
      assumeValid: true,
      ...(local.description ? { description: local.description } : {}),
    });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
