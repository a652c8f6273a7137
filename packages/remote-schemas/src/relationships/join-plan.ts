import {
  Kind,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  print,
  visit,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type VariableDefinitionNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../options.js';
import { usedVariables } from '../sent-document.js';
import { compileOccurrence, type CallTemplate } from './join-calls.js';
import { relationshipsOf, type RelationshipBinding, type RelationshipIndex } from './schema.js';

/**
 * Where relationship fields are in an answer: the response keys that lead to them, and at each
 * object the placeholders that stand for them. Join fields and placeholders are found by this
 * tree alone; nothing else of the answer is searched.
 */
export interface Locator {
  /** Response key -> the field's type and what is below it. */
  readonly children: Map<string, { type: GraphQLOutputType; locator: Locator }>;
  /** Placeholder key -> public type name of the object -> the relationship field there. */
  readonly sites: Map<string, Map<string, Occurrence>>;
}

/** One relationship field as a selection asks for it at one place (nodes of one response key merged). */
export interface Occurrence {
  readonly binding: RelationshipBinding;
  /** The client's response key. */
  readonly key: string;
  /** The key of the placeholder in the answer (`key`, or a key of ours where other types may use `key`). */
  readonly placeholder: string;
  /** The keys of the join fields in the answer, in the order of the relationship's join fields. */
  readonly joinKeys: readonly string[];
  /** The client's nodes, for error locations. */
  readonly nodes: readonly FieldNode[];
  /**
   * Each place the field is selected, as the `@skip` / `@include` directives it is under there (its
   * own, and those of the inline fragments and fragment spreads around it in its selection): the
   * field is asked for when all the directives of one place let it through.
   */
  readonly conditions: ReadonlyArray<Conditions>;
  /** How the target is asked for this field's values. */
  readonly call: CallTemplate;
  /** The field's type (public): its value is walked with it for the next level. */
  readonly type: GraphQLOutputType;
  /** Relationship fields inside this one's value (the next level); `undefined`: none. */
  readonly inner: Locator | undefined;
}

/** An operation with relationship fields, compiled for one schema: what the sources answer, and how the rest is joined. */
export interface JoinPlan {
  /** The operation without its relationship fields: placeholders and join fields in their place. */
  readonly base: DocumentNode;
  /** The variables `base` defines (only those are sent with it). */
  readonly baseVariables: ReadonlySet<string>;
  readonly root: Locator;
  /** Keys of ours that may appear in error paths -> the client's key they stand for. */
  readonly ownKeys: ReadonlyMap<string, string>;
  /** The prefix of every key and variable of ours. */
  readonly prefix: string;
}

/** Why an operation with relationship fields cannot be run (answered as an error). */
export interface JoinRefusal {
  readonly refusal: string;
}

class Refusal extends Error {}

/** Bound on the distinct places of relationship fields in one operation (a hostile document could expand fragments exponentially). */
const MAX_LOCATOR_NODES = 10_000;

/** The prefix of our keys: one no response key, variable or fragment name of the document starts with. */
function prefixFor(document: DocumentNode): string {
  const names: string[] = [];
  visit(document, {
    Field(node) {
      names.push(node.alias?.value ?? node.name.value);
    },
    Variable(node) {
      names.push(node.name.value);
    },
    FragmentDefinition(node) {
      names.push(node.name.value);
    },
  });
  for (let n = 0; ; n++) {
    const prefix = n === 0 ? '_svc_' : `_svc${n}_`;
    if (!names.some((name) => name.startsWith(prefix))) return prefix;
  }
}

/** Whether any field of the document has the name of a relationship field (a cheap first look). */
function mentionsRelationship(document: DocumentNode, index: RelationshipIndex): boolean {
  const names = new Set<string>();
  for (const fields of index.values()) for (const name of fields.keys()) names.add(name);
  let found = false;
  visit(document, {
    Field(node) {
      if (names.has(node.name.value)) found = true;
    },
  });
  return found;
}

/** Directive lists a node is under, each to be satisfied. */
export type Conditions = ReadonlyArray<readonly DirectiveNode[]>;

interface Builder {
  binding: RelationshipBinding;
  key: string;
  placeholder: string;
  joinKeys: string[];
  nodes: FieldNode[];
  conditions: Conditions[];
  parent: GraphQLCompositeType;
}

type BuilderLocator = {
  children: Map<string, { type: GraphQLOutputType; locator: BuilderLocator }>;
  sites: Map<string, Map<string, Builder>>;
};

class JoinCompiler {
  readonly #schema: GraphQLSchema;
  readonly #index: RelationshipIndex;
  readonly #prefix: string;
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  /** Stripped fragment variants (a fragment spread where other types share its keys gets a variant of its own). */
  readonly stripped = new Map<string, FragmentDefinitionNode>();
  readonly #fragmentLocators = new Map<string, BuilderLocator>();
  readonly ownKeys = new Map<string, string>();
  readonly #variables: readonly VariableDefinitionNode[];
  #nodes = 0;

  constructor(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, index: RelationshipIndex, prefix: string) {
    this.#schema = schema;
    this.#variables = operation.variableDefinitions ?? [];
    this.#index = index;
    this.#prefix = prefix;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.#fragments.set(definition.name.value, definition);
    }
  }

  #count(): void {
    if (++this.#nodes > MAX_LOCATOR_NODES) throw new Refusal('the operation selects remote relationship fields in too many places');
  }

  /**
   * `set` without relationship fields (a placeholder `__typename` and the join fields in each
   * one's place), and what it contributes to `locator`. `shared`: the selection is on an abstract
   * type, where other types may use a relationship's response key for another field.
   */
  selectionSet(set: SelectionSetNode, parent: GraphQLCompositeType, locator: BuilderLocator, shared: boolean, enclosing: Conditions = []): SelectionSetNode {
    const selections: SelectionNode[] = [];
    // Join fields go last: the answer's objects then end with them, and removing them keeps those
    // objects as fast to read and serialize as the others.
    const joins: FieldNode[] = [];
    // Each join field once per selection set and conditions: 800 aliases of one relationship
    // field would otherwise ask the source for the same join field 800 times.
    const joined = new Set<string>();
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const [first, ...rest] = this.#field(selection, parent, locator, shared, enclosing);
        selections.push(first!);
        for (const join of rest) {
          const id = join.directives?.length ? `${join.alias!.value} ${join.directives.map((d) => print(d)).join(' ')}` : join.alias!.value;
          if (joined.has(id)) continue;
          joined.add(id);
          joins.push(join);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? this.#schema.getType(selection.typeCondition.name.value) : parent;
        const type = isCompositeType(condition) ? condition : parent;
        const inner = selection.directives?.length ? [...enclosing, selection.directives] : enclosing;
        selections.push({ ...selection, selectionSet: this.selectionSet(selection.selectionSet, type, locator, shared, inner) });
      } else {
        const name = this.#fragment(selection.name.value, shared);
        const spread = selection.directives?.length ? [...enclosing, selection.directives] : enclosing;
        merge(locator, this.#fragmentLocators.get(name)!, () => this.#count(), spread);
        selections.push(name === selection.name.value ? selection : { ...selection, name: { kind: Kind.NAME, value: name } });
      }
    }
    return { ...set, selections: joins.length > 0 ? [...selections, ...joins] : selections };
  }

  /** The field as the base asks for it: itself, or a relationship's placeholder followed by its join fields. */
  #field(node: FieldNode, parent: GraphQLCompositeType, locator: BuilderLocator, shared: boolean, enclosing: Conditions): [SelectionNode, ...FieldNode[]] {
    const name = node.name.value;
    const key = node.alias?.value ?? name;
    if (name.startsWith('__')) return [node];
    const binding = isObjectType(parent) ? this.#index.get(parent.name)?.get(name) : undefined;
    if (binding) {
      const placeholder = shared ? `${this.#prefix}r_${parent.name}_${key}` : key;
      const joinKeys = binding.joinFields.map((field) => `${this.#prefix}j_${parent.name}_${field}`);
      for (const joinKey of joinKeys) this.ownKeys.set(joinKey, key);
      if (placeholder !== key) this.ownKeys.set(placeholder, key);
      let byType = locator.sites.get(placeholder);
      if (!byType) locator.sites.set(placeholder, (byType = new Map()));
      const known = byType.get(parent.name);
      const conditions = node.directives?.length ? [...enclosing, node.directives] : enclosing;
      if (known) {
        if (!known.nodes.includes(node)) known.nodes.push(node);
        known.conditions.push(conditions);
      } else {
        this.#count();
        byType.set(parent.name, { binding, key, placeholder, joinKeys, nodes: [node], conditions: [conditions], parent });
      }
      // The placeholder answers the object's type name; the join fields go with it, under its conditions.
      const directives = node.directives ?? [];
      return [
        { kind: Kind.FIELD, alias: { kind: Kind.NAME, value: placeholder }, name: { kind: Kind.NAME, value: '__typename' }, directives } as FieldNode,
        ...binding.joinFields.map(
          (field, i): FieldNode => ({
            kind: Kind.FIELD,
            alias: { kind: Kind.NAME, value: joinKeys[i]! },
            name: { kind: Kind.NAME, value: field },
            directives,
          }),
        ),
      ];
    }
    if (!node.selectionSet) return [node];
    const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
    if (!definition) throw new Refusal(`unknown field "${parent.name}.${name}"`);
    const type = getNamedType(definition.type);
    if (!isCompositeType(type)) throw new Refusal(`a selection on "${parent.name}.${name}"`);
    let child = locator.children.get(key);
    if (!child) {
      this.#count();
      locator.children.set(key, (child = { type: definition.type, locator: { children: new Map(), sites: new Map() } }));
    }
    // The conditions of the field, and around it, hold below it: its objects may be there through
    // another selection of the same key.
    const below = node.directives?.length ? [...enclosing, node.directives] : enclosing;
    return [{ ...node, selectionSet: this.selectionSet(node.selectionSet, type, child.locator, isAbstractType(type), below) }];
  }

  /** The name of the stripped variant of fragment `name` for a shared (`true`) or an own selection. */
  #fragment(name: string, shared: boolean): string {
    const variant = shared ? `${this.#prefix}a_${name}` : name;
    if (this.stripped.has(variant)) return variant;
    const fragment = this.#fragments.get(name);
    if (!fragment) throw new Refusal(`unknown fragment "${name}"`);
    const type = this.#schema.getType(fragment.typeCondition.name.value);
    if (!isCompositeType(type)) throw new Refusal(`fragment "${name}" on unknown type`);
    const locator: BuilderLocator = { children: new Map(), sites: new Map() };
    // Registered before its selections are walked; a valid document has no cycle of fragments.
    this.#fragmentLocators.set(variant, locator);
    const selectionSet = this.selectionSet(fragment.selectionSet, type, locator, shared);
    this.stripped.set(variant, { ...fragment, name: { kind: Kind.NAME, value: variant }, selectionSet });
    return variant;
  }

  /** The locators and occurrences, each occurrence's selection compiled for its target. */
  finish(locator: BuilderLocator, level: number): Locator | undefined {
    if (level > 64) throw new Refusal('remote relationships nested more than 64 deep');
    const children = new Map<string, { type: GraphQLOutputType; locator: Locator }>();
    for (const [key, child] of locator.children) {
      const done = this.finish(child.locator, level);
      if (done) children.set(key, { type: child.type, locator: done });
    }
    const sites = new Map<string, Map<string, Occurrence>>();
    for (const [placeholder, byType] of locator.sites) {
      const compiled = new Map<string, Occurrence>();
      for (const [typeName, builder] of byType) compiled.set(typeName, this.#occurrence(builder, level));
      sites.set(placeholder, compiled);
    }
    return children.size === 0 && sites.size === 0 ? undefined : { children, sites };
  }

  #occurrence(builder: Builder, level: number): Occurrence {
    const { binding } = builder;
    const fieldType = (builder.parent as { getFields(): Record<string, { type: GraphQLOutputType }> }).getFields()[binding.compiled.name]!.type;
    const target = getNamedType(fieldType);
    const inner: BuilderLocator = { children: new Map(), sites: new Map() };
    const nodes = builder.nodes.map((node) =>
      node.selectionSet && isCompositeType(target) ? { ...node, selectionSet: this.selectionSet(node.selectionSet, target, inner, isAbstractType(target)) } : node,
    );
    const call = compileOccurrence({
      schema: this.#schema,
      binding,
      parent: builder.parent,
      nodes,
      fragments: this.stripped,
      variableDefinitions: this.#variables,
      prefix: this.#prefix,
    });
    return {
      binding,
      key: builder.key,
      placeholder: builder.placeholder,
      joinKeys: builder.joinKeys,
      nodes: builder.nodes,
      conditions: builder.conditions,
      call,
      type: fieldType,
      inner: this.finish(inner, level + 1),
    };
  }
}

/**
 * Adds what `from` (a fragment's locator) finds to `into`, copying as it goes (`from` is shared by
 * every spread), its fields under the conditions `spread` of this spread too.
 */
function merge(into: BuilderLocator, from: BuilderLocator, count: () => void, spread: Conditions): void {
  const under = (conditions: Conditions): Conditions => (spread.length === 0 ? conditions : [...spread, ...conditions]);
  for (const [key, child] of from.children) {
    let target = into.children.get(key);
    if (!target) {
      count();
      into.children.set(key, (target = { type: child.type, locator: { children: new Map(), sites: new Map() } }));
    }
    // Its objects may be there through another selection of the field: the spread's conditions
    // hold below it too.
    merge(target.locator, child.locator, count, spread);
  }
  for (const [placeholder, byType] of from.sites) {
    let target = into.sites.get(placeholder);
    if (!target) into.sites.set(placeholder, (target = new Map()));
    for (const [typeName, builder] of byType) {
      const known = target.get(typeName);
      if (known) {
        for (const node of builder.nodes) if (!known.nodes.includes(node)) known.nodes.push(node);
        for (const conditions of builder.conditions) known.conditions.push(under(conditions));
      } else {
        count();
        target.set(typeName, { ...builder, nodes: [...builder.nodes], conditions: builder.conditions.map(under) });
      }
    }
  }
}

/** The fragments a selection uses, transitively. */
function usedFragments(set: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, into: Set<string>): void {
  visit(set, {
    FragmentSpread(node) {
      const name = node.name.value;
      if (into.has(name)) return;
      into.add(name);
      const fragment = fragments.get(name);
      if (fragment) usedFragments(fragment.selectionSet, fragments, into);
    },
  });
}

function compile(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, index: RelationshipIndex): JoinPlan | undefined {
  const prefix = prefixFor(document);
  const compiler = new JoinCompiler(schema, document, operation, index, prefix);
  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const rootLocator: BuilderLocator = { children: new Map(), sites: new Map() };
  const selectionSet = compiler.selectionSet(operation.selectionSet, root, rootLocator, false);
  const locator = compiler.finish(rootLocator, 1);
  if (!locator) return undefined;
  // Only what the operation still uses: the fragments and variables of relationship selections go to their targets.
  const fragments = new Set<string>();
  usedFragments(selectionSet, compiler.stripped, fragments);
  const definitions = [...fragments].map((name) => compiler.stripped.get(name)!);
  const variables = new Set<string>();
  usedVariables([{ selectionSet }, ...definitions], variables);
  for (const directive of operation.directives ?? []) {
    visit(directive, {
      Variable(variable) {
        variables.add(variable.name.value);
      },
    });
  }
  const base: OperationDefinitionNode = {
    ...operation,
    variableDefinitions: (operation.variableDefinitions ?? []).filter((definition) => variables.has(definition.variable.name.value)),
    selectionSet,
  };
  return {
    base: { kind: Kind.DOCUMENT, definitions: [base, ...definitions] },
    baseVariables: variables,
    root: locator,
    ownKeys: compiler.ownKeys,
    prefix,
  };
}

type Decision = JoinPlan | JoinRefusal | undefined;

/** Documents whose join decisions are kept per schema (least recently used first out). */
const MAX_JOIN_DOCUMENTS = 1000;
const caches = new WeakMap<GraphQLSchema, LRUCache<DocumentNode, Map<string | null | undefined, { decision: Decision }>>>();

/**
 * The join plan of an operation, compiled once per (document, operation name, schema) like the
 * other plans: `undefined` when the schema has no relationship fields or the operation selects
 * none (served as before), a refusal when it cannot be run.
 */
export function joinPlanFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger | undefined,
): JoinPlan | JoinRefusal | undefined {
  const index = relationshipsOf(schema);
  if (!index) return undefined;
  let cache = caches.get(schema);
  if (!cache) caches.set(schema, (cache = new LRUCache({ max: MAX_JOIN_DOCUMENTS })));
  let decisions = cache.get(document);
  if (!decisions) cache.set(document, (decisions = new Map()));
  const known = decisions.get(operationName);
  if (known) return known.decision;
  let decision: Decision;
  const operation = getOperationAST(document, operationName);
  if (operation && mentionsRelationship(document, index)) {
    try {
      decision = compile(schema, document, operation, index);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      logger?.debug(`remote schemas: remote relationships of operation ${operation.name ? `"${operation.name.value}" ` : ''}cannot be run: ${reason}`);
      decision = { refusal: reason };
    }
  }
  decisions.set(operationName, { decision });
  return decision;
}
