import { useState } from 'react';
import { OutcomeView, takeFlash, type Outcome } from '../components/answer.js';
import { Page } from '../components/page.js';
import { Table } from '../components/table.js';
import { dependentInconsistencies, remoteInconsistency, type RemoteSchemaMetadata } from '../metadata/types.js';
import { Link, pathOf } from '../router.js';
import { useConsole } from '../state.js';
import { RemoveRemoteDialog } from './remove.js';

/** Where a remote is: its URL, or the environment variable the server reads it from. */
export function remoteLocation(remote: RemoteSchemaMetadata): string {
  return remote.definition.url ?? `{{${remote.definition.url_from_env ?? ''}}}`;
}

/** Reloads one remote schema (introspects it again) and says what the server answered. */
export function useReload(): [busy: string | undefined, reload: (name: string) => Promise<Outcome>] {
  const { metadata } = useConsole();
  const [busy, setBusy] = useState<string>();
  const reload = async (name: string): Promise<Outcome> => {
    setBusy(name);
    const answer = await metadata('reload_remote_schema', { name });
    setBusy(undefined);
    if (!answer.ok) return { ok: false, error: answer.error, action: `Reloading "${name}" was refused` };
    // Success even when the remote did not answer: it is then listed as inconsistent, with the reason.
    return { ok: true, message: `Reloaded "${name}": the server introspected it again (its state is shown in the list).` };
  };
  return [busy, reload];
}

export function RemoteSchemasPage() {
  const { document, inconsistent } = useConsole();
  const [outcome, setOutcome] = useState<Outcome | undefined>(takeFlash);
  const [removing, setRemoving] = useState<string>();
  const [reloading, reload] = useReload();
  const remotes = document?.remote_schemas ?? [];
  return (
    <Page
      title="Remote schemas"
      actions={
        <Link to="/remote-schemas/add" className="button primary">
          Add a remote schema
        </Link>
      }
    >
      <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
      {remotes.length === 0 ? (
        <p className="empty">
          No remote schema yet. <Link to="/remote-schemas/add">Add one</Link>: the server introspects it and serves its fields next to
          the others.
        </p>
      ) : (
        <Table caption="Remote schemas and their state" columns={['Name', 'URL', 'State', 'Permissions']} actions>
          {remotes.map((remote) => {
            const problem = remoteInconsistency(inconsistent, remote.name);
            const dependentProblems = dependentInconsistencies(inconsistent, remote.name);
            return (
              <tr key={remote.name}>
                <th scope="row">
                  <Link to={pathOf('remote-schemas', remote.name)}>{remote.name}</Link>
                  {remote.comment ? <div className="muted">{remote.comment}</div> : null}
                </th>
                <td>
                  <code>{remoteLocation(remote)}</code>
                </td>
                <td>
                  {problem ? (
                    <span className="state state-bad">
                      Inconsistent: <span className="reason">{problem.reason}</span>
                    </span>
                  ) : (
                    <span className="state state-ok">Consistent</span>
                  )}
                  {dependentProblems.length > 0 ? (
                    <div className="state state-bad">
                      {dependentProblems.length} inconsistent {dependentProblems.length === 1 ? 'dependent' : 'dependents'}
                    </div>
                  ) : null}
                </td>
                <td>
                  <Link to={pathOf('permissions', remote.name)}>
                    {(remote.permissions ?? []).length} {(remote.permissions ?? []).length === 1 ? 'role' : 'roles'}
                    <span className="visually-hidden"> with a permission on {remote.name}</span>
                  </Link>
                </td>
                <td>
                  <div className="row-actions">
                    <button type="button" disabled={reloading === remote.name} onClick={() => void reload(remote.name).then(setOutcome)} aria-label={`Reload ${remote.name}`}>
                      {reloading === remote.name ? 'Reloading…' : 'Reload'}
                    </button>
                    <Link to={pathOf('remote-schemas', remote.name, 'modify')} className="button" aria-label={`Modify ${remote.name}`}>
                      Modify
                    </Link>
                    <button type="button" className="danger" onClick={() => setRemoving(remote.name)} aria-label={`Remove ${remote.name}`}>
                      Remove
                    </button>
                  </div>
                </td>
              </tr>
            );
          })}
        </Table>
      )}
      <RemoveRemoteDialog
        name={removing}
        onClose={(result) => {
          setRemoving(undefined);
          if (result) setOutcome(result);
        }}
      />
    </Page>
  );
}
