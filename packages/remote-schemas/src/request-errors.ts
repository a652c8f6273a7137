import {
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  getNamedType,
  getVariableValues,
  isAbstractType,
  isObjectType,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { routingOf } from './compose.js';
import { asRequestErrors } from './errors.js';
import { renamingOf } from './plan/renaming.js';

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
 * A subscription whose root fields are all left out by `@skip` / `@include` for these variables
 * (for a remote's namespace field: every field inside it but `__typename`):
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
  const applies = (name: string, parent: GraphQLObjectType): boolean => {
    const type = schema.getType(name);
    return type === parent || (isAbstractType(type) && schema.isSubType(type, parent));
  };
  const owners = routingOf(schema)?.fields.subscription;
  // A remote's namespace field stands for the one field inside it, which is the event stream.
  const namespaceType = (name: string): GraphQLObjectType | undefined => {
    const remote = owners?.get(name);
    if (!remote || renamingOf(remote).namespace !== name) return undefined;
    const type = getNamedType(root.getFields()[name]?.type);
    return isObjectType(type) ? type : undefined;
  };
  const hasField = (set: SelectionSetNode, parent: GraphQLObjectType, inNamespace: boolean): boolean => {
    let found = false;
    for (const selection of set.selections) {
      const directive = excludedBy(selection.directives, variables);
      if (directive) {
        leftOut.push(directive);
        continue;
      }
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const wrapper = inNamespace ? undefined : namespaceType(name);
        if (wrapper) {
          if (selection.selectionSet && hasField(selection.selectionSet, wrapper, true)) found = true;
        } else if (!inNamespace || name !== '__typename') {
          found = true;
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const applied = !selection.typeCondition || applies(selection.typeCondition.name.value, parent);
        if (applied && hasField(selection.selectionSet, parent, inNamespace)) found = true;
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment && applies(fragment.typeCondition.name.value, parent) && hasField(fragment.selectionSet, parent, inNamespace)) found = true;
      }
    }
    return found;
  };
  try {
    // Nothing left out by a directive: validation (or, for a namespace field with only
    // `__typename` inside, its own refusal) answers instead.
    if (hasField(operation.selectionSet, root, false) || leftOut.length === 0) return undefined;
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
