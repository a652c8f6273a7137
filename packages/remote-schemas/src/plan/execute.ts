import {
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  getVariableValues,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import { asRequestErrors, isRequestError } from '../errors.js';
import type { RemoteRequest } from '../remote-client.js';
import type { ConditionNode, Placement, Plan, PlannedCall, RemoteCall, TypenameMap } from './plan.js';

/** How the gateway executes the local part of a plan (Envelop's `executeFn`, graphql-js's `execute` by default). */
export type LocalExecute = (args: ExecutionArgs) => unknown;

/**
 * Runs `plan` for one request: checks the variables against the client's schema (as execution
 * would), sends each call (queries in parallel, mutations one after the other) or executes it
 * (the local schema's fields), and builds the client's response from the answers in one pass.
 */
export async function executePlan(plan: Plan, args: ExecutionArgs, local: LocalExecute = execute): Promise<ExecutionResult> {
  const given = args.variableValues ?? {};
  let coerced: Record<string, unknown> = {};
  if (plan.variableDefinitions.length > 0) {
    const outcome = getVariableValues(args.schema, plan.variableDefinitions, given, { maxErrors: 50 });
    if (outcome.errors) return { errors: asRequestErrors(outcome.errors) };
    coerced = outcome.coerced;
  }
  const send = async (call: PlannedCall): Promise<ExecutionResult> => {
    if (call.local) {
      const result = await local({ ...args, document: call.document, operationName: call.operationName ?? null });
      if (result && typeof result === 'object' && !(Symbol.asyncIterator in result)) return result as ExecutionResult;
      throw new Error('the local part of a planned operation did not answer one result');
    }
    if (call.empty) return { data: {} };
    return call.remote.client.send(requestOf(call, args), args.contextValue, plan.operation === 'mutation' ? 'mutation' : 'query');
  };
  let results: ExecutionResult[];
  if (plan.operation === 'query') {
    results = await Promise.all(plan.calls.map(send));
  } else {
    results = [];
    for (const call of plan.calls) results.push(await send(call));
  }
  return assemble(plan, results, coerced);
}

/** The request of a remote call: its document, and of the client's variables those it defines. */
export function requestOf(call: RemoteCall, args: ExecutionArgs): RemoteRequest {
  const given = args.variableValues ?? {};
  let variables: Record<string, unknown> | null = null;
  for (const name of call.variables) {
    if (Object.hasOwn(given, name)) (variables ??= {})[name] = given[name];
  }
  return { document: call.document, text: call.text, locations: call.locations, variables, operationName: call.operationName, schema: args.schema };
}

/** Whether the `@skip` and `@include` of every node let the field through. */
export function included(nodes: readonly ConditionNode[], variables: Record<string, unknown>): boolean {
  for (const node of nodes) {
    if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.['if'] === true) return false;
    if (getDirectiveValues(GraphQLIncludeDirective, node, variables)?.['if'] === false) return false;
  }
  return true;
}

/** The entries included for these variables, in the order execution would give them. */
function arrange<T extends Placement>(entries: readonly T[], conditional: boolean, variables: Record<string, unknown>): readonly T[] {
  if (!conditional) return entries;
  const placed: Array<[number, T]> = [];
  for (const entry of entries) {
    if (!entry.when) {
      placed.push([entry.at, entry]);
      continue;
    }
    const first = entry.when.find((w) => included(w.nodes, variables));
    if (first) placed.push([first.at, entry]);
  }
  return placed.sort((a, b) => a[0] - b[0]).map(([, entry]) => entry);
}

/** A call the remote refused before executing it (its answer has no `data`, see `asRequestErrors`). */
function refused(result: ExecutionResult): boolean {
  return !('data' in result) && result.errors !== undefined && result.errors.length > 0 && result.errors.every(isRequestError);
}

/** `shared`: the results may be read by others too; what changes is copied. */
export function assemble(plan: Plan, results: readonly ExecutionResult[], variables: Record<string, unknown>, shared = false): ExecutionResult {
  // Every remote refused its part before executing anything: the request is answered as they
  // answered it, without `data`.
  if (plan.calls.every((call, index) => !call.local && refused(results[index]!))) {
    return { errors: results.flatMap((result) => result.errors!) };
  }
  const errors: GraphQLError[] = [];
  const answers: Array<Record<string, unknown> | null> = [];
  // Per call that answered no data: its errors without a path (the call failed, or the remote
  // said why without naming a field). Each of the call's root fields gets them, as execution gives
  // its error to every field it could not resolve.
  const failures: Array<GraphQLError[] | undefined> = [];
  plan.calls.forEach((call, index) => {
    const result = results[index]!;
    let data = (result.data ?? null) as Record<string, unknown> | null;
    if (data && !call.local && call.typenames) {
      if (shared) data = renamedCopy(data, call.typenames, call.typeToPublic) as Record<string, unknown>;
      else rename(data, call.typenames, call.typeToPublic);
    }
    answers.push(data);
    for (const error of result.errors ?? []) {
      // A remote that refused its part while others answered theirs: its refusal is an error of
      // its fields (the copies at their paths leave the refusal's HTTP status behind, since the
      // response has data).
      if (data === null && !call.local && !error.path?.length) (failures[index] ??= []).push(error);
      else errors.push(relocate(error, call, shared));
    }
  });
  const arranged = arrange(plan.entries, plan.conditional, variables);
  for (const entry of arranged) {
    const failed = entry.kind === 'typename' ? undefined : failures[entry.call];
    for (const error of failed ?? []) errors.push(relocatedCopy(error, [entry.key]));
  }
  let data: Record<string, unknown> | null = {};
  for (const entry of arranged) {
    if (entry.kind === 'typename') {
      data[entry.key] = entry.value;
      continue;
    }
    const answer = answers[entry.call]!;
    if (entry.kind === 'field') {
      if (answer === null) {
        // A non-null root field without a value nulls the whole response, as execution would.
        if (entry.nonNull) {
          data = null;
          break;
        }
        data[entry.key] = null;
      } else if (Object.hasOwn(answer, entry.key)) {
        const value = answer[entry.key];
        if (value === null && entry.nonNull) {
          data = null;
          break;
        }
        data[entry.key] = value;
      }
      continue;
    }
    if (answer === null) {
      data[entry.key] = null;
      continue;
    }
    let nested: Record<string, unknown> | null = {};
    for (const inner of arrange(entry.entries, plan.conditional, variables)) {
      if (inner.typename !== undefined) nested[inner.key] = inner.typename;
      else if (Object.hasOwn(answer, inner.remoteKey)) {
        const value = answer[inner.remoteKey];
        // A null for a non-null field goes up to the namespace field, with an error unless the
        // remote gave one (a remote that answers such a null without one is at fault).
        if (value === null && inner.nonNull !== undefined) {
          const at = [entry.key, inner.key];
          if (!errors.some((error) => error.path?.length === 2 && error.path[0] === at[0] && error.path[1] === at[1])) {
            errors.push(new GraphQLError(`Cannot return null for non-nullable field ${inner.nonNull}.`, { path: at }));
          }
          nested = null;
          break;
        }
        nested[inner.key] = value;
      }
    }
    data[entry.key] = nested;
  }
  return errors.length > 0 ? { data, errors } : { data };
}

/** Renames `__typename` answers in place (the data was just parsed from the remote's answer). */
export function rename(value: unknown, map: TypenameMap, toPublic: ReadonlyMap<string, string>): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) rename(item, map, toPublic);
    return;
  }
  const object = value as Record<string, unknown>;
  for (const key of map.typename ?? []) {
    const name = object[key];
    if (typeof name === 'string') object[key] = toPublic.get(name) ?? name;
  }
  for (const [key, child] of map.children ?? []) rename(object[key], child, toPublic);
}

/** {@link rename} on a copy: only the objects and lists on the way to a renamed `__typename` are copied. */
function renamedCopy(value: unknown, map: TypenameMap, toPublic: ReadonlyMap<string, string>): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => renamedCopy(item, map, toPublic));
  const object: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of map.typename ?? []) {
    const name = object[key];
    if (typeof name === 'string') object[key] = toPublic.get(name) ?? name;
  }
  for (const [key, child] of map.children ?? []) {
    if (Object.hasOwn(object, key)) object[key] = renamedCopy(object[key], child, toPublic);
  }
  return object;
}

/**
 * An error of a call, at its path in the client's response (a namespace's fields are one level
 * deeper there). `shared`: a relocated error is a copy.
 */
function relocate(error: GraphQLError, call: PlannedCall, shared = false): GraphQLError {
  // The local part's errors are at the client's paths already; an error of the request has none.
  if (call.local || isRequestError(error)) return error;
  const path = error.path;
  let relocated: ReadonlyArray<string | number> | undefined;
  if (path && path.length > 0) {
    const prefix = typeof path[0] === 'string' ? call.paths.get(path[0]) : undefined;
    if (prefix && prefix.length > 1) relocated = [...prefix, ...path.slice(1)];
  }
  if (!relocated) return error;
  if (shared) return relocatedCopy(error, relocated);
  (error as { path: ReadonlyArray<string | number> | undefined }).path = relocated;
  return error;
}

function relocatedCopy(error: GraphQLError, path: ReadonlyArray<string | number>): GraphQLError {
  const copy = new GraphQLError(error.message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    ...(error.source ? { source: error.source } : {}),
    ...(error.positions ? { positions: error.positions } : {}),
    path,
    ...(error.originalError ? { originalError: error.originalError } : {}),
    extensions: { ...error.extensions },
  });
  // A remote's own locations (kept without a source) stay as they were.
  if (!error.source && error.locations) Object.defineProperty(copy, 'locations', { value: error.locations, enumerable: true });
  return copy;
}
