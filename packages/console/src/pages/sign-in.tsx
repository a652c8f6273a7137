import { useId, useState, type FormEvent } from 'react';
import { OutcomeView } from '../components/answer.js';
import { Page } from '../components/page.js';
import type { ServerError } from '../api/client.js';
import { useConsole } from '../state.js';

/** Asks for the admin secret the server wants; it is kept in this tab's session storage only. */
export function SignInPage() {
  const { authError, signIn } = useConsole();
  const [secret, setSecret] = useState('');
  const [refusal, setRefusal] = useState<ServerError>();
  const [busy, setBusy] = useState(false);
  const id = useId();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setRefusal(await signIn(secret));
    setBusy(false);
  };
  const shown = refusal ?? authError;
  return (
    <Page title="Admin secret">
      <p>The server asks for its admin secret. The console sends it with each request, like any client, and keeps it in this tab only (session storage): it is forgotten when the tab closes.</p>
      {shown ? <OutcomeView outcome={{ ok: false, error: shown, action: refusal ? 'The server refused this secret' : 'The server answered' }} /> : null}
      <form className="form narrow" onSubmit={(event) => void submit(event)}>
        <div className="field">
          <label htmlFor={id}>Admin secret (X-Svc-Admin-Secret)</label>
          <input id={id} type="password" autoComplete="current-password" value={secret} onChange={(event) => setSecret(event.target.value)} required />
        </div>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy || secret === ''}>
            {busy ? 'Checking…' : 'Continue'}
          </button>
        </div>
      </form>
    </Page>
  );
}
