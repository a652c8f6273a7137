/**
 * What the lock-down checks need to know of a parsed document (its allow-list key, and the depth,
 * nodes and introspection of each operation), computed once per distinct document and kept as
 * long as the document object lives. Yoga's parser cache hands every request of the same text the
 * same document object, so a request whose document was seen before costs a WeakMap lookup.
 */
import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { allowlistKey } from './allowlist.js';
import { measureFragments, measureOperation, type FragmentCosts, type OperationCost } from './operation-cost.js';

export interface DocumentFacts {
  /** The document's allow-list key (`undefined`: it can never be allowed). */
  readonly allowlistKey: string | undefined;
  /**
   * The operation a request runs (by `operationName`, or the only one), measured; `undefined` when
   * there is no such operation (execution refuses it anyway).
   */
  operation(operationName: string | null | undefined): OperationCost | undefined;
}

class Facts implements DocumentFacts {
  #key: string | undefined | null = null;
  #fragments: FragmentCosts | undefined;
  readonly #operations = new Map<OperationDefinitionNode, OperationCost>();

  constructor(private readonly document: DocumentNode) {}

  get allowlistKey(): string | undefined {
    if (this.#key === null) this.#key = allowlistKey(this.document);
    return this.#key;
  }

  operation(operationName: string | null | undefined): OperationCost | undefined {
    const operation = selectOperation(this.document, operationName);
    if (operation === undefined) return undefined;
    let cost = this.#operations.get(operation);
    if (cost === undefined) {
      this.#fragments ??= measureFragments(this.document);
      cost = measureOperation(operation, this.#fragments);
      this.#operations.set(operation, cost);
    }
    return cost;
  }
}

/** The operation `operationName` names, or the only operation when none is named. */
export function selectOperation(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
  let found: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    if (operationName === null || operationName === undefined || operationName === '') {
      if (found !== undefined) return undefined;
      found = definition;
    } else if (definition.name?.value === operationName) {
      return definition;
    }
  }
  return found;
}

/** A cache of {@link DocumentFacts} by document object; one per server (its WeakMap is its own). */
export function createDocumentFactsCache(): (document: DocumentNode) => DocumentFacts {
  const cache = new WeakMap<DocumentNode, Facts>();
  return (document) => {
    let facts = cache.get(document);
    if (facts === undefined) {
      facts = new Facts(document);
      cache.set(document, facts);
    }
    return facts;
  };
}
