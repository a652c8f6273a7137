import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileMetadataStore, createMetadataService, useMetadataApi } from '../src/index.js';
import { createFakeRegistry } from './utils/fake-registry.js';
import { A, startFixture, type Fixture } from './utils/fixture.js';
import { silentLogger, startMetadataServer, temporaryDirectory } from './utils/metadata-server.js';

let fixture: Fixture;
beforeAll(async () => {
  fixture = await startFixture();
});
afterAll(async () => {
  await fixture.close();
});

describe('who may call /v1/metadata', () => {
  it('refuses a role other than admin with 403 access-denied', async () => {
    expect(await fixture.server.post({ type: 'export_metadata', args: {} }, { 'x-test-role': 'user' })).toEqual({
      status: 403,
      body: { error: 'restricted access : admin only', path: '$', code: 'access-denied' },
    });
  });

  it('answers the error thrown by authenticate with its status and code', async () => {
    expect(await fixture.server.post({ type: 'export_metadata', args: {} }, { 'x-test-reject': '1' })).toEqual({
      status: 401,
      body: { error: 'invalid x-svc-admin-secret', path: '$', code: 'access-denied' },
    });
  });

  it('does not apply a refused request', async () => {
    await fixture.server.post({ type: 'add_remote_schema', args: { name: 'a', definition: { url: A } } }, { 'x-test-role': 'user' });
    expect((await fixture.server.post({ type: 'export_metadata', args: {} })).body).toEqual({ version: 3, remote_schemas: [] });
  });
});

describe('cross-origin requests', () => {
  const refused = { status: 403, body: { error: 'cross-origin metadata requests are not allowed', path: '$', code: 'access-denied' } };
  const ownOrigin = () => new URL(fixture.server.url).origin;
  const addB = { type: 'add_remote_schema', args: { name: 'from-a-page', definition: { url: A } } };

  it('refuses a request from another origin with 403, even from an admin, and applies nothing', async () => {
    expect(await fixture.server.post(addB, { origin: 'https://evil.example' })).toEqual(refused);
    expect((await fixture.server.post({ type: 'export_metadata', args: {} })).body.remote_schemas).toEqual([]);
  });

  it('refuses it before authentication, whatever credentials or role it carries', async () => {
    expect(await fixture.server.post(addB, { origin: 'https://evil.example', 'x-test-reject': '1' })).toEqual(refused);
    expect(await fixture.server.post(addB, { origin: 'https://evil.example', 'x-test-role': 'user' })).toEqual(refused);
    const response = await fetch(fixture.server.url, { headers: { origin: 'https://evil.example' } });
    expect([response.status, await response.json()]).toEqual([refused.status, refused.body]);
  });

  it('refuses the opaque origin "null" of sandboxed pages and local files', async () => {
    expect(await fixture.server.post(addB, { origin: 'null' })).toEqual(refused);
  });

  it("refuses the server's own host on another scheme or port", async () => {
    const own = new URL(ownOrigin());
    expect(await fixture.server.post(addB, { origin: `https://${own.host}` })).toEqual(refused);
    expect(await fixture.server.post(addB, { origin: `http://${own.hostname}:1` })).toEqual(refused);
  });

  it("accepts a request from the server's own origin", async () => {
    expect(await fixture.server.post({ type: 'export_metadata', args: {} }, { origin: ownOrigin() })).toEqual({
      status: 200,
      body: { version: 3, remote_schemas: [] },
    });
  });

  it('leaves requests without Origin alone', async () => {
    expect((await fixture.server.post({ type: 'export_metadata', args: {} })).status).toBe(200);
  });

  it('asks isAllowedOrigin, when given, with the origin and the request', async () => {
    const asked: Array<[string, string]> = [];
    const server = await startMetadataServer({
      service: fixture.service,
      logger: silentLogger,
      isAllowedOrigin: (origin, request) => {
        asked.push([origin, new URL(request.url).pathname]);
        return origin === 'https://console.example';
      },
    });
    try {
      expect((await server.post({ type: 'export_metadata', args: {} }, { origin: 'https://console.example' })).status).toBe(200);
      expect(await server.post({ type: 'export_metadata', args: {} }, { origin: new URL(server.url).origin })).toEqual(refused);
      expect(asked).toEqual([
        ['https://console.example', '/v1/metadata'],
        [new URL(server.url).origin, '/v1/metadata'],
      ]);
    } finally {
      await server.close();
    }
  });

  it('refuses an isAllowedOrigin that is not a function', () => {
    expect(() =>
      useMetadataApi({ service: fixture.service, authenticate: async () => ({ role: 'admin', isAdmin: true }), isAllowedOrigin: 'https://a.example' as never }),
    ).toThrow('useMetadataApi: "isAllowedOrigin" must be a function');
  });
});

describe('request parsing', () => {
  it('answers malformed JSON with parse-failed', async () => {
    const { status, body } = await fixture.server.post('{"type": "export_metadata", ');
    expect(status).toBe(400);
    expect(body).toMatchObject({ path: '$', code: 'parse-failed' });
    expect(body.error).toMatch(/^invalid JSON: /);
  });

  it('answers an unknown type with parse-failed', async () => {
    expect(await fixture.server.post({ type: 'add_remote_schemas', args: {} })).toEqual({
      status: 400,
      body: { error: 'unknown metadata operation "add_remote_schemas"', path: '$.type', code: 'parse-failed' },
    });
  });

  it('answers a body without type with parse-failed', async () => {
    expect(await fixture.server.post({ args: {} })).toEqual({
      status: 400,
      body: { error: 'key "type" not found', path: '$', code: 'parse-failed' },
    });
  });

  it('answers a body that is not an object with parse-failed', async () => {
    expect(await fixture.server.post([1, 2])).toEqual({
      status: 400,
      body: { error: 'expected an object', path: '$', code: 'parse-failed' },
    });
  });

  it('answers an empty body with parse-failed', async () => {
    const { status, body } = await fixture.server.post('');
    expect(status).toBe(400);
    expect(body.code).toBe('parse-failed');
  });

  it('answers GET with 405 and Allow: POST', async () => {
    const response = await fetch(fixture.server.url);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toEqual({ error: 'method GET is not allowed; use POST', path: '$', code: 'method-not-allowed' });
  });

  it('answers a body over 1 MiB with 413', async () => {
    const body = JSON.stringify({ type: 'export_metadata', args: { padding: 'x'.repeat(1024 * 1024) } });
    expect(await fixture.server.post(body)).toEqual({
      status: 413,
      body: { error: 'request body is larger than 1048576 bytes', path: '$', code: 'payload-too-large' },
    });
  });

  it('answers 413 for a streamed body without Content-Length', async () => {
    const chunks = [new TextEncoder().encode(`{"type":"export_metadata","args":{"p":"${'y'.repeat(700_000)}`), new TextEncoder().encode(`${'z'.repeat(700_000)}"}}`)];
    const response = await fetch(fixture.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk === undefined) controller.close();
          else controller.enqueue(chunk);
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe('payload-too-large');
  });

  it('answers a body just under the limit normally', async () => {
    const args = { reload_remote_schemas: false };
    const body = JSON.stringify({ type: 'reload_metadata', args }).padEnd(1024 * 1024 - 1, ' ');
    expect(await fixture.server.post(body)).toEqual({ status: 200, body: { message: 'success', is_consistent: true } });
  });

  it('answers deeply nested bodies with 400, not a stack overflow', async () => {
    const depth = 20_000;
    const nested = `${'{"type":"bulk","args":['.repeat(depth)}{"type":"export_metadata","args":{}}${']}'.repeat(depth)}`;
    const { status, body } = await fixture.server.post(nested);
    expect(status).toBe(400);
    expect(body).toEqual({
      error: 'bulk operations can be nested at most 8 deep',
      path: '$.args[0].args[0].args[0].args[0].args[0].args[0].args[0].args[0].args',
      code: 'invalid-params',
    });
    const arrays = await fixture.server.post(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    expect(arrays.status).toBe(400);
    expect(arrays.body.code).toBe('parse-failed');
  });

  it('answers random text bodies with 400 parse-failed', async () => {
    const samples = ['{', 'null', '"x"', '1e999', 'true', '{"type":', '\u0000', '{"type":"bulk","args":[', '{}}', '\uFEFF{}'];
    for (const text of samples) {
      const { status, body } = await fixture.server.post(text);
      expect([status, body.code]).toEqual([400, 'parse-failed']);
    }
  });

  it('answers a few hundred random JSON bodies with 4xx, never 5xx, and stays healthy', async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const keys = ['type', 'args', 'name', 'definition', 'url', 'headers', 'timeout_seconds', 'customization', 'resource_version',
      'metadata', 'remote_schemas', 'version', 'cascade', 'type_names', 'mapping', 'field_names', 'comment', 'permissions', 'x'];
    const types = ['add_remote_schema', 'update_remote_schema', 'remove_remote_schema', 'reload_remote_schema', 'introspect_remote_schema',
      'add_remote_schema_permissions', 'drop_remote_schema_permissions', 'export_metadata', 'replace_metadata', 'reload_metadata',
      'get_inconsistent_metadata', 'drop_inconsistent_metadata', 'bulk', 'nope'];
    const value = (depth: number): unknown => {
      const kind = Math.floor(random() * (depth > 3 ? 6 : 9));
      switch (kind) {
        case 0: return null;
        case 1: return random() < 0.5;
        case 2: return pick([0, -1, 1.5, 1e308, 60, Number.MAX_SAFE_INTEGER]);
        case 3: return pick(['', 'a', 'http://127.0.0.1:1/graphql', 'ftp://x', '__x', 'a\u0000', 'x'.repeat(300)]);
        case 4: return pick(types);
        case 5: return pick([{}, []]);
        case 6: return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(keys), value(depth + 1)]));
      }
    };
    const bodies: unknown[] = [];
    for (let index = 0; index < 300; index += 1) {
      const body = random() < 0.7 ? { type: pick(types), args: value(0) } : value(0);
      // Never point at a reachable remote: random adds must be refused, not applied.
      bodies.push(body);
    }
    const statuses = new Map<number, number>();
    for (const body of bodies) {
      const { status } = await fixture.server.post(body);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500) throw new Error(`answered ${String(status)} to ${JSON.stringify(body)}`);
    }
    const allowed = [200, 400, 409];
    expect([...statuses.keys()].filter((status) => !allowed.includes(status))).toEqual([]);
    expect((await fixture.server.post({ type: 'get_inconsistent_metadata', args: {} })).status).toBe(200);
  });
});

describe('useMetadataApi options', () => {
  it('refuses a path that does not start with /', () => {
    expect(() =>
      useMetadataApi({ path: 'v1/metadata', registry: createFakeRegistry(), store: createFileMetadataStore({ path: '/tmp/x.json' }), authenticate: async () => ({ role: 'admin', isAdmin: true }) }),
    ).toThrow('useMetadataApi: "path" must start with "/", but got "v1/metadata"');
  });

  it('refuses remote schema permissions the registry would not enforce, and the other way', () => {
    const store = createFileMetadataStore({ path: '/tmp/x.json' });
    expect(() => createMetadataService({ registry: createFakeRegistry(), store, remoteSchemaPermissions: true })).toThrow(
      'createMetadataService: "remoteSchemaPermissions" is true but the registry\'s enableRemoteSchemaPermissions is false: they must agree',
    );
    expect(() => createMetadataService({ registry: createFakeRegistry({}, { permissions: true }), store })).toThrow(/"remoteSchemaPermissions" is false but/);
  });

  it('takes only isAdmin: true itself as admin, whatever an app\'s authenticate answers', async () => {
    const directory = await temporaryDirectory();
    for (const identity of [{ role: 'user', isAdmin: 'false' }, { role: 'admin', isAdmin: 'true' }, { role: 'admin', isAdmin: 1 }, undefined, null]) {
      const server = await startMetadataServer({
        registry: createFakeRegistry(),
        store: createFileMetadataStore({ path: `${directory.path}/m.json` }),
        logger: silentLogger,
        authenticate: async () => identity as never,
      });
      try {
        expect(await server.post({ type: 'export_metadata', args: {} }), JSON.stringify(identity)).toMatchObject({
          status: 403,
          body: { error: 'restricted access : admin only', path: '$', code: 'access-denied' },
        });
      } finally {
        await server.close();
      }
    }
    await directory.remove();
  });

  it('refuses a maxBodyBytes that is not a positive integer', () => {
    expect(() =>
      useMetadataApi({ maxBodyBytes: 0, registry: createFakeRegistry(), store: createFileMetadataStore({ path: '/tmp/x.json' }), authenticate: async () => ({ role: 'admin', isAdmin: true }) }),
    ).toThrow('useMetadataApi: "maxBodyBytes" must be a positive integer, but got 0');
  });

  it('creates and initializes its own service from a registry and a store, on another path', async () => {
    const directory = await temporaryDirectory();
    const registry = createFakeRegistry({ [A]: 'type Query { a: String }' });
    const server = await startMetadataServer({
      registry,
      store: createFileMetadataStore({ path: `${directory.path}/m.json` }),
      logger: silentLogger,
      path: '/admin/metadata',
      maxBodyBytes: 100,
    });
    try {
      const url = server.url.replace('/v1/metadata', '/admin/metadata');
      const post = (body: string) => fetch(url, { method: 'POST', body });
      const added = await post(JSON.stringify({ type: 'add_remote_schema', args: { name: 'a', definition: { url: A } } }));
      expect([added.status, await added.json()]).toEqual([200, { message: 'success' }]);
      const big = await post(JSON.stringify({ type: 'export_metadata', args: {} }).padEnd(101, ' '));
      expect(big.status).toBe(413);
      expect((await fetch(server.url, { method: 'POST', body: '{}' })).status).not.toBe(200);
    } finally {
      await server.close();
      await directory.remove();
    }
  });
});
