import { useId, useState, type FormEvent } from 'react';
import { OutcomeView, type Outcome } from '../components/answer.js';
import { ConfirmDialog } from '../components/dialog.js';
import { Page } from '../components/page.js';
import { Table } from '../components/table.js';
import { useConsole } from '../state.js';
import type { ConsistencyReport, InconsistentObject, MetadataDocument } from './types.js';

function reportText(objects: readonly InconsistentObject[]): string {
  return objects.map((object) => `${object.name}: ${object.reason}`).join('\n');
}

function consistencyOutcome(action: string, report: ConsistencyReport): Outcome {
  const objects = report.inconsistent_objects ?? [];
  return report.is_consistent || objects.length === 0
    ? { ok: true, message: `${action}: the metadata is consistent.` }
    : { ok: true, message: `${action}: ${objects.length} inconsistent ${objects.length === 1 ? 'object is' : 'objects are'} left out of the schema.`, details: reportText(objects) };
}

/** A metadata file: the document itself, or an export with `resource_version` around it. */
export function documentOfFile(text: string): MetadataDocument {
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the file does not hold a JSON object');
  const record = parsed as Record<string, unknown>;
  if ('metadata' in record && 'resource_version' in record) return record['metadata'] as MetadataDocument;
  return record as MetadataDocument;
}

/** Export (download), import (`replace_metadata`), reload, and the inconsistent objects with drop. */
export function MetadataPage() {
  const { metadata, inconsistent, resourceVersion, document } = useConsole();
  const [outcome, setOutcome] = useState<Outcome>();
  const [busy, setBusy] = useState<string>();
  const [file, setFile] = useState<File>();
  const [allowInconsistent, setAllowInconsistent] = useState(false);
  const [reloadRemotes, setReloadRemotes] = useState(true);
  const [confirming, setConfirming] = useState<'import' | 'drop'>();
  const ids = useId();

  const run = async (name: string, work: () => Promise<Outcome>) => {
    setBusy(name);
    setOutcome(undefined);
    try {
      setOutcome(await work());
    } finally {
      setBusy(undefined);
      setConfirming(undefined);
    }
  };

  const exportMetadata = () =>
    run('export', async () => {
      const answer = await metadata<{ resource_version: number; metadata: MetadataDocument }>('export_metadata', {}, { version: 2 });
      if (!answer.ok) return { ok: false, error: answer.error, action: 'Export was refused' };
      const blob = new Blob([`${JSON.stringify(answer.value.metadata, null, 2)}\n`], { type: 'application/json' });
      const url = URL.createObjectURL(blob);
      const link = window.document.createElement('a');
      link.href = url;
      link.download = `svc-graphql-metadata-v${answer.value.resource_version}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      return { ok: true, message: `Exported the metadata (resource version ${answer.value.resource_version}) as ${link.download}.` };
    });

  const importMetadata = () =>
    run('import', async () => {
      if (!file) return { ok: false, error: { status: 0, message: 'choose a metadata file first' } };
      let document: MetadataDocument;
      try {
        document = documentOfFile(await file.text());
      } catch (error) {
        return { ok: false, error: { status: 0, message: `${file.name} is not a metadata file: ${(error as Error).message}` }, action: 'Import stopped' };
      }
      const answer = await metadata<ConsistencyReport>('replace_metadata', { allow_inconsistent_metadata: allowInconsistent, metadata: document });
      if (!answer.ok) {
        const hint = answer.error.message === 'cannot continue due to inconsistent metadata' ? ' Tick "Allow inconsistent metadata" to import it anyway and see which objects do not fit.' : '';
        return { ok: false, error: { ...answer.error, message: `${answer.error.message}${hint ? `.${hint}` : ''}` }, action: 'Import was refused' };
      }
      return consistencyOutcome(`Imported ${file.name}`, answer.value);
    });

  const reload = () =>
    run('reload', async () => {
      const answer = await metadata<ConsistencyReport & { message: string }>('reload_metadata', { reload_remote_schemas: reloadRemotes });
      if (!answer.ok) return { ok: false, error: answer.error, action: 'Reload was refused' };
      return consistencyOutcome('Reloaded the metadata', answer.value);
    });

  const drop = () =>
    run('drop', async () => {
      const answer = await metadata('drop_inconsistent_metadata', {});
      if (!answer.ok) return { ok: false, error: answer.error, action: 'Dropping was refused' };
      return { ok: true, message: 'Dropped every inconsistent object from the metadata.' };
    });

  const submitImport = (event: FormEvent) => {
    event.preventDefault();
    setConfirming('import');
  };

  return (
    <Page title="Metadata">
      <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
      <section aria-labelledby={`${ids}-export`} className="panel">
        <h2 id={`${ids}-export`}>Export</h2>
        <p>
          The whole document: {document?.remote_schemas.length ?? 0} remote {document?.remote_schemas.length === 1 ? 'schema' : 'schemas'}, resource version{' '}
          {resourceVersion ?? '…'}.
        </p>
        <button type="button" onClick={() => void exportMetadata()} disabled={busy !== undefined}>
          {busy === 'export' ? 'Exporting…' : 'Download the metadata'}
        </button>
      </section>

      <section aria-labelledby={`${ids}-import`} className="panel">
        <h2 id={`${ids}-import`}>Import</h2>
        <form onSubmit={submitImport}>
          <div className="field">
            <label htmlFor={`${ids}-file`}>Metadata file (JSON, as exported)</label>
            <input id={`${ids}-file`} type="file" accept="application/json,.json" onChange={(event) => setFile(event.target.files?.[0])} />
          </div>
          <p className="checkbox-line">
            <input id={`${ids}-allow`} type="checkbox" checked={allowInconsistent} onChange={(event) => setAllowInconsistent(event.target.checked)} />{' '}
            <label htmlFor={`${ids}-allow`}>Allow inconsistent metadata (keep what does not fit, left out of the schema)</label>
          </p>
          <button type="submit" className="primary" disabled={!file || busy !== undefined}>
            Replace the metadata…
          </button>
        </form>
      </section>

      <section aria-labelledby={`${ids}-reload`} className="panel">
        <h2 id={`${ids}-reload`}>Reload</h2>
        <p>Reads the stored document again (another instance may have changed it).</p>
        <p className="checkbox-line">
          <input id={`${ids}-remotes`} type="checkbox" checked={reloadRemotes} onChange={(event) => setReloadRemotes(event.target.checked)} />{' '}
          <label htmlFor={`${ids}-remotes`}>Introspect every remote schema again</label>
        </p>
        <button type="button" onClick={() => void reload()} disabled={busy !== undefined}>
          {busy === 'reload' ? 'Reloading…' : 'Reload the metadata'}
        </button>
      </section>

      <section aria-labelledby={`${ids}-inconsistent`} className="panel">
        <h2 id={`${ids}-inconsistent`}>Inconsistent objects</h2>
        {inconsistent.length === 0 ? (
          <p className="state state-ok">None: everything in the metadata is served.</p>
        ) : (
          <>
            <Table caption="Inconsistent objects and why" columns={['Type', 'Name', 'Reason']}>
              {inconsistent.map((object) => (
                <tr key={object.name}>
                  <td>{object.type}</td>
                  <th scope="row">
                    <code>{object.name}</code>
                  </th>
                  <td className="reason">{object.reason}</td>
                </tr>
              ))}
            </Table>
            <button type="button" className="danger" onClick={() => setConfirming('drop')} disabled={busy !== undefined}>
              Drop the inconsistent objects…
            </button>
          </>
        )}
      </section>

      <ConfirmDialog
        open={confirming === 'import'}
        title="Replace the whole metadata?"
        confirmLabel="Replace"
        danger
        busy={busy === 'import'}
        onConfirm={() => void importMetadata()}
        onCancel={() => setConfirming(undefined)}
      >
        <p>
          Every remote schema and permission is replaced by those of <strong>{file?.name}</strong>. Export the current metadata first to keep a copy.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirming === 'drop'}
        title="Drop the inconsistent objects?"
        confirmLabel="Drop them"
        danger
        busy={busy === 'drop'}
        onConfirm={() => void drop()}
        onCancel={() => setConfirming(undefined)}
      >
        <p>These are removed from the metadata for good:</p>
        <ul className="dependents">
          {inconsistent.map((object) => (
            <li key={object.name}>
              <code>{object.name}</code>
            </li>
          ))}
        </ul>
      </ConfirmDialog>
    </Page>
  );
}
