/**
 * What the metadata operations share: how they read their arguments, plan a document on the
 * request's draft, and accept or refuse the outcome.
 */
import { registryEntries, type InconsistentObject, type MetadataDocument, type RemoteSchemaMetadata } from './document.js';
import { redactEnvironment } from './environment.js';
import { MetadataApiError } from './errors.js';
import { toInconsistentObjects } from './inconsistency.js';
import type { OperationContext } from './operations.js';
import type { RegistryPlan, RemoteSchemaProblem } from './registry.js';
import type { MetadataRequest } from './request.js';
import { childPath, expectObject, rejectUnknownKeys, type JsonObject } from './validation.js';

export const SUCCESS = { message: 'success' } as const;
export const ARGS = '$.args';
export type Operation = (args: unknown, context: OperationContext, request: MetadataRequest) => Promise<unknown>;

export function args(value: unknown, allowed: readonly string[]): JsonObject {
  const object = expectObject(value, ARGS);
  rejectUnknownKeys(object, allowed, ARGS);
  return object;
}

/** Operations without arguments accept `{}`, `null` or nothing. */
export function noArgs(value: unknown): void {
  if (value === undefined || value === null) return;
  args(value, []);
}

export function find(document: MetadataDocument, name: string): RemoteSchemaMetadata | undefined {
  return document.remote_schemas.find((entry) => entry.name === name);
}

export async function plan(context: OperationContext, document: MetadataDocument): Promise<RegistryPlan> {
  const { reload } = context.draft;
  const entries = registryEntries(document, context.remoteSchemaPermissions);
  return context.registry.plan(entries, { reload: reload === 'all' ? 'all' : [...reload] });
}

export function inconsistentObjects(context: OperationContext, problems: readonly RemoteSchemaProblem[], document: MetadataDocument): InconsistentObject[] {
  return toInconsistentObjects(problems, document, context.remoteSchemaPermissions);
}

/** The problem of the remote itself, not one of a permission or a relationship of it. */
export function remoteProblem(next: RegistryPlan, name: string): RemoteSchemaProblem | undefined {
  return next.problems.find((problem) => problem.name === name && problem.role === undefined && problem.relationship === undefined);
}

export function accept(context: OperationContext, document: MetadataDocument, next: RegistryPlan, changed: boolean): void {
  context.draft.document = document;
  context.draft.plan = next;
  context.draft.changed ||= changed;
}

/** The problems that count for the draft: of its plan, or of the live state when it has none. */
export function currentProblems(context: OperationContext): readonly RemoteSchemaProblem[] {
  return context.draft.plan?.problems ?? context.registry.problems();
}

/** Refuses the entry with its problem, if it has one; the message may quote values read from the environment. */
export function refuseProblem(problem: RemoteSchemaProblem | undefined, entry: RemoteSchemaMetadata): void {
  if (problem === undefined) return;
  const path = problem.field?.reduce<string>((at, key) => childPath(at, key), childPath(ARGS, 'definition')) ?? ARGS;
  throw new MetadataApiError(problem.code, redactEnvironment(problem.message, entry.definition), path);
}

/** Text order by Unicode code point, as Haskell sorts Text (Hasura's order of dependent objects). */
export function byCodePoints(left: string, right: string): number {
  const a = Array.from(left, (character) => character.codePointAt(0) ?? 0);
  const b = Array.from(right, (character) => character.codePointAt(0) ?? 0);
  for (let index = 0; index < Math.min(a.length, b.length); index += 1) {
    if (a[index] !== b[index]) return (a[index] ?? 0) - (b[index] ?? 0);
  }
  return a.length - b.length;
}
