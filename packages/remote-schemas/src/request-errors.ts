import {
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  getVariableValues,
  isAbstractType,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { asRequestErrors } from './errors.js';

/**
 * The errors a request meets before execution, found by the gateway itself, answered without
 * `data` (see `asRequestErrors`) whatever route the operation then takes.
 */

/** What execution would get: the coerced variable values, or the request's errors. */
export type Coerced = { coerced: Record<string, unknown> } | { result: ExecutionResult };

/**
 * The variable values of `operation` coerced against `schema` as graphql-js's execution coerces
 * them (at most 50 errors), or the result that answers the request instead.
 */
export function coerceVariables(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  given: Readonly<Record<string, unknown>> | null | undefined,
): Coerced {
  const definitions = operation.variableDefinitions;
  if (!definitions?.length) return { coerced: {} };
  const outcome = getVariableValues(schema, definitions, given ?? {}, { maxErrors: 50 });
  return outcome.errors ? { result: { errors: asRequestErrors(outcome.errors) } } : { coerced: outcome.coerced };
}

/**
 * A subscription whose root fields are all left out by `@skip` / `@include` for these variables:
 * the GraphQL specification raises a request error when the root selection has no field (its
 * `CreateSourceEventStream`), where graphql-js 16 throws a `TypeError` (graphql-js 17 and the
 * latest specification refuse such directives there at validation). The error is located at the
 * directives that left the fields out. `undefined`: a field is left.
 */
export function emptySubscription(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
): ExecutionResult | undefined {
  const root = schema.getSubscriptionType();
  if (operation.operation !== 'subscription' || !root) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const leftOut: DirectiveNode[] = [];
  const visited = new Set<string>();
  const applies = (name: string): boolean => {
    const type = schema.getType(name);
    return type === root || (isAbstractType(type) && schema.isSubType(type, root as GraphQLObjectType));
  };
  const hasField = (set: SelectionSetNode): boolean => {
    let found = false;
    for (const selection of set.selections) {
      const directive = excludedBy(selection.directives, variables);
      if (directive) {
        leftOut.push(directive);
        continue;
      }
      if (selection.kind === Kind.FIELD) {
        found = true;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if ((!selection.typeCondition || applies(selection.typeCondition.name.value)) && hasField(selection.selectionSet)) found = true;
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment && applies(fragment.typeCondition.name.value) && hasField(fragment.selectionSet)) found = true;
      }
    }
    return found;
  };
  try {
    if (hasField(operation.selectionSet)) return undefined;
  } catch (error) {
    // A directive's argument without a value: execution fails the same way.
    if (error instanceof GraphQLError) return { errors: asRequestErrors([error]) };
    throw error;
  }
  const name = operation.name?.value;
  const message = `${name === undefined ? 'Anonymous Subscription' : `Subscription "${name}"`} must select one top level field, but every one is left out by @skip or @include.`;
  return { errors: asRequestErrors([new GraphQLError(message, { nodes: leftOut.length > 0 ? leftOut : operation })]) };
}

/** The `@skip` or `@include` among `directives` that leaves its selection out, if any. */
function excludedBy(directives: readonly DirectiveNode[] | undefined, variables: Record<string, unknown>): DirectiveNode | undefined {
  if (!directives?.length) return undefined;
  const node = { directives } as { directives: readonly DirectiveNode[] };
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.['if'] === true) {
    return directives.find((d) => d.name.value === 'skip');
  }
  if (getDirectiveValues(GraphQLIncludeDirective, node, variables)?.['if'] === false) {
    return directives.find((d) => d.name.value === 'include');
  }
  return undefined;
}
