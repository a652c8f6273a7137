import {
  Kind,
  getNamedType,
  getOperationAST,
  isNonNullType,
  print,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { routingOf } from '../compose.js';
import type { LoadedRemote } from '../loaded-remote.js';
import { PrintedLocations } from '../locations.js';
import {
  Unplannable,
  fail,
  type ConditionNode,
  type LocalCall,
  type NamespaceEntry,
  type Placement,
  type Plan,
  type PlanDecision,
  type RemoteCall,
  type RootEntry,
  type TypenameMap,
} from './plan.js';
import { renamingOf, type Renaming } from './renaming.js';
import { Rewriter, prune } from './rewrite.js';
import { oneFieldMessage } from './subscription.js';

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
  if (!operation) return undefined;
  const owners = routing.fields[operation.operation];
  if (operation.operation === 'subscription') return compileSubscription(schema, document, operation, owners);
  try {
    const plan = new Compiler(schema, document, operation, owners).compile();
    return plan.calls.some((call) => !call.local) ? { plan } : undefined;
  } catch (error) {
    if (error instanceof Unplannable) return { fallback: error.message, operationName: operation.name?.value };
    throw error;
  }
}

/**
 * A subscription is planned when its root field is a remote's `root_fields_namespace` field (the
 * one field selected inside it is subscribed to on the remote, and each event is nested under the
 * namespace's key) or a field of a remote with renamed types or fields (subscribed to in the
 * remote's names, each event renamed back). A subscription to a remote without customization is
 * not planned: it is sent as it is. `{ refusal }`: a namespaced subscription that cannot be served
 * (no other route can run it), with the message that refuses it; `{ fallback }`: a renamed one the
 * plan cannot express, executed by delegation.
 */
function compileSubscription(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  owners: ReadonlyMap<string, LoadedRemote>,
): PlanDecision | undefined {
  const namespaced = (selections: readonly SelectionNode[]): boolean =>
    selections.some((selection) => {
      if (selection.kind !== Kind.FIELD) return false;
      const remote = owners.get(selection.name.value);
      return remote !== undefined && renamingOf(remote).namespace === selection.name.value;
    });
  // Validation leaves a subscription one root field (possibly inside fragments on the root type).
  const rootSelections: FieldNode[] = [];
  const collect = (selections: readonly SelectionNode[], seen: Set<string>): void => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) rootSelections.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet.selections, seen);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = document.definitions.find(
          (d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value,
        );
        if (fragment) collect(fragment.selectionSet.selections, seen);
      }
    }
  };
  collect(operation.selectionSet.selections, new Set());
  const name = operation.name?.value;
  const namespace = namespaced(rootSelections);
  if (!namespace) {
    // Validation leaves one response key at the root: every field there is the same one.
    const remote = rootSelections[0] && owners.get(rootSelections[0].name.value);
    if (!remote || remote.forwardable) return undefined;
  }
  try {
    const plan = new Compiler(schema, document, operation, owners).compile();
    const [entry, ...others] = plan.entries;
    if (!entry || others.length > 0 || entry.kind !== (namespace ? 'namespace' : 'field')) fail('a subscription selects one root field');
    if (entry.kind === 'namespace') {
      // With @skip / @include among them, the fields are counted for each request's variables.
      const fields = entry.entries.filter((inner) => inner.typename === undefined).length;
      if (fields === 0 || (fields > 1 && !plan.conditional)) return { refusal: oneFieldMessage(name, entry.key, fields), operationName: name };
    }
    return { plan };
  } catch (error) {
    if (!(error instanceof Unplannable)) throw error;
    // Delegation can run a renamed subscription the plan cannot; nothing else runs a namespaced one.
    return namespace
      ? { refusal: `the operation cannot be executed: ${error.message}`, operationName: name }
      : { fallback: error.message, operationName: name };
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

/**
 * Root selections a plan walks at most, fragments spread in place; past it the operation is left to
 * execution (which collects each fragment once), whatever its conditions make of it.
 */
const MAX_VISITS = 100_000;

class Compiler {
  readonly #schema: GraphQLSchema;
  readonly #document: DocumentNode;
  readonly #operation: OperationDefinitionNode;
  readonly #owners: ReadonlyMap<string, LoadedRemote>;
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  readonly #kind: 'query' | 'mutation' | 'subscription';
  readonly #root: GraphQLObjectType;
  #places = 0;
  #conditional = false;
  /** Selections walked at the root, fragments spread: bounded (see {@link MAX_VISITS}). */
  #visits = 0;

  constructor(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, owners: ReadonlyMap<string, LoadedRemote>) {
    this.#schema = schema;
    this.#document = document;
    this.#operation = operation;
    this.#owners = owners;
    this.#kind = operation.operation;
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
          const innerField = wrapper.getFields()[list[0]!.node.name.value];
          innerEntries.push({ ...innerPlacement, key: innerKey, remoteKey, ...(innerField && isNonNullType(innerField.type) && { nonNull: `${wrapper.name}.${innerField.name}` }) });
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
    // A fragment spread again under the same conditions adds nothing (as execution collects each
    // fragment once per selection set): without this, fragments that each spread the one before
    // twice make 2^n occurrences of a document of n lines.
    const spread = new WeakMap<readonly ConditionNode[], Set<string>>();
    const walk = (set: SelectionSetNode, around: readonly ConditionNode[]): void => {
      for (const selection of set.selections) {
        if (++this.#visits > MAX_VISITS) fail(`the operation expands to more than ${String(MAX_VISITS)} selections at the root`);
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
          let names = spread.get(inside);
          if (names === undefined) spread.set(inside, (names = new Set()));
          if (names.has(fragment.name.value)) continue;
          names.add(fragment.name.value);
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
    const text = print(document);
    return {
      local: false,
      remote: draft.remote,
      document,
      text,
      // The client's text: the document's, or for a document derived from it (a join plan's base) its operation's.
      locations: new PrintedLocations(document, text, this.#document.loc?.source ?? this.#operation.loc?.source),
      operationName: this.#operation.name?.value,
      variables: variableDefinitions.map((d) => d.variable.name.value),
      typenames: prune(map),
      typeToPublic: draft.renaming.typeToPublic,
      paths: draft.paths,
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
