import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';

/**
 * The locations of a remote's errors point into the client's document, whatever text the gateway
 * sent: the client's own (whatever its line breaks), its operation printed without comments, or a
 * text in which presets put session values of another length than what the client wrote.
 */

let remote: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

/** Longer than the marker the rewrite leaves in its place: everything after it moves. */
const USER_ID = 'a-session-value-longer-than-any-marker-in-the-rewritten-text';
const userHeaders = { 'x-test-session': JSON.stringify({ role: 'user', variables: { 'x-svc-user-id': USER_ID } }) };

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
  registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false, enableRemoteSchemaPermissions: true, getSession: testGetSession });
  gateway = await startGateway(registry);
  const permissions = [
    { role: 'user', schema: 'type Query { hello(name: String @preset(value: "x-svc-user-id")): String! boom: String }' },
  ];
  const plan = await registry.plan([
    { name: 'sample', definition: { url: remote.url }, permissions },
    { name: 'custom', definition: { url: remote.url, customization: { root_fields_namespace: 'ns' } }, permissions },
  ]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await remote.close();
});

const boom = (line: number, column: number, path: string[]) => ({
  message: 'boom: this field always fails',
  locations: [{ line, column }],
  path,
  extensions: { code: 'BOOM' },
});

describe('locations of a remote\'s errors', () => {
  it('are the client\'s when its own text is sent, whatever its line breaks', async () => {
    for (const query of ['{hello\r\nboom}', '{hello\rboom}', '{hello\nboom}']) {
      remote.received.length = 0;
      const response = await gateway.post({ query }, { 'x-test-session': JSON.stringify({ role: 'admin', isAdmin: true }) });
      expect(response.body, JSON.stringify(query)).toEqual({ data: { hello: 'Hello, world!', boom: null }, errors: [boom(2, 1, ['boom'])] });
      // Sent as the client wrote it.
      expect((remote.received[0]!.body as { query: string }).query).toBe(query);
    }
  });

  it('are moved back into the client\'s text around the session values presets put in it', async () => {
    remote.received.length = 0;
    const response = await gateway.post({ query: '# the client\'s\r\n{ hello boom }' }, userHeaders);
    expect(response.body).toEqual({ data: { hello: `Hello, ${USER_ID}!`, boom: null }, errors: [boom(2, 9, ['boom'])] });
    // The remote saw the session value, before the field it reported.
    expect((remote.received[0]!.body as { query: string }).query).toBe(`{\n  hello(name: "${USER_ID}")\n  boom\n}`);
  });

  it('are moved back through a plan and presets at once', async () => {
    // Printed again for the remote, in its own names, with the session value in it.
    const response = await gateway.post({ query: 'query Q {\n  ns { hello   boom }\n}' }, userHeaders);
    expect(response.body).toEqual({ data: { ns: { hello: `Hello, ${USER_ID}!`, boom: null } }, errors: [boom(2, 16, ['ns', 'boom'])] });
  });

  it('are moved back for a second request of the same document, with another session value', async () => {
    const other = { 'x-test-session': JSON.stringify({ role: 'user', variables: { 'x-svc-user-id': 'x' } }) };
    const response = await gateway.post({ query: '# the client\'s\r\n{ hello boom }' }, other);
    expect(response.body).toEqual({ data: { hello: 'Hello, x!', boom: null }, errors: [boom(2, 9, ['boom'])] });
  });
});
