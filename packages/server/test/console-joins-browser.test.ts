import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCommerceRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { editorText, elsewhere, hasChromium, launchBrowser, typeInEditor, type Browser } from './utils/browser.js';

/**
 * The console's Relationships and Security pages in a real browser, through the real server and two
 * real commerce remotes: a relationship made with the pickers (and one batched) answers the join in
 * GraphiQL; a collection, its allow-list entry and API limits made on the Security page are what
 * export_metadata shows; client-side checks and the server's refusals are shown; axe finds no serious
 * violation on either page. One browser and one server for the whole file, the steps in order.
 */

const ADMIN_SECRET = 'console-joins-browser-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-console-joins-'));

let orders: RunningRemote;
let users: RunningRemote;
let server: SvcGraphqlServer;
let browser: Browser;
let page: Page;

async function metadata(type: string, args: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify({ type, args }),
  });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  if (!hasChromium) return;
  [orders, users] = await Promise.all([startCommerceRemote('orders'), startCommerceRemote('users')]);
  server = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, enableConsole: true, logger: quiet });
  expect(await metadata('add_remote_schema', { name: 'orders', definition: { url: orders.url } })).toMatchObject({ status: 200 });
  expect(await metadata('add_remote_schema', { name: 'users', definition: { url: users.url } })).toMatchObject({ status: 200 });
  browser = await launchBrowser();
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await Promise.all([orders?.close(), users?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const consoleUrl = (path = '') => `${server.url}/console${path}`;
const outcome = () => page.getByTestId('outcome').first();
const heading = () => page.getByRole('heading', { level: 1 }).innerText();
const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: false });

/** Fills the relationship form: Order.userId of orders joined to users' user(id: $userId), named `user`. */
async function fillUserRelationship(): Promise<void> {
  await page.getByLabel('Name of the new field').fill('user');
  await page.getByLabel('Source remote schema').selectOption('orders');
  await page.getByLabel('Source type').selectOption('Order');
  await page.getByRole('checkbox', { name: 'userId' }).check();
  await page.getByLabel('Target remote schema').selectOption('users');
  await page.getByLabel('Query field').selectOption('user');
  await page.getByLabel('id: ID!').selectOption('field');
}

describe.skipIf(!hasChromium)('the Relationships and Security pages in Chromium', () => {
  it('signs in', async () => {
    await page.goto(consoleUrl('/relationships'));
    await page.getByLabel('Admin secret (X-Svc-Admin-Secret)').fill(ADMIN_SECRET);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(heading).toBe('Relationships');
    expect(await page.getByRole('main').innerText()).toContain('No relationship yet.');
  }, 60_000);

  it('creates a relationship with the pickers and answers the join in GraphiQL', async () => {
    await page.getByRole('link', { name: 'Add a relationship' }).click();
    await expect.poll(heading).toBe('Add a relationship');
    // Nothing chosen: the console names each missing part before asking the server.
    await page.getByRole('button', { name: 'Add the relationship' }).click();
    await expect.poll(() => page.locator('.field-error').allInnerTexts()).toContain('choose at least one join field');

    await fillUserRelationship();
    expect(await page.getByLabel('Join field for id: ID!').inputValue()).toBe('userId');
    await page.getByRole('button', { name: 'Add the relationship' }).click();
    await expect.poll(heading).toBe('Relationships');
    await expect.poll(() => outcome().innerText()).toContain('Added the relationship "user" on Order of "orders".');
    const row = await page.getByRole('main').getByRole('row', { name: /^user / }).innerText();
    expect(row).toContain('user(id: "$userId")');
    expect(row).toContain('Consistent');

    await nav('API').click();
    const editor = page.locator('.graphiql-query-editor .monaco-editor');
    await editor.waitFor({ timeout: 30_000 });
    await editor.click();
    const query = '{ order(id: "4") { id user { id name } } }';
    await typeInEditor(page, query, '.graphiql-query-editor .view-lines');
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(async () => editorText(page, '.graphiql-response'), { timeout: 30_000 }).toContain('"user": {');
    const answer = await editorText(page, '.graphiql-response');
    expect(answer).toContain('"name": "User 4"');
    // The browser keeps the operation for the next visit, never what the server answered.
    await expect.poll(() => page.evaluate(() => localStorage.getItem('graphiql:tabState') ?? '')).toContain('order(id: \\"4\\")');
    const kept = await page.evaluate(() => JSON.stringify({ ...localStorage }));
    expect(kept).not.toContain('User 4');
  }, 120_000);

  it('creates a batched relationship and shows the server\'s refusal next to what it names', async () => {
    await page.goto(consoleUrl('/relationships/add'));
    await fillUserRelationship();
    await page.getByRole('button', { name: 'Add the relationship' }).click();
    await expect.poll(() => outcome().innerText()).toContain('remote relationship with name "user" already exists on type "Order" in remote schema "orders" (code already-exists');
    await expect.poll(() => page.locator('.field-invalid .field-error').first().innerText()).toContain('The server: remote relationship with name "user" already exists');

    await page.getByLabel('Name of the new field').fill('buyer');
    await page.getByLabel('Query field').selectOption('usersByIds');
    await page.getByLabel('ids: [ID!]!').selectOption('field');
    await page.getByRole('checkbox', { name: /Call the last field once/ }).check();
    await page.getByLabel('List argument').selectOption('ids');
    await page.getByLabel('Match results by field').selectOption('id');
    await page.getByRole('button', { name: 'Add the relationship' }).click();
    await expect.poll(heading).toBe('Relationships');
    const exported = await metadata('export_metadata', {});
    const groups = exported.body.remote_schemas.find((remote: { name: string }) => remote.name === 'orders').remote_relationships;
    expect(groups[0].relationships.find((relationship: { name: string }) => relationship.name === 'buyer').definition).toEqual({
      to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { usersByIds: { arguments: { ids: '$userId' } } }, batch: { argument: 'ids', match_field: 'id' } },
    });

    // Modify keeps what was there, delete asks first.
    await page.getByRole('link', { name: 'Modify buyer on Order' }).click();
    await expect.poll(() => page.getByLabel('List argument').inputValue()).toBe('ids');
    await nav('Relationships').click();
    await page.getByRole('button', { name: 'Delete buyer on Order' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Deleted the relationship "buyer"');
  }, 90_000);

  it('makes a collection, its allow-list entry and API limits on the Security page, as export_metadata then shows', async () => {
    await nav('Security').click();
    await expect.poll(heading).toBe('Security');
    await expect.poll(() => page.getByTestId('allowlist-state').innerText()).toContain('does not enforce the allow list');
    await expect.poll(() => page.getByTestId('rate-limit-store').innerText()).toContain('counted by each instance alone');

    await page.getByLabel('Collection name').fill('bad name');
    await page.getByRole('button', { name: 'Create the collection' }).click();
    await page.getByRole('alert').filter({ hasText: 'Collection name: "bad name" is not a name' }).waitFor();
    await page.getByLabel('Collection name').fill('allowed');
    await page.getByRole('button', { name: 'Create the collection' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Created the collection "allowed".');

    const addQuery = page.getByRole('form', { name: 'Add a query to allowed' });
    await addQuery.getByLabel('Query name').fill('one_order');
    await addQuery.getByLabel('Query', { exact: true }).fill('{ order(id: "1") { id ');
    await addQuery.getByRole('button', { name: 'Add the query' }).click();
    await expect.poll(() => addQuery.getByRole('alert').innerText()).toContain('Query "one_order" is not a GraphQL document');
    await addQuery.getByLabel('Query', { exact: true }).fill('query one_order { order(id: "1") { id } }');
    await addQuery.getByRole('button', { name: 'Add the query' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Added the query "one_order" to "allowed".');
    await addQuery.getByLabel('Query name').fill('one_order');
    await addQuery.getByLabel('Query', { exact: true }).fill('{ orders { id } }');
    await addQuery.getByRole('button', { name: 'Add the query' }).click();
    await expect.poll(() => outcome().innerText()).toContain('code already-exists');

    const allow = page.getByRole('form', { name: 'Add a collection to the allow list' });
    await allow.getByLabel('Collection').selectOption('allowed');
    await allow.getByRole('radio', { name: 'these roles' }).check();
    await allow.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('alert').filter({ hasText: 'Roles: name at least one role, or choose every role' }).waitFor();
    await allow.getByLabel('Roles (comma separated)').fill('user, editor');
    await allow.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Added "allowed" to the allow list.');

    await page.getByLabel('Roles without introspection (comma separated)').fill('user');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => outcome().innerText()).toContain('Introspection is now off for user.');

    const limits = page.getByRole('form', { name: 'API limits' });
    await limits.getByLabel('Depth limit for every role').fill('6');
    await limits.getByLabel('Depth limit per role').fill('user=3');
    await limits.getByLabel('Nodes limit for every role').fill('many');
    await limits.getByLabel('Rate limit per role', { exact: true }).fill('user=100');
    await limits.getByLabel('Rate limit per role, counted per').fill('IP');
    await limits.getByRole('button', { name: 'Save the limits' }).click();
    await expect.poll(() => limits.getByRole('alert').innerText()).toContain('Nodes limit for every role: "many" is not a whole number');
    // The answer to the last action (introspection saved) is not left standing beside the refusal.
    expect(await page.getByTestId('outcome').count()).toBe(0);
    // The field says it is invalid and points at its problem; the others do not.
    const nodes = limits.getByLabel('Nodes limit for every role');
    expect(await nodes.getAttribute('aria-invalid')).toBe('true');
    const described = await nodes.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${String(described)}"]`).innerText()).toBe('Nodes limit for every role: "many" is not a whole number');
    expect(await limits.getByLabel('Depth limit for every role').getAttribute('aria-invalid')).toBeNull();
    // And the problems shown break no accessibility rule (a list inside the alert keeps its role).
    const shown = await new AxeBuilder({ page }).include('form[aria-label="API limits"]').analyze();
    expect(shown.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => violation.id)).toEqual([]);
    await limits.getByLabel('Nodes limit for every role').fill('200');
    await limits.getByRole('button', { name: 'Save the limits' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Saved the API limits.');

    const exported = (await metadata('export_metadata', {})).body;
    expect(exported.query_collections).toEqual([{ name: 'allowed', definition: { queries: [{ name: 'one_order', query: 'query one_order { order(id: "1") { id } }' }] } }]);
    expect(exported.allowlist).toEqual([{ collection: 'allowed', scope: { global: false, roles: ['user', 'editor'] } }]);
    expect(exported.graphql_schema_introspection).toEqual({ disabled_for_roles: ['user'] });
    expect(exported.api_limits).toEqual({
      disabled: false,
      depth_limit: { global: 6, per_role: { user: 3 } },
      node_limit: { global: 200 },
      rate_limit: { per_role: { user: { max_reqs_per_min: 100, unique_params: 'IP' } } },
    });

    // Dropping an allow-listed collection needs cascade, confirmed in the dialog.
    await page.getByRole('button', { name: 'Drop the collection' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByRole('button', { name: 'Drop it and its allow-list entry' }).isDisabled()).toBe(true);
    await dialog.getByLabel(/remove it from there too/).check();
    await dialog.getByRole('button', { name: 'Drop it and its allow-list entry' }).click();
    await expect.poll(() => outcome().innerText()).toContain('Dropped the collection "allowed".');
    const after = (await metadata('export_metadata', {})).body;
    expect(after.query_collections ?? []).toEqual([]);
    expect(after.allowlist ?? []).toEqual([]);
  }, 120_000);

  it('has no serious or critical accessibility violation on either page (axe), and loads nothing from another host', async () => {
    const violations: string[] = [];
    for (const path of ['/relationships', '/relationships/add', '/relationships/orders/Order/user', '/security']) {
      await page.goto(consoleUrl(path));
      await page.getByRole('heading', { level: 1 }).waitFor();
      if (path === '/relationships/orders/Order/user') await expect.poll(() => page.getByLabel('Query field').inputValue()).toBe('user');
      const results = await new AxeBuilder({ page }).analyze();
      for (const violation of results.violations) {
        if (violation.impact === 'serious' || violation.impact === 'critical') violations.push(`${path}: ${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join(', ')}`);
      }
    }
    expect(violations).toEqual([]);
    expect(browser.problems).toEqual([]);
    expect(elsewhere(browser.requested, server.url)).toEqual([]);
  }, 90_000);
});
