import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { acceptsGzip } from './static-files.js';

const gzip = promisify(gzipCallback);

/** The title of the browser page at `GET /v1/graphql`. */
export const GRAPHIQL_TITLE = 'svc-graphql';

/** Where the page's scripts, style sheet, editor workers and icon are served (`/v1/graphiql/<hash>/<file>`). */
export const GRAPHIQL_ASSETS_PATH = '/v1/graphiql/';

/**
 * The page's Content-Security-Policy: scripts, styles, workers and requests of this server only
 * (`connect-src 'self'` covers the WebSocket of subscriptions to the same host), no frames around it
 * (the page may hold an admin secret), no forms, no `<base>`. Styles may be inline: the editor sets
 * style attributes and adds `<style>` elements as it goes.
 */
export const GRAPHIQL_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DEFAULT_QUERY = `# svc-graphql: write an operation here and run it with Ctrl-Enter.
#
# When the server has an admin secret, give it in the Headers tab below:
#   {"x-svc-admin-secret": "…"}
# or a token: {"Authorization": "Bearer …"}
# Headers stay in this tab only: they are not saved in the browser.
{
  __typename
}
`;

/** The page's GraphiQL settings. */
export function graphiqlOptions(): GraphiQLOptions {
  return {
    title: GRAPHIQL_TITLE,
    subscriptionsProtocol: 'WS',
    isHeadersEditorEnabled: true,
    // The headers tab is open when the page loads: that is where the admin secret or a token goes.
    defaultEditorToolsVisibility: 'headers',
    // The headers editor's contents (an admin secret, a token) are never written to the browser's
    // storage, where anyone with access to the browser profile could read them: the user types them
    // again after a reload. GraphiQL then also hides its "persist headers" setting and keeps tabs
    // without their headers; this page has no history panel (which would keep headers).
    // The query, variables and tabs are kept in localStorage.
    shouldPersistHeaders: false,
    defaultQuery: DEFAULT_QUERY,
  };
}

type Bytes = Uint8Array<ArrayBuffer>;

interface Asset {
  readonly type: string;
  readonly body: Bytes;
  gzipped?: Promise<Bytes>;
}

interface Bundle {
  /** `/v1/graphiql/<hash>/`, the hash of every file's contents: a new version gets new URLs. */
  readonly base: string;
  readonly assets: ReadonlyMap<string, Asset>;
}

const JS = 'text/javascript; charset=utf-8';

// The files of `@graphql-yoga/render-graphiql` are 9 MB of strings: loaded on the first page view,
// once per process, not when the server starts.
let bundle: Promise<Bundle> | undefined;

function loadBundle(): Promise<Bundle> {
  bundle ??= import('@graphql-yoga/render-graphiql/graphiql').then(buildBundle, (error: unknown) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

function buildBundle(files: typeof import('@graphql-yoga/render-graphiql/graphiql')): Bundle {
  const content: Array<[name: string, type: string, body: Bytes]> = [
    ['graphiql.js', JS, Buffer.from(files.js)],
    ['graphiql.css', 'text/css; charset=utf-8', Buffer.from(files.css)],
    ['editor.worker.js', JS, Buffer.from(files.editorWorkerService)],
    ['json.worker.js', JS, Buffer.from(files.jsonWorker)],
    ['graphql.worker.js', JS, Buffer.from(files.graphqlWorker)],
    ['favicon.ico', 'image/x-icon', dataUriBytes(files.favicon)],
    ['start.js', JS, Buffer.from(START_SCRIPT)],
  ];
  const hash = createHash('sha256');
  for (const [name, , body] of content) hash.update(name).update(body);
  const base = `${GRAPHIQL_ASSETS_PATH}${hash.digest('hex').slice(0, 16)}/`;
  const assets = new Map<string, Asset>(content.map(([name, type, body]) => [name, { type, body }]));
  assets.set('setup.js', { type: JS, body: Buffer.from(setupScript(base)) });
  return { base, assets };
}

function dataUriBytes(uri: string): Bytes {
  const comma = uri.indexOf(',');
  return Buffer.from(uri.slice(comma + 1), uri.slice(0, comma).endsWith(';base64') ? 'base64' : 'utf8');
}

/** Monaco's editor workers come from this server (the package's own page makes them from inline text). */
function setupScript(base: string): string {
  const workers = {
    editorWorkerService: `${base}editor.worker.js`,
    json: `${base}json.worker.js`,
    graphql: `${base}graphql.worker.js`,
  };
  return `self.MonacoEnvironment = {
  globalAPI: false,
  getWorkerUrl: function (moduleId, label) {
    return ${JSON.stringify(workers)}[label];
  },
};
`;
}

/** Renders GraphiQL with the page's settings (inert JSON in the page: no inline script). */
const START_SCRIPT = `YogaGraphiQL.renderYogaGraphiQL(
  document.getElementById('root'),
  JSON.parse(document.getElementById('graphiql-options').textContent),
);
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The GraphiQL page (Yoga's `renderGraphiQL`): a small HTML page whose scripts, style sheet, editor
 * workers and icon all come from this server, out of the installed `@graphql-yoga/render-graphiql`,
 * so the page works without internet access. Options travel as inert JSON (no inline script).
 */
export async function renderGraphiqlPage(options: GraphiQLOptions): Promise<string> {
  const { base } = await loadBundle();
  // `<` escaped: the JSON cannot close its script element.
  const json = JSON.stringify(options).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? GRAPHIQL_TITLE)}</title>
    <link rel="icon" href="${base}favicon.ico" />
    <link rel="stylesheet" href="${base}graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script type="application/json" id="graphiql-options">${json}</script>
    <script src="${base}setup.js"></script>
    <script src="${base}graphiql.js"></script>
    <script src="${base}start.js"></script>
  </body>
</html>
`;
}

const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * Serves the page's files under `/v1/graphiql/<hash>/` before any authentication (they are the
 * public GraphiQL package, the same for everyone), gzipped when the browser accepts it, and gives
 * the page at `graphqlPath` its Content-Security-Policy.
 */
export function useGraphiqlAssets(graphqlPath: string): Plugin {
  return {
    async onRequest({ request, url, fetchAPI, endResponse }) {
      if (!url.pathname.startsWith(GRAPHIQL_ASSETS_PATH)) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
        return;
      }
      const { base, assets } = await loadBundle();
      const asset = url.pathname.startsWith(base) ? assets.get(url.pathname.slice(base.length)) : undefined;
      if (!asset) {
        endResponse(new fetchAPI.Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
        return;
      }
      const headers: Record<string, string> = {
        'content-type': asset.type,
        'cache-control': ASSET_CACHE_CONTROL,
        'x-content-type-options': 'nosniff',
        vary: 'Accept-Encoding',
      };
      let body = asset.body;
      if (asset.body.byteLength > 1024 && acceptsGzip(request.headers.get('accept-encoding'))) {
        asset.gzipped ??= gzip(asset.body).then((zipped) => new Uint8Array(zipped));
        body = await asset.gzipped;
        headers['content-encoding'] = 'gzip';
      }
      headers['content-length'] = String(body.byteLength);
      endResponse(new fetchAPI.Response(request.method === 'HEAD' ? null : body, { status: 200, headers }));
    },
    onResponse({ request, response }) {
      const type = response.headers.get('content-type') ?? '';
      if (request.method !== 'GET' || !type.startsWith('text/html')) return;
      const path = new URL(request.url).pathname;
      if (path !== graphqlPath && path !== `${graphqlPath}/`) return;
      response.headers.set('content-type', 'text/html; charset=utf-8');
      response.headers.set('content-security-policy', GRAPHIQL_CONTENT_SECURITY_POLICY);
      response.headers.set('x-content-type-options', 'nosniff');
      response.headers.set('referrer-policy', 'no-referrer');
      // The page names the files of the installed GraphiQL: after an upgrade it must be asked for again.
      response.headers.set('cache-control', 'no-cache');
    },
  };
}
