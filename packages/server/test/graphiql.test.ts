import { mkdtempSync, rmSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { CHROMIUM, editorText, elsewhere, hasChromium, launchBrowser, typeInEditor as typeText } from './utils/browser.js';

// The browser page at GET /v1/graphql: GraphiQL served from the installed packages (no CDN, so it
// works without internet access), headers set in the page and never kept in the browser's storage.

const ADMIN_SECRET = 'graphiql-test-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
if (!hasChromium) {
  console.warn(`graphiql.test.ts: ${CHROMIUM} is missing, the real-browser test is skipped (apt-get install -y chromium)`);
}

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-graphiql-'));
let server: SvcGraphqlServer;

beforeAll(async () => {
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    logger: quiet,
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function openPage(): Promise<Response> {
  return fetch(`${server.url}/v1/graphql`, { headers: { accept: 'text/html' } });
}

/** The `src` and `href` of the page's elements. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((match) => match[1] as string);
}

function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done({ headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', fail);
    }).on('error', fail);
  });
}

describe('GET /v1/graphql from a browser', () => {
  it('serves a titled page whose every file comes from this server, under a Content-Security-Policy', async () => {
    const response = await openPage();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    const html = await response.text();
    expect(html).toContain('<title>svc-graphql</title>');
    expect(html).not.toContain('Loading');
    // No inline script: every script is a file of this server, the settings are inert JSON.
    expect(html.match(/<script[^>]*>[^<]+<\/script>/g)).toEqual([expect.stringMatching(/^<script type="application\/json" id="graphiql-options">/)]);
    const urls = referencedUrls(html);
    expect(urls.length).toBe(5);
    for (const url of urls) expect(url).toMatch(/^\/v1\/graphiql\/[0-9a-f]{16}\/[a-z.]+$/);
    const options = JSON.parse(/id="graphiql-options">([^<]*)</.exec(html)?.[1] ?? '') as Record<string, unknown>;
    expect(options).toMatchObject({ title: 'svc-graphql', shouldPersistHeaders: false, isHeadersEditorEnabled: true });
    // The first page view reads the 9 MB GraphiQL package.
  }, 60_000);

  it('serves the page and its files without an admin secret, gzipped when asked, cacheable for good', async () => {
    const html = await (await openPage()).text();
    const urls = referencedUrls(html);
    const script = urls.find((url) => url.endsWith('/graphiql.js')) as string;
    const base = script.slice(0, -'graphiql.js'.length);
    const plain = await fetch(`${server.url}${script}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const text = await plain.text();
    expect(text).toContain('renderYogaGraphiQL');

    // fetch() would unzip it: node:http shows the bytes as sent.
    const zipped = await rawGet(`${server.url}${script}`, { 'accept-encoding': 'gzip, deflate' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const compressed = zipped.body;
    expect(compressed.byteLength).toBeLessThan(Buffer.byteLength(text));
    expect(gunzipSync(compressed).toString()).toBe(text);

    for (const [file, type] of [
      ['graphiql.css', 'text/css; charset=utf-8'],
      ['setup.js', 'text/javascript; charset=utf-8'],
      ['start.js', 'text/javascript; charset=utf-8'],
      ['editor.worker.js', 'text/javascript; charset=utf-8'],
      ['json.worker.js', 'text/javascript; charset=utf-8'],
      ['graphql.worker.js', 'text/javascript; charset=utf-8'],
      ['favicon.ico', 'image/x-icon'],
    ] as const) {
      const response = await fetch(`${server.url}${base}${file}`);
      expect({ file, status: response.status, type: response.headers.get('content-type') }).toEqual({ file, status: 200, type });
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    // Each file is gzipped on its first request.
  }, 60_000);

  it('answers 404 for a file it does not have (or of another version) and 405 for other methods', async () => {
    const html = await (await openPage()).text();
    const base = (referencedUrls(html)[0] as string).replace(/[^/]+$/, '');
    expect((await fetch(`${server.url}${base}nothing.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/v1/graphiql/0000000000000000/graphiql.js`)).status).toBe(404);
    const post = await fetch(`${server.url}${base}graphiql.js`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('keeps answering GraphQL at the same path: a GET query without text/html, a POST', async () => {
    const get = await fetch(`${server.url}/v1/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    });
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ data: { __typename: expect.any(String) } });
    const post = await fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(post.status).toBe(401);
  });
});

describe('GraphiQL in a real browser (Chromium)', () => {
  it.skipIf(!hasChromium)(
    'runs { __typename } with the admin secret set in the headers editor, without any other host, keeping no header',
    async () => {
      const expected = (await (
        await fetch(`${server.url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
          body: JSON.stringify({ query: '{ __typename }' }),
        })
      ).json()) as { data: { __typename: string } };

      const browser = await launchBrowser();
      try {
        const { page, requested, problems } = browser;
        page.setDefaultTimeout(60_000);
        const editors = (selector: string) => editorText(page, selector);
        const typeInEditor = (text: string, selector: string) => typeText(page, text, selector);

        await page.goto(`${server.url}/v1/graphql`);
        expect(await page.title()).toBe('svc-graphql');
        // The result as the page shows it (Monaco wraps long lines and writes spaces as U+00A0).
        const result = async () => (await page.locator('.graphiql-response').innerText()).replace(/\s+/g, ' ');
        // The schema is fetched at once, without a header: the server asks for the admin secret.
        await expect.poll(result, { timeout: 60_000 }).toContain('x-svc-admin-secret required, but not found');

        // The headers editor is open on load; Monaco editors take keyboard input.
        await page.locator('.graphiql-editor-tool .monaco-editor[data-uri$="headers.json"]').click();
        await typeInEditor(JSON.stringify({ 'x-svc-admin-secret': ADMIN_SECRET }), '.monaco-editor[data-uri$="headers.json"] .view-lines');
        await page.locator('.graphiql-query-editor .monaco-editor').click();
        await typeInEditor('{ __typename }', '.graphiql-query-editor .view-lines');
        expect(await editors('.graphiql-query-editor .view-lines')).toBe('{ __typename }');
        expect(await editors('.monaco-editor[data-uri$="headers.json"] .view-lines')).toBe(JSON.stringify({ 'x-svc-admin-secret': ADMIN_SECRET }));
        await page.locator('.graphiql-execute-button').click();

        await expect.poll(result, { timeout: 60_000 }).toContain(`{ "data": { "__typename": "${expected.data.__typename}" } }`);
        expect(await result()).not.toContain('errors');

        // The secret was sent from the page and is kept nowhere in the browser's storage (GraphiQL
        // keeps the operation and its variables).
        const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
        expect(stored).toContain('__typename');
        expect(stored).not.toContain(ADMIN_SECRET);

        expect(problems).toEqual([]);
        expect(requested.length).toBeGreaterThan(5);
        expect(elsewhere(requested, server.url)).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    // Starting Chromium and loading 9 MB of scripts on a busy machine.
    180_000,
  );
});
