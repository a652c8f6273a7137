import { useEffect, useId, useMemo, useState } from 'react';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { fetchSession, type Answer, type DerivedSession } from '../api/client.js';
import { errorText } from '../components/answer.js';
import { Page } from '../components/page.js';
import { knownRoles } from '../metadata/types.js';
import { useConsole } from '../state.js';
import { Ide } from './ide.js';
import { requestHeaders, shownHeaders, type HeaderRow, type Identity } from './request-headers.js';

/** `value` once it has not changed for `ms` (the first value at once): what is typed, when typing stops. */
function useSettled(value: string, ms: number): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    if (value === settled) return undefined;
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, settled, ms]);
  return settled;
}

/** The session the server derives from the headers, asked again when they change. */
function useDerivedSession(headers: Record<string, string>): Answer<DerivedSession> | undefined {
  const [answer, setAnswer] = useState<Answer<DerivedSession>>();
  const key = JSON.stringify(headers);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      void fetchSession(JSON.parse(key) as Record<string, string>).then((result) => live && setAnswer(result));
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  return answer;
}

function SessionView({ answer }: { answer: Answer<DerivedSession> | undefined }) {
  if (!answer) return <p className="muted">Asking the server…</p>;
  if (!answer.ok) {
    return (
      <p className="state state-bad" data-testid="session-error">
        Refused: {errorText(answer.error)}
      </p>
    );
  }
  const session = answer.value;
  return (
    <dl className="definition compact" data-testid="session">
      <dt>Role</dt>
      <dd>
        <code data-testid="session-role">{session.role}</code>
        {session.is_admin ? ' (admin: sees everything)' : ''}
      </dd>
      {Object.entries(session.variables).map(([name, value]) => (
        <div key={name} className="definition-row">
          <dt>
            <code>{name}</code>
          </dt>
          <dd>
            <code>{value}</code>
          </dd>
        </div>
      ))}
      {session.expires_at ? (
        <>
          <dt>Token expires</dt>
          <dd>{new Date(session.expires_at).toLocaleString()}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** GraphiQL on `/v1/graphql`, as a role picked with the admin secret, or as a pasted token. */
export default function ApiPage() {
  const { secret, document } = useConsole();
  const [mode, setMode] = useState<Identity['mode']>('admin');
  const [role, setRole] = useState('');
  const [token, setToken] = useState('');
  const [rows, setRows] = useState<HeaderRow[]>([]);
  const ids = useId();
  const identity: Identity = mode === 'admin' ? { mode, role } : { mode, token };
  const headers = useMemo(() => requestHeaders(identity, secret, rows), [mode, role, token, secret, rows]); // eslint-disable-line react-hooks/exhaustive-deps
  // GraphiQL reads the schema again with each new fetcher: one per pause in typing, not per key.
  const headersKey = useSettled(JSON.stringify(headers), 250);
  const fetcher = useMemo(() => {
    const wsProtocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    const settled = JSON.parse(headersKey) as Record<string, string>;
    return createGraphiQLFetcher({
      url: '/v1/graphql',
      subscriptionUrl: `${wsProtocol}//${window.location.host}/v1/graphql`,
      headers: settled,
      // graphql-ws: the server reads the token and the admin secret from the headers of `connection_init`.
      wsConnectionParams: { headers: settled },
      enableIncrementalDelivery: false,
    });
  }, [headersKey]);
  const session = useDerivedSession(headers);
  const roles = knownRoles(document);
  const update = (index: number, change: Partial<HeaderRow>) => setRows(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));

  return (
    <Page title="API" wide>
      <div className="explorer-controls">
        <fieldset>
          <legend>Send as</legend>
          <div className="choice">
            <label>
              <input type="radio" name="identity" checked={mode === 'admin'} onChange={() => setMode('admin')} /> {secret !== undefined ? 'Admin secret and a role' : 'A role (the server has no admin secret)'}
            </label>
            <label>
              <input type="radio" name="identity" checked={mode === 'token'} onChange={() => setMode('token')} /> A token (JWT)
            </label>
          </div>
          {mode === 'admin' ? (
            <div className="field">
              <label htmlFor={`${ids}-role`}>Role (X-Svc-Role; empty: admin)</label>
              <input id={`${ids}-role`} list={`${ids}-roles`} value={role} placeholder="admin" onChange={(event) => setRole(event.target.value)} />
              <datalist id={`${ids}-roles`}>
                {['admin', ...roles].map((name) => (
                  <option key={name} value={name} />
                ))}
              </datalist>
            </div>
          ) : (
            <div className="field">
              <label htmlFor={`${ids}-token`}>Token (sent as Authorization: Bearer; kept in this page only)</label>
              <textarea id={`${ids}-token`} rows={3} value={token} spellCheck={false} onChange={(event) => setToken(event.target.value)} />
            </div>
          )}
        </fieldset>
        <fieldset>
          <legend>Request headers</legend>
          <p className="hint">Session variables for admin and role requests go here, e.g. x-svc-user-id.</p>
          <div className="rows">
            {rows.map((row, index) => (
              <div className="row" key={index}>
                <input type="checkbox" aria-label={`Send header ${index + 1}`} checked={row.enabled} onChange={(event) => update(index, { enabled: event.target.checked })} />
                <input aria-label={`Header ${index + 1} name`} value={row.name} placeholder="x-svc-user-id" onChange={(event) => update(index, { name: event.target.value })} />
                <input aria-label={`Header ${index + 1} value`} value={row.value} onChange={(event) => update(index, { value: event.target.value })} />
                <button type="button" className="link-button" aria-label={`Remove header ${index + 1}`} onClick={() => setRows(rows.filter((_, i) => i !== index))}>
                  Remove
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setRows([...rows, { enabled: true, name: '', value: '' }])}>
              Add a header
            </button>
          </div>
          <details>
            <summary>Headers sent ({Object.keys(headers).length})</summary>
            <ul className="plain">
              {shownHeaders(headers).map(([name, value]) => (
                <li key={name}>
                  <code>
                    {name}: {value}
                  </code>
                </li>
              ))}
            </ul>
          </details>
        </fieldset>
        <section className="session-panel" aria-labelledby={`${ids}-session`}>
          <h2 id={`${ids}-session`}>Session the server derived</h2>
          <SessionView answer={session} />
        </section>
      </div>
      <Ide fetcher={fetcher} />
    </Page>
  );
}
