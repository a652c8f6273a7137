/**
 * The size of an operation as API limits count it, with fragments expanded but never written out:
 * depth (a root field is at depth 1; `{ a { b { c } } }` has depth 3), nodes (every field
 * selection, aliases counted, `__typename` not counted, which therefore adds no depth either), and
 * whether it selects `__schema` or `__type` anywhere (under an alias, in a fragment or an inline
 * fragment, below a namespace field).
 *
 * Each fragment is measured once, in dependency order and without recursing through spreads, and
 * a spread adds the fragment's memoised totals: a "fragment bomb" whose expansion would hold 2^60
 * fields costs one pass over its text, its count saturating at `Number.MAX_SAFE_INTEGER`.
 */
import { Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';

export interface OperationCost {
  /** The deepest field, the root fields being at 1; 0 for an operation of `__typename` alone. */
  depth: number;
  /** Field selections with fragments expanded, aliases counted, `__typename` not; saturates at `Number.MAX_SAFE_INTEGER`. */
  nodes: number;
  /** Whether `__schema` or `__type` is selected anywhere in the operation, fragments included. */
  introspection: boolean;
}

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);
const NONE: OperationCost = { depth: 0, nodes: 0, introspection: false };

function add(left: number, right: number): number {
  const sum = left + right;
  return sum > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : sum;
}

/** The fragments of `document` by name, each measured as if its fields were root fields. */
export type FragmentCosts = ReadonlyMap<string, OperationCost>;

/**
 * Measures a selection set whose fields are at `level`, reading spread fragments from `known`
 * (a fragment not there, being unknown or part of a cycle, counts as nothing: validation refuses
 * both). Recursion follows only the nesting of the text, which the parser bounds.
 */
function measureSet(set: SelectionSetNode, level: number, known: FragmentCosts): OperationCost {
  let depth = 0;
  let nodes = 0;
  let introspection = false;
  for (const selection of set.selections) {
    let cost: OperationCost;
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name === '__typename') continue;
      nodes = add(nodes, 1);
      depth = Math.max(depth, level);
      if (INTROSPECTION_FIELDS.has(name)) introspection = true;
      if (selection.selectionSet === undefined) continue;
      cost = measureSet(selection.selectionSet, level + 1, known);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      cost = measureSet(selection.selectionSet, level, known);
    } else {
      const fragment = known.get(selection.name.value) ?? NONE;
      cost = { ...fragment, depth: fragment.depth === 0 ? 0 : level - 1 + fragment.depth };
    }
    nodes = add(nodes, cost.nodes);
    depth = Math.max(depth, cost.depth);
    introspection ||= cost.introspection;
  }
  return { depth, nodes, introspection };
}

/** The names of the fragments spread in `set`, at any depth (not through other fragments). */
function spreadsIn(set: SelectionSetNode): string[] {
  const names: string[] = [];
  const pending: SelectionSetNode[] = [set];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const selection of next.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) names.push(selection.name.value);
      else if (selection.selectionSet !== undefined) pending.push(selection.selectionSet);
    }
  }
  return names;
}

/**
 * Every fragment of `document` measured once, each after the fragments it spreads (an explicit
 * stack, so a chain of thousands of spreads does not exhaust the call stack).
 */
export function measureFragments(document: DocumentNode): FragmentCosts {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) fragments.set(definition.name.value, definition);
  }
  const known = new Map<string, OperationCost>();
  const visited = new Set<string>();
  for (const [first, firstDefinition] of fragments) {
    if (visited.has(first)) continue;
    visited.add(first);
    const path = [{ definition: firstDefinition, spreads: spreadsIn(firstDefinition.selectionSet), next: 0 }];
    for (let top = path[0]; top !== undefined; top = path[path.length - 1]) {
      const child = top.spreads[top.next++];
      if (child !== undefined) {
        const definition = fragments.get(child);
        if (definition === undefined || visited.has(child)) continue;
        visited.add(child);
        path.push({ definition, spreads: spreadsIn(definition.selectionSet), next: 0 });
      } else {
        path.pop();
        known.set(top.definition.name.value, measureSet(top.definition.selectionSet, 1, known));
      }
    }
  }
  return known;
}

/** Depth, nodes and introspection of one operation; `fragments` from {@link measureFragments} of its document. */
export function measureOperation(operation: OperationDefinitionNode, fragments: FragmentCosts): OperationCost {
  return measureSet(operation.selectionSet, 1, fragments);
}
