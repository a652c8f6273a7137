import {
  GraphQLError,
  Kind,
  getVariableValues,
  print,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { asRequestErrors } from '../errors.js';
import { PrintedLocations } from '../locations.js';
import { usedFragments, usedVariables } from '../sent-document.js';
import { mapResults } from '../subscriptions.js';
import { assemble, included, requestOf } from './execute.js';
import type { Plan, RemoteCall } from './plan.js';

/** Why a subscription under a namespace is refused: it must select exactly one field there. */
export function oneFieldMessage(operationName: string | undefined, namespaceKey: string, count: number): string {
  const subscription = operationName === undefined ? 'an anonymous subscription' : `subscription "${operationName}"`;
  return `the operation cannot be executed: ${subscription} must select exactly one field inside namespace "${namespaceKey}", but it selects ${count}`;
}

/** A namespaced subscription no remote is asked for: an error of the request, as validation's are. */
export function refusedSubscription(message: string): ExecutionResult {
  return { errors: asRequestErrors([new GraphQLError(message, { extensions: { code: 'validation-failed', path: '$' } })]) };
}

/**
 * Starts a subscription's plan: its one field (at the root, or inside its namespace field) is
 * subscribed to on the remote in the remote's names, and each event is renamed back and nested
 * under the namespace's key if any (with its `__typename`, renamed types and error paths as for
 * a query). The variables were checked before (see the plugin).
 * An event may be shared with other subscribers of the same upstream subscription: it is copied
 * where it changes, never changed in place.
 */
export function subscribePlan(plan: Plan, args: ExecutionArgs): AsyncIterableIterator<ExecutionResult> | ExecutionResult {
  let call = plan.calls[0] as RemoteCall;
  let coerced: Record<string, unknown> = {};
  if (plan.conditional) {
    if (plan.variableDefinitions.length > 0) {
      coerced = getVariableValues(args.schema, plan.variableDefinitions, args.variableValues ?? {}, { maxErrors: 50 }).coerced ?? {};
    }
    const resolved = resolveConditions(call, coerced);
    if (typeof resolved === 'number') {
      const namespace = plan.entries[0]!.key;
      return refusedSubscription(oneFieldMessage(call.operationName, namespace, resolved));
    }
    call = resolved;
  }
  const stream = call.remote.client.subscribe(requestOf(call, args), args.contextValue);
  return mapResults(stream, (event: ExecutionResult) => assemble(plan, [event], coerced, true));
}

/**
 * The call with the `@skip` / `@include` of its root selections decided for these variables: the
 * fields left out are not sent, and those kept go without the directives (a remote on graphql-js
 * 16 refuses a variable in them at the root of a subscription), with only the fragments and
 * variables they still use. Its fields by response key, when there is not exactly one: the
 * subscription cannot be sent.
 */
function resolveConditions(call: RemoteCall, variables: Record<string, unknown>): RemoteCall | number {
  const operation = call.document.definitions[0] as OperationDefinitionNode;
  const keys = new Set<string>();
  const keep = (selections: readonly SelectionNode[]): SelectionNode[] =>
    selections.flatMap((selection): SelectionNode[] => {
      if (selection.kind === Kind.FRAGMENT_SPREAD) return included([selection], variables) ? [selection] : [];
      if (!included([selection], variables)) return [];
      const directives = selection.directives?.filter((d) => d.name.value !== 'skip' && d.name.value !== 'include') ?? [];
      if (selection.kind === Kind.FIELD) {
        keys.add(selection.alias?.value ?? selection.name.value);
        return [{ ...selection, directives }];
      }
      const inner = keep(selection.selectionSet.selections);
      // The inline fragments that only carried the conditions go; others keep their type condition.
      if (!selection.typeCondition && directives.length === 0) return inner;
      return [{ ...selection, directives, selectionSet: { ...selection.selectionSet, selections: inner } }];
    });
  const selections = keep(operation.selectionSet.selections);
  if (keys.size !== 1) return keys.size;
  const kept: OperationDefinitionNode = { ...operation, selectionSet: { ...operation.selectionSet, selections } };
  const fragments = usedFragments(call.document, kept);
  const used = new Set<string>();
  usedVariables([kept, ...fragments], used);
  const operationKept: OperationDefinitionNode = {
    ...kept,
    variableDefinitions: (operation.variableDefinitions ?? []).filter((d) => used.has(d.variable.name.value)),
  };
  const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [operationKept, ...fragments] };
  const text = print(document);
  return {
    ...call,
    document,
    text,
    locations: new PrintedLocations(document, text, call.locations.source),
    variables: call.variables.filter((name) => used.has(name)),
  };
}
