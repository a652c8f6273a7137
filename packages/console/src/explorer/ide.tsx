import { useState } from 'react';
// The editor's workers, built by Vite into files of the console (@graphiql/react's own setup for Vite).
import '@graphiql/react/setup-workers/vite';
import {
  ExecuteButton,
  GraphiQLProvider,
  PrettifyIcon,
  QueryEditor,
  ResponseEditor,
  Spinner,
  ToolbarButton,
  Tooltip,
  VariableEditor,
  useGraphiQLActions,
  useMonaco,
} from '@graphiql/react';
import { DOC_EXPLORER_PLUGIN, DocExplorer, DocExplorerStore } from '@graphiql/plugin-doc-explorer';
import type { Fetcher, Storage } from '@graphiql/toolkit';
import '@graphiql/react/style.css';
import '@graphiql/plugin-doc-explorer/style.css';

const DEFAULT_QUERY = `# Ctrl-Enter runs it as the role above.
{
  __typename
}
`;

function hasMonacoLoaded(state: { monaco?: unknown }): boolean {
  return Boolean(state.monaco);
}

function Panes() {
  const { prettifyEditors } = useGraphiQLActions();
  const hasMonaco = useMonaco(hasMonacoLoaded);
  const [docs, setDocs] = useState(false);
  return (
    <div className={`graphiql-container ide${docs ? ' ide-with-docs' : ''}`}>
      <section className="ide-operation graphiql-query-editor" aria-label="Operation">
        {hasMonaco ? <QueryEditor /> : <Spinner />}
        <div className="graphiql-toolbar" role="toolbar" aria-label="Editor commands">
          <ExecuteButton />
          <ToolbarButton onClick={() => void prettifyEditors()} label="Prettify the operation (Shift-Ctrl-P)">
            <PrettifyIcon className="graphiql-toolbar-icon" aria-hidden="true" />
          </ToolbarButton>
          <button type="button" className="ide-docs-toggle" aria-expanded={docs} aria-controls="ide-docs" onClick={() => setDocs(!docs)}>
            Docs
          </button>
        </div>
      </section>
      <section className="ide-variables" aria-label="Variables">
        <h2 className="ide-pane-title">Variables</h2>
        {hasMonaco ? <VariableEditor /> : null}
      </section>
      <section className="ide-response graphiql-response" aria-label="Result">
        {hasMonaco ? <ResponseEditor /> : null}
      </section>
      {docs ? (
        <section className="ide-docs graphiql-plugin" id="ide-docs" aria-label="Documentation of the schema">
          <DocExplorer />
        </section>
      ) : null}
    </div>
  );
}

/**
 * The browser's `localStorage` for GraphiQL, except that the tabs it keeps lose their responses:
 * the operation and its variables stay from one visit to the next, what the server answered a
 * role (its data) does not. Headers are not kept either (`shouldPersistHeaders`).
 */
const withoutResponses: Storage = {
  getItem: (key) => localStorage.getItem(key),
  setItem: (key, value) => {
    if (!key.endsWith('tabState')) {
      localStorage.setItem(key, value);
      return;
    }
    try {
      const state = JSON.parse(value) as { tabs?: Array<Record<string, unknown>> };
      for (const tab of state.tabs ?? []) tab['response'] = null;
      localStorage.setItem(key, JSON.stringify(state));
    } catch {
      localStorage.setItem(key, value);
    }
  },
  removeItem: (key) => localStorage.removeItem(key),
  clear: () => localStorage.clear(),
  get length() {
    return localStorage.length;
  },
};

/**
 * GraphiQL's editors (operation, variables, result) and its documentation explorer, from
 * `@graphiql/react`, laid out for the console: one operation at a time (GraphiQL's own tab bar
 * nests buttons inside tabs, which screen readers cannot use), the headers set by the console above.
 */
export function Ide({ fetcher }: { fetcher: Fetcher }) {
  return (
    <GraphiQLProvider
      fetcher={fetcher}
      storage={withoutResponses}
      defaultQuery={DEFAULT_QUERY}
      shouldPersistHeaders={false}
      plugins={[DOC_EXPLORER_PLUGIN]}
      referencePlugin={DOC_EXPLORER_PLUGIN}
      defaultTheme="light"
    >
      <DocExplorerStore>
        <Tooltip.Provider>
          <Panes />
        </Tooltip.Provider>
      </DocExplorerStore>
    </GraphiQLProvider>
  );
}
