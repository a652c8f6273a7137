import {
  Kind,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  type DirectiveNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type NamedTypeNode,
  type SelectionNode,
  type SelectionSetNode,
  type TypeNode,
  type ValueNode,
} from 'graphql';
import type { LoadedRemote } from '../loaded-remote.js';
import { fail, type TypenameMap } from './plan.js';
import type { Renaming } from './renaming.js';

/** Rewrites the selections of one remote's part of an operation (or of a relationship's target) into the remote's own names. */
export class Rewriter {
  readonly variables = new Set<string>();
  readonly #schema: GraphQLSchema;
  readonly #renaming: Renaming;
  readonly #fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** Types a fragment below the root may not name: ours and the namespace's wrappers. */
  readonly #forbidden: ReadonlySet<string>;
  readonly #done = new Map<string, { definition: FragmentDefinitionNode; map: TypenameMap }>();
  readonly #renamesTypes: boolean;

  constructor(
    schema: GraphQLSchema,
    remote: LoadedRemote,
    renaming: Renaming,
    fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    kind: 'query' | 'mutation' | 'subscription',
  ) {
    this.#schema = schema;
    this.#renaming = renaming;
    this.#fragments = fragments;
    this.#renamesTypes = renaming.typeToPublic.size > 0;
    const forbidden = new Set<string>();
    for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
      if (root) forbidden.add(root.name);
    }
    const own = remote.public.roots[kind]?.name;
    if (own) forbidden.add(own);
    if (renaming.namespace) {
      forbidden.add(`${renaming.namespace}_query`);
      forbidden.add(`${renaming.namespace}_mutation`);
      forbidden.add(`${renaming.namespace}_subscription`);
    }
    this.#forbidden = forbidden;
  }

  /** `renamesAs`: the public name of the parent type whose field renaming applies. */
  field(node: FieldNode, parent: GraphQLCompositeType, renamesAs: string | undefined, map: TypenameMap): FieldNode {
    const name = node.name.value;
    const key = node.alias?.value ?? name;
    this.#directives(node.directives);
    if (name === '__typename') {
      if (this.#renamesTypes) (map.typename ??= new Set()).add(key);
      if (map.children?.has(key) || map.leaves?.has(key)) fail(`response key "${key}" is both __typename and a field`);
      return node;
    }
    if (!isObjectType(parent) && !isInterfaceType(parent)) fail(`field "${name}" on ${parent.name}`);
    const definition = parent.getFields()[name];
    if (!definition) fail(`unknown field "${parent.name}.${name}"`);
    for (const argument of node.arguments ?? []) this.#value(argument.value);
    const own = renamesAs !== undefined ? this.#renaming.fieldsToOwn.get(renamesAs)?.get(name) : undefined;
    let selectionSet = node.selectionSet;
    if (!selectionSet && this.#renamesTypes) {
      // Renaming a type name here would rename this field's value when it happens to be one.
      if (map.typename?.has(key)) fail(`response key "${key}" is both __typename and a field`);
      (map.leaves ??= new Set()).add(key);
    }
    if (selectionSet) {
      const type = getNamedType(definition.type);
      if (!isCompositeType(type)) fail(`a selection on "${parent.name}.${name}"`);
      if (map.typename?.has(key)) fail(`response key "${key}" is both __typename and a field`);
      const child: TypenameMap = map.children?.get(key) ?? {};
      selectionSet = this.#selectionSet(selectionSet, type, child);
      if (this.#renamesTypes) (map.children ??= new Map()).set(key, child);
    }
    if (own === undefined && selectionSet === node.selectionSet) return node;
    return {
      ...node,
      ...(own === undefined ? {} : { alias: node.alias ?? { kind: Kind.NAME, value: name }, name: { kind: Kind.NAME, value: own } }),
      ...(selectionSet ? { selectionSet } : {}),
    };
  }

  #selectionSet(set: SelectionSetNode, parent: GraphQLCompositeType, map: TypenameMap): SelectionSetNode {
    const selections = set.selections.map((selection): SelectionNode => {
      if (selection.kind === Kind.FIELD) return this.field(selection, parent, parent.name, map);
      this.#directives(selection.directives);
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        let type = parent;
        let typeCondition = selection.typeCondition;
        if (typeCondition) {
          type = this.#conditionType(typeCondition.name.value);
          typeCondition = this.#namedType(typeCondition);
        }
        return { ...selection, ...(typeCondition ? { typeCondition } : {}), selectionSet: this.#selectionSet(selection.selectionSet, type, map) };
      }
      merge(map, this.#fragment(selection.name.value).map);
      return selection;
    });
    return { ...set, selections };
  }

  #fragment(name: string): { definition: FragmentDefinitionNode; map: TypenameMap } {
    const done = this.#done.get(name);
    if (done) return done;
    const fragment = this.#fragments.get(name);
    if (!fragment) fail(`unknown fragment "${name}"`);
    this.#directives(fragment.directives);
    const type = this.#conditionType(fragment.typeCondition.name.value);
    const map: TypenameMap = {};
    const definition: FragmentDefinitionNode = {
      ...fragment,
      typeCondition: this.#namedType(fragment.typeCondition),
      selectionSet: this.#selectionSet(fragment.selectionSet, type, map),
    };
    const result = { definition, map };
    this.#done.set(name, result);
    return result;
  }

  /** The rewritten fragments this remote's document uses, in the client's order. */
  fragmentDefinitions(): FragmentDefinitionNode[] {
    const used: FragmentDefinitionNode[] = [];
    for (const [name] of this.#fragments) {
      const done = this.#done.get(name);
      if (done) used.push(done.definition);
    }
    return used;
  }

  #conditionType(name: string): GraphQLCompositeType {
    if (this.#forbidden.has(name)) fail(`a fragment on type "${name}" below the root`);
    const type = this.#schema.getType(name);
    if (!type || !isCompositeType(type)) fail(`a fragment on unknown type "${name}"`);
    return type;
  }

  #namedType(node: NamedTypeNode): NamedTypeNode {
    const own = this.#renaming.typeToOwn.get(node.name.value);
    return own === undefined ? node : { ...node, name: { ...node.name, value: own } };
  }

  typeNode(node: TypeNode): TypeNode {
    if (node.kind === Kind.NAMED_TYPE) return this.#namedType(node);
    if (node.kind === Kind.LIST_TYPE) return { ...node, type: this.typeNode(node.type) };
    return { ...node, type: this.typeNode(node.type) as typeof node.type };
  }

  /** Notes the variables the `@skip` / `@include` of a condition around a root field use. */
  noteDirectives(directives: readonly DirectiveNode[] | undefined): void {
    this.#directives(directives);
  }

  #directives(directives: readonly DirectiveNode[] | undefined): void {
    for (const directive of directives ?? []) for (const argument of directive.arguments ?? []) this.#value(argument.value);
  }

  #value(value: ValueNode): void {
    if (value.kind === Kind.VARIABLE) this.variables.add(value.name.value);
    else if (value.kind === Kind.LIST) for (const item of value.values) this.#value(item);
    else if (value.kind === Kind.OBJECT) for (const field of value.fields) this.#value(field.value);
  }
}

function merge(into: TypenameMap, from: TypenameMap): void {
  for (const key of from.typename ?? []) {
    if (into.children?.has(key) || into.leaves?.has(key)) fail(`response key "${key}" is both __typename and a field`);
    (into.typename ??= new Set()).add(key);
  }
  for (const key of from.leaves ?? []) {
    if (into.typename?.has(key)) fail(`response key "${key}" is both __typename and a field`);
    (into.leaves ??= new Set()).add(key);
  }
  for (const [key, child] of from.children ?? []) {
    if (into.typename?.has(key)) fail(`response key "${key}" is both __typename and a field`);
    let existing = into.children?.get(key);
    if (!existing) (into.children ??= new Map()).set(key, (existing = {}));
    merge(existing, child);
  }
}

/** `undefined` when nothing below `map` renames anything. */
export function prune(map: TypenameMap): TypenameMap | undefined {
  const out: TypenameMap = {};
  if (map.typename?.size) out.typename = map.typename;
  for (const [key, child] of map.children ?? []) {
    const kept = prune(child);
    if (kept) (out.children ??= new Map()).set(key, kept);
  }
  return out.typename || out.children ? out : undefined;
}
