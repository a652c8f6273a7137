import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type SvcGraphqlServer } from '../src/index.js';
import { configOf } from '../src/http/config-route.js';

/** `GET /v1alpha1/config`: the server's switches, for admins only. */

const ADMIN_SECRET = 'config-route-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-config-route-'));
let server: SvcGraphqlServer;

beforeAll(async () => {
  server = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, enableRemoteSchemaPermissions: true, enableAllowlist: true, logger: quiet });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (headers: Record<string, string>) => {
  const response = await fetch(`${server.url}/v1alpha1/config`, { headers });
  return { status: response.status, cache: response.headers.get('cache-control'), body: (await response.json()) as Record<string, unknown> };
};

describe('GET /v1alpha1/config', () => {
  it('tells an admin the switches, and nothing secret', async () => {
    const answer = await get({ 'x-svc-admin-secret': ADMIN_SECRET });
    expect(answer.status).toBe(200);
    expect(answer.cache).toBe('no-store');
    expect(answer.body).toMatchObject({
      is_admin_secret_set: true,
      is_remote_schema_permissions_enabled: true,
      is_allow_list_enabled: true,
      rate_limit_store: 'local',
      is_console_enabled: false,
    });
    expect(typeof answer.body['version']).toBe('string');
    expect(JSON.stringify(answer.body)).not.toContain(ADMIN_SECRET);
    const head = await fetch(`${server.url}/v1alpha1/config`, { method: 'HEAD', headers: { 'x-svc-admin-secret': ADMIN_SECRET } });
    expect([head.status, await head.text()]).toEqual([200, '']);
    const post = await fetch(`${server.url}/v1alpha1/config`, { method: 'POST', headers: { 'x-svc-admin-secret': ADMIN_SECRET } });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('refuses a wrong secret and a role that is not admin', async () => {
    const wrong = await get({ 'x-svc-admin-secret': 'not-the-secret' });
    expect(wrong.status).toBe(401);
    const user = await get({ 'x-svc-admin-secret': ADMIN_SECRET, 'x-svc-role': 'user' });
    expect(user).toMatchObject({ status: 403, body: { error: 'restricted access : admin only', code: 'access-denied', path: '$' } });
  });

  it('says the allow list is enforced and where rate limits are counted when the server is started so', async () => {
    const other = await createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'other.json')}`,
      adminSecret: ADMIN_SECRET,
      enableAllowlist: true,
      rateLimitRedisUrl: 'redis://127.0.0.1:6379',
      rateLimitKeyPrefix: `config-route-${process.pid}:`,
      logger: quiet,
    });
    try {
      const response = await fetch(`${other.url}/v1alpha1/config`, { headers: { 'x-svc-admin-secret': ADMIN_SECRET } });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ is_allow_list_enabled: true, rate_limit_store: 'redis' });
    } finally {
      await other.close();
    }
    expect(configOf({ enableRemoteSchemaPermissions: false, enableAllowlist: false, enableConsole: false }, '1.0.0'))
      .toMatchObject({ is_allow_list_enabled: false, rate_limit_store: 'local', is_admin_secret_set: false });
  });
});
