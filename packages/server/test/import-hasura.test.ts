import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { stringify as toYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { startSampleRemote } from '@svc-graphql/sample-remotes';
import {
  convertHasuraMetadata,
  ImportError,
  importHasuraMetadata,
  renamePresetSessionVariables,
  runImportHasuraMetadata,
} from '../src/cli/import-hasura/command.js';
import { cleanEnv, BIN, ROOT } from './utils/server-process.js';

/**
 * `svc-graphql import-hasura-metadata PATH` as a user runs it: the real CLI on Hasura exports
 * written for this test (fixtures/hasura: the JSON of export_metadata and a Hasura CLI project),
 * exact stdout, stderr and exit status; and the printed document given to a running server.
 */

const FIXTURES = join(ROOT, 'packages/server/test/fixtures/hasura');
const EXPORT_JSON = join(FIXTURES, 'export_metadata.json');
const PROJECT = join(FIXTURES, 'project');
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collect(child: ReturnType<typeof spawn>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

/** `svc-graphql ARGS…` (the server package's bin), from `cwd`. */
function cli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return collect(spawn(process.execPath, ['--import', 'tsx', BIN, ...args], { cwd: options.cwd ?? ROOT, env: cleanEnv(options.env) }));
}

/**
 * The command in this process (what the CLI runs after reading its arguments): each spawned CLI
 * pays for loading TypeScript, so the cases beyond the main ones run here.
 */
async function command(path: string, cwd = ROOT): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runImportHasuraMetadata(path, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    cwd,
  });
  return { code, stdout, stderr };
}

/** `pnpm -s svc-graphql ARGS…`, the root script of a checkout. */
function pnpmScript(args: string[], cwd: string): Promise<Run> {
  return collect(spawn('pnpm', ['-s', 'svc-graphql', ...args], { cwd, env: cleanEnv() }));
}

const lines = (text: string) => text.split('\n').filter(Boolean);

/** The document the JSON fixture must become: remote schemas only, x-hasura- renamed, the rest as written. */
const EXPECTED_FROM_JSON = {
  version: 3,
  remote_schemas: [
    {
      name: 'accounts',
      definition: {
        url_from_env: 'ACCOUNTS_REMOTE_URL',
        timeout_seconds: 20,
        forward_client_headers: true,
        headers: [
          { name: 'x-svc-Client-Name', value: 'storefront' },
          { name: 'Authorization', value_from_env: 'ACCOUNTS_REMOTE_TOKEN' },
        ],
        customization: {
          root_fields_namespace: 'accounts',
          type_names: { prefix: 'Accounts_', mapping: { User: 'Account' } },
        },
      },
      comment: 'Customer accounts service',
      permissions: [
        {
          role: 'user',
          definition: {
            schema:
              'schema {\n  query: Query\n}\n\n# What a signed-in customer may read from the accounts service.\ntype User {\n  id: ID!\n  name: String!\n}\n\n' +
              'type Query {\n  "Greets the caller by the name in their token."\n  hello(name: String @preset(value: "x-svc-User-Name")): String!\n' +
              '  user(id: ID! @preset(value: "x-svc-user-id")): User\n  echoHeaders: String\n}\n',
          },
        },
        {
          role: 'guest',
          // A static preset is a literal: it keeps its text.
          definition: { schema: 'type Query {\n  hello(name: String @preset(value: "x-hasura-guest", static: true)): String!\n}\n' },
          comment: 'anonymous visitors: a fixed greeting',
        },
      ],
      // The relationship to another remote schema is kept; the one to a database is left out.
      remote_relationships: [
        {
          type_name: 'User',
          relationships: [
            {
              name: 'twin',
              definition: { to_remote_schema: { remote_schema: 'catalog', lhs_fields: ['id'], remote_field: { user: { arguments: { id: '$id' } } } } },
            },
          ],
        },
      ],
    },
    {
      name: 'catalog',
      definition: {
        url_from_env: 'CATALOG_REMOTE_URL',
        timeout_seconds: 60,
        forward_client_headers: false,
        customization: {
          type_names: { prefix: 'Catalog_' },
          field_names: [
            { parent_type: 'Query', prefix: 'catalog_' },
            { parent_type: 'Mutation', prefix: 'catalog_' },
            { parent_type: 'Subscription', prefix: 'catalog_' },
          ],
        },
      },
      permissions: [
        {
          role: 'user',
          definition: {
            schema:
              'type Message {\n  id: ID!\n  text: String!\n  author: String\n}\n\ninput MessageInput {\n  text: String!\n' +
              '  author: String @preset(value: "x-svc-user-name")\n}\n\ntype Query {\n  messages: [Message!]!\n}\n\n' +
              'type Mutation {\n  addMessage(input: MessageInput!): Message!\n}\n',
          },
        },
      ],
    },
  ],
  query_collections: [
    {
      name: 'allowed-queries',
      definition: {
        queries: [
          { name: 'MyOrders', query: 'query MyOrders { orders { id total } }' },
          { name: 'Greeting', query: 'query Greeting { accounts { hello } }' },
        ],
      },
    },
  ],
  allowlist: [{ collection: 'allowed-queries', scope: { global: true } }],
  // Session variables of rate limits renamed, the rest as written.
  api_limits: {
    disabled: false,
    depth_limit: { global: 10, per_role: {} },
    rate_limit: {
      global: { max_reqs_per_min: 600, unique_params: 'IP' },
      per_role: { user: { max_reqs_per_min: 60, unique_params: ['x-svc-user-id', 'x-svc-Org-Id'] } },
    },
  },
};

const JSON_STDERR =
  'reads environment: ACCOUNTS_REMOTE_TOKEN, ACCOUNTS_REMOTE_URL, CATALOG_REMOTE_URL\n' +
  'skipped: 1 source, 3 tables, 1 function, 1 event trigger, 2 remote relationships, 2 actions, 3 custom types, ' +
  '1 cron trigger, 1 REST endpoint, 1 inherited role\n';

const EXPECTED_FROM_PROJECT = {
  version: 3,
  remote_schemas: [
    {
      name: 'payments',
      definition: {
        url: 'https://payments.internal.example.com/graphql',
        timeout_seconds: 10,
        headers: [
          { name: 'x-svc-SERVICE', value: 'storefront' },
          { name: 'X-Api-Key', value_from_env: 'PAYMENTS_API_KEY' },
        ],
        customization: {
          type_names: { prefix: 'Pay_', suffix: '_v1', mapping: { Money: 'Amount' } },
          field_names: [{ parent_type: 'Query', prefix: 'pay_' }],
        },
      },
      comment: 'Payments service',
      permissions: [
        {
          role: 'customer',
          definition: {
            schema:
              'schema {\n  query: Query\n}\n\ntype Money {\n  amount: Int!\n  currency: String!\n}\n\ntype Payment {\n  id: ID!\n  total: Money!\n}\n\n' +
              "type Query {\n  # only the caller's own payments\n" +
              '  payments(customerId: ID! @preset(value: "x-svc-user-id"), limit: Int): [Payment!]!\n  payment(id: ID!): Payment\n}',
          },
          comment: 'customers see their own payments',
        },
      ],
    },
    {
      name: 'accounts',
      definition: {
        url_from_env: 'ACCOUNTS_REMOTE_URL',
        forward_client_headers: true,
        timeout_seconds: 20,
        headers: [{ name: 'Authorization', value_from_env: 'ACCOUNTS_REMOTE_TOKEN' }],
        customization: { root_fields_namespace: 'accounts' },
      },
      remote_relationships: [
        {
          type_name: 'User',
          relationships: [
            {
              name: 'greeting',
              definition: { to_remote_schema: { remote_schema: 'payments', lhs_fields: ['id'], remote_field: { payment: { arguments: { id: '$id' } } } } },
            },
          ],
        },
      ],
    },
  ],
  query_collections: [{ name: 'allowed-queries', definition: { queries: [{ name: 'MyOrders', query: 'query MyOrders {\n  orders {\n    id\n  }\n}' }] } }],
  allowlist: [{ collection: 'allowed-queries' }],
  // api_limits.yaml holds `{}`: nothing is set, so it is left out.
  graphql_schema_introspection: { disabled_for_roles: ['guest'] },
};

const PROJECT_STDERR =
  'reads environment: ACCOUNTS_REMOTE_TOKEN, ACCOUNTS_REMOTE_URL, PAYMENTS_API_KEY\n' +
  'skipped: 2 sources, 2 tables, 1 function, 2 event triggers, 2 remote relationships, 1 action, 2 custom types\n';

const printed = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

describe('svc-graphql import-hasura-metadata: the JSON of export_metadata', () => {
  it('prints the remote schemas and their permissions, names the environment it reads and what it left out', async () => {
    // export_metadata with "version": 2 answers {resource_version, metadata}: the same document.
    const wrapped = join(dir, 'export-v2.json');
    writeFileSync(wrapped, JSON.stringify({ resource_version: 17, metadata: JSON.parse(readFileSync(EXPORT_JSON, 'utf8')) }));
    // `hasura metadata export --output yaml` prints the same metadata as one YAML document.
    const yamlExport = join(dir, 'metadata.yaml');
    writeFileSync(yamlExport, toYaml(JSON.parse(readFileSync(EXPORT_JSON, 'utf8'))));
    const [plain, fromWrapped, fromYaml, fromScript] = await Promise.all([
      cli(['import-hasura-metadata', EXPORT_JSON]),
      command(wrapped),
      command(yamlExport),
      // The root script of a checkout, with a path relative to the checkout.
      pnpmScript(['import-hasura-metadata', 'packages/server/test/fixtures/hasura/export_metadata.json'], ROOT),
    ]);
    for (const run of [plain, fromWrapped, fromYaml, fromScript]) {
      expect(run).toEqual({ code: 0, stdout: printed(EXPECTED_FROM_JSON), stderr: JSON_STDERR });
    }
  }, 120_000);
});

describe('svc-graphql import-hasura-metadata: a Hasura CLI metadata directory', () => {
  it('reads the YAML files with their !include files and prints the same kind of document', async () => {
    const [metadataDir, projectDir] = await Promise.all([
      cli(['import-hasura-metadata', 'metadata'], { cwd: PROJECT }),
      // Pointed at the project (config.yaml beside metadata/), it reads metadata/.
      command(PROJECT),
    ]);
    for (const run of [metadataDir, projectDir]) {
      expect(run).toEqual({ code: 0, stdout: printed(EXPECTED_FROM_PROJECT), stderr: PROJECT_STDERR });
    }
  }, 120_000);

  it('includes a file that is not YAML (a .graphql document) as its text, as the Hasura CLI does', async () => {
    const sdl = 'type Query {\n  hello(name: String @preset(value: "x-hasura-user-name")): String!\n}\n';
    const query = 'query Hello {\n  hello\n}\n';
    const root = project('graphql-includes', {
      'remote_schemas.yaml':
        '- name: accounts\n  definition:\n    url: https://accounts.example.com/graphql\n' +
        "  permissions:\n    - role: user\n      definition:\n        schema: '!include permissions/user.graphql'\n",
      'permissions/user.graphql': sdl,
      'query_collections.yaml':
        '- name: allowed-queries\n  definition:\n    queries:\n      - name: Hello\n        query: !include queries/hello.graphql\n',
      'queries/hello.graphql': query,
    });
    const { document } = await importHasuraMetadata(root);
    expect(document.remote_schemas).toEqual([
      {
        name: 'accounts',
        definition: { url: 'https://accounts.example.com/graphql' },
        permissions: [{ role: 'user', definition: { schema: sdl.replace('x-hasura-', 'x-svc-') } }],
      },
    ]);
    expect((document as unknown as Record<string, unknown>)['query_collections']).toEqual([
      { name: 'allowed-queries', definition: { queries: [{ name: 'Hello', query }] } },
    ]);
  });

  it('prints an empty document for a project without remote schemas, and says nothing it has not to', async () => {
    const empty = join(dir, 'empty-project');
    mkdirSync(empty);
    writeFileSync(join(empty, 'version.yaml'), 'version: 3\n');
    writeFileSync(join(empty, 'remote_schemas.yaml'), '[]\n');
    writeFileSync(join(empty, 'api_limits.yaml'), '{}\n');
    expect(await command(empty)).toEqual({ code: 0, stdout: printed({ version: 3, remote_schemas: [] }), stderr: '' });
  });
});

/** A metadata directory in the temporary directory: `files` maps paths inside it to their text. */
function project(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [file, text] of Object.entries({ 'version.yaml': 'version: 3\n', ...files })) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

describe('svc-graphql import-hasura-metadata: what it refuses', () => {
  it('exits 1 with one line on stderr when PATH cannot be read or is not Hasura metadata', async () => {
    const notMetadata = join(dir, 'package.json');
    writeFileSync(notMetadata, JSON.stringify({ name: 'shop', private: true, scripts: {} }));
    const badJson = join(dir, 'truncated.json');
    writeFileSync(badJson, '{"version": 3, "remote_schemas": [');
    let jsonMessage = '';
    try {
      JSON.parse('{"version": 3, "remote_schemas": [');
    } catch (error) {
      jsonMessage = (error as Error).message;
    }
    const noVersion = join(dir, 'not-a-project');
    mkdirSync(noVersion);
    writeFileSync(join(noVersion, 'remote_schemas.yaml'), '[]\n');
    const badYaml = project('bad-yaml', { 'remote_schemas.yaml': '- name: accounts\n  name: catalog\n' });
    const escaping = project('escaping', {
      'databases/databases.yaml': "- name: default\n  tables: '!include default/tables/tables.yaml'\n",
      'databases/default/tables/tables.yaml': "- '!include ../../../../outside.yaml'\n",
    });
    writeFileSync(join(dir, 'outside.yaml'), 'table: {name: secrets, schema: public}\n');
    const cycle = project('cycle', {
      'databases/databases.yaml': '- name: default\n  tables: !include default/tables.yaml\n',
      'databases/default/tables.yaml': "- '!include more.yaml'\n",
      'databases/default/more.yaml': "- '!include tables.yaml'\n",
    });
    const wrongVersion = project('wrong-version', { 'version.yaml': 'version: 4\n' });
    const notRemoteSchema = join(dir, 'no-definition.json');
    writeFileSync(notRemoteSchema, JSON.stringify({ version: 3, sources: [], remote_schemas: [{ name: 'accounts' }] }));

    const runs = await Promise.all([
      cli(['import-hasura-metadata', join(dir, 'missing.json')]),
      cli(['import-hasura-metadata', notMetadata]),
      command(badJson),
      command(noVersion),
      cli(['import-hasura-metadata', badYaml]),
      cli(['import-hasura-metadata', escaping]),
      command(cycle),
      command(wrongVersion),
      command(notRemoteSchema),
      command(join(PROJECT, 'metadata/remote_schemas.yaml')),
      cli(['import-hasura-metadata']),
    ]);
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(lines(run.stderr)).toHaveLength(1);
    }
    expect(runs.map((run) => run.stderr)).toEqual([
      `Fatal error: ${join(dir, 'missing.json')}: no such file or directory\n`,
      `Fatal error: ${notMetadata}: not Hasura metadata: no "version", "tables" or "remote_schemas"\n`,
      `Fatal error: ${badJson}: not Hasura metadata: invalid JSON (${jsonMessage})\n`,
      `Fatal error: ${noVersion}: not Hasura metadata: no version.yaml (expected the JSON of export_metadata or a Hasura CLI metadata directory)\n`,
      `Fatal error: ${join(badYaml, 'remote_schemas.yaml')}: invalid YAML at line 2, column 3: Map keys must be unique\n`,
      `Fatal error: ${join(escaping, 'databases/default/tables/tables.yaml')}: !include ../../../../outside.yaml points outside the metadata directory\n`,
      `Fatal error: ${join(cycle, 'databases/default/more.yaml')}: !include cycle: databases/default/tables.yaml -> databases/default/more.yaml -> databases/default/tables.yaml\n`,
      `Fatal error: ${join(wrongVersion, 'version.yaml')}: not Hasura metadata: expected "version: 3" (or 2)\n`,
      `Fatal error: ${notRemoteSchema}: not Hasura metadata: remote_schemas[0] is not a remote schema (expected "name" and "definition")\n`,
      `Fatal error: ${join(PROJECT, 'metadata/remote_schemas.yaml')}: not Hasura metadata: expected an object holding the whole metadata\n`,
      'Fatal error: import-hasura-metadata: expects one PATH: svc-graphql import-hasura-metadata PATH\n',
    ]);
  }, 120_000);

  it('does not follow a symbolic link out of the metadata directory', async () => {
    const linked = project('linked', {});
    writeFileSync(join(dir, 'elsewhere.yaml'), '- name: stolen\n  definition:\n    url: https://elsewhere.example.com/graphql\n');
    symlinkSync(join(dir, 'elsewhere.yaml'), join(linked, 'remote_schemas.yaml'));
    await expect(importHasuraMetadata(linked)).rejects.toThrow(
      new ImportError(join(linked, 'remote_schemas.yaml'), 'points outside the metadata directory'),
    );
  });

  it('bounds the depth of !include, the size of a file and the number of files', async () => {
    const chain: Record<string, string> = { 'databases/databases.yaml': "- name: default\n  tables: '!include t1.yaml'\n" };
    for (let i = 1; i <= 5; i++) chain[`databases/t${String(i)}.yaml`] = `- '!include t${String(i + 1)}.yaml'\n`;
    chain['databases/t6.yaml'] = '- table: {name: deep, schema: public}\n';
    const deep = project('deep', chain);
    // databases.yaml includes t1 (1 deep) … t5 includes t6 (6 deep).
    expect((await importHasuraMetadata(deep, { limits: { maxIncludeDepth: 6 } })).skipped).toEqual([
      { kind: 'source', count: 1 },
      { kind: 'table', count: 1 },
    ]);
    await expect(importHasuraMetadata(deep, { limits: { maxIncludeDepth: 5 } })).rejects.toThrow(
      new ImportError(join(deep, 'databases/t5.yaml'), '!include nested more than 5 deep'),
    );
    await expect(importHasuraMetadata(deep, { limits: { maxFiles: 4 } })).rejects.toThrow(
      new ImportError(join(deep, 'databases/t3.yaml'), 'more than 4 files to read in the metadata directory'),
    );
    await expect(importHasuraMetadata(deep, { limits: { maxFileBytes: 40 } })).rejects.toThrow(
      new ImportError(join(deep, 'databases/databases.yaml'), 'larger than 40 bytes'),
    );
    await expect(importHasuraMetadata(EXPORT_JSON, { limits: { maxTotalBytes: 1000 } })).rejects.toThrow(
      new ImportError(EXPORT_JSON, 'larger than 1000 bytes'),
    );
    await expect(importHasuraMetadata(PROJECT, { limits: { maxTotalBytes: 1000 } })).rejects.toThrow(/bytes to read in the metadata directory$/);
  });

  it('refuses YAML aliases that expand without bound', async () => {
    const laughs = project('laughs', {
      'remote_schemas.yaml':
        'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n' +
        'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n',
    });
    await expect(importHasuraMetadata(laughs)).rejects.toThrow(/^invalid YAML: .*alias/i);
  });

  it('names the file of a document nested too deeply to print, in one line', async () => {
    // Relationship arguments are kept as written: nested 20,000 lists deep, they convert, but
    // cannot be written out again.
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const file = join(dir, 'deep-arguments.json');
    writeFileSync(
      file,
      `{"version":3,"remote_schemas":[{"name":"a","definition":{"url":"http://x/g"},"remote_relationships":[{"type_name":"T","relationships":[{"name":"r",` +
        `"definition":{"to_remote_schema":{"remote_schema":"a","lhs_fields":["id"],"remote_field":{"f":{"arguments":{"x":${deep}}}}}}}]}]}]}`,
    );
    expect(await command(file)).toEqual({ code: 1, stdout: '', stderr: `Fatal error: ${file}: nested too deeply\n` });
  });
});

describe('convertHasuraMetadata', () => {
  it('reads metadata version 2 (Hasura 1.x): tables and functions at the top, nulls for "not set"', () => {
    const v2 = {
      version: 2,
      tables: [{ table: { schema: 'public', name: 'author' }, event_triggers: [] }, { table: { schema: 'public', name: 'article' } }],
      functions: [{ function: { schema: 'public', name: 'search_articles' } }],
      remote_schemas: [
        {
          name: 'countries',
          comment: null,
          definition: { url: 'https://countries.example.com/graphql', url_from_env: null, headers: [], forward_client_headers: false, timeout_seconds: 60 },
        },
      ],
      query_collections: [],
      allowlist: [],
    };
    expect(convertHasuraMetadata(v2, 'metadata.json')).toEqual({
      document: {
        version: 3,
        remote_schemas: [
          {
            name: 'countries',
            definition: { url: 'https://countries.example.com/graphql', headers: [], forward_client_headers: false, timeout_seconds: 60 },
          },
        ],
      },
      environment: [],
      skipped: [
        { kind: 'tables', count: 2 },
        { kind: 'function', count: 1 },
      ],
    });
  });

  it('keeps relationships between remote schemas as written, x-hasura- literals too, and counts those to a database', () => {
    const toUsers = {
      to_remote_schema: {
        remote_schema: 'users',
        lhs_fields: ['userId'],
        remote_field: { tenant: { arguments: { name: 'X-Hasura-Tenant', note: null }, field: { user: { arguments: { id: '$userId', tags: ['x-hasura-a', 'b'] } } } } },
      },
    };
    const converted = convertHasuraMetadata(
      {
        version: 3,
        remote_schemas: [
          {
            name: 'orders',
            definition: { url: 'https://orders.example.com/graphql' },
            remote_relationships: [
              {
                type_name: 'Order',
                relationships: [
                  { name: 'user', definition: toUsers },
                  { name: 'rows', definition: { to_source: { source: 'default', table: 'rows', relationship_type: 'array', field_mapping: { id: 'order_id' } } } },
                ],
              },
              { type_name: 'Line', relationships: [{ name: 'rows', definition: { to_source: { source: 'default', table: 'rows' } } }] },
            ],
          },
        ],
      },
      'metadata.json',
    );
    expect(converted.document.remote_schemas[0]).toEqual({
      name: 'orders',
      definition: { url: 'https://orders.example.com/graphql' },
      remote_relationships: [
        {
          type_name: 'Order',
          relationships: [
            {
              name: 'user',
              // The arguments are literals (or `$field`), not session variables: kept as written.
              definition: toUsers,
            },
          ],
        },
      ],
    });
    expect(converted.skipped).toEqual([{ kind: 'remote relationships', count: 2 }]);
  });
});

describe('convertHasuraMetadata: the lock-down parts', () => {
  it('keeps them as written, renames the session variables of rate limits, and refuses a part of the wrong shape', () => {
    const metadata = {
      version: 3,
      api_limits: { rate_limit: { global: { max_reqs_per_min: 5, unique_params: ['X-Hasura-User-Id', 'x-svc-kept'] } }, node_limit: null },
      graphql_schema_introspection: { disabled_for_roles: [] },
      allowlist: [],
    };
    expect(convertHasuraMetadata(metadata, 'm.json').document).toEqual({
      version: 3,
      remote_schemas: [],
      api_limits: { rate_limit: { global: { max_reqs_per_min: 5, unique_params: ['x-svc-User-Id', 'x-svc-kept'] } } },
    });
    expect(() => convertHasuraMetadata({ version: 3, query_collections: {} }, 'm.json')).toThrow(
      new ImportError('m.json', 'not Hasura metadata: "query_collections" is not a list'),
    );
    expect(() => convertHasuraMetadata({ version: 3, api_limits: [] }, 'm.json')).toThrow(
      new ImportError('m.json', 'not Hasura metadata: "api_limits" is not an object'),
    );
  });
});

describe('renamePresetSessionVariables', () => {
  it('renames only the session variables a @preset names, keeping the text around them', () => {
    const sdl = [
      '"Mentions x-hasura-user-id in a description: kept."',
      'type Query {',
      '  a(id: ID @preset(value: """X-HASURA-USER-ID""")): String # x-hasura-comment kept',
      '  b(id: ID @preset(value: "\\u0078-hasura-user-id")): String',
      '  c(f: F @preset(value: {ids: ["x-hasura-a", "literal"], n: 1})): String',
      '  d(id: ID @preset(static: true, value: "x-hasura-literal")): String',
      '  e(id: ID = "x-hasura-default"): String',
      '}',
      'input F { ids: [String] n: Int }',
    ].join('\n');
    expect(renamePresetSessionVariables(sdl)).toBe(
      [
        '"Mentions x-hasura-user-id in a description: kept."',
        'type Query {',
        '  a(id: ID @preset(value: """x-svc-USER-ID""")): String # x-hasura-comment kept',
        '  b(id: ID @preset(value: "x-svc-user-id")): String',
        '  c(f: F @preset(value: {ids: ["x-svc-a", "literal"], n: 1})): String',
        '  d(id: ID @preset(static: true, value: "x-hasura-literal")): String',
        '  e(id: ID = "x-hasura-default"): String',
        '}',
        'input F { ids: [String] n: Int }',
      ].join('\n'),
    );
    // Not GraphQL: left for the server to refuse, unchanged.
    expect(renamePresetSessionVariables('type Query { a(id: ID @preset(value: "x-hasura-id")): String')).toBe(
      'type Query { a(id: ID @preset(value: "x-hasura-id")): String',
    );
  });
});

describe('svc-graphql import-hasura-metadata: the printed document on a running server', () => {
  const KEY = 'an import round trip secret of 32+ characters';
  const ADMIN_SECRET = 'import-test-admin-secret';

  function token(claims: Record<string, string>): Promise<string> {
    return new SignJWT({
      'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'], ...claims },
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(KEY));
  }

  it('is accepted by replace_metadata, serves both remotes and applies the presets from a token', async () => {
    const accounts = await startSampleRemote({ name: 'accounts' });
    const catalog = await startSampleRemote({ name: 'catalog' });
    const imported = await cli(['import-hasura-metadata', EXPORT_JSON]);
    expect(imported.code).toBe(0);

    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        BIN,
        'serve',
        '--server-port',
        '0',
        '--database-url',
        `file:${join(dir, 'round-trip.json')}`,
        '--enable-remote-schema-permissions',
        '--admin-secret',
        ADMIN_SECRET,
        '--jwt-secret',
        JSON.stringify({ type: 'HS256', key: KEY }),
        '--unauthorized-role',
        'guest',
      ],
      {
        cwd: ROOT,
        // The variables the import named on stderr.
        env: cleanEnv({
          ACCOUNTS_REMOTE_URL: accounts.url,
          ACCOUNTS_REMOTE_TOKEN: 'Bearer accounts-service-token',
          CATALOG_REMOTE_URL: catalog.url,
        }),
      },
    );
    const exited = collect(child);
    try {
      const url = await new Promise<string>((done, fail) => {
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /^svc-graphql listening on (http:\/\/\S+)$/m.exec(stdout);
          if (match) done(match[1] as string);
        });
        child.on('exit', (code) => fail(new Error(`the server exited with ${String(code)}`)));
      });
      const metadata = async (body: unknown) => {
        const response = await fetch(`${url}/v1/metadata`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: await response.json() };
      };
      const graphql = async (query: string, headers: Record<string, string> = {}) => {
        const response = await fetch(`${url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query }),
        });
        return { status: response.status, body: (await response.json()) as any };
      };

      expect(await metadata({ type: 'replace_metadata', args: JSON.parse(imported.stdout) })).toEqual({
        status: 200,
        body: { message: 'success' },
      });
      // An allow-list entry of the default scope exports as {collection}.
      expect(await metadata({ type: 'export_metadata', args: {} })).toEqual({
        status: 200,
        body: { ...EXPECTED_FROM_JSON, allowlist: [{ collection: 'allowed-queries' }] },
      });

      // The relationship between the two remote schemas answers as it did in Hasura.
      const joined = await graphql('{ accounts { user(id: "1") { id twin { __typename id name } } } }', { 'x-svc-admin-secret': ADMIN_SECRET });
      expect(joined.body).toEqual({ data: { accounts: { user: { id: '1', twin: { __typename: 'Catalog_User', id: '1', name: 'Ada' } } } } });

      const user = { authorization: `Bearer ${await token({ 'x-svc-user-id': '2', 'x-svc-user-name': 'Grace' })}` };
      const read = await graphql('{ accounts { hello user { __typename id name } echoHeaders } }', user);
      expect(read.status).toBe(200);
      expect(read.body.data.accounts).toMatchObject({
        hello: 'Hello, Grace!',
        user: { __typename: 'Account', id: '2', name: 'Grace' },
      });
      // The configured headers (renamed, and one read from the environment) win over the client's.
      expect(JSON.parse(read.body.data.accounts.echoHeaders)).toMatchObject({
        authorization: 'Bearer accounts-service-token',
        'x-svc-client-name': 'storefront',
        'x-svc-role': 'user',
        'x-svc-user-id': '2',
      });

      const written = await graphql('mutation { catalog_addMessage(input: { text: "hi" }) { text author } }', user);
      expect(written).toEqual({ status: 200, body: { data: { catalog_addMessage: { text: 'hi', author: 'Grace' } } } });

      // The user's grant has no `users`; the guest's preset is a literal.
      const refused = await graphql('{ accounts { users { id } } }', user);
      expect(refused.body.errors?.[0]?.message).toMatch(/users/);
      expect(await graphql('{ accounts { hello } }')).toEqual({
        status: 200,
        body: { data: { accounts: { hello: 'Hello, x-hasura-guest!' } } },
      });
    } finally {
      child.kill('SIGTERM');
      await exited;
      await accounts.close();
      await catalog.close();
    }
  }, 120_000);
});
