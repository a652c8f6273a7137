import { inconsistentReason, type InconsistentObject, type MetadataDocument } from './document.js';
import { redactEnvironment } from './environment.js';
import type { RemoteSchemaProblem } from './registry.js';

/**
 * Registry problems in Hasura's inconsistent-object shape, in document order, without the values
 * of the environment variables each entry reads.
 */
export function toInconsistentObjects(
  problems: readonly RemoteSchemaProblem[],
  document: MetadataDocument,
): InconsistentObject[] {
  const objects: InconsistentObject[] = [];
  for (const entry of document.remote_schemas) {
    const problem = problems.find((candidate) => candidate.name === entry.name);
    if (problem === undefined) continue;
    objects.push({
      type: 'remote_schema',
      name: `remote_schema ${entry.name}`,
      reason: inconsistentReason(redactEnvironment(problem.message, entry.definition)),
      definition: structuredClone(entry),
    });
  }
  return objects;
}
