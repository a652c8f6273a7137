import { useId, useState, type FormEvent } from 'react';
import { parse } from 'graphql';
import type { Outcome } from '../components/answer.js';
import { ConfirmDialog } from '../components/dialog.js';
import { useConsole } from '../state.js';
import { allowlistOf, collectionsOf, parseRoles, type QueryCollection } from './model.js';
import { Table } from '../components/table.js';

type Report = (outcome: Outcome | undefined) => void;

const NAME = /^[_A-Za-z][-_0-9A-Za-z]*$/;

/** A problem of a query's name or text, before it is sent (the server checks again). */
function queryProblem(name: string, query: string): string | undefined {
  if (!NAME.test(name)) return `Query name: "${name}" is not a name (letters, digits, - and _)`;
  if (query.trim() === '') return `Query "${name}": write the GraphQL document`;
  try {
    parse(query);
  } catch (error) {
    return `Query "${name}" is not a GraphQL document: ${(error as Error).message}`;
  }
  return undefined;
}

function useRun(report: Report) {
  const { metadata } = useConsole();
  const [busy, setBusy] = useState(false);
  const run = async (type: string, args: unknown, success: string, action: string): Promise<boolean> => {
    setBusy(true);
    const answer = await metadata(type, args);
    setBusy(false);
    report(answer.ok ? { ok: true, message: success } : { ok: false, error: answer.error, action });
    return answer.ok;
  };
  return { busy, run };
}

function AddQueryForm({ collection, report }: { collection: string; report: Report }) {
  const [name, setName] = useState('');
  const [query, setQuery] = useState('');
  const [problem, setProblem] = useState<string>();
  const { busy, run } = useRun(report);
  const ids = useId();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found = queryProblem(name, query);
    setProblem(found);
    // The page's last answer is about another action: it goes when this one is refused here.
    if (found) return report(undefined);
    if (await run('add_query_to_collection', { collection_name: collection, query_name: name, query }, `Added the query "${name}" to "${collection}".`, 'Adding the query was refused')) {
      setName('');
      setQuery('');
    }
  };
  return (
    <form className="rows" onSubmit={(event) => void submit(event)} noValidate aria-label={`Add a query to ${collection}`}>
      <div className="field">
        <label htmlFor={`${ids}-name`}>Query name</label>
        <input id={`${ids}-name`} value={name} onChange={(event) => setName(event.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={`${ids}-query`}>Query</label>
        <textarea id={`${ids}-query`} rows={3} cols={60} value={query} onChange={(event) => setQuery(event.target.value)} aria-describedby={problem ? `${ids}-problem` : undefined} />
      </div>
      {problem ? (
        <p className="field-error" id={`${ids}-problem`} role="alert">
          {problem}
        </p>
      ) : null}
      <button type="submit" disabled={busy}>
        Add the query
      </button>
    </form>
  );
}

function CollectionView({ collection, inAllowlist, report }: { collection: QueryCollection; inAllowlist: boolean; report: Report }) {
  const { busy, run } = useRun(report);
  const [newName, setNewName] = useState(collection.name);
  const [dropping, setDropping] = useState(false);
  const [cascade, setCascade] = useState(false);
  const ids = useId();
  return (
    <section className="card" aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`}>{collection.name}</h3>
      {collection.comment ? <p className="muted">{collection.comment}</p> : null}
      {collection.definition.queries.length === 0 ? <p className="hint">No query yet.</p> : null}
      <ul className="queries">
        {collection.definition.queries.map((query) => (
          <li key={query.name}>
            <strong>{query.name}</strong>
            <pre>{query.query}</pre>
            <button
              type="button"
              className="danger"
              disabled={busy}
              aria-label={`Drop the query ${query.name} from ${collection.name}`}
              onClick={() => void run('drop_query_from_collection', { collection_name: collection.name, query_name: query.name }, `Dropped the query "${query.name}".`, 'Dropping the query was refused')}
            >
              Drop
            </button>
          </li>
        ))}
      </ul>
      <AddQueryForm collection={collection.name} report={report} />
      <div className="inline-form">
        <label htmlFor={`${ids}-rename`}>New name</label>
        <input id={`${ids}-rename`} value={newName} onChange={(event) => setNewName(event.target.value)} />
        <button
          type="button"
          disabled={busy || newName === collection.name}
          onClick={() =>
            NAME.test(newName)
              ? void run('rename_query_collection', { name: collection.name, new_name: newName }, `Renamed "${collection.name}" to "${newName}".`, 'Renaming was refused')
              : report({ ok: false, error: { status: 0, message: `New name: "${newName}" is not a name (letters, digits, - and _)` }, action: 'Not renamed' })
          }
        >
          Rename
        </button>
        <button type="button" className="danger" onClick={() => setDropping(true)}>
          Drop the collection
        </button>
      </div>
      <ConfirmDialog
        open={dropping}
        title={`Drop the collection "${collection.name}"?`}
        confirmLabel={inAllowlist ? 'Drop it and its allow-list entry' : 'Drop'}
        danger
        busy={busy}
        confirmDisabled={inAllowlist && !cascade}
        onCancel={() => setDropping(false)}
        onConfirm={() =>
          void run('drop_query_collection', { collection: collection.name, cascade }, `Dropped the collection "${collection.name}".`, 'Dropping the collection was refused').then(() => setDropping(false))
        }
      >
        {inAllowlist ? (
          <p>
            <input id={`${ids}-cascade`} type="checkbox" checked={cascade} onChange={(event) => setCascade(event.target.checked)} />{' '}
            <label htmlFor={`${ids}-cascade`}>It is in the allow list: remove it from there too (cascade)</label>
          </p>
        ) : (
          <p>Its queries go with it.</p>
        )}
      </ConfirmDialog>
    </section>
  );
}

/** Query collections: create, add and drop queries, rename, drop (with cascade when allow-listed). */
export function CollectionsSection({ report }: { report: Report }) {
  const { document } = useConsole();
  const collections = collectionsOf(document);
  const allowed = new Set(allowlistOf(document).map((entry) => entry.collection));
  const [name, setName] = useState('');
  const [comment, setComment] = useState('');
  const [problem, setProblem] = useState<string>();
  const { busy, run } = useRun(report);
  const ids = useId();
  const create = async (event: FormEvent) => {
    event.preventDefault();
    const found = NAME.test(name) ? undefined : `Collection name: "${name}" is not a name (letters, digits, - and _)`;
    setProblem(found);
    if (found) return report(undefined);
    const args = { name, ...(comment.trim() && { comment: comment.trim() }), definition: { queries: [] } };
    if (await run('create_query_collection', args, `Created the collection "${name}".`, 'Creating the collection was refused')) {
      setName('');
      setComment('');
    }
  };
  return (
    <section aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>Query collections</h2>
      <form className="inline-form" onSubmit={(event) => void create(event)} noValidate aria-label="Create a query collection">
        <label htmlFor={`${ids}-name`}>Collection name</label>
        <input id={`${ids}-name`} value={name} onChange={(event) => setName(event.target.value)} aria-describedby={problem ? `${ids}-problem` : undefined} />
        <label htmlFor={`${ids}-comment`}>Comment</label>
        <input id={`${ids}-comment`} value={comment} onChange={(event) => setComment(event.target.value)} />
        <button type="submit" className="primary" disabled={busy}>
          Create the collection
        </button>
      </form>
      {problem ? (
        <p className="field-error" id={`${ids}-problem`} role="alert">
          {problem}
        </p>
      ) : null}
      {collections.length === 0 ? <p className="empty">No query collection yet.</p> : null}
      {collections.map((collection) => (
        <CollectionView key={collection.name} collection={collection} inAllowlist={allowed.has(collection.name)} report={report} />
      ))}
    </section>
  );
}

/** The allow list: add a collection for every role or some, change the scope, remove. */
export function AllowlistSection({ report, enforced }: { report: Report; enforced: boolean | undefined }) {
  const { document } = useConsole();
  const collections = collectionsOf(document);
  const entries = allowlistOf(document);
  const [collection, setCollection] = useState('');
  const [global, setGlobal] = useState(true);
  const [roles, setRoles] = useState('');
  const [problem, setProblem] = useState<string>();
  const { busy, run } = useRun(report);
  const ids = useId();
  const scopeOf = (): { scope: { global: true } | { global: false; roles: string[] } } | { problem: string } => {
    if (global) return { scope: { global: true } };
    const parsed = parseRoles(roles, 'Roles');
    if ('problem' in parsed) return parsed;
    if (parsed.roles.length === 0) return { problem: 'Roles: name at least one role, or choose every role' };
    return { scope: { global: false, roles: parsed.roles } };
  };
  const add = async (event: FormEvent) => {
    event.preventDefault();
    const scope = scopeOf();
    const found = !collection ? 'Collection: choose one' : 'problem' in scope ? scope.problem : undefined;
    setProblem(found);
    if (found || 'problem' in scope) return report(undefined);
    const exists = entries.some((entry) => entry.collection === collection);
    await run(
      exists ? 'update_scope_of_collection_in_allowlist' : 'add_collection_to_allowlist',
      { collection, scope: scope.scope },
      exists ? `Changed the scope of "${collection}".` : `Added "${collection}" to the allow list.`,
      'The allow list change was refused',
    );
  };
  return (
    <section aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`}>Allow list</h2>
      <p className="hint" data-testid="allowlist-state">
        {enforced === undefined
          ? 'Whether this server enforces the allow list is unknown.'
          : enforced
            ? 'This server enforces the allow list: every role but admin may run only the queries of the collections below.'
            : 'This server does not enforce the allow list (start it with --enable-allowlist): the entries below are kept but every query runs.'}
      </p>
      {entries.length === 0 ? (
        <p className="empty">No collection is in the allow list.</p>
      ) : (
        <Table caption="Allow-listed collections" columns={['Collection', 'For']} actions>
          {entries.map((entry) => (
            <tr key={entry.collection}>
              <th scope="row">{entry.collection}</th>
              <td>{entry.scope && !entry.scope.global ? `roles ${(entry.scope.roles ?? []).join(', ')}` : 'every role'}</td>
              <td>
                <button
                  type="button"
                  className="danger"
                  disabled={busy}
                  aria-label={`Remove ${entry.collection} from the allow list`}
                  onClick={() => void run('drop_collection_from_allowlist', { collection: entry.collection }, `Removed "${entry.collection}" from the allow list.`, 'Removing was refused')}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <form className="inline-form" onSubmit={(event) => void add(event)} noValidate aria-label="Add a collection to the allow list">
        <label htmlFor={`${ids}-collection`}>Collection</label>
        <select id={`${ids}-collection`} value={collection} onChange={(event) => setCollection(event.target.value)}>
          <option value="">Choose…</option>
          {collections.map((candidate) => (
            <option key={candidate.name}>{candidate.name}</option>
          ))}
        </select>
        <label>
          <input type="radio" name={`${ids}-scope`} checked={global} onChange={() => setGlobal(true)} /> every role
        </label>
        <label>
          <input type="radio" name={`${ids}-scope`} checked={!global} onChange={() => setGlobal(false)} /> these roles
        </label>
        <label htmlFor={`${ids}-roles`} className="visually-hidden">
          Roles (comma separated)
        </label>
        <input id={`${ids}-roles`} placeholder="user, editor" disabled={global} value={roles} onChange={(event) => setRoles(event.target.value)} />
        <button type="submit" className="primary" disabled={busy}>
          Allow
        </button>
      </form>
      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
    </section>
  );
}
