import {
  Kind,
  getOperationAST,
  visit as visitAst,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { routingOf, type RootOperation } from './compose.js';
import type { LoadedRemote } from './loaded-remote.js';
import { printedDocumentOf, sentDocumentOf, type SentDocument } from './sent-document.js';

/** Where an operation goes as it is, what kind of operation it is, and what is sent of its document. */
export interface ForwardTarget {
  remote: LoadedRemote;
  operation: RootOperation;
  sent: SentDocument;
}

interface CachedTarget {
  schema: GraphQLSchema;
  operationName: string | null | undefined;
  target: ForwardTarget | undefined;
}

/** Parsed documents are reused by Yoga's parser cache, so the decision is made once per document. */
const decisions = new WeakMap<DocumentNode, CachedTarget>();

/**
 * The remote an operation can be sent to as it is: every root field belongs to that one remote,
 * which has no customization. Only the operation and the fragments it uses are sent (see
 * `sentDocumentOf`).
 * `undefined` means: not as it is (a plan or delegation, see plugin.ts).
 */
export function forwardTarget(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): ForwardTarget | undefined {
  const cached = decisions.get(document);
  if (cached && cached.schema === schema && cached.operationName === operationName) return cached.target;
  const target = decide(schema, document, operationName);
  decisions.set(document, { schema, operationName, target });
  return target;
}

function decide(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): ForwardTarget | undefined {
  const routing = routingOf(schema);
  if (!routing) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (definition.kind !== Kind.OPERATION_DEFINITION) return undefined;
  }
  const operation: OperationDefinitionNode | null | undefined = getOperationAST(document, operationName);
  if (!operation) return undefined;
  const kind = operation.operation as RootOperation;
  const owners = routing.fields[kind];
  let target: LoadedRemote | undefined;
  const visited = new Set<string>();
  const visit = (selectionSet: SelectionSetNode): boolean => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const owner = owners.get(selection.name.value);
        if (!owner || !owner.forwardable || (target && owner !== target)) return false;
        target = owner;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!visit(selection.selectionSet)) return false;
      } else {
        const name = selection.name.value;
        if (visited.has(name)) continue;
        visited.add(name);
        const fragment = fragments.get(name);
        if (!fragment || !visit(fragment.selectionSet)) return false;
      }
    }
    return true;
  };
  if (!visit(operation.selectionSet) || !target) return undefined;
  const remoteRoot = target.public.roots[kind];
  if (!remoteRoot) return undefined;
  // A remote may call its root `query_root` (Hasura does): the document means the same there
  // unless it names our root type in a type condition.
  if (remoteRoot.name !== routing.rootTypeNames[kind] && namesType(document, new Set(Object.values(routing.rootTypeNames)))) {
    return undefined;
  }
  // A subscription's text is its upstream subscription's key: printed, so that spacing does not split it.
  const sent = kind === 'subscription' ? printedDocumentOf(document, operation) : sentDocumentOf(document, operation);
  return { remote: target, operation: kind, sent };
}

function namesType(document: DocumentNode, names: ReadonlySet<string>): boolean {
  let found = false;
  visitAst(document, {
    InlineFragment(node) {
      if (node.typeCondition && names.has(node.typeCondition.name.value)) found = true;
    },
    FragmentDefinition(node) {
      if (names.has(node.typeCondition.name.value)) found = true;
    },
  });
  return found;
}
