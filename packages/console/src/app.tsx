import { lazy, Suspense, type ReactNode } from 'react';
import { errorText } from './components/answer.js';
import { Page } from './components/page.js';
import { MetadataPage } from './metadata/metadata-page.js';
import { SignInPage } from './pages/sign-in.js';
import { SecurityPage } from './security/page.js';
import { PermissionEditorPage, PermissionsGridPage, PermissionsIndexPage } from './permissions/pages.js';
import { RelationshipEditPage, RelationshipFormPage, RelationshipsPage } from './relationships/pages.js';
import { RemoteSchemaPage } from './remote-schemas/detail-page.js';
import { RemoteSchemaFormPage } from './remote-schemas/form-page.js';
import { RemoteSchemasPage } from './remote-schemas/list-page.js';
import { Link, pathParts, usePath } from './router.js';
import { useConsole } from './state.js';

// GraphiQL and its editor are most of the console's weight: loaded when the API page opens.
const ApiPage = lazy(() => import('./explorer/api-page.js'));

const NAVIGATION: ReadonlyArray<{ to: string; label: string; section: string }> = [
  { to: '/remote-schemas', label: 'Remote schemas', section: 'remote-schemas' },
  { to: '/permissions', label: 'Permissions', section: 'permissions' },
  { to: '/relationships', label: 'Relationships', section: 'relationships' },
  { to: '/api', label: 'API', section: 'api' },
  { to: '/security', label: 'Security', section: 'security' },
  { to: '/metadata', label: 'Metadata', section: 'metadata' },
];

function route(parts: readonly string[]): ReactNode {
  const [section, first, second, third] = parts;
  switch (section) {
    case undefined:
    case 'remote-schemas':
      if (first === undefined) return <RemoteSchemasPage />;
      if (first === 'add' && second === undefined) return <RemoteSchemaFormPage />;
      if (second === 'modify') return <RemoteSchemaFormPage key={first} name={first} />;
      if (second === undefined) return <RemoteSchemaPage key={first} name={first} />;
      break;
    case 'permissions':
      if (first === undefined) return <PermissionsIndexPage />;
      if (second === undefined) return <PermissionsGridPage key={first} remote={first} />;
      return <PermissionEditorPage key={`${first}/${second}`} remote={first} role={second} />;
    case 'relationships':
      if (first === undefined) return <RelationshipsPage />;
      if (first === 'add' && second === undefined) return <RelationshipFormPage />;
      if (first !== undefined && second !== undefined && third !== undefined) return <RelationshipEditPage remote={first} type={second} name={third} />;
      break;
    case 'security':
      if (first === undefined) return <SecurityPage />;
      break;
    case 'api':
      return (
        <Suspense fallback={<p className="muted">Loading GraphiQL…</p>}>
          <ApiPage />
        </Suspense>
      );
    case 'metadata':
      return <MetadataPage />;
    default:
      break;
  }
  return (
    <Page title="Not found">
      <p>
        The console has no such page. <Link to="/remote-schemas">Go to the remote schemas.</Link>
      </p>
    </Page>
  );
}

export function App() {
  const { auth, version, secret, signOut, inconsistent, loadError } = useConsole();
  const path = usePath();
  const parts = pathParts(path);
  const section = parts[0] ?? 'remote-schemas';
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to the page
      </a>
      <header className="topbar">
        <span className="brand">
          svc-graphql <span className="brand-sub">console</span>
        </span>
        {version ? <span className="version">v{version}</span> : null}
        <span className="spacer" />
        {auth === 'signed-in' && secret !== undefined ? (
          <button type="button" className="topbar-button" onClick={signOut}>
            Forget the admin secret
          </button>
        ) : null}
      </header>
      <div className="layout">
        <nav aria-label="Console" className="sidebar">
          <ul>
            {NAVIGATION.map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={section === item.section ? 'page' : undefined}>
                  {item.label}
                  {item.section === 'metadata' && inconsistent.length > 0 ? (
                    <span className="badge badge-problem" aria-label={`${inconsistent.length} inconsistent`}>
                      {inconsistent.length}
                    </span>
                  ) : null}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">
          {loadError ? (
            <p className="outcome outcome-error" role="alert">
              The metadata could not be read: {errorText(loadError)}
            </p>
          ) : null}
          {auth === 'checking' ? <p className="muted">Connecting to the server…</p> : auth === 'needs-secret' ? <SignInPage /> : route(parts)}
        </main>
      </div>
    </>
  );
}
