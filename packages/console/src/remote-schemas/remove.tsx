import { useId, useState } from 'react';
import { ConfirmDialog } from '../components/dialog.js';
import type { Outcome } from '../components/answer.js';
import type { MetadataDocument } from '../metadata/types.js';
import { useConsole } from '../state.js';

interface RelationshipGroup {
  type_name?: string;
  relationships?: Array<{ name?: string; definition?: { to_remote_schema?: { remote_schema?: string } } }>;
}

/**
 * What `remove_remote_schema` without `cascade` refuses to drop: the remote's permissions, and the
 * relationships of other remotes that join to it (its own relationships go with it).
 */
export function dependentsOf(document: MetadataDocument | undefined, name: string): string[] {
  const remotes = document?.remote_schemas ?? [];
  const own = remotes.find((remote) => remote.name === name);
  const dependents = (own?.permissions ?? []).map((permission) => `remote_schema_permission ${permission.role} on remote_schema ${name}`);
  for (const other of remotes) {
    if (other.name === name) continue;
    for (const group of (other.remote_relationships ?? []) as RelationshipGroup[]) {
      for (const relationship of group.relationships ?? []) {
        if (relationship.definition?.to_remote_schema?.remote_schema === name) {
          dependents.push(`remote_schema_remote_relationship ${relationship.name ?? '?'} on type ${group.type_name ?? '?'} in remote schema ${other.name}`);
        }
      }
    }
  }
  return dependents;
}

/** The removal dialog of a remote schema: its dependents listed, cascade to be confirmed when there are any. */
export function RemoveRemoteDialog({ name, onClose }: { name: string | undefined; onClose: (outcome?: Outcome) => void }) {
  const { document, metadata } = useConsole();
  const [cascade, setCascade] = useState(false);
  const [busy, setBusy] = useState(false);
  const cascadeId = useId();
  const dependents = name === undefined ? [] : dependentsOf(document, name);
  const close = (outcome?: Outcome) => {
    setCascade(false);
    setBusy(false);
    onClose(outcome);
  };
  const confirm = async () => {
    if (name === undefined) return;
    setBusy(true);
    const answer = await metadata('remove_remote_schema', { name, cascade });
    close(answer.ok ? { ok: true, message: `Removed the remote schema "${name}"${cascade && dependents.length > 0 ? ' and its dependents' : ''}.` } : { ok: false, error: answer.error, action: `Removing "${name}" was refused` });
  };
  return (
    <ConfirmDialog
      open={name !== undefined}
      title={`Remove the remote schema "${name ?? ''}"?`}
      confirmLabel={dependents.length > 0 ? 'Remove it and its dependents' : 'Remove'}
      danger
      busy={busy}
      confirmDisabled={dependents.length > 0 && !cascade}
      onConfirm={() => void confirm()}
      onCancel={() => close()}
    >
      <p>Its fields leave the schema at once; operations already running finish.</p>
      {dependents.length > 0 ? (
        <>
          <p>These depend on it and are removed with it:</p>
          <ul className="dependents" aria-label="Dependent objects">
            {dependents.map((dependent) => (
              <li key={dependent}>
                <code>{dependent}</code>
              </li>
            ))}
          </ul>
          <p>
            <input id={cascadeId} type="checkbox" checked={cascade} onChange={(event) => setCascade(event.target.checked)} />{' '}
            <label htmlFor={cascadeId}>Also remove the dependent objects listed (cascade)</label>
          </p>
        </>
      ) : (
        <p>Nothing else depends on it.</p>
      )}
    </ConfirmDialog>
  );
}
