import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../src/index.js';

/**
 * What is sent to a remote holds only what that remote needs: the operation and the fragments it
 * uses. The client's comments, its other operations and the fragments only they use never reach
 * the remote, over HTTP (the direct lane on and off: this file runs in both test projects), SSE
 * and graphql-ws, as it is or rewritten. A real remote records what it receives.
 */

const ADMIN_SECRET = 'upstream-test-admin-secret';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-upstream-'));
let remote: RunningRemote;
let server: SvcGraphqlServer;

/** 1.9 MB of comment: the whole request stays under the 2 MiB body limit. */
const COMMENT = `# ${'c'.repeat(1_900_000)}\n`;

function post(body: unknown, accept = 'application/json'): Promise<Response> {
  return fetch(`${server.url}/v1/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, 'x-svc-admin-secret': ADMIN_SECRET },
    body: JSON.stringify(body),
  });
}

/** The operations the remote received over HTTP since `from` (introspection left out). */
function receivedSince(from: number): Array<{ query: string; operationName?: unknown }> {
  return remote.received
    .slice(from)
    .map((r) => r.body as { query: string; operationName?: unknown })
    .filter((body) => !body.query.includes('__schema'));
}

/** Every result of one subscription over graphql-ws, as admin, until it completes. */
async function overGraphqlWs(payload: { query: string; operationName?: string; variables?: Record<string, unknown> }): Promise<unknown[]> {
  const client = createClient({
    url: server.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { headers: { 'x-svc-admin-secret': ADMIN_SECRET } },
    retryAttempts: 0,
  });
  const results: unknown[] = [];
  try {
    for await (const result of client.iterate(payload)) results.push(result);
  } finally {
    await client.dispose();
  }
  return results;
}

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
  server = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'metadata.json')}`, adminSecret: ADMIN_SECRET, logger: quiet });
  for (const args of [
    { name: 'sample', definition: { url: remote.url } },
    { name: 'custom', definition: { url: remote.url, customization: { root_fields_namespace: 'ns', type_names: { prefix: 'C_' } } } },
  ]) {
    const response = await fetch(`${server.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
      body: JSON.stringify({ type: 'add_remote_schema', args }),
    });
    expect(await response.json()).toEqual({ message: 'success' });
  }
});

afterAll(async () => {
  await server?.close();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a query sent to a remote as it is', () => {
  const document = [
    COMMENT,
    'query Other { ...OnlyOther }',
    'query Main($name: String) {',
    '  # a comment inside the operation',
    '  ...F',
    '  hello(name: $name)',
    '  boom',
    '}',
    'fragment OnlyOther on Query { users { id } }',
    'fragment F on Query { remoteName }',
  ].join('\n');

  it('carries the operation and its fragments only, and its errors point into the client\'s text', async () => {
    const from = remote.received.length;
    const response = await post({ query: document, operationName: 'Main', variables: { name: 'Ada' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: { remoteName: 'sample', hello: 'Hello, Ada!', boom: null },
      errors: [{ message: 'boom: this field always fails', locations: [{ line: 8, column: 3 }], path: ['boom'], extensions: { code: 'BOOM' } }],
    });
    expect(receivedSince(from)).toEqual([
      {
        query: 'query Main($name: String) {\n  ...F\n  hello(name: $name)\n  boom\n}\n\nfragment F on Query {\n  remoteName\n}',
        operationName: 'Main',
        variables: { name: 'Ada' },
      },
    ]);
  });

  it('is the client\'s own text when that holds nothing else', async () => {
    const from = remote.received.length;
    const query = 'query Q($id: ID!) { user(id: $id) { ...U } } fragment U on User { id name }';
    const response = await post({ query, variables: { id: '1' } });
    expect(await response.json()).toEqual({ data: { user: { id: '1', name: 'Ada' } } });
    expect(receivedSince(from).map((body) => body.query)).toEqual([query]);
  });
});

describe('a rewritten query', () => {
  it('carries no comment, other operation or unused fragment either', async () => {
    const from = remote.received.length;
    const response = await post({
      query: `${COMMENT}query Other { ...G }\nquery Main { ns { ...F } }\nfragment G on Query { hello }\nfragment F on ns_query { remoteName }`,
      operationName: 'Main',
    });
    expect(await response.json()).toEqual({ data: { ns: { remoteName: 'sample' } } });
    const received = receivedSince(from);
    expect(received).toHaveLength(1);
    expect(received[0]!.query).not.toMatch(/#|Other|hello|fragment G/);
    expect(received[0]!.query.length).toBeLessThan(200);
  });
});

describe('a subscription', () => {
  const document = [
    COMMENT,
    'query Other { ...OnlyOther }',
    'subscription Main { ...S }',
    'fragment OnlyOther on Query { hello }',
    'fragment S on Subscription { countdown(from: 1, intervalMs: 1) }',
  ].join('\n');
  const sent = 'subscription Main {\n  ...S\n}\n\nfragment S on Subscription {\n  countdown(from: 1, intervalMs: 1)\n}';
  const events = [{ data: { countdown: 1 } }, { data: { countdown: 0 } }];

  it('over graphql-ws carries the operation and its fragments only', async () => {
    const from = remote.subscribed.length;
    expect(await overGraphqlWs({ query: document, operationName: 'Main' })).toEqual(events);
    expect(remote.subscribed.slice(from)).toEqual([expect.objectContaining({ query: sent, operationName: 'Main' })]);
  });

  it('over SSE carries the operation and its fragments only', async () => {
    const from = remote.subscribed.length;
    const response = await post({ query: document, operationName: 'Main' }, 'text/event-stream');
    const text = await response.text();
    expect(text.split('\n\n').filter((e) => e.startsWith('event: next')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as unknown)).toEqual(events);
    expect(remote.subscribed.slice(from)).toEqual([expect.objectContaining({ query: sent, operationName: 'Main' })]);
  });

  it('to a customized remote carries no comment or other operation either', async () => {
    const from = remote.subscribed.length;
    const response = await post(
      { query: `${COMMENT}query Other { hello }\nsubscription Main { ns { countdown(from: 0, intervalMs: 1) } }`, operationName: 'Main' },
      'text/event-stream',
    );
    expect(await response.text()).toContain('"ns":{"countdown":0}');
    const subscribed = remote.subscribed.slice(from) as Array<{ query: string }>;
    expect(subscribed).toHaveLength(1);
    expect(subscribed[0]!.query).not.toMatch(/#|Other|hello/);
    expect(subscribed[0]!.query.length).toBeLessThan(200);
  });
});

describe('the variables sent', () => {
  /** Values for the operation's own variables, another operation's and none at all. */
  const variables = { name: 'Ada', other: '1', extra: 'not declared anywhere' };
  const document = 'query Other($other: ID!) { user(id: $other) { id } }\nquery Main($name: String) { hello(name: $name) }';

  it('are only those the operation declares, over HTTP as it is', async () => {
    const from = remote.received.length;
    const response = await post({ query: document, operationName: 'Main', variables });
    expect(await response.json()).toEqual({ data: { hello: 'Hello, Ada!' } });
    expect(receivedSince(from)).toEqual([expect.objectContaining({ operationName: 'Main', variables: { name: 'Ada' } })]);
  });

  it('are none when the operation declares none', async () => {
    const from = remote.received.length;
    const response = await post({ query: '{ remoteName }', variables: { extra: 'not declared' } });
    expect(await response.json()).toEqual({ data: { remoteName: 'sample' } });
    const received = receivedSince(from) as Array<{ variables?: Record<string, unknown> | null }>;
    expect(received).toHaveLength(1);
    expect(received[0]!.variables ?? {}).toEqual({});
  });

  it('are only those the operation declares when it is rewritten for a customized remote', async () => {
    const from = remote.received.length;
    const response = await post({ query: 'query Main($name: String) { ns { hello(name: $name) } }', variables });
    expect(await response.json()).toEqual({ data: { ns: { hello: 'Hello, Ada!' } } });
    const received = receivedSince(from) as Array<{ variables?: Record<string, unknown> | null }>;
    expect(received).toHaveLength(1);
    expect(Object.values(received[0]!.variables ?? {})).toEqual(['Ada']);
  });

  it('are only those the subscription declares, over graphql-ws', async () => {
    const from = remote.subscribed.length;
    const query = 'subscription Main($from: Int!) { countdown(from: $from, intervalMs: 1) }';
    expect(await overGraphqlWs({ query, variables: { from: 1, extra: 'not declared' } })).toEqual([{ data: { countdown: 1 } }, { data: { countdown: 0 } }]);
    expect(remote.subscribed.slice(from)).toEqual([expect.objectContaining({ variables: { from: 1 } })]);
  });
});
