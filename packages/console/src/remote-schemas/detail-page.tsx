import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { buildClientSchema, getIntrospectionQuery, printSchema, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { callGraphql } from '../api/client.js';
import { flash, OutcomeView, takeFlash, type Outcome } from '../components/answer.js';
import { Page } from '../components/page.js';
import { dependentInconsistencies, remoteInconsistency, type NameCustomization } from '../metadata/types.js';
import { Link, navigate, pathOf } from '../router.js';
import { useConsole } from '../state.js';
import { customizedSdl } from './customized-sdl.js';
import { useRemoteSchema } from './form-page.js';
import { remoteLocation, useReload } from './list-page.js';
import { RemoveRemoteDialog } from './remove.js';

/** The live schema as admin sees it (every consistent remote, customized), read again after each change. */
function useLiveSchema(): { schema?: GraphQLSchema; error?: Outcome } {
  const { secret, resourceVersion, inconsistent } = useConsole();
  const [state, setState] = useState<{ schema?: GraphQLSchema; error?: Outcome }>({});
  useEffect(() => {
    let live = true;
    void callGraphql<IntrospectionQuery>(getIntrospectionQuery(), secret).then((answer) => {
      if (!live) return;
      if (!answer.ok) setState({ error: { ok: false, error: answer.error, action: 'Reading the served schema was refused' } });
      else if (!answer.value.data) setState({ error: { ok: false, error: { status: 200, message: answer.value.errors?.[0]?.message ?? 'no data', ...(typeof answer.value.errors?.[0]?.extensions?.['code'] === 'string' && { code: answer.value.errors[0].extensions['code'] }) } } });
      else setState({ schema: buildClientSchema(answer.value.data) });
    });
    return () => {
      live = false;
    };
  }, [secret, resourceVersion, inconsistent]);
  return state;
}

type View = 'served' | 'own';

/** A renaming rule in words: `prefix Acc_, User → Account`. */
function NameRule({ rule }: { rule: NameCustomization }) {
  const parts: ReactNode[] = [];
  if (rule.prefix) parts.push(<>prefix <code>{rule.prefix}</code></>);
  if (rule.suffix) parts.push(<>suffix <code>{rule.suffix}</code></>);
  for (const [from, to] of Object.entries(rule.mapping ?? {})) parts.push(<><code>{from}</code> → <code>{to}</code></>);
  return (
    <>
      {parts.map((part, index) => (
        <span key={index}>
          {index > 0 ? ', ' : ''}
          {part}
        </span>
      ))}
    </>
  );
}

/** One remote schema: its definition and state, reload, modify, remove, and its schema as SDL. */
export function RemoteSchemaPage({ name }: { name: string }) {
  const { document, inconsistent } = useConsole();
  const [outcome, setOutcome] = useState<Outcome | undefined>(takeFlash);
  const [removing, setRemoving] = useState(false);
  const [view, setView] = useState<View>('served');
  const [reloading, reload] = useReload();
  const remote = document?.remote_schemas.find((candidate) => candidate.name === name);
  const own = useRemoteSchema(remote ? name : undefined);
  const live = useLiveSchema();
  const problem = remoteInconsistency(inconsistent, name);
  const dependentProblems = dependentInconsistencies(inconsistent, name);
  const served = useMemo(() => {
    if (!remote || !own.schema || !live.schema || problem) return undefined;
    return customizedSdl(live.schema, own.schema, remote.definition.customization);
  }, [remote, own.schema, live.schema, problem]);
  const ownSdl = useMemo(() => (own.schema ? printSchema(own.schema) : undefined), [own.schema]);

  if (!remote) {
    return (
      <Page title={name}>
        <OutcomeView outcome={outcome} />
        <p className="empty">{document ? `There is no remote schema named "${name}".` : 'Loading…'}</p>
        <Link to="/remote-schemas">All remote schemas</Link>
      </Page>
    );
  }
  const { definition } = remote;
  const customization = definition.customization;
  const sdl = view === 'served' ? served : ownSdl;

  return (
    <Page
      title={name}
      actions={
        <>
          <button
            type="button"
            disabled={reloading === name}
            onClick={() =>
              void reload(name).then((result) => {
                setOutcome(result);
                own.reload();
              })
            }
          >
            {reloading === name ? 'Reloading…' : 'Reload'}
          </button>
          <Link to={pathOf('remote-schemas', name, 'modify')} className="button">
            Modify
          </Link>
          <Link to={pathOf('permissions', name)} className="button">
            Permissions
          </Link>
          <button type="button" className="danger" onClick={() => setRemoving(true)}>
            Remove
          </button>
        </>
      }
    >
      <OutcomeView outcome={outcome} onDismiss={() => setOutcome(undefined)} />
      <dl className="definition">
        <dt>State</dt>
        <dd>
          {problem ? (
            <span className="state state-bad">
              Inconsistent: <span className="reason">{problem.reason}</span>
            </span>
          ) : (
            <span className="state state-ok">Consistent</span>
          )}
          {dependentProblems.map((object) => (
            <div key={object.name} className="state state-bad">
              {object.name}: {object.reason}
            </div>
          ))}
        </dd>
        {remote.comment ? (
          <>
            <dt>Comment</dt>
            <dd>{remote.comment}</dd>
          </>
        ) : null}
        <dt>{definition.url_from_env !== undefined ? 'URL from environment variable' : 'URL'}</dt>
        <dd>
          <code>{remoteLocation(remote)}</code>
        </dd>
        <dt>Timeout</dt>
        <dd>{definition.timeout_seconds ?? 60} seconds</dd>
        <dt>Headers</dt>
        <dd>
          {(definition.headers ?? []).length === 0
            ? 'none'
            : (definition.headers ?? []).map((header) => (
                <div key={header.name}>
                  <code>{header.name}</code>: {header.value_from_env !== undefined ? <>from <code>{header.value_from_env}</code></> : <code>{header.value}</code>}
                </div>
              ))}
        </dd>
        <dt>Forwards client headers</dt>
        <dd>{definition.forward_client_headers ? 'yes' : 'no'}</dd>
        <dt>Customization</dt>
        <dd>
          {!customization ? (
            'none'
          ) : (
            <ul className="plain">
              {customization.root_fields_namespace ? (
                <li>
                  root fields under <code>{customization.root_fields_namespace}</code>
                </li>
              ) : null}
              {customization.type_names ? (
                <li>
                  type names: <NameRule rule={customization.type_names} />
                </li>
              ) : null}
              {(customization.field_names ?? []).map((rule) => (
                <li key={rule.parent_type}>
                  fields of <code>{rule.parent_type}</code>: <NameRule rule={rule} />
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>

      <h2>Schema</h2>
      <div className="tabs" role="group" aria-label="Which schema to show">
        <button type="button" aria-pressed={view === 'served'} onClick={() => setView('served')}>
          As served (customized)
        </button>
        <button type="button" aria-pressed={view === 'own'} onClick={() => setView('own')}>
          The remote's own
        </button>
      </div>
      {own.error ? <OutcomeView outcome={own.error} /> : null}
      {view === 'served' && live.error ? <OutcomeView outcome={live.error} /> : null}
      {view === 'served' && problem ? <p className="empty">The remote is inconsistent: it is not part of the schema until it answers again.</p> : null}
      {sdl !== undefined ? (
        <pre className="sdl" tabIndex={0} aria-label={view === 'served' ? 'The schema as served, in SDL' : "The remote's own schema, in SDL"} data-testid="sdl">
          {sdl}
        </pre>
      ) : own.loading ? (
        <p className="muted">Loading…</p>
      ) : null}
      <RemoveRemoteDialog
        name={removing ? name : undefined}
        onClose={(result) => {
          setRemoving(false);
          if (result?.ok) {
            flash(result);
            navigate('/remote-schemas');
          } else if (result) {
            setOutcome(result);
          }
        }}
      />
    </Page>
  );
}
