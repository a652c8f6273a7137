import type { ServerError } from '../api/client.js';

/** What the server answered to an action: success with what it said, or its error message and code. */
export type Outcome = { ok: true; message: string; details?: string } | { ok: false; error: ServerError; action?: string };

/** What stands after a server's message: `code x, path $.y, HTTP 400`, as far as it said. */
function detailsOf(error: ServerError): string[] {
  return [error.code ? `code ${error.code}` : '', error.path ? `path ${error.path}` : '', error.status ? `HTTP ${error.status}` : ''].filter(Boolean);
}

export function errorText(error: ServerError): string {
  const details = detailsOf(error);
  return details.length > 0 ? `${error.message} (${details.join(', ')})` : error.message;
}

/** Shows an outcome where screen readers announce it: `status` for success, `alert` for an error. */
export function OutcomeView({ outcome, onDismiss }: { outcome: Outcome | undefined; onDismiss?: () => void }) {
  if (!outcome) return null;
  return (
    <div className={`outcome ${outcome.ok ? 'outcome-ok' : 'outcome-error'}`} role={outcome.ok ? 'status' : 'alert'} data-testid="outcome">
      <p className="outcome-title">
        {outcome.ok ? (
          outcome.message
        ) : (
          <>
            <strong>{outcome.action ?? 'The server refused'}:</strong> <span className="server-message">{outcome.error.message}</span>{' '}
            {detailsOf(outcome.error).length > 0 ? (
              <span className="server-code">
                (
                {[
                  outcome.error.code ? (
                    <span key="code">
                      code <code>{outcome.error.code}</code>
                    </span>
                  ) : null,
                  outcome.error.path ? (
                    <span key="path">
                      path <code>{outcome.error.path}</code>
                    </span>
                  ) : null,
                  outcome.error.status ? <span key="status">HTTP {outcome.error.status}</span> : null,
                ]
                  .filter(Boolean)
                  .flatMap((part, index) => (index === 0 ? [part] : [', ', part]))}
                )
              </span>
            ) : null}
          </>
        )}
      </p>
      {outcome.ok && outcome.details ? <pre className="outcome-details">{outcome.details}</pre> : null}
      {onDismiss ? (
        <button type="button" className="link-button" onClick={onDismiss}>
          Dismiss
        </button>
      ) : null}
    </div>
  );
}

let flashed: Outcome | undefined;

/** Hands an outcome to the page the console goes to next (shown there once). */
export function flash(outcome: Outcome): void {
  flashed = outcome;
}

/** The outcome handed over by the page before, if any (taken by the page being rendered now). */
export function takeFlash(): Outcome | undefined {
  const outcome = flashed;
  // Cleared after this render (React may call a state initializer twice while rendering).
  if (outcome) queueMicrotask(() => (flashed = flashed === outcome ? undefined : flashed));
  return outcome;
}
