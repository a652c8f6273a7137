/**
 * The canonical text of a GraphQL document for the allow list: two documents that differ only in
 * whitespace, commas, comments, the order of arguments or of an object's fields, the quoting of
 * strings (block or not), or `__typename` fields have the same canonical text; anything else
 * (operation names, variables, field order, aliases, arguments, directives, fragments and their
 * order) makes it differ. It is built from the parsed document, so it costs one walk of the tree.
 */
import { Kind, type ArgumentNode, type DefinitionNode, type DirectiveNode, type SelectionSetNode, type TypeNode, type ValueNode, type VariableDefinitionNode } from 'graphql';
import type { DocumentNode } from 'graphql';

/**
 * Selection sets nested deeper than this are not written out: the document has no canonical
 * text, so it matches nothing (the server refuses documents nested this deep anyway).
 */
export const MAX_CANONICAL_DEPTH = 512;

class TooDeep extends Error {}

function byName<T extends { name: { value: string } }>(left: T, right: T): number {
  return left.name.value < right.name.value ? -1 : left.name.value > right.name.value ? 1 : 0;
}

function type(node: TypeNode): string {
  if (node.kind === Kind.NON_NULL_TYPE) return `${type(node.type)}!`;
  if (node.kind === Kind.LIST_TYPE) return `[${type(node.type)}]`;
  return node.name.value;
}

function value(node: ValueNode, depth: number): string {
  if (depth > MAX_CANONICAL_DEPTH) throw new TooDeep();
  switch (node.kind) {
    case Kind.VARIABLE:
      return `$${node.name.value}`;
    case Kind.INT:
    case Kind.FLOAT:
    case Kind.ENUM:
      return node.value;
    case Kind.STRING:
      return JSON.stringify(node.value);
    case Kind.BOOLEAN:
      return node.value ? 'true' : 'false';
    case Kind.NULL:
      return 'null';
    case Kind.LIST:
      return `[${node.values.map((item) => value(item, depth + 1)).join(',')}]`;
    case Kind.OBJECT:
      return `{${[...node.fields].sort(byName).map((field) => `${field.name.value}:${value(field.value, depth + 1)}`).join(',')}}`;
  }
}

function args(nodes: readonly ArgumentNode[] | undefined): string {
  if (nodes === undefined || nodes.length === 0) return '';
  return `(${[...nodes].sort(byName).map((arg) => `${arg.name.value}:${value(arg.value, 0)}`).join(',')})`;
}

function directives(nodes: readonly DirectiveNode[] | undefined): string {
  if (nodes === undefined || nodes.length === 0) return '';
  return nodes.map((directive) => `@${directive.name.value}${args(directive.arguments)}`).join('');
}

function variables(nodes: readonly VariableDefinitionNode[] | undefined): string {
  if (nodes === undefined || nodes.length === 0) return '';
  const written = nodes.map(
    (node) =>
      `$${node.variable.name.value}:${type(node.type)}${node.defaultValue === undefined ? '' : `=${value(node.defaultValue, 0)}`}${directives(node.directives)}`,
  );
  return `(${written.join(',')})`;
}

function selections(set: SelectionSetNode, depth: number): string {
  if (depth > MAX_CANONICAL_DEPTH) throw new TooDeep();
  const written: string[] = [];
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === '__typename') continue;
      const alias = selection.alias === undefined ? '' : `${selection.alias.value}:`;
      const sub = selection.selectionSet === undefined ? '' : selections(selection.selectionSet, depth + 1);
      written.push(`${alias}${selection.name.value}${args(selection.arguments)}${directives(selection.directives)}${sub}`);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition === undefined ? '' : ` on ${selection.typeCondition.name.value}`;
      written.push(`...${on}${directives(selection.directives)}${selections(selection.selectionSet, depth + 1)}`);
    } else {
      written.push(`...${selection.name.value}${directives(selection.directives)}`);
    }
  }
  return `{${written.join(',')}}`;
}

function definition(node: DefinitionNode): string {
  if (node.kind === Kind.OPERATION_DEFINITION) {
    const name = node.name === undefined ? '' : ` ${node.name.value}`;
    return `${node.operation}${name}${variables(node.variableDefinitions)}${directives(node.directives)}${selections(node.selectionSet, 1)}`;
  }
  if (node.kind === Kind.FRAGMENT_DEFINITION) {
    return `fragment ${node.name.value} on ${node.typeCondition.name.value}${directives(node.directives)}${selections(node.selectionSet, 1)}`;
  }
  // Executable documents hold nothing else; anything else makes it match nothing.
  throw new TooDeep();
}

/**
 * The canonical text of `document`, or `undefined` when it has none (nested deeper than
 * {@link MAX_CANONICAL_DEPTH}, or holding type definitions): such a document is never allowed.
 * An anonymous `{ … }` and `query { … }` are the same operation.
 */
export function canonicalDocument(document: DocumentNode): string | undefined {
  try {
    return document.definitions.map(definition).join('\n');
  } catch (error) {
    if (error instanceof TooDeep || error instanceof RangeError) return undefined;
    throw error;
  }
}
