import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startGeneratedRemote, startSampleRemote, type RunningRemote } from '../src/index.js';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('the sample remote', () => {
  let remote: RunningRemote;
  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'one' });
  });
  afterAll(() => remote.close());

  it('answers queries and records what it received', async () => {
    const response = await post(remote.url, { query: '{ hello(name: "x") remoteName echoHeaders }' }, { 'x-probe': 'yes' });
    expect(response.status).toBe(200);
    expect(response.body.data.hello).toBe('Hello, x!');
    expect(response.body.data.remoteName).toBe('one');
    expect(JSON.parse(response.body.data.echoHeaders)['x-probe']).toBe('yes');
    expect(remote.received.at(-1)?.headers['x-probe']).toBe('yes');
  });

  it('fails the boom field with a field error', async () => {
    const response = await post(remote.url, { query: '{ boom }' });
    expect(response.body).toEqual({
      data: { boom: null },
      errors: [{ message: 'boom: this field always fails', locations: [{ line: 1, column: 3 }], path: ['boom'], extensions: { code: 'BOOM' } }],
    });
  });

  it('streams a countdown over graphql-ws and sees the connection_init headers', async () => {
    const client = createClient({ url: remote.wsUrl, webSocketImpl: WebSocket, connectionParams: { headers: { 'X-Who': 'ws' } } });
    try {
      const values: unknown[] = [];
      for await (const result of client.iterate({ query: 'subscription { countdown(from: 1) }' })) values.push(result);
      expect(values).toEqual([{ data: { countdown: 1 } }, { data: { countdown: 0 } }]);
      expect(remote.connections.at(-1)?.headers).toEqual({ 'x-who': 'ws' });
    } finally {
      await client.dispose();
    }
  });
});

describe('the generated remote', () => {
  it('has the requested number of types', async () => {
    const remote = await startGeneratedRemote({ types: 50, prefix: 'G' });
    try {
      const response = await post(remote.url, {
        query: '{ __schema { types { name } } Gt49 { id name value parent { name } } }',
      });
      const names = (response.body.data.__schema.types as Array<{ name: string }>).map((t) => t.name);
      expect(names.filter((n) => /^GT\d+$/.test(n))).toHaveLength(50);
      expect(response.body.data.Gt49).toEqual({ id: 'G49', name: 'GT49', value: 49, parent: { name: 'GT24' } });
    } finally {
      await remote.close();
    }
  });
});
