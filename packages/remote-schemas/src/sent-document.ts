import {
  Kind,
  getOperationAST,
  print,
  visit,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { PrintedLocations, clientTextLocations, type SentLocations } from './locations.js';

/** What is sent to a remote for one operation of a client's document, as it is. */
export interface SentDocument {
  /** The operation and the fragments it uses: nodes of the client's document. */
  readonly document: DocumentNode;
  /** Its text: the client's own, or `document` printed. */
  readonly text: string;
  readonly locations: SentLocations;
}

/** Per operation node, and so per parsed document (Yoga's parser cache hands the same one out again). */
const sentDocuments = new WeakMap<OperationDefinitionNode, SentDocument>();

/**
 * What a remote needs of `operation` in `document`: the operation and the fragments it uses, and
 * nothing else of the document (other operations, unused fragments, comments). The client's own
 * text is sent when it holds nothing else and is no longer than the printed document (its
 * locations are then the client's as they are); otherwise the document is printed, and the
 * locations of the remote's errors are moved back into the client's text. Decided once per
 * operation node.
 */
export function sentDocumentOf(document: DocumentNode, operation: OperationDefinitionNode): SentDocument {
  let sent = sentDocuments.get(operation);
  if (!sent) {
    sent = build(document, operation);
    sentDocuments.set(operation, sent);
  }
  return sent;
}

/** Per operation node, as {@link sentDocuments}: what {@link printedDocumentOf} decided. */
const printedDocuments = new WeakMap<OperationDefinitionNode, SentDocument>();

/**
 * What a remote needs of `operation`, as {@link sentDocumentOf}, always printed: for subscriptions,
 * which share one upstream subscription when their text is the same, so that clients whose
 * documents differ only in spacing, commas or comments share it too (each subscriber moves the
 * locations of the remote's errors back into its own text).
 */
export function printedDocumentOf(document: DocumentNode, operation: OperationDefinitionNode): SentDocument {
  let sent = printedDocuments.get(operation);
  if (!sent) {
    const { needed } = neededOf(document, operation);
    const text = print(needed);
    sent = { document: needed, text, locations: new PrintedLocations(needed, text, document.loc?.source ?? operation.loc?.source) };
    printedDocuments.set(operation, sent);
  }
  return sent;
}

/** The operation and the fragments it uses; `whole`: that is all of `document`. */
function neededOf(document: DocumentNode, operation: OperationDefinitionNode): { needed: DocumentNode; whole: boolean } {
  const fragments = usedFragments(document, operation);
  const whole = document.definitions.length === fragments.length + 1;
  return { needed: whole ? document : { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] }, whole };
}

function build(document: DocumentNode, operation: OperationDefinitionNode): SentDocument {
  const { needed, whole } = neededOf(document, operation);
  const text = print(needed);
  // A document parsed from the client's text has its place; one derived from it (a join plan's
  // base) has none, but the operation node it copied still points into the client's text.
  const parsedFrom = document.loc?.source;
  // `#` starts a comment wherever it is not in a string: a text with one is printed (rarely needed).
  if (whole && parsedFrom && !parsedFrom.body.includes('#') && parsedFrom.body.length <= text.length) {
    return { document, text: parsedFrom.body, locations: clientTextLocations(parsedFrom) };
  }
  return { document: needed, text, locations: new PrintedLocations(needed, text, parsedFrom ?? operation.loc?.source) };
}

/** The fragments `operation` spreads, directly or through other fragments, in the document's order. */
export function usedFragments(document: DocumentNode, operation: OperationDefinitionNode): FragmentDefinitionNode[] {
  const byName = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !byName.has(definition.name.value)) {
      byName.set(definition.name.value, definition);
    }
  }
  if (byName.size === 0) return [];
  const used = new Set<FragmentDefinitionNode>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let set = pending.pop(); set; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = byName.get(selection.name.value);
        if (fragment && !used.has(fragment)) {
          used.add(fragment);
          pending.push(fragment.selectionSet);
        }
      } else if (selection.selectionSet) {
        pending.push(selection.selectionSet);
      }
    }
  }
  return document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && used.has(d));
}

/** Per document, per operation name (`''`: the only operation): the variables it declares. */
const declaredNames = new WeakMap<DocumentNode, Map<string, ReadonlySet<string>>>();

function declaredBy(document: DocumentNode, operationName: string | null | undefined): ReadonlySet<string> {
  let byOperation = declaredNames.get(document);
  if (!byOperation) declaredNames.set(document, (byOperation = new Map()));
  const key = operationName ?? '';
  let names = byOperation.get(key);
  if (!names) {
    const operation = getOperationAST(document, operationName);
    names = new Set(operation?.variableDefinitions?.map((definition) => definition.variable.name.value));
    byOperation.set(key, names);
  }
  return names;
}

/**
 * The values of the variables the operation of `document` declares, and only those: what else a
 * client sends (values for another operation of its document, or for none) is not the remote's.
 * The same object when it holds nothing else.
 */
export function declaredVariables(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): Readonly<Record<string, unknown>> | null | undefined {
  if (!variables) return variables;
  const declared = declaredBy(document, operationName);
  let extra = false;
  for (const name in variables) {
    if (!declared.has(name)) {
      extra = true;
      break;
    }
  }
  if (!extra) return variables;
  // Entries, not assignments: a variable may be named `__proto__`.
  return Object.fromEntries([...declared].filter((name) => Object.hasOwn(variables, name)).map((name) => [name, variables[name]]));
}

/** Adds to `into` the name of every variable used in the selection sets of `nodes`. */
export function usedVariables(nodes: readonly { selectionSet: SelectionSetNode }[], into: Set<string>): void {
  for (const node of nodes) {
    visit(node.selectionSet, {
      Variable(variable) {
        into.add(variable.name.value);
      },
    });
  }
}
