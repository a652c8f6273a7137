import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';

/**
 * Query collections, the allow list, introspection options and API limits through the real
 * server's metadata route: set, exported, replaced, and kept across a restart on the same file.
 */

const ADMIN_SECRET = 'lockdown-metadata-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-lockdown-metadata-'));
const databaseUrl = `file:${join(dir, 'metadata.json')}`;
let remote: RunningRemote;

async function start(): Promise<SvcGraphqlServer> {
  return createServer({ port: 0, databaseUrl, adminSecret: ADMIN_SECRET, logger: quiet });
}

async function metadata(server: SvcGraphqlServer, type: string, args: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify({ type, args }),
  });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
});
afterAll(async () => {
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('lock-down metadata through the server', () => {
  it('round-trips export -> replace and is kept across a restart', async () => {
    const server = await start();
    try {
      const steps: Array<[string, unknown]> = [
        ['add_remote_schema', { name: 'sample', definition: { url: remote.url } }],
        ['create_query_collection', { name: 'app', comment: 'the web app', definition: { queries: [{ name: 'hello', query: 'query Hello { hello }' }] } }],
        ['add_query_to_collection', { collection_name: 'app', query_name: 'user', query: 'query User($id: ID!) { user(id: $id) { id name } }' }],
        ['create_query_collection', { name: 'editors', definition: { queries: [{ name: 'all', query: '{ users { id } }' }] } }],
        ['add_collection_to_allowlist', { collection: 'app' }],
        ['add_collection_to_allowlist', { collection: 'editors', scope: { global: false, roles: ['editor'] } }],
        ['set_graphql_schema_introspection_options', { disabled_for_roles: ['user', 'anonymous'] }],
        [
          'set_api_limits',
          {
            depth_limit: { global: 8, per_role: { user: 5 } },
            node_limit: { global: 200 },
            batch_limit: { global: 10 },
            time_limit: { global: 20 },
            rate_limit: { global: { max_reqs_per_min: 600, unique_params: 'IP' }, per_role: { user: { max_reqs_per_min: 60, unique_params: ['x-svc-user-id'] } } },
          },
        ],
      ];
      for (const [type, args] of steps) expect(await metadata(server, type, args)).toEqual({ status: 200, body: { message: 'success' } });

      const exported = (await metadata(server, 'export_metadata', {})).body;
      expect(Object.keys(exported)).toEqual(['version', 'remote_schemas', 'query_collections', 'allowlist', 'api_limits', 'graphql_schema_introspection']);
      expect(exported.allowlist).toEqual([{ collection: 'app' }, { collection: 'editors', scope: { global: false, roles: ['editor'] } }]);

      expect(await metadata(server, 'replace_metadata', { version: 3, remote_schemas: [] })).toEqual({ status: 200, body: { message: 'success' } });
      expect((await metadata(server, 'export_metadata', {})).body).toEqual({ version: 3, remote_schemas: [] });
      expect(await metadata(server, 'replace_metadata', exported)).toEqual({ status: 200, body: { message: 'success' } });
      expect((await metadata(server, 'export_metadata', {})).body).toEqual(exported);

      await server.close();
      const again = await start();
      try {
        expect((await metadata(again, 'export_metadata', {})).body).toEqual(exported);
        expect(await metadata(again, 'drop_query_collection', { collection: 'app' })).toMatchObject({ status: 400, body: { code: 'dependency-error' } });
      } finally {
        await again.close();
      }
    } finally {
      await server.close();
    }
  });
});
