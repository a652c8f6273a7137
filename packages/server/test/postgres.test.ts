import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { startTcpProxy, type TcpProxy } from '../../metadata-api/test/utils/tcp-proxy.js';
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

  function metadata(server: SvcGraphqlServer, body: unknown): Promise<Response> {
    return fetch(`${server.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }

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
  it('applies concurrent writes of two instances without resource_version, never answering 409', async () => {
    const [first, second] = await Promise.all([
      createServer({ port: 0, databaseUrl: ownUrl, logger: quiet }),
      createServer({ port: 0, databaseUrl: ownUrl, logger: quiet }),
    ]);
    servers.push(first, second);
    const names = Array.from({ length: 12 }, (_, i) => `concurrent_${i}`);
    const answers = await Promise.all(
      names.map(async (name, i) => {
        const response = await metadata(i % 2 === 0 ? first : second, {
          type: 'add_remote_schema',
          args: { name, definition: { url: remote.url, customization: { root_fields_namespace: name } } },
        });
        return { status: response.status, body: (await response.json()) as unknown };
      }),
    );
    expect(answers).toEqual(names.map(() => ({ status: 200, body: { message: 'success' } })));
    for (const server of [first, second]) {
      await waitFor(async () => {
        const exported = (await (await metadata(server, { type: 'export_metadata', args: {} })).json()) as {
          remote_schemas: Array<{ name: string }>;
        };
        const held = new Set(exported.remote_schemas.map((r) => r.name));
        return names.every((name) => held.has(name));
      }, 10_000);
    }
  });

  it('answers writes 503 and /healthz a warning while the database is unreachable, and catches up by itself', async () => {
    const target = new URL(ownUrl);
    const proxy: TcpProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const cut = await createServer({ port: 0, databaseUrl: proxy.rewrite(ownUrl), logger: quiet });
      const direct = await createServer({ port: 0, databaseUrl: ownUrl, logger: quiet });
      servers.push(cut, direct);
      expect(await (await fetch(`${cut.url}/healthz`)).text()).toBe('OK');

      proxy.cut();
      const refused = await metadata(cut, { type: 'add_remote_schema', args: { name: 'during_outage', definition: { url: remote.url, customization: { root_fields_namespace: 'during_outage' } } } });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: 'the metadata store is unreachable', path: '$', code: 'unexpected' });
      const health = await fetch(`${cut.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.text()).toBe('WARN: metadata store unreachable');
      // What changes nothing is still answered, from the document in memory: a read, and a change
      // refused for what it asks (before the store is needed).
      const read = await metadata(cut, { type: 'export_metadata', args: {} });
      expect(read.status).toBe(200);
      const missing = await metadata(cut, { type: 'remove_remote_schema', args: { name: 'nope' } });
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { code?: string }).code).toBe('not-exists');
      const unknown = await metadata(cut, { type: 'no_such_call', args: {} });
      expect(unknown.status).toBe(400);
      // The schema it has is still served.
      const served = await fetch(`${cut.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ remoteName }' }),
      });
      expect(await served.json()).toEqual({ data: { remoteName: 'sample' } });

      // Another instance changes the metadata meanwhile.
      const added = await metadata(direct, {
        type: 'add_remote_schema',
        args: { name: 'while_cut', definition: { url: remote.url, customization: { root_fields_namespace: 'while_cut' } } },
      });
      expect(added.status).toBe(200);

      proxy.restore();
      const restored = Date.now();
      await waitFor(async () => {
        const response = await fetch(`${cut.url}/v1/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ while_cut { remoteName } }' }),
        });
        return ((await response.json()) as { data?: unknown }).data !== undefined;
      }, 8_000);
      expect(Date.now() - restored).toBeLessThan(8_000);
      await waitFor(async () => (await (await fetch(`${cut.url}/healthz`)).text()) === 'OK', 5_000);
      const after = await metadata(cut, { type: 'remove_remote_schema', args: { name: 'while_cut' } });
      expect(after.status).toBe(200);
    } finally {
      await proxy.close();
    }
  });

  it('stops without waiting for a database that has stopped answering', async () => {
    const target = new URL(ownUrl);
    const proxy: TcpProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const warnings: string[] = [];
    try {
      const hung = await createServer({
        port: 0,
        databaseUrl: proxy.rewrite(ownUrl),
        logger: { ...quiet, warn: (...parts: unknown[]) => warnings.push(parts.map(String).join(' ')) },
      });
      expect(await (await fetch(`${hung.url}/healthz`)).text()).toBe('OK');
      proxy.hang();
      // Each step of the stop has 5 s; closing the store would otherwise wait for the database.
      await hung.close();
      expect(warnings.some((line) => line.includes('closing the metadata store did not finish within 5000 ms; going on without it'))).toBe(true);
    } finally {
      proxy.restore();
      await proxy.close();
    }
  }, 30_000);
});
