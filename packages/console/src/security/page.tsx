import { useEffect, useId, useState, type FormEvent } from 'react';
import { fetchConfig, type ServerConfig } from '../api/client.js';
import { OutcomeView, type Outcome } from '../components/answer.js';
import { Page } from '../components/page.js';
import { Table } from '../components/table.js';
import { useConsole } from '../state.js';
import { AllowlistSection, CollectionsSection } from './collections.js';
import { apiLimitsOf, COUNT_LIMITS, introspectionDisabledFor, limitsFormOf, limitsOfForm, parseRoles, type LimitsForm } from './model.js';

function IntrospectionSection({ report }: { report: (outcome: Outcome | undefined) => void }) {
  const { document, metadata } = useConsole();
  const current = introspectionDisabledFor(document).join(', ');
  const [roles, setRoles] = useState(current);
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const ids = useId();
  useEffect(() => setRoles(current), [current]);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseRoles(roles, 'Roles without introspection');
    setProblem('problem' in parsed ? parsed.problem : undefined);
    // The page's last answer is about another action: it goes when this one is refused here.
    if ('problem' in parsed) return report(undefined);
    setBusy(true);
    const answer = await metadata('set_graphql_schema_introspection_options', { disabled_for_roles: parsed.roles });
    setBusy(false);
    report(answer.ok ? { ok: true, message: parsed.roles.length > 0 ? `Introspection is now off for ${parsed.roles.join(', ')}.` : 'Introspection is now on for every role.' } : { ok: false, error: answer.error, action: 'The introspection options were refused' });
  };
  return (
    <section aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>Introspection</h2>
      <form className="inline-form" onSubmit={(event) => void save(event)} noValidate>
        <label htmlFor={`${ids}-roles`}>Roles without introspection (comma separated)</label>
        <input id={`${ids}-roles`} value={roles} onChange={(event) => setRoles(event.target.value)} aria-describedby={problem ? `${ids}-problem` : `${ids}-hint`} />
        <button type="submit" disabled={busy}>
          Save
        </button>
      </form>
      <p className="hint" id={`${ids}-hint`}>
        Their operations may not select <code>__schema</code> or <code>__type</code>; <code>__typename</code> stays allowed.
      </p>
      {problem ? (
        <p className="field-error" id={`${ids}-problem`} role="alert">
          {problem}
        </p>
      ) : null}
    </section>
  );
}

function LimitsSection({ report, shared }: { report: (outcome: Outcome | undefined) => void; shared: boolean | undefined }) {
  const { document, metadata } = useConsole();
  const stored = apiLimitsOf(document);
  const [form, setForm] = useState<LimitsForm>(() => limitsFormOf(stored));
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const ids = useId();
  const storedText = JSON.stringify(stored ?? null);
  useEffect(() => setForm(limitsFormOf(stored)), [storedText]); // eslint-disable-line react-hooks/exhaustive-deps
  const setCount = (key: keyof LimitsForm['counts'], part: 'global' | 'perRole', text: string) =>
    setForm((current) => ({ ...current, counts: { ...current.counts, [key]: { ...current.counts[key], [part]: text } } }));
  const save = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = limitsOfForm(form);
    setProblems('problems' in parsed ? parsed.problems : []);
    if ('problems' in parsed) return report(undefined);
    setBusy(true);
    const answer = await metadata('set_api_limits', parsed.limits);
    setBusy(false);
    report(answer.ok ? { ok: true, message: 'Saved the API limits.' } : { ok: false, error: answer.error, action: 'The API limits were refused' });
  };
  const remove = async () => {
    setBusy(true);
    const answer = await metadata('remove_api_limits', {});
    setBusy(false);
    report(answer.ok ? { ok: true, message: 'Removed the API limits.' } : { ok: false, error: answer.error, action: 'Removing the API limits was refused' });
  };
  // Each problem names its field by the field's label: the field points at it, and is marked invalid.
  const field = (label: string) => {
    const at = problems.findIndex((problem) => problem.startsWith(`${label}:`));
    return { 'aria-label': label, 'aria-invalid': at >= 0 ? true : undefined, 'aria-describedby': at >= 0 ? `${ids}-problem-${String(at)}` : undefined };
  };
  return (
    <section aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>API limits</h2>
      <p className="hint">A role's own value wins over the one for every role; admin is never limited. Per role: <code>user=5, editor=10</code>.</p>
      <form className="form" onSubmit={(event) => void save(event)} noValidate aria-label="API limits">
        <p className="checkbox-line">
          <input id={`${ids}-disabled`} type="checkbox" checked={form.disabled} onChange={(event) => setForm({ ...form, disabled: event.target.checked })} />{' '}
          <label htmlFor={`${ids}-disabled`}>Disabled (keep the limits but apply none)</label>
        </p>
        <Table caption="Limits" columns={['Limit', 'Every role', 'Per role']}>
          {COUNT_LIMITS.map(({ key, label, unit }) => (
            <tr key={key}>
              <th scope="row">
                {label} ({unit})
              </th>
              <td>
                <input {...field(`${label} limit for every role`)} inputMode="numeric" value={form.counts[key].global} onChange={(event) => setCount(key, 'global', event.target.value)} />
              </td>
              <td>
                <input {...field(`${label} limit per role`)} value={form.counts[key].perRole} onChange={(event) => setCount(key, 'perRole', event.target.value)} />
              </td>
            </tr>
          ))}
          <tr>
            <th scope="row">Rate (requests a minute)</th>
            <td>
              <input {...field('Rate limit for every role')} inputMode="numeric" value={form.rateGlobal} onChange={(event) => setForm({ ...form, rateGlobal: event.target.value })} />
              <input {...field('Rate limit for every role, counted per')} placeholder="IP or x-svc-user-id" value={form.rateGlobalParams} onChange={(event) => setForm({ ...form, rateGlobalParams: event.target.value })} />
            </td>
            <td>
              <input {...field('Rate limit per role')} value={form.ratePerRole} onChange={(event) => setForm({ ...form, ratePerRole: event.target.value })} />
              <input {...field('Rate limit per role, counted per')} placeholder="IP or x-svc-user-id" value={form.ratePerRoleParams} onChange={(event) => setForm({ ...form, ratePerRoleParams: event.target.value })} />
            </td>
          </tr>
        </Table>
        <p className="hint" data-testid="rate-limit-store">
          {shared === undefined ? '' : shared ? 'Rate limits are counted by every instance together (Redis).' : 'Rate limits are counted by each instance alone (no --rate-limit-redis-url).'}
        </p>
        {problems.length > 0 ? (
          // The alert around the list, not on it: a list keeps its role (and its items a parent).
          <div role="alert">
            <ul className="field-error" aria-label="Problems">
              {problems.map((problem, at) => (
                <li key={problem} id={`${ids}-problem-${String(at)}`}>
                  {problem}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Save the limits
          </button>
          {stored ? (
            <button type="button" className="danger" disabled={busy} onClick={() => void remove()}>
              Remove every limit
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}

/** Query collections and the allow list, introspection per role, API limits, and how the server enforces them. */
export function SecurityPage() {
  const { secret } = useConsole();
  const [outcome, setOutcome] = useState<Outcome>();
  const [config, setConfig] = useState<ServerConfig>();
  const [configError, setConfigError] = useState<Outcome>();
  useEffect(() => {
    void fetchConfig(secret).then((answer) => (answer.ok ? setConfig(answer.value) : setConfigError({ ok: false, error: answer.error, action: 'The server configuration could not be read' })));
  }, [secret]);
  return (
    <Page title="Security">
      <div className="sticky-outcome">
        <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
      </div>
      <OutcomeView outcome={configError} />
      <CollectionsSection report={setOutcome} />
      <AllowlistSection report={setOutcome} enforced={config?.is_allow_list_enabled} />
      <IntrospectionSection report={setOutcome} />
      <LimitsSection report={setOutcome} shared={config === undefined ? undefined : config.rate_limit_store === 'redis'} />
    </Page>
  );
}
