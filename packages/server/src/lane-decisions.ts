import { getOperationAST, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { knownOperationTypes } from './http/validation-errors.js';

/**
 * What a lane (the direct lane over HTTP, the graphql-ws lane) decided for each (schema, document,
 * operation name): how it runs the operation, or that it leaves it to Yoga. Decided once, for
 * documents that validate against the schema (`decide` is not asked about the others). Weak: a
 * swapped-out schema and an evicted document take their decisions along; an operation name the
 * document does not define is not remembered, so names a client makes up take no memory.
 */
export function laneDecisions<T>(
  decide: (schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, operationName: string | null) => T | undefined,
): (schema: GraphQLSchema, document: DocumentNode, operationName: string | null) => T | undefined {
  const decisions = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string | null, T | null>>>();
  return (schema, document, operationName) => {
    let bySchema = decisions.get(schema);
    if (bySchema === undefined) {
      bySchema = new WeakMap();
      decisions.set(schema, bySchema);
    }
    let byName = bySchema.get(document);
    if (byName === undefined) {
      byName = new Map();
      bySchema.set(document, byName);
    }
    const known = byName.get(operationName);
    if (known !== undefined) return known ?? undefined;
    const operation = getOperationAST(document, operationName);
    if (!operation) return undefined;
    const decided = isValid(schema, document) ? decide(schema, document, operation, operationName) : undefined;
    byName.set(operationName, decided ?? null);
    return decided;
  };
}

const VALIDATION_RULES = [...specifiedRules, knownOperationTypes];

/**
 * Whether `document` validates against `schema`. graphql-js 16 throws from a rule or two instead of
 * reporting (a subscription root field under `@skip` without its argument): the other path answers that.
 */
function isValid(schema: GraphQLSchema, document: DocumentNode): boolean {
  try {
    // The rules Yoga's path validates with: graphql-js's, and an operation type the schema has a root for.
    return validate(schema, document, VALIDATION_RULES).length === 0;
  } catch {
    return false;
  }
}
