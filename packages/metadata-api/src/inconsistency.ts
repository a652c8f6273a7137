import { inconsistentReason, type InconsistentObject, type MetadataDocument, type RemoteSchemaMetadata } from './document.js';
import { redactEnvironment } from './environment.js';
import type { RemoteSchemaProblem } from './registry.js';

/** How a remote schema is named among metadata objects (`inconsistent_objects`). */
export function remoteSchemaObjectName(remote: string): string {
  return `remote_schema ${remote}`;
}

/** How a remote schema permission is named among metadata objects (`inconsistent_objects`, dependency errors). */
export function permissionObjectName(remote: string, role: string): string {
  return `remote_schema_permission ${role} on remote_schema ${remote}`;
}

/** How a remote relationship is named among metadata objects (`inconsistent_objects`, dependency errors). */
export function relationshipObjectName(remote: string, type: string, name: string): string {
  return `remote_schema_remote_relationship ${name} on type ${type} in remote schema ${remote}`;
}

/**
 * Registry problems in Hasura's inconsistent-object shape, in document order (a remote, then its
 * permissions in their order, then its relationships), without the values of the environment
 * variables each entry reads.
 *
 * With permissions enabled, a permission is inconsistent when the registry refused it, and also
 * when its remote is inconsistent: it cannot be enforced then, and that role sees nothing of the
 * remote. Without them, permissions are not part of any schema and never reported.
 */
export function toInconsistentObjects(
  problems: readonly RemoteSchemaProblem[],
  document: MetadataDocument,
  permissionsEnabled: boolean,
): InconsistentObject[] {
  const objects: InconsistentObject[] = [];
  for (const entry of document.remote_schemas) {
    const own = problems.find((problem) => problem.name === entry.name && problem.role === undefined && problem.relationship === undefined);
    if (own !== undefined) {
      objects.push({
        type: 'remote_schema',
        name: remoteSchemaObjectName(entry.name),
        reason: inconsistentReason(redactEnvironment(own.message, entry.definition)),
        definition: structuredClone(entry),
      });
    }
    for (const permission of permissionsEnabled ? (entry.permissions ?? []) : []) {
      let message: string;
      if (own === undefined) {
        const problem = problems.find((candidate) => candidate.name === entry.name && candidate.role === permission.role);
        if (problem === undefined) continue;
        message = redactEnvironment(problem.message, entry.definition);
      } else {
        message = `remote schema "${entry.name}" is inconsistent`;
      }
      objects.push({
        type: 'remote_schema_permission',
        name: permissionObjectName(entry.name, permission.role),
        reason: inconsistentReason(message),
        definition: structuredClone(permission),
      });
    }
    objects.push(...relationshipObjects(problems, entry));
  }
  return objects;
}

/** The relationships of `entry` that the registry left out, in document order. */
function relationshipObjects(problems: readonly RemoteSchemaProblem[], entry: RemoteSchemaMetadata): InconsistentObject[] {
  const objects: InconsistentObject[] = [];
  for (const group of entry.remote_relationships ?? []) {
    for (const relationship of group.relationships) {
      const problem = problems.find(
        (candidate) =>
          candidate.name === entry.name &&
          candidate.relationship?.type_name === group.type_name &&
          candidate.relationship.name === relationship.name,
      );
      if (problem === undefined) continue;
      objects.push({
        type: 'remote_schema_remote_relationship',
        name: relationshipObjectName(entry.name, group.type_name, relationship.name),
        reason: inconsistentReason(redactEnvironment(problem.message, entry.definition)),
        definition: { remote_schema: entry.name, type_name: group.type_name, ...structuredClone(relationship) },
      });
    }
  }
  return objects;
}
