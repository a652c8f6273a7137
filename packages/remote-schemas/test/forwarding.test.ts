import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaDefinition, type RemoteSchemaRegistry } from '../src/index.js';
import { forwardedHeaders } from '../src/headers.js';
import { startGateway, type Gateway } from './utils/gateway.js';

/** Headers of the HTTP request itself (asserted separately). */
const TRANSPORT = new Set(['host', 'connection', 'content-length', 'content-type', 'accept']);

function withoutTransport(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !TRANSPORT.has(name)));
}

const session = { role: 'user', variables: { 'x-svc-user-id': '42', 'x-svc-org': 'acme' } };
const clientHeaders = {
  authorization: 'Bearer client-token',
  cookie: 'a=b',
  'x-custom': 'from-client',
  'x-other': 'kept',
  'user-agent': 'client-agent/1.0',
  'accept-language': 'fr',
  'x-svc-role': 'hacker',
  'x-svc-admin-secret': 'top-secret',
  'X-Svc-User-Id': '666',
  'x-test-session': JSON.stringify(session),
};

let remote: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

beforeAll(async () => {
  process.env['REMOTE_SCHEMAS_TEST_TOKEN'] = 'from-env';
  remote = await startSampleRemote({ name: 'sample' });
  registry = createRemoteSchemaRegistry({ retry: false });
  gateway = await startGateway(registry);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await remote.close();
});

async function useOnly(definition: Omit<RemoteSchemaDefinition, 'url'>): Promise<void> {
  const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, ...definition } }]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
  remote.received.length = 0;
}

async function echoedHeaders(query: string, pick: (data: any) => string): Promise<Record<string, string>> {
  const response = await gateway.post({ query }, clientHeaders);
  expect(response.status).toBe(200);
  expect(response.body.errors).toBeUndefined();
  return JSON.parse(pick(response.body.data)) as Record<string, string>;
}

const configured: RemoteSchemaDefinition['headers'] = [
  { name: 'X-Custom', value: 'from-config' },
  { name: 'X-Svc-User-Id', value: '7' },
  { name: 'X-Token', value_from_env: 'REMOTE_SCHEMAS_TEST_TOKEN' },
];

describe('headers sent to the remote', () => {
  const expected = (gatewayHost: string) => ({
    // configured headers win over everything
    'x-custom': 'from-config',
    'x-svc-user-id': '7',
    'x-token': 'from-env',
    // then the session (role included), never the client's own x-svc-* headers
    'x-svc-role': 'user',
    'x-svc-org': 'acme',
    // then the client's headers, without connection-level ones and the admin secret
    authorization: 'Bearer client-token',
    cookie: 'a=b',
    'x-other': 'kept',
    'x-test-session': JSON.stringify(session),
    'sec-fetch-mode': 'cors', // set by the test's own fetch
    'user-agent': 'client-agent/1.0',
    'x-forwarded-host': gatewayHost,
    'x-forwarded-user-agent': 'client-agent/1.0',
  });

  it('are exactly: configured, session, filtered client headers (fast path)', async () => {
    await useOnly({ headers: configured, forward_client_headers: true });
    const headers = await echoedHeaders('{ echoHeaders }', (d) => d.echoHeaders);
    expect(withoutTransport(headers)).toEqual(expected(new URL(gateway.url).host));
    expect(headers['content-type']).toBe('application/json');
    expect(headers['accept']).toBe('application/graphql-response+json, application/json');
    expect(headers['host']).toBe(new URL(remote.url).host);
  });

  it('carry a session variable beyond Latin-1 as its UTF-8 bytes instead of failing the call', async () => {
    await useOnly({});
    const unicode = { role: 'user', variables: { 'x-svc-user-name': '名前 😀' } };
    // The test's session header itself must be ASCII: JSON escapes keep it so.
    const ascii = JSON.stringify(unicode).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const response = await gateway.post({ query: '{ echoHeaders }' }, { 'x-test-session': ascii });
    expect(response.body.errors).toBeUndefined();
    const received = JSON.parse(response.body.data.echoHeaders as string) as Record<string, string>;
    // Node reads header bytes as Latin-1: decode them as the remote's framework would.
    expect(Buffer.from(received['x-svc-user-name'] as string, 'latin1').toString('utf8')).toBe('名前 😀');
  });

  it('are the same through delegation (customized remote)', async () => {
    await useOnly({ headers: configured, forward_client_headers: true, customization: { root_fields_namespace: 'ns' } });
    const headers = await echoedHeaders('{ ns { echoHeaders } }', (d) => d.ns.echoHeaders);
    expect(withoutTransport(headers)).toEqual(expected(new URL(gateway.url).host));
  });

  it('read value_from_env at every call', async () => {
    await useOnly({ headers: configured });
    process.env['REMOTE_SCHEMAS_TEST_TOKEN'] = 'rotated';
    try {
      const headers = await echoedHeaders('{ echoHeaders }', (d) => d.echoHeaders);
      expect(headers['x-token']).toBe('rotated');
    } finally {
      process.env['REMOTE_SCHEMAS_TEST_TOKEN'] = 'from-env';
    }
  });

  it('leave the client headers out unless forward_client_headers', async () => {
    await useOnly({ headers: configured });
    const headers = await echoedHeaders('{ echoHeaders }', (d) => d.echoHeaders);
    expect(withoutTransport(headers)).toEqual({
      'x-custom': 'from-config',
      'x-svc-user-id': '7',
      'x-token': 'from-env',
      'x-svc-role': 'user',
      'x-svc-org': 'acme',
    });
  });

  it('carry only the configured headers for introspection', async () => {
    await useOnly({ headers: configured, forward_client_headers: true });
    const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, headers: configured } }], { reload: 'all' });
    expect(plan.problems).toEqual([]);
    const introspection = remote.received.find((r) => JSON.stringify(r.body).includes('IntrospectionQuery'));
    expect(introspection && withoutTransport(introspection.headers)).toEqual({
      'x-custom': 'from-config',
      'x-svc-user-id': '7',
      'x-token': 'from-env',
    });
  });
});

describe('results', () => {
  beforeAll(() => useOnly({}));

  it('passes remote field errors through with their paths', async () => {
    const response = await gateway.post({ query: 'query Boom { hello boom }' });
    expect(response).toEqual({
      status: 200,
      body: {
        data: { hello: 'Hello, world!', boom: null },
        errors: [
          { message: 'boom: this field always fails', locations: [{ line: 1, column: 20 }], path: ['boom'], extensions: { code: 'BOOM' } },
        ],
      },
    });
  });

  it('passes remote field errors through with their paths when delegating', async () => {
    await useOnly({ customization: { root_fields_namespace: 'ns' } });
    const response = await gateway.post({ query: '{ ns { hello boom } }' });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ ns: { hello: 'Hello, world!', boom: null } });
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors[0]).toMatchObject({
      message: 'boom: this field always fails',
      path: ['ns', 'boom'],
      extensions: { code: 'BOOM' },
    });
    await useOnly({});
  });

  it('keeps the operation name and variables (fast path: the document goes as it is)', async () => {
    const query = 'query Greet($name: String) { hello(name: $name) }\nquery Other { remoteName }';
    const response = await gateway.post({ query, variables: { name: 'Op' }, operationName: 'Greet' });
    expect(response).toEqual({ status: 200, body: { data: { hello: 'Hello, Op!' } } });
    expect(remote.received.at(-1)?.body).toMatchObject({ operationName: 'Greet', variables: { name: 'Op' } });
  });

  it('keeps the operation name when delegating', async () => {
    await useOnly({ customization: { root_fields_namespace: 'ns' } });
    const response = await gateway.post({ query: 'query Named($name: String) { ns { hello(name: $name) } }', variables: { name: 'D' } });
    expect(response).toEqual({ status: 200, body: { data: { ns: { hello: 'Hello, D!' } } } });
    expect(remote.received.at(-1)?.body).toMatchObject({ operationName: 'Named', variables: { name: 'D' } });
    await useOnly({});
  });

  it('sends an operation on one uncustomized remote as it is, in one request', async () => {
    // The client's own text goes to the remote, so that error locations stay right.
    remote.received.length = 0;
    const query = 'query Users($role: Role) { users(role: $role) { ...F } me: user(id: "1") { name } } fragment F on User { id name }';
    const response = await gateway.post({ query, variables: { role: 'ADMIN' }, operationName: 'Users' });
    expect(response).toEqual({
      status: 200,
      body: { data: { users: [{ id: '1', name: 'Ada' }], me: { name: 'Ada' } } },
    });
    expect(remote.received).toHaveLength(1);
    expect(remote.received[0]?.body).toEqual({
      query,
      variables: { role: 'ADMIN' },
      operationName: 'Users',
    });
  });

  it('delegates an operation that also asks the gateway (root __typename)', async () => {
    remote.received.length = 0;
    const response = await gateway.post({ query: 'query Mixed { __typename hello }' });
    expect(response).toEqual({ status: 200, body: { data: { __typename: 'Query', hello: 'Hello, world!' } } });
    expect(remote.received).toHaveLength(1);
    expect(JSON.stringify(remote.received[0]?.body)).not.toContain('__typename');
  });

  it('forwards mutations', async () => {
    const response = await gateway.post({
      query: 'mutation Add($input: MessageInput!) { addMessage(input: $input) { text author } }',
      variables: { input: { text: 'hello', author: 'me' } },
    });
    expect(response).toEqual({ status: 200, body: { data: { addMessage: { text: 'hello', author: 'me' } } } });
  });
});

describe('timeout_seconds', () => {
  it('bounds each call, answering the exact remote-schema-error', async () => {
    await useOnly({ timeout_seconds: 0.3 });
    const response = await gateway.post({ query: '{ slow(ms: 3000) }' });
    expect(response).toEqual({
      status: 200,
      body: {
        errors: [
          {
            message: `HTTP exception occurred while sending the request to "${remote.url}"`,
            extensions: { code: 'remote-schema-error', path: '$' },
          },
        ],
      },
    });
  });

  it('bounds delegated calls too', async () => {
    await useOnly({ timeout_seconds: 0.3, customization: { root_fields_namespace: 'ns' } });
    const response = await gateway.post({ query: '{ ns { slow(ms: 3000) } }' });
    expect(response.status).toBe(200);
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors[0]).toMatchObject({
      message: `HTTP exception occurred while sending the request to "${remote.url}"`,
      extensions: { code: 'remote-schema-error', path: '$' },
    });
  });
});

describe('subscriptions', () => {
  beforeAll(() => useOnly({ headers: [{ name: 'X-Configured', value: 'yes' }] }));

  it('are forwarded over graphql-ws with the headers in connection_init', async () => {
    const client = gateway.wsClient({ session });
    const values: unknown[] = [];
    for await (const result of client.iterate({ query: 'subscription { countdown(from: 2) }' })) values.push(result);
    expect(values).toEqual([{ data: { countdown: 2 } }, { data: { countdown: 1 } }, { data: { countdown: 0 } }]);
    expect(withoutTransport(remote.connections.at(-1)?.headers ?? {})).toEqual({
      'x-configured': 'yes',
      'x-svc-role': 'user',
      'x-svc-user-id': '42',
      'x-svc-org': 'acme',
    });
  });

  it('share one upstream socket per distinct header set and close it when the last subscriber leaves', async () => {
    const waitFor = async (condition: () => boolean) => {
      for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
      return condition();
    };
    const open = (who: Record<string, unknown>, query = 'subscription { messageAdded { text } }') => {
      const client = gateway.wsClient({ session: who });
      const iterator = client.iterate({ query });
      const first = iterator.next();
      return { iterator, first };
    };
    const before = remote.connections.length;
    const subscribedBefore = remote.subscribed.length;
    const a1 = open(session);
    // The same subscription written with other spacing, commas and a comment: it shares a1's.
    const a2 = open(session, '# the same\nsubscription{messageAdded{,text,}}');
    const b = open({ role: 'editor', variables: {} });
    expect(await waitFor(() => remote.openSockets() === 2 && remote.connections.length - before === 2)).toBe(true);
    // One upstream subscription per session: a2 joined a1's.
    expect(await waitFor(() => remote.subscribed.length - subscribedBefore === 2)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(remote.subscribed.length - subscribedBefore).toBe(2);
    await gateway.post({ query: 'mutation { addMessage(input: {text: "ping"}) { id } }' });
    for (const sub of [a1, a2, b]) {
      expect(await sub.first).toEqual({ done: false, value: { data: { messageAdded: { text: 'ping' } } } });
    }
    await a1.iterator.return?.();
    await b.iterator.return?.();
    expect(await waitFor(() => remote.openSockets() === 1)).toBe(true);
    await a2.iterator.return?.();
    expect(await waitFor(() => remote.openSockets() === 0)).toBe(true);
  });
});

describe('forwardedHeaders', () => {
  it("never forwards the client's WebSocket handshake headers", () => {
    const headers = forwardedHeaders(
      {
        configured: [],
        forwardClientHeaders: true,
        session: undefined,
        clientHeaders: {
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version': '13',
          'sec-websocket-protocol': 'graphql-transport-ws',
          'sec-websocket-extensions': 'permessage-deflate',
          'sec-fetch-mode': 'websocket',
          'x-kept': 'yes',
        },
      },
      { sessionVariablePrefix: 'x-svc-', adminSecretHeader: 'x-svc-admin-secret' },
    );
    expect(headers).toEqual({ 'sec-fetch-mode': 'websocket', 'x-kept': 'yes' });
  });
});
