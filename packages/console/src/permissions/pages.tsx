import { useId, useMemo, useState, type FormEvent } from 'react';
import { flash, OutcomeView, takeFlash, type Outcome } from '../components/answer.js';
import { ConfirmDialog } from '../components/dialog.js';
import { Page } from '../components/page.js';
import { knownRoles } from '../metadata/types.js';
import { useRemoteSchema } from '../remote-schemas/form-page.js';
import { Link, navigate, pathOf } from '../router.js';
import { useConsole } from '../state.js';
import { placeReasons } from './messages.js';
import { coverage, selectionProblems } from './editing.js';
import { emptySelection, fromSdl, permissionTypes, toSdl, type RoleSelection } from './model.js';
import { PermissionTree } from './tree.js';

const SYMBOL = { full: '✔', partial: '◐', none: '✘' } as const;
const WORDS = { full: 'full access', partial: 'partial access', none: 'no access' } as const;

/** Permissions: which remote schema. */
export function PermissionsIndexPage() {
  const { document } = useConsole();
  const remotes = document?.remote_schemas ?? [];
  return (
    <Page title="Permissions">
      <p>
        What each role may see of a remote schema. The server enforces them only with <code>--enable-remote-schema-permissions</code>; admin always
        sees everything.
      </p>
      {remotes.length === 0 ? (
        <p className="empty">
          No remote schema yet: <Link to="/remote-schemas/add">add one</Link> first.
        </p>
      ) : (
        <ul className="cards">
          {remotes.map((remote) => (
            <li key={remote.name}>
              <Link to={pathOf('permissions', remote.name)}>{remote.name}</Link>{' '}
              <span className="muted">
                {(remote.permissions ?? []).length} {(remote.permissions ?? []).length === 1 ? 'role' : 'roles'}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

/** One remote: a roles × types grid, each cell saying how much of the type the role has. */
export function PermissionsGridPage({ remote: remoteName }: { remote: string }) {
  const { document, inconsistent } = useConsole();
  const entry = document?.remote_schemas.find((remote) => remote.name === remoteName);
  const { schema, error, loading } = useRemoteSchema(entry ? remoteName : undefined);
  const [outcome] = useState<Outcome | undefined>(takeFlash);
  const [newRole, setNewRole] = useState('');
  const [filter, setFilter] = useState('');
  const newRoleId = useId();
  const filterId = useId();
  const roles = useMemo(() => [...new Set([...(entry?.permissions ?? []).map((p) => p.role), ...knownRoles(document)])].sort(), [entry, document]);
  const selections = useMemo(() => {
    const map = new Map<string, RoleSelection | undefined>();
    if (!schema) return map;
    for (const role of roles) {
      const permission = entry?.permissions?.find((p) => p.role === role);
      map.set(role, permission ? fromSdl(permission.definition.schema, schema).selection : undefined);
    }
    return map;
  }, [schema, roles, entry]);
  if (!entry) {
    return (
      <Page title={`Permissions of ${remoteName}`}>
        <p className="empty">{document ? `There is no remote schema named "${remoteName}".` : 'Loading…'}</p>
      </Page>
    );
  }
  const types = schema ? permissionTypes(schema).filter((type) => type.name.toLowerCase().includes(filter.trim().toLowerCase())) : [];
  const addRole = (event: FormEvent) => {
    event.preventDefault();
    if (newRole.trim() !== '') navigate(pathOf('permissions', remoteName, newRole.trim()));
  };
  return (
    <Page title={`Permissions of ${remoteName}`} wide>
      <OutcomeView outcome={outcome} />
      <form className="inline-form" onSubmit={addRole}>
        <label htmlFor={newRoleId}>Give a new role a permission</label>
        <input id={newRoleId} value={newRole} placeholder="role name" onChange={(event) => setNewRole(event.target.value)} />
        <button type="submit" disabled={newRole.trim() === ''}>
          Edit its permission
        </button>
      </form>
      {error ? <OutcomeView outcome={error} /> : null}
      {loading ? <p className="muted">Reading the remote's schema…</p> : null}
      <p className="legend">
        <span>{SYMBOL.full} full access</span> <span>{SYMBOL.partial} partial access</span> <span>{SYMBOL.none} no access</span>; admin has full access to
        everything. Select a cell to edit that role's permission.
      </p>
      {schema ? (
        <>
          <div className="inline-form">
            <label htmlFor={filterId}>Find a type</label>
            <input id={filterId} type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
          </div>
          <div className="grid-scroll">
            <table className="table grid">
              <caption className="visually-hidden">Access of each role to each type of {remoteName}</caption>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">admin</th>
                  {roles.map((role) => {
                    const problem = inconsistent.find((object) => object.name === `remote_schema_permission ${role} on remote_schema ${remoteName}`);
                    return (
                      <th scope="col" key={role}>
                        <Link to={pathOf('permissions', remoteName, role)}>{role}</Link>
                        {!selections.get(role) ? <div className="muted">no permission</div> : null}
                        {problem ? <div className="state state-bad">inconsistent</div> : null}
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {types.slice(0, 300).map((type) => (
                  <tr key={type.name}>
                    <th scope="row">
                      <code>{type.name}</code>
                    </th>
                    <td className="cell-full" aria-label={`admin: full access to ${type.name}`}>
                      {SYMBOL.full}
                    </td>
                    {roles.map((role) => {
                      const selection = selections.get(role);
                      const level = selection ? coverage(selection, type) : 'none';
                      return (
                        <td key={role} className={`cell-${level}`}>
                          <Link to={`${pathOf('permissions', remoteName, role)}#type-${type.name}`} aria-label={`${role}: ${WORDS[level]} to ${type.name}`}>
                            {SYMBOL[level]}
                          </Link>
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {types.length > 300 ? <p className="muted">Showing 300 of {types.length} types: find the others by name.</p> : null}
        </>
      ) : null}
    </Page>
  );
}

type Tab = 'tree' | 'sdl';

/** One role on one remote: the tree, or the SDL itself; saved as the SDL with `@preset`. */
export function PermissionEditorPage({ remote: remoteName, role }: { remote: string; role: string }) {
  const { document, metadata, inconsistent } = useConsole();
  const entry = document?.remote_schemas.find((remote) => remote.name === remoteName);
  const permission = entry?.permissions?.find((p) => p.role === role);
  const { schema, error, loading } = useRemoteSchema(entry ? remoteName : undefined);
  const [selection, setSelection] = useState<RoleSelection>();
  const [readProblems, setReadProblems] = useState<string[]>([]);
  const [tab, setTab] = useState<Tab>('tree');
  const [sdlText, setSdlText] = useState('');
  const [comment, setComment] = useState<string>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [serverMessage, setServerMessage] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [dropping, setDropping] = useState(false);
  const commentId = useId();
  const sdlId = useId();

  // The stored permission is read into the tree once the remote's schema is there.
  if (schema && selection === undefined) {
    const read = permission ? fromSdl(permission.definition.schema, schema) : { selection: emptySelection(), problems: [] };
    setSelection(read.selection);
    setReadProblems(read.problems);
    setSdlText(permission?.definition.schema ?? '');
  }
  const problems = useMemo(() => (schema && selection ? selectionProblems(selection, schema) : new Map<string, string[]>()), [schema, selection]);
  const serverProblems = useMemo(() => (serverMessage ? placeReasons(serverMessage) : new Map<string, string[]>()), [serverMessage]);

  if (!entry) {
    return (
      <Page title={`${role} on ${remoteName}`}>
        <p className="empty">{document ? `There is no remote schema named "${remoteName}".` : 'Loading…'}</p>
      </Page>
    );
  }
  if (role === 'admin') {
    return (
      <Page title={`admin on ${remoteName}`}>
        <p>Admin always sees the whole remote schema; it has no permission of its own.</p>
        <Link to={pathOf('permissions', remoteName)}>Back to the roles</Link>
      </Page>
    );
  }
  const problem = inconsistent.find((object) => object.name === `remote_schema_permission ${role} on remote_schema ${remoteName}`);
  const edit = (next: RoleSelection) => {
    setSelection(next);
    setServerMessage(undefined);
  };
  const switchTab = (next: Tab) => {
    if (next === tab || !schema) return;
    if (next === 'sdl' && selection) setSdlText(toSdl(selection, schema));
    if (next === 'tree') {
      const read = fromSdl(sdlText, schema);
      setSelection(read.selection);
      setReadProblems(read.problems);
    }
    setTab(next);
  };
  const save = async () => {
    if (!schema || !selection) return;
    const sdl = tab === 'sdl' ? sdlText : toSdl(selection, schema);
    const add = {
      type: 'add_remote_schema_permissions',
      args: { remote_schema: remoteName, role, definition: { schema: sdl }, ...((comment ?? permission?.comment) ? { comment: comment ?? permission?.comment } : {}) },
    };
    setBusy(true);
    setOutcome(undefined);
    // A permission is replaced as one change: dropped and added again, or neither.
    const answer = permission
      ? await metadata('bulk', [{ type: 'drop_remote_schema_permissions', args: { remote_schema: remoteName, role } }, add])
      : await metadata(add.type, add.args);
    setBusy(false);
    if (answer.ok) {
      setServerMessage(undefined);
      setSdlText(sdl);
      setOutcome({ ok: true, message: `Saved the permission of "${role}" on "${remoteName}".` });
    } else {
      setServerMessage(answer.error.message);
      setOutcome({ ok: false, error: answer.error, action: 'Saving the permission was refused' });
    }
  };
  const drop = async () => {
    setBusy(true);
    const answer = await metadata('drop_remote_schema_permissions', { remote_schema: remoteName, role });
    setBusy(false);
    setDropping(false);
    if (answer.ok) {
      flash({ ok: true, message: `Removed the permission of "${role}" on "${remoteName}": the role sees nothing of it.` });
      navigate(pathOf('permissions', remoteName));
    } else {
      setOutcome({ ok: false, error: answer.error, action: 'Removing the permission was refused' });
    }
  };
  const generalProblems = [...(problems.get('') ?? []), ...readProblems];
  // In the tree each reason stands next to what it names; the SDL view lists them all above the text.
  const generalServer = tab === 'sdl' ? [...serverProblems.values()].flat() : (serverProblems.get('') ?? []);
  const clientCount = [...problems.values()].reduce((sum, list) => sum + list.length, 0);

  return (
    <Page
      title={`${role} on ${remoteName}`}
      wide
      actions={
        <>
          <Link to={pathOf('permissions', remoteName)} className="button">
            All roles
          </Link>
          {permission ? (
            <button type="button" className="danger" onClick={() => setDropping(true)}>
              Remove this permission
            </button>
          ) : null}
        </>
      }
    >
      <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
      <p>
        {permission ? 'The role sees of the remote only what is ticked.' : `"${role}" has no permission on this remote yet: it sees nothing of it.`} Names are
        the remote's own (before customization). An argument or input field with a preset is filled in by the server and hidden from the role.
      </p>
      {problem ? (
        <p className="state state-bad" role="note">
          This permission is inconsistent and left out of the schema: {problem.reason}
        </p>
      ) : null}
      {error ? <OutcomeView outcome={error} /> : null}
      {loading ? <p className="muted">Reading the remote's schema…</p> : null}
      {generalProblems.length > 0 || generalServer.length > 0 ? (
        <ul className="node-problems general">
          {generalServer.map((message) => (
            <li key={`s-${message}`} className="server-problem" data-testid="server-problem">
              Server: {message}
            </li>
          ))}
          {generalProblems.map((message) => (
            <li key={`c-${message}`} className="client-problem">
              {message}
            </li>
          ))}
        </ul>
      ) : null}
      {schema && selection ? (
        <>
          <div className="tabs" role="group" aria-label="Edit as">
            <button type="button" aria-pressed={tab === 'tree'} onClick={() => switchTab('tree')}>
              Tree
            </button>
            <button type="button" aria-pressed={tab === 'sdl'} onClick={() => switchTab('sdl')}>
              SDL
            </button>
          </div>
          {tab === 'tree' ? (
            <PermissionTree
              remote={schema}
              selection={selection}
              onChange={edit}
              problems={problems}
              serverProblems={serverProblems}
              focusType={decodeURIComponent(window.location.hash.replace(/^#type-/, '')) || undefined}
            />
          ) : (
            <div className="field">
              <label htmlFor={sdlId}>The permission as SDL (the remote's own names, with @preset)</label>
              <textarea
                id={sdlId}
                className="sdl-editor"
                spellCheck={false}
                rows={Math.min(40, Math.max(12, sdlText.split('\n').length + 2))}
                value={sdlText}
                onChange={(event) => {
                  setSdlText(event.target.value);
                  setServerMessage(undefined);
                }}
              />
              <p className="hint">Saved as written. Switching back to the tree reads it; what the remote does not have is listed above the tree.</p>
            </div>
          )}
          <div className="field">
            <label htmlFor={commentId}>Comment</label>
            <input id={commentId} value={comment ?? permission?.comment ?? ''} onChange={(event) => setComment(event.target.value)} />
          </div>
          <div className="actions sticky-actions">
            <button type="button" className="primary" disabled={busy || (tab === 'tree' && selection.types.size === 0)} onClick={() => void save()}>
              {busy ? 'Saving…' : 'Save permission'}
            </button>
            {tab === 'tree' && clientCount > 0 ? (
              <span className="muted">
                {clientCount} {clientCount === 1 ? 'thing' : 'things'} the server will refuse (marked in the tree); saving shows its own answer.
              </span>
            ) : null}
            {tab === 'tree' ? <span className="muted">{selection.types.size} types selected</span> : null}
          </div>
        </>
      ) : null}
      <ConfirmDialog
        open={dropping}
        title={`Remove the permission of "${role}"?`}
        confirmLabel="Remove"
        danger
        busy={busy}
        onConfirm={() => void drop()}
        onCancel={() => setDropping(false)}
      >
        <p>The role then sees nothing of "{remoteName}".</p>
      </ConfirmDialog>
    </Page>
  );
}
