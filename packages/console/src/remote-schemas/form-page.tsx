import { useEffect, useId, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { buildClientSchema, isObjectType, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { flash, OutcomeView, type Outcome } from '../components/answer.js';
import { Page } from '../components/page.js';
import type { InconsistentObject } from '../metadata/types.js';
import { navigate, pathOf } from '../router.js';
import { useConsole } from '../state.js';
import { emptyForm, formFieldOf, formOf, requestArgsOf, type MappingRow, type RemoteSchemaForm } from './form-model.js';

/** The remote's own schema (before customization), read with `introspect_remote_schema`. */
export function useRemoteSchema(name: string | undefined): { schema?: GraphQLSchema; error?: Outcome; loading: boolean; reload: () => void } {
  const { metadata } = useConsole();
  const [state, setState] = useState<{ schema?: GraphQLSchema; error?: Outcome; loading: boolean }>({ loading: name !== undefined });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (name === undefined) return;
    let live = true;
    setState((current) => ({ ...current, loading: true }));
    void metadata<{ data?: IntrospectionQuery }>('introspect_remote_schema', { name }).then((answer) => {
      if (!live) return;
      if (!answer.ok) {
        setState({ loading: false, error: { ok: false, error: answer.error, action: `Introspecting "${name}" was refused` } });
        return;
      }
      try {
        if (!answer.value.data) throw new Error('the answer has no data');
        setState({ loading: false, schema: buildClientSchema(answer.value.data) });
      } catch (error) {
        setState({ loading: false, error: { ok: false, error: { status: 200, message: `the remote's schema cannot be read: ${(error as Error).message}` } } });
      }
    });
    return () => {
      live = false;
    };
  }, [name, metadata, round]);
  return { ...state, reload: () => setRound((n) => n + 1) };
}

interface FieldProps {
  label: string;
  error: string | undefined;
  hint?: ReactNode;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: true }) => ReactNode;
}

/** A labelled control with its hint and the server's message about it, tied to it for screen readers. */
function Field({ label, error, hint, children }: FieldProps) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(described && { 'aria-describedby': described }), ...(error && { 'aria-invalid': true as const }) })}
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={`${id}-error`} data-testid="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

function MappingEditor({
  rows,
  onChange,
  fromLabel,
  toLabel,
  fromOptions,
  addLabel,
}: {
  rows: MappingRow[];
  onChange: (rows: MappingRow[]) => void;
  fromLabel: string;
  toLabel: string;
  fromOptions: readonly string[];
  addLabel: string;
}) {
  const listId = useId();
  return (
    <div className="rows">
      <datalist id={listId}>
        {fromOptions.map((option) => (
          <option key={option} value={option} />
        ))}
      </datalist>
      {rows.map((row, index) => (
        <div className="row" key={index}>
          <input aria-label={`${fromLabel} ${index + 1}`} list={listId} value={row.from} onChange={(event) => onChange(rows.map((r, i) => (i === index ? { ...r, from: event.target.value } : r)))} />
          <span aria-hidden="true">→</span>
          <input aria-label={`${toLabel} ${index + 1}`} value={row.to} onChange={(event) => onChange(rows.map((r, i) => (i === index ? { ...r, to: event.target.value } : r)))} />
          <button type="button" className="link-button" onClick={() => onChange(rows.filter((_, i) => i !== index))} aria-label={`Remove ${fromLabel.toLowerCase()} ${index + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, { from: '', to: '' }])}>
        {addLabel}
      </button>
    </div>
  );
}

/** Adds a remote schema (no `name`) or modifies one: every field of the definition and of its customization. */
export function RemoteSchemaFormPage({ name }: { name?: string }) {
  const { document, metadata } = useConsole();
  const existing = name === undefined ? undefined : document?.remote_schemas.find((remote) => remote.name === name);
  const [form, setForm] = useState<RemoteSchemaForm>(() => (existing ? formOf(existing) : emptyForm()));
  const [loadedFrom, setLoadedFrom] = useState(existing);
  const [outcome, setOutcome] = useState<Outcome>();
  const [busy, setBusy] = useState(false);
  const { schema } = useRemoteSchema(name);
  // The document arrives after the page opened it directly: fill the form once.
  if (existing && !loadedFrom) {
    setLoadedFrom(existing);
    setForm(formOf(existing));
  }
  const errorField = outcome && !outcome.ok ? formFieldOf(outcome.error.path) : undefined;
  const errorAt = (field: string) => (errorField === field && outcome && !outcome.ok ? outcome.error.message : undefined);
  const set = <K extends keyof RemoteSchemaForm>(key: K, value: RemoteSchemaForm[K]) => setForm((current) => ({ ...current, [key]: value }));
  const typeNames = useMemo(() => (schema ? Object.keys(schema.getTypeMap()).filter((type) => !type.startsWith('__')) : []), [schema]);
  const objectTypes = useMemo(() => (schema ? Object.values(schema.getTypeMap()).filter((type) => isObjectType(type) && !type.name.startsWith('__')).map((type) => type.name) : []), [schema]);
  const typeListId = useId();

  if (name !== undefined && !existing) {
    return (
      <Page title={`Modify ${name}`}>
        <p className="empty">{document ? `There is no remote schema named "${name}".` : 'Loading…'}</p>
      </Page>
    );
  }

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setOutcome(undefined);
    const args = requestArgsOf(form);
    const answer = await metadata<{ message: string; inconsistent_objects?: InconsistentObject[] }>(name === undefined ? 'add_remote_schema' : 'update_remote_schema', args);
    setBusy(false);
    if (!answer.ok) {
      setOutcome({ ok: false, error: answer.error, action: name === undefined ? 'Adding the remote schema was refused' : 'Saving was refused' });
      return;
    }
    const problems = answer.value.inconsistent_objects ?? [];
    flash({
      ok: true,
      message: name === undefined ? `Added the remote schema "${args.name}".` : `Saved the remote schema "${args.name}".`,
      ...(problems.length > 0 && { details: `These no longer fit and are left out of the schema:\n${problems.map((p) => `${p.name}: ${p.reason}`).join('\n')}` }),
    });
    navigate(pathOf('remote-schemas', args.name));
  };

  return (
    <Page title={name === undefined ? 'Add a remote schema' : `Modify ${name}`}>
      <form className="form" onSubmit={(event) => void submit(event)} noValidate>
        <OutcomeView outcome={outcome} />
        <datalist id={typeListId}>
          {typeNames.map((type) => (
            <option key={type} value={type} />
          ))}
        </datalist>
        <fieldset>
          <legend>Remote schema</legend>
          <Field label="Name" error={errorAt('name')} hint={name === undefined ? 'Unique; it names the remote in errors, permissions and metadata.' : 'A remote schema keeps its name.'}>
            {(props) => <input {...props} value={form.name} readOnly={name !== undefined} required onChange={(event) => set('name', event.target.value)} />}
          </Field>
          <Field label="Comment" error={errorAt('comment')}>
            {(props) => <input {...props} value={form.comment} onChange={(event) => set('comment', event.target.value)} />}
          </Field>
        </fieldset>
        <fieldset>
          <legend>Where it is</legend>
          <div className="choice" role="radiogroup" aria-label="URL source">
            <label>
              <input type="radio" name="url-source" checked={form.urlSource === 'url'} onChange={() => set('urlSource', 'url')} /> URL
            </label>
            <label>
              <input type="radio" name="url-source" checked={form.urlSource === 'env'} onChange={() => set('urlSource', 'env')} /> URL from an environment variable of the server
            </label>
          </div>
          {form.urlSource === 'url' ? (
            <Field label="GraphQL URL" error={errorAt('url')} hint="http:// or https://; subscriptions use the same URL with ws:// or wss://.">
              {(props) => <input {...props} type="url" value={form.url} placeholder="http://127.0.0.1:4001/graphql" onChange={(event) => set('url', event.target.value)} />}
            </Field>
          ) : (
            <Field label="Environment variable holding the URL" error={errorAt('urlFromEnv') ?? errorAt('url')} hint="Read each time the remote is loaded; names starting with SVC_GRAPHQL_ are refused.">
              {(props) => <input {...props} value={form.urlFromEnv} placeholder="ACCOUNTS_REMOTE_URL" onChange={(event) => set('urlFromEnv', event.target.value)} />}
            </Field>
          )}
          <Field label="Timeout (seconds)" error={errorAt('timeoutSeconds')} hint="How long one call to the remote may take; empty: 60.">
            {(props) => <input {...props} inputMode="numeric" value={form.timeoutSeconds} placeholder="60" onChange={(event) => set('timeoutSeconds', event.target.value)} />}
          </Field>
        </fieldset>
        <fieldset>
          <legend>Headers sent to the remote</legend>
          {errorAt('headers') ? <p className="field-error">{errorAt('headers')}</p> : null}
          <div className="rows">
            {form.headers.map((header, index) => {
              const update = (change: Partial<RemoteSchemaForm['headers'][number]>) => set('headers', form.headers.map((h, i) => (i === index ? { ...h, ...change } : h)));
              const error = errorAt(`headers.${index}`);
              return (
                <div className={`row${error ? ' field-invalid' : ''}`} key={index}>
                  <input aria-label={`Header ${index + 1} name`} value={header.name} placeholder="Authorization" onChange={(event) => update({ name: event.target.value })} />
                  <select aria-label={`Header ${index + 1} source`} value={header.source} onChange={(event) => update({ source: event.target.value as 'value' | 'env' })}>
                    <option value="value">value</option>
                    <option value="env">from environment variable</option>
                  </select>
                  <input aria-label={`Header ${index + 1} ${header.source === 'env' ? 'environment variable' : 'value'}`} value={header.value} onChange={(event) => update({ value: event.target.value })} />
                  <button type="button" className="link-button" onClick={() => set('headers', form.headers.filter((_, i) => i !== index))} aria-label={`Remove header ${index + 1}`}>
                    Remove
                  </button>
                  {error ? <p className="field-error">{error}</p> : null}
                </div>
              );
            })}
            <button type="button" onClick={() => set('headers', [...form.headers, { name: '', source: 'value', value: '' }])}>
              Add a header
            </button>
          </div>
          <p className="checkbox-line">
            <input id={`${typeListId}-forward`} type="checkbox" checked={form.forwardClientHeaders} onChange={(event) => set('forwardClientHeaders', event.target.checked)} />{' '}
            <label htmlFor={`${typeListId}-forward`}>Forward the client's headers</label>
            <span className="hint"> (never the admin secret, nor any x-svc-* header)</span>
          </p>
        </fieldset>
        <fieldset>
          <legend>Customization</legend>
          <Field label="Root fields namespace" error={errorAt('rootFieldsNamespace')} hint="Serves every query, mutation and subscription field of the remote under one field of this name.">
            {(props) => <input {...props} value={form.rootFieldsNamespace} onChange={(event) => set('rootFieldsNamespace', event.target.value)} />}
          </Field>
          <div className="field-pair">
            <Field label="Type name prefix" error={errorAt('typePrefix')}>
              {(props) => <input {...props} value={form.typePrefix} onChange={(event) => set('typePrefix', event.target.value)} />}
            </Field>
            <Field label="Type name suffix" error={errorAt('typeSuffix')}>
              {(props) => <input {...props} value={form.typeSuffix} onChange={(event) => set('typeSuffix', event.target.value)} />}
            </Field>
          </div>
          <div className={`field${errorAt('typeMapping') ? ' field-invalid' : ''}`}>
            <span className="label">Type name mapping (wins over prefix and suffix)</span>
            <MappingEditor rows={form.typeMapping} onChange={(rows) => set('typeMapping', rows)} fromLabel="Type" toLabel="New type name" fromOptions={typeNames} addLabel="Add a type mapping" />
            {errorAt('typeMapping') ? <p className="field-error">{errorAt('typeMapping')}</p> : null}
          </div>
          <div className={`field${errorAt('fieldNames') ? ' field-invalid' : ''}`}>
            <span className="label">Field names, per type (by the remote's own type name)</span>
            {errorAt('fieldNames') ? <p className="field-error">{errorAt('fieldNames')}</p> : null}
            {form.fieldNames.map((rule, index) => {
              const update = (change: Partial<RemoteSchemaForm['fieldNames'][number]>) => set('fieldNames', form.fieldNames.map((r, i) => (i === index ? { ...r, ...change } : r)));
              const parent = schema?.getType(rule.parentType);
              const fields = parent && isObjectType(parent) ? Object.keys(parent.getFields()) : [];
              const error = errorAt(`fieldNames.${index}`);
              return (
                <fieldset className={`nested${error ? ' field-invalid' : ''}`} key={index}>
                  <legend>Field names rule {index + 1}</legend>
                  <div className="field-pair">
                    <div className="field">
                      <label htmlFor={`${typeListId}-parent-${index}`}>Parent type</label>
                      <input id={`${typeListId}-parent-${index}`} list={typeListId} value={rule.parentType} onChange={(event) => update({ parentType: event.target.value })} />
                    </div>
                    <div className="field">
                      <label htmlFor={`${typeListId}-prefix-${index}`}>Field prefix</label>
                      <input id={`${typeListId}-prefix-${index}`} value={rule.prefix} onChange={(event) => update({ prefix: event.target.value })} />
                    </div>
                    <div className="field">
                      <label htmlFor={`${typeListId}-suffix-${index}`}>Field suffix</label>
                      <input id={`${typeListId}-suffix-${index}`} value={rule.suffix} onChange={(event) => update({ suffix: event.target.value })} />
                    </div>
                  </div>
                  <MappingEditor rows={rule.mapping} onChange={(mapping) => update({ mapping })} fromLabel={`Field of rule ${index + 1}`} toLabel={`New field name of rule ${index + 1}`} fromOptions={fields} addLabel="Add a field mapping" />
                  {error ? <p className="field-error">{error}</p> : null}
                  <button type="button" className="link-button" onClick={() => set('fieldNames', form.fieldNames.filter((_, i) => i !== index))}>
                    Remove rule {index + 1}
                  </button>
                </fieldset>
              );
            })}
            <button type="button" onClick={() => set('fieldNames', [...form.fieldNames, { parentType: objectTypes[0] ?? '', prefix: '', suffix: '', mapping: [] }])}>
              Add a field names rule
            </button>
          </div>
        </fieldset>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Saving…' : name === undefined ? 'Add remote schema' : 'Save'}
          </button>
          <button type="button" onClick={() => navigate(name === undefined ? '/remote-schemas' : pathOf('remote-schemas', name))}>
            Cancel
          </button>
        </div>
      </form>
    </Page>
  );
}
