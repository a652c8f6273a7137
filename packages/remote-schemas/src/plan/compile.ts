import {
  Kind,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  print,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type NamedTypeNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type TypeNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import { routingOf } from '../compose.js';
import type { LoadedRemote } from '../loaded-remote.js';
import { renamingOf, type Renaming } from './renaming.js';

/**
 * Where `__typename` answers must be renamed in a remote's data: at `typename` keys, and below
 * `children` keys (through lists and nested lists alike).
 */
export interface TypenameMap {
  typename?: Set<string>;
  children?: Map<string, TypenameMap>;
}

/** One HTTP request to one remote. */
export interface PlannedCall {
  remote: LoadedRemote;
  /** In the remote's own names. */
  document: DocumentNode;
  text: string;
  operationName: string | undefined;
  /** The variables this call's document defines (only those are sent). */
  variables: readonly string[];
  /** `undefined`: the remote's answer needs no renaming. */
  typenames: TypenameMap | undefined;
  /** The remote's own object type names -> public names (`typenames` says where they are). */
  typeToPublic: ReadonlyMap<string, string>;
  /** Each root response key of the call's document -> its path in the client's response. */
  paths: ReadonlyMap<string, readonly string[]>;
  /** Where an error without a path goes when the call answers no data: the call's first root field. */
  firstPath: readonly string[];
  /** Nothing to ask (a namespace field that selects only `__typename`): no request is sent. */
  empty: boolean;
}

/**
 * Where a response key first appears among the fields of its selection set (fragments spread in
 * place): its place in the response. `when`: the fields of that key that carry directives, with
 * their places; the first one included decides, none: the key is left out (`@skip`, `@include`).
 */
export interface Placement {
  at: number;
  when?: ReadonlyArray<{ at: number; node: FieldNode }>;
}

export interface NamespaceEntry extends Placement {
  key: string;
  typename?: string;
}

export type RootEntry = Placement &
  (
    | { kind: 'field'; key: string; call: number; nonNull: boolean }
    | { kind: 'typename'; key: string; value: string }
    | { kind: 'namespace'; key: string; call: number; entries: readonly NamespaceEntry[] }
  );

/** An operation compiled for its schema: the requests to send, and how their answers make the client's response. */
export interface Plan {
  operation: 'query' | 'mutation';
  /** The operation's variable definitions, checked against the client's schema before anything is sent. */
  variableDefinitions: readonly VariableDefinitionNode[];
  /** Queries: sent in parallel. Mutations: one after the other, in this order. */
  calls: readonly PlannedCall[];
  /** The client's root response keys, in the client's order when no directive decides otherwise. */
  entries: readonly RootEntry[];
  /** Some response keys carry `@skip` or `@include`: their order and presence are decided per request. */
  conditional: boolean;
}

/** A plan, or why the operation is executed by delegation instead. */
export type PlanDecision = { plan: Plan } | { fallback: string; operationName: string | undefined };

class Unplannable extends Error {}

function fail(reason: string): never {
  throw new Unplannable(reason);
}

/**
 * Compiles the operation `operationName` of `document` (validated against `schema`) into a plan:
 * its root fields grouped by remote, one document per remote in the remote's own names, and the
 * mapping of the answers back. `undefined`: not a schema of a registry, no such operation, or a
 * subscription (all served as before); `{ fallback }`: the plan cannot express the operation.
 */
export function compilePlan(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): PlanDecision | undefined {
  const routing = routingOf(schema);
  if (!routing) return undefined;
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation === 'subscription') return undefined;
  try {
    return { plan: new Compiler(schema, document, operation, routing.fields[operation.operation]).compile() };
  } catch (error) {
    if (error instanceof Unplannable) return { fallback: error.message, operationName: operation.name?.value };
    throw error;
  }
}

interface CallDraft {
  remote: LoadedRemote;
  renaming: Renaming;
  /** The root selections, in the client's names, with the type they are selected on. */
  roots: Array<{ node: FieldNode; parent: GraphQLObjectType }>;
  paths: Map<string, readonly string[]>;
}

class Compiler {
  readonly #schema: GraphQLSchema;
  readonly #operation: OperationDefinitionNode;
  readonly #owners: ReadonlyMap<string, LoadedRemote>;
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  readonly #kind: 'query' | 'mutation';
  readonly #root: GraphQLObjectType;
  /** The place of each root (or namespace) field among its siblings, fragments spread in place. */
  readonly #places = new Map<FieldNode, number>();
  #conditional = false;

  constructor(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, owners: ReadonlyMap<string, LoadedRemote>) {
    this.#schema = schema;
    this.#operation = operation;
    this.#owners = owners;
    this.#kind = operation.operation as 'query' | 'mutation';
    const root = schema.getRootType(operation.operation);
    if (!root) fail(`the schema has no ${this.#kind} type`);
    this.#root = root;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.#fragments.set(definition.name.value, definition);
    }
  }

  compile(): Plan {
    const drafts: CallDraft[] = [];
    const byRemote = new Map<string, number>();
    const entries: RootEntry[] = [];
    const callOf = (remote: LoadedRemote): number => {
      // Mutations run in order: a remote's consecutive root fields share a request, a field of
      // another remote in between starts a new one.
      if (this.#kind === 'mutation') {
        const last = drafts.length - 1;
        if (last >= 0 && drafts[last]!.remote.name === remote.name) return last;
      } else {
        const known = byRemote.get(remote.name);
        if (known !== undefined) return known;
      }
      drafts.push({ remote, renaming: renamingOf(remote), roots: [], paths: new Map() });
      byRemote.set(remote.name, drafts.length - 1);
      return drafts.length - 1;
    };

    for (const [key, nodes] of this.#group(this.#operation.selectionSet, this.#root)) {
      const name = nodes[0]!.name.value;
      const placement = this.#placement(nodes);
      if (name === '__typename') {
        entries.push({ ...placement, kind: 'typename', key, value: this.#root.name });
        continue;
      }
      if (name.startsWith('__')) fail(`introspection (${name}) at the root`);
      const remote = this.#owners.get(name);
      if (!remote) fail(`a root field of the local schema (${name})`);
      const call = callOf(remote);
      const draft = drafts[call]!;
      const namespace = draft.renaming.namespace;
      if (namespace !== undefined && name === namespace) {
        if (draft.paths.size > 0 || entries.some((e) => e.kind === 'namespace' && e.call === call)) {
          fail('a namespace field selected under two response keys');
        }
        if (nodes.some((n) => n.directives?.length)) fail('a namespace field with directives');
        const wrapper = getNamedType(this.#root.getFields()[name]!.type) as GraphQLObjectType;
        const inner: NamespaceEntry[] = [];
        const selections = { kind: Kind.SELECTION_SET, selections: nodes.flatMap((n) => n.selectionSet?.selections ?? []) } as SelectionSetNode;
        for (const [innerKey, innerNodes] of this.#group(selections, wrapper)) {
          const innerPlacement = this.#placement(innerNodes);
          if (innerNodes[0]!.name.value === '__typename') {
            inner.push({ ...innerPlacement, key: innerKey, typename: wrapper.name });
            continue;
          }
          inner.push({ ...innerPlacement, key: innerKey });
          draft.paths.set(innerKey, [key, innerKey]);
          for (const node of innerNodes) draft.roots.push({ node, parent: wrapper });
        }
        entries.push({ ...placement, kind: 'namespace', key, call, entries: inner });
        continue;
      }
      const field = this.#root.getFields()[name]!;
      entries.push({ ...placement, kind: 'field', key, call, nonNull: isNonNullType(field.type) });
      draft.paths.set(key, [key]);
      for (const node of nodes) draft.roots.push({ node, parent: this.#root });
    }
    return {
      operation: this.#kind,
      variableDefinitions: this.#operation.variableDefinitions ?? [],
      calls: drafts.map((draft) => this.#call(draft)),
      entries,
      conditional: this.#conditional,
    };
  }

  #placement(nodes: readonly FieldNode[]): Placement {
    const at = this.#places.get(nodes[0]!)!;
    if (!nodes.some((n) => n.directives?.some((d) => d.name.value === 'skip' || d.name.value === 'include'))) return { at };
    this.#conditional = true;
    return { at, when: nodes.map((node) => ({ at: this.#places.get(node)!, node })) };
  }

  /**
   * The fields of a root (or namespace) selection set by response key, in the order of their first
   * appearance, fragments on that type spread in place. A fragment with directives there would
   * need the gateway to evaluate them: not planned.
   */
  #group(selectionSet: SelectionSetNode, type: GraphQLObjectType): Map<string, FieldNode[]> {
    const groups = new Map<string, FieldNode[]>();
    const walk = (set: SelectionSetNode): void => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          this.#places.set(selection, this.#places.size);
          const group = groups.get(key);
          if (group) group.push(selection);
          else groups.set(key, [selection]);
          continue;
        }
        if (selection.directives?.length) fail(`a fragment with directives on ${type.name}`);
        if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (selection.typeCondition && selection.typeCondition.name.value !== type.name) fail(`a fragment on another type than ${type.name}`);
          walk(selection.selectionSet);
        } else {
          const fragment = this.#fragments.get(selection.name.value);
          if (!fragment || fragment.typeCondition.name.value !== type.name) fail(`fragment "${selection.name.value}" at the root`);
          walk(fragment.selectionSet);
        }
      }
    };
    walk(selectionSet);
    return groups;
  }

  #call(draft: CallDraft): PlannedCall {
    const rewriter = new Rewriter(this.#schema, draft.remote, draft.renaming, this.#fragments, this.#kind);
    const map: TypenameMap = {};
    const publicRoot = draft.remote.public.roots[this.#kind]?.name;
    const selections: SelectionNode[] = draft.roots.map(({ node, parent }) =>
      // A root field keeps its remote root's renaming whatever our root type is called.
      rewriter.field(node, parent, parent === this.#root ? publicRoot : parent.name, map),
    );
    const variables = rewriter.variables;
    const variableDefinitions = (this.#operation.variableDefinitions ?? [])
      .filter((definition) => variables.has(definition.variable.name.value))
      .map((definition) => ({ ...definition, type: rewriter.typeNode(definition.type) }));
    const operation: OperationDefinitionNode = {
      kind: Kind.OPERATION_DEFINITION,
      operation: this.#operation.operation,
      ...(this.#operation.name ? { name: this.#operation.name } : {}),
      variableDefinitions,
      directives: [],
      selectionSet: { kind: Kind.SELECTION_SET, selections },
    };
    const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [operation, ...rewriter.fragmentDefinitions()] };
    const [firstPath] = draft.paths.values();
    return {
      remote: draft.remote,
      document,
      text: print(document),
      operationName: this.#operation.name?.value,
      variables: variableDefinitions.map((d) => d.variable.name.value),
      typenames: prune(map),
      typeToPublic: draft.renaming.typeToPublic,
      paths: draft.paths,
      firstPath: firstPath ?? [],
      empty: selections.length === 0,
    };
  }
}

/** Rewrites the selections of one remote's part of an operation into the remote's own names. */
class Rewriter {
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
    kind: 'query' | 'mutation',
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
      if (map.children?.has(key)) fail(`response key "${key}" is both __typename and a field`);
      return node;
    }
    if (!isObjectType(parent) && !isInterfaceType(parent)) fail(`field "${name}" on ${parent.name}`);
    const definition = parent.getFields()[name];
    if (!definition) fail(`unknown field "${parent.name}.${name}"`);
    for (const argument of node.arguments ?? []) this.#value(argument.value);
    const own = isObjectType(parent) && renamesAs !== undefined ? this.#renaming.fieldsToOwn.get(renamesAs)?.get(name) : undefined;
    let selectionSet = node.selectionSet;
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
    if (into.children?.has(key)) fail(`response key "${key}" is both __typename and a field`);
    (into.typename ??= new Set()).add(key);
  }
  for (const [key, child] of from.children ?? []) {
    if (into.typename?.has(key)) fail(`response key "${key}" is both __typename and a field`);
    let existing = into.children?.get(key);
    if (!existing) (into.children ??= new Map()).set(key, (existing = {}));
    merge(existing, child);
  }
}

/** `undefined` when nothing below `map` renames anything. */
function prune(map: TypenameMap): TypenameMap | undefined {
  const out: TypenameMap = {};
  if (map.typename?.size) out.typename = map.typename;
  for (const [key, child] of map.children ?? []) {
    const kept = prune(child);
    if (kept) (out.children ??= new Map()).set(key, kept);
  }
  return out.typename || out.children ? out : undefined;
}
