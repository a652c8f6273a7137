import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql';
import { flash, OutcomeView, takeFlash, type Outcome } from '../components/answer.js';
import { ConfirmDialog } from '../components/dialog.js';
import { Page } from '../components/page.js';
import { Table } from '../components/table.js';
import { useRemoteSchema } from '../remote-schemas/form-page.js';
import { Link, navigate, pathOf } from '../router.js';
import { useConsole } from '../state.js';
import {
  definitionOf,
  elementFieldsOf,
  emptyRelationshipForm,
  formOfRow,
  formProblems,
  joinFieldsOf,
  levelChoices,
  levelFields,
  listArgumentsOf,
  objectTypesOf,
  placeOfMessage,
  relationshipsOf,
  type ArgumentMapping,
  type RelationshipForm,
  type RelationshipRow,
} from './model.js';

function pathText(row: RelationshipRow): string {
  const parts: string[] = [];
  let level = row.definition.to_remote_schema.remote_field;
  while (level && Object.keys(level).length > 0) {
    const [field, next] = Object.entries(level)[0]!;
    parts.push(`${field}(${Object.entries(next.arguments ?? {}).map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join(', ')})`);
    level = next.field!;
  }
  return parts.join(' → ');
}

/** Every relationship, remote by remote, with edit and delete. */
export function RelationshipsPage() {
  const { document, metadata, inconsistent } = useConsole();
  const [outcome, setOutcome] = useState<Outcome | undefined>(takeFlash);
  const [deleting, setDeleting] = useState<RelationshipRow>();
  const [busy, setBusy] = useState(false);
  const rows = relationshipsOf(document);
  const remove = async () => {
    if (!deleting) return;
    setBusy(true);
    const answer = await metadata('delete_remote_schema_remote_relationship', { remote_schema: deleting.remote, type_name: deleting.type, name: deleting.name });
    setOutcome(answer.ok ? { ok: true, message: `Deleted the relationship "${deleting.name}" on ${deleting.type} of "${deleting.remote}".` } : { ok: false, error: answer.error, action: 'Deleting was refused' });
    setBusy(false);
    setDeleting(undefined);
  };
  return (
    <Page
      title="Relationships"
      actions={
        <Link to="/relationships/add" className="button primary">
          Add a relationship
        </Link>
      }
    >
      <p className="hint">A relationship adds a field to a type of one remote schema whose value comes from a query field of a remote schema, with arguments taken from the first one's fields.</p>
      <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
      {rows.length === 0 ? (
        <p className="empty">
          No relationship yet. <Link to="/relationships/add">Add one</Link>.
        </p>
      ) : (
        <Table caption="Remote relationships" columns={['Name', 'On', 'Joins', 'Target', 'State']} actions>
          {rows.map((row) => (
            <tr key={`${row.remote}/${row.type}/${row.name}`}>
              <th scope="row">{row.name}</th>
              <td>
                <code>{row.type}</code> of {row.remote}
              </td>
              <td>
                <code>{row.definition.to_remote_schema.lhs_fields.join(', ')}</code>
              </td>
              <td>
                {row.definition.to_remote_schema.remote_schema}: <code>{pathText(row)}</code>
                {row.definition.to_remote_schema.batch ? <span className="badge">batched</span> : null}
              </td>
              <td>
                {(() => {
                  const problem = inconsistent.find((object) => object.type === 'remote_schema_remote_relationship' && object.name === `remote_schema_remote_relationship ${row.name} on type ${row.type} in remote schema ${row.remote}`);
                  return problem ? (
                    <span className="state state-bad">
                      Inconsistent: <span className="reason">{problem.reason}</span>
                    </span>
                  ) : (
                    <span className="state state-ok">Consistent</span>
                  );
                })()}
              </td>
              <td>
                <div className="row-actions">
                  <Link to={pathOf('relationships', row.remote, row.type, row.name)} className="button" aria-label={`Modify ${row.name} on ${row.type}`}>
                    Modify
                  </Link>
                  <button type="button" className="danger" onClick={() => setDeleting(row)} aria-label={`Delete ${row.name} on ${row.type}`}>
                    Delete
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ConfirmDialog open={deleting !== undefined} title={`Delete the relationship "${deleting?.name ?? ''}"?`} confirmLabel="Delete" danger busy={busy} onConfirm={() => void remove()} onCancel={() => setDeleting(undefined)}>
        <p>The field leaves the type {deleting?.type} at once.</p>
      </ConfirmDialog>
    </Page>
  );
}

function Section({ label, problem, children, id }: { label: string; problem?: string | undefined; children: ReactNode; id: string }) {
  return (
    <fieldset className={`field${problem ? ' field-invalid' : ''}`} aria-describedby={problem ? `${id}-problem` : undefined}>
      <legend className="label">{label}</legend>
      {children}
      {problem ? (
        <p className="field-error" id={`${id}-problem`}>
          {problem}
        </p>
      ) : null}
    </fieldset>
  );
}

function ArgumentRow({ label, mapping, joinFields, onChange }: { label: string; mapping: ArgumentMapping; joinFields: readonly string[]; onChange: (mapping: ArgumentMapping) => void }) {
  const id = useId();
  return (
    <div className="row">
      <label htmlFor={`${id}-kind`}>
        <code>{label}</code>
      </label>
      <select
        id={`${id}-kind`}
        value={mapping.kind}
        onChange={(event) => {
          const kind = event.target.value as ArgumentMapping['kind'];
          onChange(kind === 'none' ? { kind } : kind === 'literal' ? { kind, text: '' } : { kind, field: joinFields[0] ?? '' });
        }}
      >
        <option value="none">not set</option>
        <option value="field">from a join field</option>
        <option value="literal">a literal</option>
      </select>
      {mapping.kind === 'field' ? (
        <select
          aria-label={`Join field for ${label}`}
          value={joinFields.includes(mapping.field) ? mapping.field : ''}
          onChange={(event) => onChange({ kind: 'field', field: event.target.value })}
        >
          {/* A join field unticked since it was chosen: nothing is shown as chosen, the user picks again. */}
          {joinFields.includes(mapping.field) ? null : (
            <option value="" disabled>
              choose a join field
            </option>
          )}
          {joinFields.map((field) => (
            <option key={field} value={field}>
              ${field}
            </option>
          ))}
        </select>
      ) : mapping.kind === 'literal' ? (
        <input aria-label={`Literal for ${label} (JSON, or text for a string)`} value={mapping.text} onChange={(event) => onChange({ kind: 'literal', text: event.target.value })} />
      ) : null}
    </div>
  );
}

/** Add (no `row`) or modify a relationship: pickers for every part of the definition. */
export function RelationshipFormPage({ row }: { row?: RelationshipRow }) {
  const { document, metadata } = useConsole();
  const [form, setForm] = useState<RelationshipForm>(() => (row ? formOfRow(row) : emptyRelationshipForm(document?.remote_schemas[0]?.name ?? '')));
  const [outcome, setOutcome] = useState<Outcome>();
  const [shown, setShown] = useState(false);
  const [busy, setBusy] = useState(false);
  const ids = useId();
  const source = useRemoteSchema(form.source || undefined);
  const target = useRemoteSchema(form.target || undefined);
  const remotes = (document?.remote_schemas ?? []).map((remote) => remote.name);
  const sourceType = form.type ? source.schema?.getType(form.type) : undefined;
  const joinFields = joinFieldsOf(sourceType && isObjectType(sourceType) ? (sourceType as GraphQLObjectType) : undefined);
  const fields = levelFields(target.schema, form.levels);
  const last = fields[fields.length - 1];
  const problems = shown ? formProblems(form) : {};
  const serverPlace = outcome && !outcome.ok ? placeOfMessage(outcome.error.message) : undefined;
  const problemAt = (part: keyof ReturnType<typeof formProblems>) => problems[part] ?? (serverPlace === part && outcome && !outcome.ok ? `The server: ${outcome.error.message}` : undefined);
  const set = (change: Partial<RelationshipForm>) => setForm((current) => ({ ...current, ...change }));
  const setLevel = (index: number, change: Partial<RelationshipForm['levels'][number]>) =>
    setForm((current) => ({ ...current, levels: current.levels.map((level, at) => (at === index ? { ...level, ...change } : level)) }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setShown(true);
    if (Object.keys(formProblems(form)).length > 0) return;
    setBusy(true);
    const args = { remote_schema: form.source, type_name: form.type, name: form.name, definition: definitionOf(form) };
    const answer = await metadata(row ? 'update_remote_schema_remote_relationship' : 'create_remote_schema_remote_relationship', args);
    setBusy(false);
    if (!answer.ok) {
      setOutcome({ ok: false, error: answer.error, action: row ? 'Saving was refused' : 'Adding was refused' });
      return;
    }
    flash({ ok: true, message: `${row ? 'Saved' : 'Added'} the relationship "${form.name}" on ${form.type} of "${form.source}".` });
    navigate('/relationships');
  };

  return (
    <Page title={row ? `Modify the relationship "${row.name}"` : 'Add a relationship'}>
      <form className="form" onSubmit={(event) => void submit(event)} noValidate>
        <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
        <div className="field-pair">
          <div className={`field${problemAt('name') ? ' field-invalid' : ''}`}>
            <label htmlFor={`${ids}-name`}>Name of the new field</label>
            <input id={`${ids}-name`} value={form.name} readOnly={row !== undefined} onChange={(event) => set({ name: event.target.value })} aria-describedby={problemAt('name') ? `${ids}-name-problem` : undefined} />
            {problemAt('name') ? (
              <p className="field-error" id={`${ids}-name-problem`}>
                {problemAt('name')}
              </p>
            ) : null}
          </div>
          <div className={`field${problemAt('source') ? ' field-invalid' : ''}`}>
            <label htmlFor={`${ids}-source`}>Source remote schema</label>
            <select id={`${ids}-source`} value={form.source} disabled={row !== undefined} onChange={(event) => set({ source: event.target.value, type: '', lhsFields: [] })}>
              <option value="">Choose…</option>
              {remotes.map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
            {problemAt('source') ? <p className="field-error">{problemAt('source')}</p> : null}
          </div>
          <div className={`field${problemAt('type') ? ' field-invalid' : ''}`}>
            <label htmlFor={`${ids}-type`}>Source type</label>
            <select id={`${ids}-type`} value={form.type} disabled={row !== undefined} onChange={(event) => set({ type: event.target.value, lhsFields: [] })}>
              <option value="">{source.loading ? 'Reading the schema…' : 'Choose…'}</option>
              {objectTypesOf(source.schema).map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
            {problemAt('type') ? <p className="field-error">{problemAt('type')}</p> : null}
          </div>
        </div>
        <OutcomeView outcome={source.error} />
        <Section label="Join fields (their values are the arguments' $ variables)" problem={problemAt('lhsFields')} id={`${ids}-lhs`}>
          {joinFields.length === 0 ? <p className="hint">Choose a source type first.</p> : null}
          <div className="choice">
            {joinFields.map((field) => (
              <label key={field}>
                <input
                  type="checkbox"
                  checked={form.lhsFields.includes(field)}
                  onChange={(event) => set({ lhsFields: event.target.checked ? [...form.lhsFields, field] : form.lhsFields.filter((name) => name !== field) })}
                />{' '}
                {field}
              </label>
            ))}
          </div>
        </Section>
        <div className={`field${problemAt('target') ? ' field-invalid' : ''}`}>
          <label htmlFor={`${ids}-target`}>Target remote schema</label>
          <select id={`${ids}-target`} value={form.target} onChange={(event) => set({ target: event.target.value, levels: [{ field: '', arguments: {} }], batch: false, batchArgument: '', batchMatchField: '' })}>
            <option value="">Choose…</option>
            {remotes.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
          {problemAt('target') ? <p className="field-error">{problemAt('target')}</p> : null}
        </div>
        <OutcomeView outcome={target.error} />
        <Section label="Target field path and arguments" problem={problemAt('levels')} id={`${ids}-levels`}>
          {form.levels.map((level, index) => (
            <div key={index} className="rows level">
              <div className="row">
                <label htmlFor={`${ids}-level-${index}`}>{index === 0 ? 'Query field' : `Field of level ${index + 1}`}</label>
                <select id={`${ids}-level-${index}`} value={level.field} onChange={(event) => setLevel(index, { field: event.target.value, arguments: {} })}>
                  <option value="">{target.loading ? 'Reading the schema…' : 'Choose…'}</option>
                  {levelChoices(target.schema, form.levels, index).map((name) => (
                    <option key={name}>{name}</option>
                  ))}
                </select>
              </div>
              {(fields[index]?.args ?? []).map((arg) => (
                <ArgumentRow
                  key={arg.name}
                  label={`${arg.name}: ${String(arg.type)}`}
                  mapping={level.arguments[arg.name] ?? { kind: 'none' }}
                  joinFields={form.lhsFields}
                  onChange={(mapping) => setLevel(index, { arguments: { ...level.arguments, [arg.name]: mapping } })}
                />
              ))}
            </div>
          ))}
          <div className="row-actions">
            {last && isObjectType(getNamedType(last.type)) ? (
              <button type="button" onClick={() => set({ levels: [...form.levels, { field: '', arguments: {} }] })}>
                Go one field deeper
              </button>
            ) : null}
            {form.levels.length > 1 ? (
              <button type="button" onClick={() => set({ levels: form.levels.slice(0, -1) })}>
                Remove the last level
              </button>
            ) : null}
          </div>
        </Section>
        <Section label="Batching" problem={problemAt('batch')} id={`${ids}-batch`}>
          <label>
            <input type="checkbox" checked={form.batch} onChange={(event) => set({ batch: event.target.checked })} /> Call the last field once with the list of every join value
          </label>
          {form.batch ? (
            <div className="field-pair">
              <div className="field">
                <label htmlFor={`${ids}-batch-argument`}>List argument</label>
                <select id={`${ids}-batch-argument`} value={form.batchArgument} onChange={(event) => set({ batchArgument: event.target.value })}>
                  <option value="">Choose…</option>
                  {listArgumentsOf(last).map((name) => (
                    <option key={name}>{name}</option>
                  ))}
                </select>
              </div>
              <div className="field">
                <label htmlFor={`${ids}-batch-match`}>Match results by field</label>
                <select id={`${ids}-batch-match`} value={form.batchMatchField} onChange={(event) => set({ batchMatchField: event.target.value })}>
                  <option value="">by position</option>
                  {elementFieldsOf(last).map((name) => (
                    <option key={name}>{name}</option>
                  ))}
                </select>
              </div>
            </div>
          ) : null}
        </Section>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Saving…' : row ? 'Save the relationship' : 'Add the relationship'}
          </button>
          <Link to="/relationships" className="button">
            Cancel
          </Link>
        </div>
      </form>
    </Page>
  );
}

/** The form of a stored relationship, or a note when there is none by that name. */
export function RelationshipEditPage({ remote, type, name }: { remote: string; type: string; name: string }) {
  const { document } = useConsole();
  const row = relationshipsOf(document).find((candidate) => candidate.remote === remote && candidate.type === type && candidate.name === name);
  if (!row)
    return (
      <Page title="No such relationship">
        <p>
          "{remote}" has no relationship "{name}" on {type}. <Link to="/relationships">See the relationships.</Link>
        </p>
      </Page>
    );
  return <RelationshipFormPage key={`${remote}/${type}/${name}`} row={row} />;
}
