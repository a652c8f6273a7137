import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { editorText, elsewhere, hasChromium, launchBrowser, typeInEditor, type Browser } from './utils/browser.js';

/**
 * The console in a real browser, through the real server and a real sample remote, as a newcomer
 * uses it: sign in with the admin secret, add the remote with the form and query it in GraphiQL,
 * give a role fields with check boxes and a session preset and query as that role, see the server's
 * refusals, remove with cascade, export and import the metadata; and an accessibility check (axe)
 * of every page. One browser and one server for the whole file, the steps in order.
 */

const ADMIN_SECRET = 'console-browser-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-console-browser-'));
if (!hasChromium) console.warn('console-browser.test.ts: /usr/bin/chromium is missing, the browser tests are skipped (apt-get install -y chromium)');

let remote: RunningRemote;
let server: SvcGraphqlServer;
let browser: Browser;
let page: Page;
let exported: string | undefined;

beforeAll(async () => {
  if (!hasChromium) return;
  remote = await startSampleRemote();
  server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    enableRemoteSchemaPermissions: true,
    enableConsole: true,
    logger: quiet,
  });
  browser = await launchBrowser();
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

const consoleUrl = (path = '') => `${server.url}/console${path}`;
const outcome = () => page.getByTestId('outcome');
const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: false });

/** Runs `text` in the API page's GraphiQL and answers what its result pane shows. */
async function runInGraphiql(text: string, expected: string): Promise<void> {
  const editor = page.locator('.graphiql-query-editor .monaco-editor');
  await editor.waitFor();
  await editor.click();
  await typeInEditor(page, text, '.graphiql-query-editor .view-lines');
  expect(await editorText(page, '.graphiql-query-editor .view-lines')).toBe(text);
  await page.locator('.graphiql-execute-button').click();
  await expect.poll(async () => editorText(page, '.graphiql-response'), { timeout: 30_000 }).toContain(expected);
}

describe.skipIf(!hasChromium)('the console in Chromium', () => {
  it('asks for the admin secret, shows the server\'s refusal of a wrong one, and keeps the right one in the tab only', async () => {
    await page.goto(consoleUrl());
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Admin secret');
    // Asked before anything else: the server's own answer to a request without the secret.
    await expect.poll(() => outcome().innerText()).toContain('x-svc-admin-secret required, but not found');
    await page.getByLabel('Admin secret (X-Svc-Admin-Secret)').fill('not the secret');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => outcome().innerText()).toContain('The server refused this secret: invalid x-svc-admin-secret (code access-denied');
    await page.getByLabel('Admin secret (X-Svc-Admin-Secret)').fill(ADMIN_SECRET);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Remote schemas');
    const storage = await page.evaluate(() => ({ session: JSON.stringify({ ...sessionStorage }), local: JSON.stringify({ ...localStorage }) }));
    expect(storage.session).toContain(ADMIN_SECRET);
    expect(storage.local).not.toContain(ADMIN_SECRET);
  }, 60_000);

  it('adds the sample remote through the form and queries it in GraphiQL', async () => {
    await page.getByRole('link', { name: 'Add a remote schema' }).click();
    await page.getByLabel('Name', { exact: true }).fill('sample');
    await page.getByLabel('Comment').fill('the walkthrough remote');
    await page.getByLabel('GraphQL URL').fill(remote.url);
    await page.getByLabel('Timeout (seconds)').fill('10');
    await page.getByRole('button', { name: 'Add a header' }).click();
    await page.getByLabel('Header 1 name').fill('X-From-Console');
    await page.getByLabel('Header 1 value').fill('yes');
    await page.getByRole('button', { name: 'Add remote schema' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('sample');
    await expect.poll(() => outcome().innerText()).toContain('Added the remote schema "sample".');
    await expect.poll(() => page.getByTestId('sdl').innerText()).toContain('hello(name: String): String!');
    expect(await page.locator('.definition').innerText()).toContain('X-From-Console: yes');

    await nav('API').click();
    await expect.poll(() => page.getByTestId('session-role').innerText(), { timeout: 30_000 }).toBe('admin');
    await runInGraphiql('{ hello remoteName }', '"hello": "Hello, world!"');
    expect(await editorText(page, '.graphiql-response')).toContain('"remoteName": "sample"');
  }, 90_000);

  it('shows the server\'s message for a refused change, next to the field it names', async () => {
    await page.goto(consoleUrl('/remote-schemas/add'));
    await page.getByLabel('Name', { exact: true }).fill('sample');
    await page.getByLabel('GraphQL URL').fill(remote.url);
    await page.getByRole('button', { name: 'Add remote schema' }).click();
    await expect.poll(() => outcome().innerText()).toContain('remote schema with name "sample" already exists (code already-exists');

    await page.getByLabel('Name', { exact: true }).fill('other');
    await page.getByLabel('GraphQL URL').fill('ftp://127.0.0.1/graphql');
    await page.getByRole('button', { name: 'Add remote schema' }).click();
    await expect.poll(() => outcome().innerText()).toContain('code invalid-params, path $.args.definition.url');
    // The message also stands under the URL field, which is marked invalid for screen readers.
    const url = page.getByLabel('GraphQL URL');
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    const described = (await url.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`[id="${described.split(' ').at(-1)}"]`).innerText()).toBe(await page.locator('.server-message').innerText());
  }, 60_000);

  it('gives a role two fields by check boxes and a session preset; that role sees only them, with the preset applied', async () => {
    await nav('Permissions').click();
    await page.getByRole('main').getByRole('link', { name: 'sample' }).click();
    await page.getByLabel('Give a new role a permission').fill('user');
    await page.getByRole('button', { name: 'Edit its permission' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('user on sample');

    await page.getByRole('checkbox', { name: /^Query\.hello:/ }).check();
    await page.getByRole('checkbox', { name: /^Query\.user:/ }).check();
    // `user` returns a User: the console says it needs a field of its own before the server would.
    await expect.poll(() => page.locator('[data-node="User"] .client-problem').innerText()).toBe('select at least one field');
    await page.getByRole('button', { name: 'Expand User' }).click();
    await page.getByRole('checkbox', { name: /^User\.id:/ }).check();
    await page.getByRole('checkbox', { name: /^User\.name:/ }).check();
    // A literal preset of the wrong type is marked on the value itself, which points at the problem.
    await page.getByLabel('Preset of Query.hello(name)').selectOption('literal');
    const literal = page.getByLabel('Preset value of Query.hello(name)');
    await literal.fill('5');
    await expect.poll(() => literal.getAttribute('aria-invalid')).toBe('true');
    const problem = await literal.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${String(problem)}"]`).innerText()).toContain('not a value of String');
    await page.getByLabel('Preset of Query.hello(name)').selectOption('none');
    await page.getByLabel('Preset of Query.user(id)').selectOption('session');
    await page.getByLabel('Session variable of Query.user(id)').fill('x-svc-user-id');
    expect(await page.locator('.client-problem').count()).toBe(0);
    await page.getByRole('button', { name: 'Save permission' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Saved the permission of "user" on "sample".');
    await page.getByRole('button', { name: 'SDL', exact: true }).click();
    const sdl = await page.getByLabel(/The permission as SDL/).inputValue();
    expect(sdl).toBe('type Query {\n  hello(name: String): String!\n  user(id: ID! @preset(value: "x-svc-user-id")): User\n}\n\ntype User {\n  id: ID!\n  name: String!\n}\n');

    // The grid says how much of each type the role has; a cell opens the tree at that type.
    await page.getByRole('link', { name: 'All roles' }).click();
    await page.getByRole('link', { name: 'user: partial access to User' }).click();
    await page.getByRole('button', { name: 'Collapse User' }).waitFor();
    expect(await page.getByRole('checkbox', { name: /^User\.name:/ }).isChecked()).toBe(true);

    await nav('API').click();
    // What is typed is asked of the server once typing stops, not once per key.
    let introspections = 0;
    const count = (request: { method(): string; url(): string; postData(): string | null }) => {
      if (request.method() === 'POST' && request.url().endsWith('/v1/graphql') && request.postData()?.includes('__schema')) introspections++;
    };
    page.on('request', count);
    await page.getByLabel('Role (X-Svc-Role; empty: admin)').pressSequentially('user', { delay: 20 });
    await expect.poll(() => introspections).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    page.off('request', count);
    expect(introspections).toBeLessThanOrEqual(2);
    await page.getByRole('button', { name: 'Add a header' }).click();
    await page.getByLabel('Header 1 name').fill('x-svc-user-id');
    await page.getByLabel('Header 1 value').fill('2');
    await expect.poll(() => page.getByTestId('session').innerText(), { timeout: 30_000 }).toMatch(/Role\s+user\s+x-svc-user-id\s+2\s+x-svc-role\s+user|Role\s+user[\s\S]*x-svc-user-id\s+2/);
    // The preset fills `id` from the session: the role cannot pass it, and gets user 2.
    await runInGraphiql('{ user { id name } hello }', '"user": { "id": "2", "name": "Grace" }');
    await runInGraphiql('{ remoteName }', 'Cannot query field \\"remoteName\\" on type \\"Query\\".');
    await runInGraphiql('{ user(id: "1") { id } }', 'Unknown argument \\"id\\" on field \\"Query.user\\".');
  }, 120_000);

  it('shows the server\'s validation message for a refused permission and changes nothing', async () => {
    await page.goto(consoleUrl('/permissions/sample/user'));
    await page.getByRole('button', { name: 'SDL', exact: true }).click();
    await page.getByLabel(/The permission as SDL/).fill('type Query {\n  hello: String!\n  nope: Int\n}\n');
    await page.getByRole('button', { name: 'Save permission' }).click();
    await expect.poll(() => outcome().innerText()).toContain('validation for the given role-based schema failed because field "nope" does not exist in the "Object": "Query" (code validation-failed');
    expect(await page.getByTestId('server-problem').innerText()).toBe('Server: field "nope" does not exist in the "Object": "Query"');
    // In the tree, the reason stands at the field it names (here: a field the remote does not have, listed above the tree).
    await page.getByRole('button', { name: 'Tree', exact: true }).click();
    await expect.poll(() => page.locator('.node-problems.general').innerText()).toContain('field "nope" does not exist in the type "Query"');
    // The stored permission is the one saved before (a replacement is all or nothing).
    await page.goto(consoleUrl('/permissions/sample/user'));
    await page.getByRole('button', { name: 'SDL', exact: true }).click();
    expect(await page.getByLabel(/The permission as SDL/).inputValue()).toContain('@preset(value: "x-svc-user-id")');
  }, 60_000);

  it('keeps the remote schemas list within the window when a name and a comment are one very long word', async () => {
    const response = await fetch(`${server.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
      body: JSON.stringify({ type: 'add_remote_schema', args: { name: 'n'.repeat(255), definition: { url: remote.url, customization: { root_fields_namespace: 'wide' } }, comment: 'c'.repeat(20_000) } }),
    });
    expect(response.status).toBe(200);
    try {
      // Loaded afresh: the console reads the metadata it shows when it starts.
      await page.goto(consoleUrl('/remote-schemas'));
      await page.getByRole('button', { name: 'Remove sample' }).waitFor();
      await page.getByText('c'.repeat(100), { exact: false }).waitFor();
      const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, window: window.innerWidth }));
      expect(width.page).toBeLessThanOrEqual(width.window);
      // Every row's actions stay on screen, each button on one line (the other columns keep
      // their words whole: only the name and comment break).
      const box = await page.getByRole('button', { name: 'Remove sample' }).boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(width.window);
      expect(box!.height).toBeLessThan(60);
      const state = await page.getByRole('row', { name: /^sample/ }).getByText('Consistent').boundingBox();
      expect(state!.height).toBeLessThan(40);
    } finally {
      const removed = await fetch(`${server.url}/v1/metadata`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
        body: JSON.stringify({ type: 'remove_remote_schema', args: { name: 'n'.repeat(255) } }),
      });
      expect(removed.status).toBe(200);
      await page.goto(consoleUrl('/remote-schemas'));
    }
  }, 60_000);

  it('exports the metadata, removes the remote with its dependents only when cascade is confirmed', async () => {
    await nav('Metadata').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the metadata' }).click()]);
    const path = join(dir, 'exported.json');
    await download.saveAs(path);
    exported = readFileSync(path, 'utf8');
    const document = JSON.parse(exported) as { remote_schemas: Array<{ name: string; permissions?: Array<{ role: string }> }> };
    expect(document.remote_schemas.map((r) => [r.name, r.permissions?.map((p) => p.role)])).toEqual([['sample', ['user']]]);

    await nav('Remote schemas').click();
    await page.getByRole('button', { name: 'Remove sample' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByRole('list', { name: 'Dependent objects' }).innerText()).toBe('remote_schema_permission user on remote_schema sample');
    const confirm = dialog.getByRole('button', { name: 'Remove it and its dependents' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Also remove the dependent objects listed (cascade)').check();
    await confirm.click();
    await expect.poll(() => outcome().innerText()).toContain('Removed the remote schema "sample" and its dependents.');
    await expect.poll(() => page.locator('.empty').innerText()).toContain('No remote schema yet.');
  }, 60_000);

  it('imports a file: refused while inconsistent, shown when allowed, then reloaded and dropped', async () => {
    const document = JSON.parse(exported as string) as { remote_schemas: unknown[] };
    document.remote_schemas.push({ name: 'gone', definition: { url: 'http://127.0.0.1:9/graphql', timeout_seconds: 2 } });
    const file = join(dir, 'import.json');
    writeFileSync(file, JSON.stringify(document));

    await nav('Metadata').click();
    await page.getByLabel('Metadata file (JSON, as exported)').setInputFiles(file);
    await page.getByRole('button', { name: 'Replace the metadata…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Replace' }).click();
    await expect.poll(() => outcome().innerText()).toContain('cannot continue due to inconsistent metadata');
    expect(await outcome().innerText()).toContain('code unexpected');

    await page.getByLabel(/Allow inconsistent metadata/).check();
    await page.getByRole('button', { name: 'Replace the metadata…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Replace' }).click();
    await expect.poll(() => outcome().innerText()).toContain('1 inconsistent object is left out of the schema.');
    expect(await outcome().innerText()).toContain('remote_schema gone: Inconsistent object: HTTP exception occurred while sending the request to "http://127.0.0.1:9/graphql"');
    await expect.poll(() => page.getByRole('table').innerText()).toContain('remote_schema gone');

    await page.getByRole('button', { name: 'Reload the metadata' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Reloaded the metadata: 1 inconsistent object is left out of the schema.');
    await page.getByRole('button', { name: 'Drop the inconsistent objects…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Drop them' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Dropped every inconsistent object');
    await expect.poll(() => page.locator('.state-ok').innerText()).toContain('None: everything in the metadata is served.');
    // The imported remote and its permission are back.
    await nav('Remote schemas').click();
    await expect.poll(() => page.getByRole('table').innerText()).toContain('Consistent');
  }, 60_000);

  it('has no serious or critical accessibility violation on any page (axe), and loads nothing from another host', async () => {
    const paths = [
      '/remote-schemas',
      '/remote-schemas/add',
      '/remote-schemas/sample',
      '/remote-schemas/sample/modify',
      '/permissions',
      '/permissions/sample',
      '/permissions/sample/user',
      '/relationships',
      '/security',
      '/metadata',
      '/no/such/page',
      '/api',
    ];
    const violations: string[] = [];
    const check = async (what: string) => {
      const results = await new AxeBuilder({ page }).analyze();
      for (const violation of results.violations) {
        if (violation.impact !== 'serious' && violation.impact !== 'critical') continue;
        violations.push(`${what}: ${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
      }
    };
    for (const path of paths) {
      await page.goto(consoleUrl(path));
      await page.getByRole('heading', { level: 1 }).waitFor();
      if (path === '/api') await page.locator('.graphiql-query-editor .monaco-editor').waitFor();
      if (path === '/permissions/sample/user') await page.getByRole('checkbox', { name: /^Query\.hello:/ }).waitFor();
      await check(path);
    }
    // The sign-in page, after the secret is forgotten.
    await page.goto(consoleUrl('/remote-schemas'));
    await page.getByRole('button', { name: 'Forget the admin secret' }).click();
    await page.getByLabel('Admin secret (X-Svc-Admin-Secret)').waitFor();
    await check('sign-in');
    expect(violations).toEqual([]);
    expect(browser.problems).toEqual([]);
    expect(elsewhere(browser.requested, server.url)).toEqual([]);
  }, 240_000);
});
