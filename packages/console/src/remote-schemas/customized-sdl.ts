import {
  GraphQLObjectType,
  getNamedType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isSpecifiedScalarType,
  isUnionType,
  printType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import type { NameCustomization, RemoteSchemaCustomization } from '../metadata/types.js';

type Operation = 'query' | 'mutation' | 'subscription';

function rootOf(schema: GraphQLSchema, operation: Operation): GraphQLObjectType | null | undefined {
  return operation === 'query' ? schema.getQueryType() : operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
}

/** A field's served name under a `field_names` rule: the mapping wins, else prefix and suffix. */
function renameField(name: string, rule: NameCustomization | undefined): string {
  if (!rule || name.startsWith('__')) return name;
  const mapped = rule.mapping && Object.hasOwn(rule.mapping, name) ? rule.mapping[name] : undefined;
  return mapped ?? `${rule.prefix ?? ''}${name}${rule.suffix ?? ''}`;
}

/**
 * The names under which the server serves a remote's root fields: the namespace field when there
 * is one, else each field renamed by the `field_names` rule of its root type.
 */
export function servedRootFields(remote: GraphQLSchema, customization: RemoteSchemaCustomization | undefined): Record<Operation, string[]> {
  const namespace = customization?.root_fields_namespace || undefined;
  const served: Record<Operation, string[]> = { query: [], mutation: [], subscription: [] };
  for (const operation of ['query', 'mutation', 'subscription'] as const) {
    const root = rootOf(remote, operation);
    if (!root) continue;
    if (namespace) {
      served[operation] = [namespace];
      continue;
    }
    const rule = customization?.field_names?.find((candidate) => candidate.parent_type === root.name);
    served[operation] = Object.keys(root.getFields()).map((name) => renameField(name, rule));
  }
  return served;
}

/**
 * The part of the live schema (as admin sees it) that one remote schema serves, as SDL: its root
 * fields under the live roots, and every type reachable from them, with the names customization
 * gave them. Read from the server's own schema, so it shows exactly what clients are served.
 */
export function customizedSdl(live: GraphQLSchema, remote: GraphQLSchema, customization: RemoteSchemaCustomization | undefined): string {
  const served = servedRootFields(remote, customization);
  const reached = new Map<string, GraphQLNamedType>();
  const visit = (type: GraphQLNamedType) => {
    if (reached.has(type.name) || type.name.startsWith('__') || isSpecifiedScalarType(type)) return;
    reached.set(type.name, type);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        visit(getNamedType(field.type));
        for (const arg of field.args) visit(getNamedType(arg.type));
      }
      for (const iface of type.getInterfaces()) visit(iface);
      if (isInterfaceType(type)) for (const implementation of live.getPossibleTypes(type)) visit(implementation);
    } else if (isUnionType(type)) {
      for (const member of type.getTypes()) visit(member);
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) visit(getNamedType(field.type));
    }
  };
  const blocks: string[] = [];
  for (const operation of ['query', 'mutation', 'subscription'] as const) {
    const root = rootOf(live, operation);
    if (!root || served[operation].length === 0) continue;
    const fields = root.getFields();
    const own = served[operation].filter((name) => fields[name] !== undefined);
    if (own.length === 0) continue;
    const config = root.toConfig();
    const part = new GraphQLObjectType({ ...config, fields: Object.fromEntries(own.map((name) => [name, config.fields[name]!])) });
    blocks.push(printType(part));
    for (const name of own) {
      const field = fields[name]!;
      visit(getNamedType(field.type));
      for (const arg of field.args) visit(getNamedType(arg.type));
    }
  }
  const roots = new Set((['query', 'mutation', 'subscription'] as const).map((operation) => rootOf(live, operation)?.name));
  for (const type of reached.values()) if (!roots.has(type.name)) blocks.push(printType(type));
  return blocks.length === 0 ? '' : `${blocks.join('\n\n')}\n`;
}
