/**
 * `create_remote_schema_remote_relationship`, `update_…` and `delete_…`, and what the other
 * operations need to know of relationships: which of them depend on a remote, and how to drop some.
 */
import { cloneDocument, type MetadataDocument, type RemoteRelationshipMetadata, type RemoteSchemaMetadata } from './document.js';
import { redactEnvironment } from './environment.js';
import { MetadataApiError } from './errors.js';
import { relationshipObjectName } from './inconsistency.js';
import { ARGS, SUCCESS, accept, args, plan, refuseProblem, remoteProblem, type Operation } from './operation-kit.js';
import type { RegistryPlan } from './registry.js';
import {
  relationshipExistsMessage,
  validateRelationshipDefinition,
  validateRelationshipName,
  validateTypeName,
} from './relationship-validation.js';
import { childPath, required, validateName } from './validation.js';

/** One relationship of the document, where it lives. */
export interface RelationshipRef {
  remote: string;
  type: string;
  name: string;
}

function relationshipArgs(value: unknown, withDefinition: boolean): RelationshipRef & { definition?: RemoteRelationshipMetadata['definition'] } {
  const object = args(value, withDefinition ? ['remote_schema', 'type_name', 'type', 'name', 'definition'] : ['remote_schema', 'type_name', 'type', 'name']);
  const remote = validateName(required(object, 'remote_schema', ARGS), childPath(ARGS, 'remote_schema'));
  const type = validateTypeName(object, ARGS);
  const name = validateRelationshipName(required(object, 'name', ARGS), childPath(ARGS, 'name'));
  if (!withDefinition) return { remote, type, name };
  const definition = validateRelationshipDefinition(required(object, 'definition', ARGS), childPath(ARGS, 'definition'));
  return { remote, type, name, definition };
}

function findRelationship(entry: RemoteSchemaMetadata | undefined, type: string, name: string): RemoteRelationshipMetadata | undefined {
  return entry?.remote_relationships?.find((group) => group.type_name === type)?.relationships.find((r) => r.name === name);
}

/** `no relationship defined on remote schema <n> with name <name>`. */
function noSuchRelationship(ref: RelationshipRef): MetadataApiError {
  return new MetadataApiError('not-exists', `no relationship defined on remote schema ${ref.remote} with name ${ref.name}`, ARGS);
}

/** The document with `relationship` set on `ref` (replacing the one of that type and name, or added last). */
function withRelationship(document: MetadataDocument, ref: RelationshipRef, relationship: RemoteRelationshipMetadata): MetadataDocument {
  const next = cloneDocument(document);
  const entry = next.remote_schemas.find((candidate) => candidate.name === ref.remote)!;
  const groups = (entry.remote_relationships ??= []);
  let group = groups.find((candidate) => candidate.type_name === ref.type);
  if (!group) groups.push((group = { type_name: ref.type, relationships: [] }));
  const index = group.relationships.findIndex((candidate) => candidate.name === ref.name);
  if (index === -1) group.relationships.push(relationship);
  else group.relationships[index] = relationship;
  return next;
}

/** Removes the relationships `drop` names from `entry`; a type without any left goes, and the key when none is left. */
export function withoutRelationships(entry: RemoteSchemaMetadata, drop: (type: string, relationship: RemoteRelationshipMetadata) => boolean): void {
  const groups = (entry.remote_relationships ?? [])
    .map((group) => ({ ...group, relationships: group.relationships.filter((relationship) => !drop(group.type_name, relationship)) }))
    .filter((group) => group.relationships.length > 0);
  if (groups.length > 0) entry.remote_relationships = groups;
  else delete entry.remote_relationships;
}

/** The relationships of other remotes whose target is `remote`: they cannot stay without it. */
export function relationshipsTargeting(document: MetadataDocument, remote: string): RelationshipRef[] {
  const refs: RelationshipRef[] = [];
  for (const entry of document.remote_schemas) {
    if (entry.name === remote) continue;
    for (const group of entry.remote_relationships ?? []) {
      for (const relationship of group.relationships) {
        if (relationship.definition.to_remote_schema.remote_schema === remote) {
          refs.push({ remote: entry.name, type: group.type_name, name: relationship.name });
        }
      }
    }
  }
  return refs;
}

export function relationshipRefName(ref: RelationshipRef): string {
  return relationshipObjectName(ref.remote, ref.type, ref.name);
}

/** Refuses a plan in which the relationship `ref` (of the remote `entry`) does not fit. */
function refuseRelationship(candidate: RegistryPlan, ref: RelationshipRef, entry: RemoteSchemaMetadata): void {
  // A source or target that cannot be loaded now cannot check the relationship: it is refused
  // (rather than stored unchecked) as any relationship that does not fit, `invalid-configuration`
  // `Inconsistent object: in remote relationship "<name>": remote schema "<n>" is inconsistent`.
  const problem = candidate.problems.find(
    (other) => other.name === ref.remote && other.relationship?.type_name === ref.type && other.relationship.name === ref.name,
  );
  if (problem !== undefined) throw new MetadataApiError(problem.code, redactEnvironment(problem.message, entry.definition), ARGS);
  refuseProblem(remoteProblem(candidate, ref.remote), entry);
}

export const createRemoteSchemaRemoteRelationship: Operation = async (value, context) => {
  const { definition, ...ref } = relationshipArgs(value, true);
  const { document } = context.draft;
  const entry = document.remote_schemas.find((candidate) => candidate.name === ref.remote);
  if (entry === undefined) throw new MetadataApiError('not-exists', `remote schema with name "${ref.remote}" doesn't exist`, ARGS);
  if (findRelationship(entry, ref.type, ref.name) !== undefined) {
    throw new MetadataApiError('already-exists', relationshipExistsMessage(ref.name, ref.type, ref.remote), ARGS);
  }
  const next = withRelationship(document, ref, { name: ref.name, definition: definition! });
  const candidate = await plan(context, next);
  refuseRelationship(candidate, ref, entry);
  accept(context, next, candidate, true);
  return SUCCESS;
};

export const updateRemoteSchemaRemoteRelationship: Operation = async (value, context) => {
  const { definition, ...ref } = relationshipArgs(value, true);
  const { document } = context.draft;
  const entry = document.remote_schemas.find((candidate) => candidate.name === ref.remote);
  if (entry === undefined || findRelationship(entry, ref.type, ref.name) === undefined) throw noSuchRelationship(ref);
  const next = withRelationship(document, ref, { name: ref.name, definition: definition! });
  const candidate = await plan(context, next);
  refuseRelationship(candidate, ref, entry);
  accept(context, next, candidate, true);
  return SUCCESS;
};

export const deleteRemoteSchemaRemoteRelationship: Operation = async (value, context) => {
  const ref = relationshipArgs(value, false);
  const { document } = context.draft;
  const entry = document.remote_schemas.find((candidate) => candidate.name === ref.remote);
  if (entry === undefined || findRelationship(entry, ref.type, ref.name) === undefined) throw noSuchRelationship(ref);
  const next = cloneDocument(document);
  withoutRelationships(next.remote_schemas.find((candidate) => candidate.name === ref.remote)!, (type, r) => type === ref.type && r.name === ref.name);
  accept(context, next, await plan(context, next), true);
  return SUCCESS;
};
