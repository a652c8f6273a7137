import {
  Kind,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  print,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type InlineFragmentNode,
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
  /** While compiling: keys of fields without a selection (a key may not be both one and `__typename`). */
  leaves?: Set<string>;
}

/** One HTTP request to one remote, or the part of the operation the gateway executes itself. */
export type PlannedCall = RemoteCall | LocalCall;

interface CallBase {
  document: DocumentNode;
  operationName: string | undefined;
  /** Each root response key of the call's document -> its path in the client's response. */
  paths: ReadonlyMap<string, readonly string[]>;
}

/** One HTTP request to one remote. */
export interface RemoteCall extends CallBase {
  local: false;
  remote: LoadedRemote;
  /** `document`, in the remote's own names, printed. */
  text: string;
  /** The variables this call's document defines (only those are sent). */
  variables: readonly string[];
  /** `undefined`: the remote's answer needs no renaming. */
  typenames: TypenameMap | undefined;
  /** The remote's own object type names -> public names (`typenames` says where they are). */
  typeToPublic: ReadonlyMap<string, string>;
  /** Where an error without a path goes when the call answers no data: the call's first root field. */
  firstPath: readonly string[];
  /** Nothing to ask (a namespace field that selects only `__typename`): no request is sent. */
  empty: boolean;
}

/**
 * Root fields of the local schema and introspection (`__schema`, `__type`), executed by the
 * gateway on the client's schema: the client's own field nodes, every variable and fragment of the
 * operation, and the fragments with `@skip` / `@include` around them as inline fragments.
 */
export interface LocalCall extends CallBase {
  local: true;
}

/** A fragment spread, inline fragment or namespace field whose `@skip` / `@include` decide the fields inside. */
export type ConditionNode = FieldNode | InlineFragmentNode | FragmentSpreadNode;

/**
 * Where a response key first appears among the fields of its selection set (fragments spread in
 * place): its place in the response. `when`: every place of that key, with the nodes whose
 * `@skip` / `@include` decide it there (enclosing fragments and namespace field, then the field
 * itself); the first place where all of them include it decides, none: the key is left out.
 */
export interface Placement {
  at: number;
  when?: ReadonlyArray<{ at: number; nodes: readonly ConditionNode[] }>;
}

export interface NamespaceEntry extends Placement {
  key: string;
  /** The key of the field in the remote's answer (the client's, unless the namespace is selected under two keys). */
  remoteKey: string;
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
 * its root fields grouped by remote, one document per remote in the remote's own names, the
 * local schema's root fields and introspection executed by the gateway, and the mapping of the
 * answers back. `undefined`: not a schema of a registry, no such operation, a subscription, or an
 * operation that asks no remote (all executed as they are); `{ fallback }`: the plan cannot
 * express the operation.
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
    const plan = new Compiler(schema, document, operation, routing.fields[operation.operation]).compile();
    return plan.calls.some((call) => !call.local) ? { plan } : undefined;
  } catch (error) {
    if (error instanceof Unplannable) return { fallback: error.message, operationName: operation.name?.value };
    throw error;
  }
}

/** A field at the root (or directly in a namespace field) and the conditions around it. */
interface Occurrence {
  node: FieldNode;
  /** Its place among the fields of its selection set, fragments spread in place. */
  at: number;
  /** Enclosing fragments (and namespace field) with `@skip` / `@include`, outermost first. */
  conditions: readonly ConditionNode[];
}

interface Root {
  node: FieldNode;
  /** Its place in the client's document: a remote executes a mutation's root fields in this order. */
  at: number;
  conditions: readonly ConditionNode[];
}

type Draft =
  | {
      local: false;
      remote: LoadedRemote;
      renaming: Renaming;
      /** The root selections, in the client's names, with the type they are selected on. */
      roots: Array<Root & { parent: GraphQLObjectType }>;
      paths: Map<string, readonly string[]>;
      /** Response keys of the remote's answer already taken. */
      used: Set<string>;
    }
  | { local: true; roots: Root[]; paths: Map<string, readonly string[]> };

function isCondition(directive: DirectiveNode): boolean {
  return directive.name.value === 'skip' || directive.name.value === 'include';
}

/** Whether `node` has `@skip` or `@include`; any other directive on it is not planned. */
function conditioned(node: ConditionNode, what: string): boolean {
  if (!node.directives?.length) return false;
  const other = node.directives.find((d) => !isCondition(d));
  if (other) fail(`${what} with directive @${other.name.value}`);
  return true;
}

/** `selection` inside inline fragments carrying the `@skip` / `@include` of `conditions`, outermost first. */
function wrap(selections: SelectionNode[], conditions: readonly ConditionNode[]): SelectionNode[] {
  for (let i = conditions.length - 1; i >= 0; i--) {
    selections = [
      {
        kind: Kind.INLINE_FRAGMENT,
        directives: conditions[i]!.directives!.filter(isCondition),
        selectionSet: { kind: Kind.SELECTION_SET, selections },
      },
    ];
  }
  return selections;
}

/** Root selections, consecutive ones under the same conditions in one inline fragment. */
function wrapAll<T extends Root>(unordered: readonly T[], selection: (root: T) => SelectionNode): SelectionNode[] {
  // In the client's order: a key first met in a skipped fragment comes later for execution too.
  const roots = [...unordered].sort((a, b) => a.at - b.at);
  const out: SelectionNode[] = [];
  for (let i = 0; i < roots.length; ) {
    const { conditions } = roots[i]!;
    const run: SelectionNode[] = [];
    for (; i < roots.length && roots[i]!.conditions === conditions; i++) run.push(selection(roots[i]!));
    out.push(...wrap(run, conditions));
  }
  return out;
}

class Compiler {
  readonly #schema: GraphQLSchema;
  readonly #document: DocumentNode;
  readonly #operation: OperationDefinitionNode;
  readonly #owners: ReadonlyMap<string, LoadedRemote>;
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  readonly #kind: 'query' | 'mutation';
  readonly #root: GraphQLObjectType;
  #places = 0;
  #conditional = false;

  constructor(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, owners: ReadonlyMap<string, LoadedRemote>) {
    this.#schema = schema;
    this.#document = document;
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
    const drafts: Draft[] = [];
    const byOwner = new Map<string, number>();
    const entries: RootEntry[] = [];
    const LOCAL = '';
    const callOf = (remote: LoadedRemote | undefined): number => {
      const owner = remote ? `remote ${remote.name}` : LOCAL;
      // Mutations run in order: a remote's consecutive root fields share a request, a field of
      // another remote (or of the local schema) in between starts a new one.
      if (this.#kind === 'mutation') {
        const last = drafts[drafts.length - 1];
        if (last && (last.local ? LOCAL : `remote ${last.remote.name}`) === owner) return drafts.length - 1;
      } else {
        const known = byOwner.get(owner);
        if (known !== undefined) return known;
      }
      drafts.push(
        remote
          ? { local: false, remote, renaming: renamingOf(remote), roots: [], paths: new Map(), used: new Set() }
          : { local: true, roots: [], paths: new Map() },
      );
      byOwner.set(owner, drafts.length - 1);
      return drafts.length - 1;
    };

    for (const [key, occurrences] of this.#group(this.#operation.selectionSet, this.#root, [])) {
      const name = occurrences[0]!.node.name.value;
      const placement = this.#placement(occurrences);
      if (name === '__typename') {
        entries.push({ ...placement, kind: 'typename', key, value: this.#root.name });
        continue;
      }
      const remote = this.#owners.get(name);
      if (!remote) {
        // The local schema's root field, or introspection: the gateway executes it.
        const field = name === '__schema' ? SchemaMetaFieldDef : name === '__type' ? TypeMetaFieldDef : this.#root.getFields()[name];
        if (!field) fail(`unknown root field "${name}"`);
        const call = callOf(undefined);
        const draft = drafts[call]! as Extract<Draft, { local: true }>;
        entries.push({ ...placement, kind: 'field', key, call, nonNull: isNonNullType(field.type) });
        draft.paths.set(key, [key]);
        for (const { node, at, conditions } of occurrences) draft.roots.push({ node, at, conditions });
        continue;
      }
      const call = callOf(remote);
      const draft = drafts[call]! as Extract<Draft, { local: false }>;
      const namespace = draft.renaming.namespace;
      if (namespace !== undefined && name === namespace) {
        const wrapper = getNamedType(this.#root.getFields()[name]!.type) as GraphQLObjectType;
        // The fields of every occurrence of the namespace field under this key, each under the
        // conditions of its namespace field.
        const inner = new Map<string, Occurrence[]>();
        for (const occurrence of occurrences) {
          const conditions = conditioned(occurrence.node, 'a namespace field') ? [...occurrence.conditions, occurrence.node] : occurrence.conditions;
          for (const [innerKey, list] of this.#group(occurrence.node.selectionSet!, wrapper, conditions)) {
            const known = inner.get(innerKey);
            if (known) known.push(...list);
            else inner.set(innerKey, list);
          }
        }
        const innerEntries: NamespaceEntry[] = [];
        for (const [innerKey, list] of inner) {
          const innerPlacement = this.#placement(list);
          if (list[0]!.node.name.value === '__typename') {
            innerEntries.push({ ...innerPlacement, key: innerKey, remoteKey: innerKey, typename: wrapper.name });
            continue;
          }
          // The namespace under a second key: its fields get aliases of their own in the remote's document.
          let remoteKey = innerKey;
          for (let n = 2; draft.used.has(remoteKey); n++) remoteKey = `${innerKey}_${n}`;
          draft.used.add(remoteKey);
          innerEntries.push({ ...innerPlacement, key: innerKey, remoteKey });
          draft.paths.set(remoteKey, [key, innerKey]);
          for (const { node, at, conditions } of list) {
            const aliased: FieldNode = remoteKey === innerKey ? node : { ...node, alias: { kind: Kind.NAME, value: remoteKey } };
            draft.roots.push({ node: aliased, at, conditions, parent: wrapper });
          }
        }
        entries.push({ ...placement, kind: 'namespace', key, call, entries: innerEntries });
        continue;
      }
      const field = this.#root.getFields()[name]!;
      entries.push({ ...placement, kind: 'field', key, call, nonNull: isNonNullType(field.type) });
      draft.paths.set(key, [key]);
      draft.used.add(key);
      for (const { node, at, conditions } of occurrences) draft.roots.push({ node, at, conditions, parent: this.#root });
    }
    return {
      operation: this.#kind,
      variableDefinitions: this.#operation.variableDefinitions ?? [],
      calls: drafts.map((draft) => (draft.local ? this.#localCall(draft) : this.#call(draft))),
      entries,
      conditional: this.#conditional,
    };
  }

  #placement(occurrences: readonly Occurrence[]): Placement {
    const at = occurrences[0]!.at;
    // A root field's other directives travel with it to its remote (or to local execution).
    const own = occurrences.map((o) => o.node.directives?.some(isCondition) === true);
    if (!own.some(Boolean) && occurrences.every((o) => o.conditions.length === 0)) return { at };
    this.#conditional = true;
    return { at, when: occurrences.map((o, i) => ({ at: o.at, nodes: own[i] ? [...o.conditions, o.node] : o.conditions })) };
  }

  /**
   * The fields of a root (or namespace) selection set by response key, in the order of their first
   * appearance, fragments on that type spread in place; each with the fragments around it that
   * carry `@skip` or `@include` (after `conditions`, those of the selection set itself).
   */
  #group(selectionSet: SelectionSetNode, type: GraphQLObjectType, conditions: readonly ConditionNode[]): Map<string, Occurrence[]> {
    const groups = new Map<string, Occurrence[]>();
    const walk = (set: SelectionSetNode, around: readonly ConditionNode[]): void => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          const occurrence: Occurrence = { node: selection, at: this.#places++, conditions: around };
          const group = groups.get(key);
          if (group) group.push(occurrence);
          else groups.set(key, [occurrence]);
          continue;
        }
        const inside = conditioned(selection, `a fragment on ${type.name}`) ? [...around, selection] : around;
        if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (selection.typeCondition && selection.typeCondition.name.value !== type.name) fail(`a fragment on another type than ${type.name}`);
          walk(selection.selectionSet, inside);
        } else {
          const fragment = this.#fragments.get(selection.name.value);
          if (!fragment || fragment.typeCondition.name.value !== type.name) fail(`fragment "${selection.name.value}" at the root`);
          walk(fragment.selectionSet, inside);
        }
      }
    };
    walk(selectionSet, conditions);
    return groups;
  }

  #call(draft: Extract<Draft, { local: false }>): RemoteCall {
    const rewriter = new Rewriter(this.#schema, draft.remote, draft.renaming, this.#fragments, this.#kind);
    const map: TypenameMap = {};
    const publicRoot = draft.remote.public.roots[this.#kind]?.name;
    const selections = wrapAll(draft.roots, ({ node, parent, conditions }) => {
      for (const condition of conditions) rewriter.noteDirectives(condition.directives);
      // A root field keeps its remote root's renaming whatever our root type is called.
      return rewriter.field(node, parent, parent === this.#root ? publicRoot : parent.name, map);
    });
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
      local: false,
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

  #localCall(draft: Extract<Draft, { local: true }>): LocalCall {
    const operation: OperationDefinitionNode = {
      ...this.#operation,
      selectionSet: { kind: Kind.SELECTION_SET, selections: wrapAll(draft.roots, ({ node }) => node) },
    };
    const fragments = this.#document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
    return {
      local: true,
      document: { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] },
      operationName: this.#operation.name?.value,
      paths: draft.paths,
    };
  }
}

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
      if (map.children?.has(key) || map.leaves?.has(key)) fail(`response key "${key}" is both __typename and a field`);
      return node;
    }
    if (!isObjectType(parent) && !isInterfaceType(parent)) fail(`field "${name}" on ${parent.name}`);
    const definition = parent.getFields()[name];
    if (!definition) fail(`unknown field "${parent.name}.${name}"`);
    for (const argument of node.arguments ?? []) this.#value(argument.value);
    const own = isObjectType(parent) && renamesAs !== undefined ? this.#renaming.fieldsToOwn.get(renamesAs)?.get(name) : undefined;
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
