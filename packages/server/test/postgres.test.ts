import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';

const databaseUrl = process.env['TEST_DATABASE_URL'];
if (databaseUrl === undefined) console.warn('server PostgreSQL tests skipped: TEST_DATABASE_URL is not set');

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe.skipIf(databaseUrl === undefined)('two servers sharing one PostgreSQL database', () => {
  // A database of its own, so that runs never see each other's metadata.
  const database = `svc_graphql_server_${randomBytes(6).toString('hex')}`;
  let ownUrl: string;
  let remote: RunningRemote;
  const servers: SvcGraphqlServer[] = [];

  async function admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    await admin(`CREATE DATABASE ${database}`);
    const url = new URL(databaseUrl as string);
    url.pathname = `/${database}`;
    ownUrl = url.toString();
    remote = await startSampleRemote({ port: 0 });
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await remote?.close();
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it('serves a remote schema added through one instance from the other', async () => {
    const [first, second] = await Promise.all([
      createServer({ port: 0, databaseUrl: ownUrl, logger: quiet }),
      createServer({ port: 0, databaseUrl: ownUrl, logger: quiet }),
    ]);
    servers.push(first, second);

    const added = await fetch(`${first.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'add_remote_schema', args: { name: 'shared', definition: { url: remote.url } } }),
    });
    expect(await added.json()).toEqual({ message: 'success' });

    // The second instance hears of the change through LISTEN/NOTIFY; poll until it has swapped.
    let body: unknown;
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await fetch(`${second.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ remoteName }' }),
      });
      body = await response.json();
      if ((body as { data?: unknown }).data) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(body).toEqual({ data: { remoteName: 'sample' } });

    const exported = await fetch(`${second.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'export_metadata', version: 2, args: {} }),
    });
    expect(await exported.json()).toEqual({
      resource_version: 1,
      metadata: {
        version: 3,
        remote_schemas: [{ name: 'shared', definition: { url: remote.url, forward_client_headers: false, timeout_seconds: 60 } }],
      },
    });
  });
});
