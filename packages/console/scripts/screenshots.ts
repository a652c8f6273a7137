/**
 * Takes the screenshots of docs/console.md: starts the server with the console and two sample
 * remotes, sets up metadata through the metadata API (a plain remote, a customized one, one that
 * is down, a role's permission with a session preset), then opens each page in headless Chromium
 * and writes `docs/images/console-<page>.png`.
 *
 * It also prints what the page weighs: the bytes of the console's own files as the browser received
 * them (gzipped), on the first load and when the API page (GraphiQL's editor) is opened.
 *
 *   pnpm screenshots        (needs /usr/bin/chromium and the console's build)
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { startCommerceRemote, startSampleRemote } from '../../../examples/sample-remotes/src/index.js';
import { createServer } from '../../server/src/index.js';
import { launchBrowser, typeInEditor } from '../../server/test/utils/browser.js';

const OUT = fileURLToPath(new URL('../../../docs/images/', import.meta.url));
const ADMIN_SECRET = 'screenshots-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const PERMISSION = `type Query {
  hello(name: String): String!
  user(id: ID! @preset(value: "x-svc-user-id")): User
  users(role: Role): [User!]!
}

enum Role {
  EDITOR
  VIEWER
}

type User {
  id: ID!
  name: String!
  role: Role!
}
`;

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-screenshots-'));
  const [sample, accounts, orders, users] = await Promise.all([
    startSampleRemote({ name: 'sample' }),
    startSampleRemote({ name: 'accounts' }),
    startCommerceRemote('orders'),
    startCommerceRemote('users'),
  ]);
  const server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, 'metadata.json')}`,
    adminSecret: ADMIN_SECRET,
    enableRemoteSchemaPermissions: true,
    enableConsole: true,
    logger: quiet,
  });
  const browser = await launchBrowser({ viewport: { width: 1280, height: 860 } });
  try {
    const metadata = async (type: string, args: unknown) => {
      const response = await fetch(`${server.url}/v1/metadata`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
        body: JSON.stringify({ type, args }),
      });
      if (!response.ok) throw new Error(`${type}: ${response.status} ${await response.text()}`);
    };
    await metadata('replace_metadata', {
      allow_inconsistent_metadata: true,
      metadata: {
        version: 3,
        remote_schemas: [
          {
            name: 'sample',
            comment: 'the walkthrough remote',
            definition: { url: sample.url, timeout_seconds: 10 },
            permissions: [{ role: 'user', definition: { schema: PERMISSION } }],
          },
          {
            name: 'accounts',
            definition: {
              url: accounts.url,
              headers: [{ name: 'X-Client', value: 'console' }],
              forward_client_headers: true,
              customization: { root_fields_namespace: 'accounts', type_names: { prefix: 'Acc_', mapping: { User: 'Account' } } },
            },
          },
          { name: 'billing', definition: { url: 'http://127.0.0.1:9/graphql', timeout_seconds: 2 } },
          {
            name: 'orders',
            definition: { url: orders.url },
            remote_relationships: [
              {
                type_name: 'Order',
                relationships: [
                  { name: 'user', definition: { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { user: { arguments: { id: '$userId' } } } } } },
                  {
                    name: 'buyer',
                    definition: {
                      to_remote_schema: {
                        remote_schema: 'users',
                        lhs_fields: ['userId'],
                        remote_field: { usersByIds: { arguments: { ids: '$userId' } } },
                        batch: { argument: 'ids', match_field: 'id' },
                      },
                    },
                  },
                ],
              },
            ],
          },
          // Its User type and user field would clash with the sample remote's: customized.
          { name: 'users', definition: { url: users.url, customization: { root_fields_namespace: 'people', type_names: { prefix: 'People_' } } } },
        ],
        query_collections: [{ name: 'storefront', comment: 'what the shop front sends', definition: { queries: [{ name: 'order', query: 'query order($id: ID!) { order(id: $id) { id total user { name } } }' }] } }],
        allowlist: [{ collection: 'storefront', scope: { global: false, roles: ['user'] } }],
        graphql_schema_introspection: { disabled_for_roles: ['user'] },
        api_limits: { disabled: false, depth_limit: { global: 8, per_role: { user: 5 } }, node_limit: { global: 500 }, rate_limit: { per_role: { user: { max_reqs_per_min: 600, unique_params: 'IP' } } } },
      },
    });

    const { page } = browser;
    // Bytes received (encoded) for the console's own files, by the page that asked for them.
    let received = { files: 0, bytes: 0 };
    page.on('requestfinished', (request) => {
      if (!new URL(request.url()).pathname.startsWith('/console')) return;
      void request.sizes().then((sizes) => {
        received.files++;
        received.bytes += sizes.responseBodySize;
      });
    });
    const weigh = (what: string) => {
      process.stdout.write(`${what}: ${received.files} files, ${(received.bytes / 1024).toFixed(1)} KiB received (gzip)\n`);
      received = { files: 0, bytes: 0 };
    };
    const shot = async (name: string, target: Page = page, fullPage = false) => {
      await target.waitForTimeout(300);
      await target.screenshot({ path: join(OUT, `console-${name}.png`), fullPage });
      process.stdout.write(`docs/images/console-${name}.png\n`);
    };
    const open = async (path: string) => {
      await page.goto(`${server.url}/console${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
    };

    await open('');
    await page.getByLabel('Admin secret (X-Svc-Admin-Secret)').fill('a wrong secret');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('outcome').waitFor();
    await page.waitForLoadState('networkidle');
    weigh('first load (/console, the sign-in page)');
    await shot('sign-in');
    await page.getByLabel('Admin secret (X-Svc-Admin-Secret)').fill(ADMIN_SECRET);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Remote schemas' }).waitFor();
    await shot('remote-schemas');

    await open('/remote-schemas/accounts/modify');
    await page.getByLabel('Root fields namespace').waitFor();
    await shot('remote-schema-form');

    await open('/remote-schemas/accounts');
    await page.getByTestId('sdl').waitFor();
    await shot('remote-schema');

    await open('/permissions/sample');
    await page.getByRole('table').waitFor();
    await shot('permissions-grid');

    await open('/permissions/sample/user');
    await page.getByRole('button', { name: 'Expand User' }).click();
    await page.getByRole('checkbox', { name: /^Query\.users:/ }).uncheck();
    await page.getByRole('button', { name: 'Save permission' }).click();
    await page.getByTestId('outcome').waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('permissions-tree');

    await page.waitForLoadState('networkidle');
    received = { files: 0, bytes: 0 };
    await open('/api');
    await page.getByLabel('Role (X-Svc-Role; empty: admin)').fill('user');
    await page.getByRole('button', { name: 'Add a header' }).click();
    await page.getByLabel('Header 1 name').fill('x-svc-user-id');
    await page.getByLabel('Header 1 value').fill('2');
    await page.getByTestId('session-role').getByText('user').waitFor();
    const editor = page.locator('.graphiql-query-editor .monaco-editor');
    await editor.click();
    await typeInEditor(page, '{ user { id name } hello }', '.graphiql-query-editor .view-lines');
    await page.locator('.graphiql-execute-button').click();
    await page.locator('.graphiql-response').getByText('Grace').waitFor();
    await page.waitForLoadState('networkidle');
    weigh('the API page (GraphiQL\'s editor and its workers), added to the first load');
    await shot('api');

    await open('/metadata');
    await page.getByRole('table').waitFor();
    await shot('metadata');

    await open('/relationships');
    await page.getByRole('table').waitFor();
    await shot('relationships');

    await open('/relationships/orders/Order/buyer');
    await page.getByLabel('Match results by field').waitFor();
    await shot('relationship-form');

    await open('/security');
    await page.getByTestId('allowlist-state').getByText('allow list').waitFor();
    await shot('security', page, true);
  } finally {
    await browser.close();
    await server.close();
    await Promise.all([sample.close(), accounts.close(), orders.close(), users.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
