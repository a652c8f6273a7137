import {
  Kind,
  parse,
  print,
  stripIgnoredCharacters,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type SelectionNode,
  type VariableDefinitionNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { LoadedRemote } from '../loaded-remote.js';
import { prune, Rewriter, type TypenameMap } from '../plan/compile.js';
import { renamingOf } from '../plan/renaming.js';
import type { RelationshipBinding } from './schema.js';
import { variableOf } from './validate.js';

/** The join values of one source object, in the order of the relationship's join fields. */
export type JoinValues = readonly unknown[];

/** One argument the definition fixes, sent as a variable of the target call. */
export interface CallArgument {
  /** Its type in the target's own names, as a variable definition writes it. */
  readonly type: string;
  /** Its value for one source object (the definition's value, `"$x"` replaced by the join values). */
  readonly value: (join: JoinValues) => unknown;
  /** The value depends on the join values (otherwise it is the same for every source object). */
  readonly perKey: boolean;
}

/** How the target of one relationship field (an occurrence) is asked, compiled once. */
export interface CallTemplate {
  /** Tells occurrences apart in the shapes of documents. */
  readonly id: number;
  readonly remote: LoadedRemote;
  readonly arguments: readonly CallArgument[];
  /** `<field>(…) { <field>(…) { … } }` of all levels under `alias`, the arguments as the variables `names`. */
  field(alias: string, names: readonly string[]): string;
  /** The own names of the levels after the first: the path from the alias to the value. */
  readonly path: readonly string[];
  /** The fragments the selection uses, printed in the target's own names, by name. */
  readonly fragments: ReadonlyMap<string, string>;
  /** The client's variables the selection and arguments use, their definitions in the target's own names. */
  readonly variables: ReadonlyMap<string, string>;
  /** Where `__typename` answers of the value are renamed; `undefined`: nowhere. */
  readonly typenames: TypenameMap | undefined;
  readonly typeToPublic: ReadonlyMap<string, string>;
  /** With `batch`: which argument holds the list of join values, and the key of the match field in each item. */
  readonly batch: { readonly argument: number; readonly joinIndex: number; readonly matchKey: string | undefined } | undefined;
}

export interface OccurrenceInput {
  schema: GraphQLSchema;
  binding: RelationshipBinding;
  /** The source type (public). */
  parent: GraphQLCompositeType;
  /** The client's nodes of the field, their selections stripped of relationship fields. */
  nodes: readonly FieldNode[];
  /** The operation's fragments, stripped, by name. */
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** The client's variable definitions. */
  variableDefinitions: readonly VariableDefinitionNode[];
  prefix: string;
}

/** Ids of call templates by what they ask (bounded: an evicted signature only gets a new id). */
const signatures = new LRUCache<string, number>({ max: 10_000 });
let nextId = 0;

/** A value of the definition with every `"$x"` replaced by the join value of `x`. */
function substitute(value: unknown, index: ReadonlyMap<string, number>, join: JoinValues): unknown {
  const variable = variableOf(value);
  if (variable !== undefined) return join[index.get(variable)!];
  if (Array.isArray(value)) return value.map((item) => substitute(item, index, join));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, index, join)]));
  }
  return value;
}

/**
 * The field nodes of one response key as one node: with several, each one's selections in an
 * inline fragment carrying its own `@skip` / `@include`, so that the remote decides each as
 * execution would.
 */
function mergeNodes(nodes: readonly FieldNode[]): FieldNode {
  const [first] = nodes;
  if (nodes.length === 1 || !first!.selectionSet) return first!;
  const selections: SelectionNode[] = [];
  for (const node of nodes) {
    const conditions = (node.directives ?? []).filter((d) => d.name.value === 'skip' || d.name.value === 'include');
    if (conditions.length === 0) selections.push(...node.selectionSet!.selections);
    else selections.push({ kind: Kind.INLINE_FRAGMENT, directives: conditions, selectionSet: node.selectionSet! });
  }
  return { ...first!, directives: [], selectionSet: { kind: Kind.SELECTION_SET, selections } };
}

/** Compiles how one relationship field's values are asked of its target. */
export function compileOccurrence(input: OccurrenceInput): CallTemplate {
  const { binding, prefix } = input;
  const { compiled } = binding;
  const target = compiled.target;
  const renaming = renamingOf(target);
  const rewriter = new Rewriter(input.schema, target, renaming, input.fragments, 'query');
  const map: TypenameMap = {};
  const merged = mergeNodes(input.nodes);
  // The relationship field of the source type, its selection rewritten into the target's own names.
  const { alias: _alias, ...unaliased } = merged;
  const rewritten = rewriter.field({ ...unaliased, directives: [] }, input.parent, undefined, map);
  const joinIndex = new Map(compiled.joinFields.map((field, i) => [field.name, i]));
  const args: CallArgument[] = [];
  const levelArgs: Array<Array<{ name: string; index: number }>> = [];
  for (const level of compiled.levels) {
    const own: Array<{ name: string; index: number }> = [];
    for (const fixed of level.args) {
      own.push({ name: fixed.name, index: args.length });
      const value = fixed.value;
      args.push({
        type: String(fixed.type),
        perKey: fixed.uses.length > 0,
        value:
          fixed.uses.length === 0
            ? () => value
            : variableOf(value) !== undefined
              ? ((at) => (join: JoinValues) => join[at])(joinIndex.get(variableOf(value)!)!)
              : (join) => substitute(value, joinIndex, join),
      });
    }
    levelArgs.push(own);
  }
  let selectionSet = rewritten.selectionSet;
  const batch = compiled.batch;
  const matchKey = batch?.matchField === undefined ? undefined : `${prefix}m`;
  if (matchKey !== undefined && selectionSet) {
    const match: FieldNode = { kind: Kind.FIELD, alias: { kind: Kind.NAME, value: matchKey }, name: { kind: Kind.NAME, value: batch!.matchField! } };
    selectionSet = { ...selectionSet, selections: [...selectionSet.selections, match] };
  }
  // Compact: the text goes out once per distinct key of every request.
  const selection = selectionSet ? ` ${stripIgnoredCharacters(print(selectionSet))}` : '';
  const clientArgs = (rewritten.arguments ?? []).map((argument) => print(argument));
  const last = compiled.levels.length - 1;
  const field = (alias: string, names: readonly string[]): string => {
    let text = selection;
    for (let l = last; l >= 0; l--) {
      const level = compiled.levels[l]!;
      const parts = levelArgs[l]!.map(({ name, index }) => `${name}: $${names[index]!}`);
      if (l === last) parts.push(...clientArgs);
      const call = `${level.field}${parts.length > 0 ? `(${parts.join(', ')})` : ''}`;
      text = l === 0 ? `${alias}: ${call}${text}` : ` { ${call}${text} }`;
    }
    return text;
  };
  const fragments = new Map(rewriter.fragmentDefinitions().map((definition) => [definition.name.value, stripIgnoredCharacters(print(definition))]));
  const variables = new Map<string, string>();
  for (const definition of input.variableDefinitions) {
    const name = definition.variable.name.value;
    if (rewriter.variables.has(name)) variables.set(name, print({ ...definition, type: rewriter.typeNode(definition.type) }));
  }
  // Occurrences that ask the same thing share an id: their keys go in one group (one alias per key).
  const signature = JSON.stringify([target.name, field('', args.map((_, i) => String(i))), [...fragments.values()], [...variables.values()], batch ?? null]);
  let id = signatures.get(signature);
  if (id === undefined) signatures.set(signature, (id = nextId++));
  return {
    id,
    remote: target,
    arguments: args,
    field,
    path: compiled.levels.slice(1).map((level) => level.field),
    fragments,
    variables,
    typenames: prune(map)?.children?.get(rewritten.alias?.value ?? rewritten.name.value),
    typeToPublic: renaming.typeToPublic,
    batch: batch && {
      argument: levelArgs[last]!.find((a) => a.name === batch.argument)!.index,
      joinIndex: joinIndex.get(batch.joinField)!,
      matchKey,
    },
  };
}

/** One field call of a target document: an occurrence and the variables of its arguments. */
export interface CallItem {
  readonly call: CallTemplate;
  /** One value per argument of the template. */
  readonly values: readonly unknown[];
}

/** A target document of one shape (the occurrences of its aliases, in order), parsed once. */
interface Shape {
  text: string;
  document: DocumentNode;
  /** The client variables it defines. */
  clientVariables: readonly string[];
}

const shapes = new LRUCache<string, Shape>({ max: 500 });

/**
 * The document that asks a target for `items` (one alias each: `<prefix><i>`), and its variables.
 * Documents are kept by shape (which occurrences, in which order), so that the same operation
 * over the same number of distinct keys reuses its text, its parse and its compiled presets.
 */
export function targetRequest(
  items: readonly CallItem[],
  prefix: string,
  given: Readonly<Record<string, unknown>> | null | undefined,
): { document: DocumentNode; text: string; variables: Record<string, unknown> } {
  const key = `${prefix}|${items.map((item) => item.call.id).join(',')}`;
  let shape = shapes.get(key);
  if (!shape) {
    const definitions: string[] = [];
    const fields: string[] = [];
    const fragments = new Map<string, string>();
    const clientVariables = new Map<string, string>();
    items.forEach(({ call }, i) => {
      const names = call.arguments.map((_, j) => `${prefix}v${i}_${j}`);
      names.forEach((name, j) => definitions.push(`$${name}: ${call.arguments[j]!.type}`));
      fields.push(call.field(`${prefix}${i}`, names));
      for (const [name, text] of call.fragments) fragments.set(name, text);
      for (const [name, text] of call.variables) clientVariables.set(name, text);
    });
    definitions.push(...clientVariables.values());
    const text = `query${definitions.length > 0 ? `(${definitions.join(', ')})` : ''} { ${fields.join(' ')} }${[...fragments.values()].map((f) => `\n${f}`).join('')}`;
    shape = { text, document: parse(text, { noLocation: true }), clientVariables: [...clientVariables.keys()] };
    shapes.set(key, shape);
  }
  const variables: Record<string, unknown> = {};
  items.forEach(({ values }, i) => {
    values.forEach((value, j) => {
      variables[`${prefix}v${i}_${j}`] = value;
    });
  });
  for (const name of shape.clientVariables) if (given && Object.hasOwn(given, name)) variables[name] = given[name];
  return { document: shape.document, text: shape.text, variables };
}
