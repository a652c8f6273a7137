import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GraphQLSchema } from 'graphql';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway } from './utils/gateway.js';
import { keptClientCount } from '../src/registry.js';
import { freePort, json, memoryLogger, sampleIntrospection, startStub, waitFor, type StubServer } from './utils/fixtures.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function registryFor(options: Parameters<typeof createRemoteSchemaRegistry>[0] = {}): RemoteSchemaRegistry {
  const registry = createRemoteSchemaRegistry({ logger: memoryLogger(), ...options });
  cleanups.push(() => registry.dispose());
  return registry;
}

async function stub(handler: Parameters<typeof startStub>[0]): Promise<StubServer> {
  const server = await startStub(handler);
  cleanups.push(() => server.close());
  return server;
}

const queryFields = (schema: GraphQLSchema) => Object.keys(schema.getQueryType()?.getFields() ?? {});

let sample: RunningRemote;
beforeAll(async () => {
  sample = await startSampleRemote();
});
afterAll(() => sample.close());

describe('the schema before any remote', () => {
  it('is Hasura\'s placeholder, and the placeholder goes once a remote is added', async () => {
    const registry = registryFor();
    expect(queryFields(registry.schema)).toEqual(['no_queries_available']);
    const plan = await registry.plan([{ name: 'sample', definition: { url: sample.url } }]);
    expect(queryFields(plan.schema)).not.toContain('no_queries_available');
    expect(queryFields(plan.schema)).toContain('hello');
  });
});

describe('plan and commit', () => {
  it('plan() changes nothing live; commit() swaps and tells the listeners', async () => {
    const registry = registryFor();
    const seen: GraphQLSchema[] = [];
    registry.onSchemaChange((schema) => seen.push(schema));
    const before = registry.schema;
    const plan = await registry.plan([{ name: 'sample', definition: { url: sample.url } }]);
    expect(registry.schema).toBe(before);
    expect(seen).toEqual([]);
    registry.commit(plan);
    expect(registry.schema).toBe(plan.schema);
    expect(seen).toEqual([plan.schema]);
    expect(registry.problems()).toEqual([]);
  });

  it('reuses a loaded remote whose definition did not change, and introspects again on reload', async () => {
    const registry = registryFor();
    sample.received.length = 0;
    const entries = [{ name: 'sample', definition: { url: sample.url } }];
    registry.commit(await registry.plan(entries));
    await registry.plan(entries);
    expect(sample.received).toHaveLength(1);
    await registry.plan(entries, { reload: ['sample'] });
    expect(sample.received).toHaveLength(2);
    await registry.plan([{ name: 'sample', definition: { url: sample.url, timeout_seconds: 5 } }]);
    expect(sample.received).toHaveLength(3);
  });

  it('answers introspect() with the remote\'s introspection result', async () => {
    const registry = registryFor();
    registry.commit(await registry.plan([{ name: 'sample', definition: { url: sample.url } }]));
    const result = await registry.introspect('sample');
    expect((result.data as { __schema: { queryType: { name: string } } }).__schema.queryType.name).toBe('Query');
    await expect(registry.introspect('nope')).rejects.toMatchObject({ code: 'remote-schema-error' });
  });

  it('refuses a plan it did not make', () => {
    const registry = registryFor();
    expect(() => registry.commit({ schema: registry.schema, problems: [] })).toThrow(TypeError);
  });

  it('reads url_from_env and reports a missing variable as invalid-params', async () => {
    const registry = registryFor();
    process.env['REMOTE_SCHEMAS_TEST_URL'] = sample.url;
    const plan = await registry.plan([
      { name: 'env', definition: { url_from_env: 'REMOTE_SCHEMAS_TEST_URL' } },
      { name: 'missing', definition: { url_from_env: 'REMOTE_SCHEMAS_TEST_NOT_SET' } },
    ]);
    expect(plan.problems).toEqual([
      { name: 'missing', code: 'invalid-params', message: 'environment variable "REMOTE_SCHEMAS_TEST_NOT_SET" not set', field: ['url_from_env'] },
    ]);
    expect(queryFields(plan.schema)).toContain('hello');
  });
});

describe('values from the environment', () => {
  const secret = 's3cr3t-value';
  const cases: Array<[string, string, string]> = [
    ['a URL variable that holds no URL', `not a url ${secret}`, 'does not hold a valid http(s) URL'],
    ['a URL variable that holds another kind of URL', `ftp://user:${secret}@example.com/`, 'does not hold a valid http(s) URL'],
  ];
  it.each(cases)('are never shown: %s', async (_, value, says) => {
    const registry = registryFor({ retry: false });
    process.env['REMOTE_SCHEMAS_TEST_BAD_URL'] = value;
    try {
      const plan = await registry.plan([{ name: 'env', definition: { url_from_env: 'REMOTE_SCHEMAS_TEST_BAD_URL' } }]);
      expect(plan.problems).toEqual([
        { name: 'env', code: 'invalid-params', message: `environment variable "REMOTE_SCHEMAS_TEST_BAD_URL" ${says}`, field: ['url_from_env'] },
      ]);
    } finally {
      delete process.env['REMOTE_SCHEMAS_TEST_BAD_URL'];
    }
  });

  it('are never shown: a header variable that holds no header value', async () => {
    const registry = registryFor({ retry: false });
    process.env['REMOTE_SCHEMAS_TEST_BAD_HEADER'] = `Bearer ${secret}\n`;
    try {
      const plan = await registry.plan([
        { name: 'env', definition: { url: sample.url, headers: [{ name: 'Authorization', value_from_env: 'REMOTE_SCHEMAS_TEST_BAD_HEADER' }] } },
      ]);
      expect(plan.problems).toEqual([
        {
          name: 'env',
          code: 'invalid-params',
          message: 'environment variable "REMOTE_SCHEMAS_TEST_BAD_HEADER" does not hold a valid header value',
          field: ['headers', 0, 'value_from_env'],
        },
      ]);
    } finally {
      delete process.env['REMOTE_SCHEMAS_TEST_BAD_HEADER'];
    }
  });
});

describe('a remote that cannot be used', () => {
  it('is reported with the exact HTTP exception message when nothing listens', async () => {
    const registry = registryFor({ retry: false });
    const url = `http://127.0.0.1:${await freePort()}/graphql`;
    const plan = await registry.plan([{ name: 'down', definition: { url } }]);
    expect(plan.problems).toEqual([
      { name: 'down', code: 'remote-schema-error', message: `HTTP exception occurred while sending the request to "${url}"` },
    ]);
    expect(queryFields(plan.schema)).toEqual(['no_queries_available']);
  });

  it('is reported when it answers something that is not GraphQL', async () => {
    const registry = registryFor({ retry: false });
    const html = await stub((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not found</h1>');
    });
    const plan = await registry.plan([{ name: 'html', definition: { url: html.url } }]);
    expect(plan.problems).toEqual([
      { name: 'html', code: 'remote-schema-error', message: `HTTP exception occurred while sending the request to "${html.url}"` },
    ]);
  });

  it('is reported when introspection takes longer than timeout_seconds', async () => {
    const registry = registryFor({ retry: false });
    const slow = await stub((_req, res) => setTimeout(() => json({ data: sampleIntrospection() })(_req, res), 1500));
    const plan = await registry.plan([{ name: 'slow', definition: { url: slow.url, timeout_seconds: 0.2 } }]);
    expect(plan.problems).toEqual([
      { name: 'slow', code: 'remote-schema-error', message: `HTTP exception occurred while sending the request to "${slow.url}"` },
    ]);
  });

  const broken: Array<[string, (schema: any) => void, string]> = [
    [
      'an interface without fields',
      (s) => {
        s.__schema.types.find((t: any) => t.name === 'Node').fields = [];
      },
      'remote schema "broken" is invalid: Type Node must define one or more fields.',
    ],
    [
      'a union member that is not an object',
      (s) => {
        s.__schema.types.find((t: any) => t.name === 'SearchResult').possibleTypes.push({ kind: 'ENUM', name: 'Role', ofType: null });
      },
      'remote schema "broken" is invalid: ',
    ],
    [
      'a missing type',
      (s) => {
        s.__schema.types = s.__schema.types.filter((t: any) => t.name !== 'Post');
      },
      'remote schema "broken" is invalid: Invalid or incomplete schema, unknown type: Post.',
    ],
  ];
  it.each(broken)('is refused with remote-schema-error when its schema has %s', async (_, breakIt, message) => {
    const registry = registryFor({ retry: false });
    const schema = sampleIntrospection();
    breakIt(schema);
    const remote = await stub(json({ data: schema }));
    const plan = await registry.plan([{ name: 'broken', definition: { url: remote.url } }]);
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]).toMatchObject({ name: 'broken', code: 'remote-schema-error' });
    expect(plan.problems[0]?.message.startsWith(message)).toBe(true);
    expect(plan.problems[0]?.message.length).toBeGreaterThan(message.length - 1);
  });

  it('is reported with the remote\'s own message when introspection answers errors', async () => {
    const registry = registryFor({ retry: false });
    const remote = await stub(json({ errors: [{ message: 'introspection is disabled' }] }));
    const plan = await registry.plan([{ name: 'closed', definition: { url: remote.url } }]);
    expect(plan.problems).toEqual([
      { name: 'closed', code: 'remote-schema-error', message: `introspection of "${remote.url}" failed: introspection is disabled` },
    ]);
  });
});

describe('background retry', () => {
  it('stitches a remote in once it comes back, and tells the listeners', async () => {
    const logger = memoryLogger();
    const registry = registryFor({ logger, retry: { initialDelayMs: 20, maxDelayMs: 80 } });
    const gateway = await startGateway(registry);
    cleanups.push(() => gateway.close());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/graphql`;
    registry.commit(await registry.plan([{ name: 'late', definition: { url } }]));
    expect(registry.problems()).toEqual([
      { name: 'late', code: 'remote-schema-error', message: `HTTP exception occurred while sending the request to "${url}"` },
    ]);
    expect(await gateway.post({ query: '{ no_queries_available }' })).toEqual({
      status: 200,
      body: { data: { no_queries_available: null } },
    });
    await new Promise((r) => setTimeout(r, 200));
    const changed = new Promise<GraphQLSchema>((resolve) => registry.onSchemaChange(resolve));
    const late = await startSampleRemote({ port, name: 'late' });
    cleanups.push(() => late.close());
    const schema = await changed;
    expect(queryFields(schema)).toContain('remoteName');
    expect(registry.problems()).toEqual([]);
    expect(await gateway.post({ query: '{ remoteName }' })).toEqual({ status: 200, body: { data: { remoteName: 'late' } } });
    expect(logger.lines.some((l) => l.includes('"late" is still unavailable'))).toBe(true);
    expect(logger.lines.some((l) => l.includes('"late" is back'))).toBe(true);
  });

  it('backs off, and stops when a commit drops the remote', async () => {
    const registry = registryFor({ retry: { initialDelayMs: 20, maxDelayMs: 40 } });
    const failing = await stub(json({ nope: true }, 500));
    registry.commit(await registry.plan([{ name: 'flaky', definition: { url: failing.url } }]));
    await new Promise((r) => setTimeout(r, 250));
    const attempts = failing.requests;
    // 1 at plan, then at 20, 60, 100, 140, 180, 220 ms at most
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(8);
    registry.commit(await registry.plan([]));
    const atCommit = failing.requests;
    await new Promise((r) => setTimeout(r, 150));
    // A retry whose timer fired just before the commit may still reach the remote; no later one
    // does (without the stop, 150 ms at 40 ms intervals would bring three or four more).
    expect(failing.requests).toBeLessThanOrEqual(atCommit + 1);
  });

  it('stops on dispose', async () => {
    const registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: { initialDelayMs: 20, maxDelayMs: 20 } });
    const failing = await stub(json({ nope: true }, 500));
    registry.commit(await registry.plan([{ name: 'flaky', definition: { url: failing.url } }]));
    await registry.dispose();
    const attempts = failing.requests;
    await new Promise((r) => setTimeout(r, 120));
    expect(failing.requests).toBe(attempts);
  });
});

describe('a replaced remote with open subscriptions', () => {
  it('is kept while they run and let go when the last of them ends', async () => {
    const registry = registryFor({ retry: false });
    const gateway = await startGateway(registry);
    cleanups.push(() => gateway.close());
    const entries = [{ name: 'sample', definition: { url: sample.url } }];
    registry.commit(await registry.plan(entries));
    expect(keptClientCount(registry)).toBe(1);
    const subscriptions = [];
    for (let reload = 1; reload <= 3; reload++) {
      const iterator = gateway.wsClient().iterate({ query: 'subscription { countdown(from: 1000, intervalMs: 20) }' });
      expect(await iterator.next()).toEqual({ done: false, value: { data: { countdown: 1000 } } });
      subscriptions.push(iterator);
      // A reload replaces the client; the subscription keeps running on the one it started on.
      registry.commit(await registry.plan(entries, { reload: 'all' }));
      expect(keptClientCount(registry)).toBe(1 + reload);
    }
    for (const [index, iterator] of subscriptions.entries()) {
      expect((await iterator.next()).done).toBe(false);
      await iterator.return?.();
      expect(await waitFor(() => keptClientCount(registry) === 3 - index)).toBe(true);
    }
    expect(await waitFor(() => sample.openSockets() === 0)).toBe(true);
    // The live client stays, and serves a new subscription.
    const values: unknown[] = [];
    for await (const result of gateway.wsClient().iterate({ query: 'subscription { countdown(from: 1) }' })) values.push(result);
    expect(values).toEqual([{ data: { countdown: 1 } }, { data: { countdown: 0 } }]);
    expect(keptClientCount(registry)).toBe(1);
  });
});
