import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger, startStubRemote, type StubRemote } from './utils/fixtures.js';

/**
 * A remote that answers introspection and fails everything else (no GraphQL answer over HTTP, no
 * WebSocket at all), configured with a URL that carries credentials.
 */
let stub: StubRemote;
let configured: string;
let redacted: string;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;
const logger = memoryLogger();

const admin = { role: 'admin', variables: {}, isAdmin: true };
const user = { role: 'user', variables: { 'x-svc-user-id': '1' }, isAdmin: false };
// A role named admin is not admin: only the session's own flag counts.
const namedAdmin = { role: 'admin', variables: {} };

beforeAll(async () => {
  stub = await startStubRemote(({ res }) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end('<h1>Bad gateway</h1>');
  });
  const { host } = new URL(stub.url);
  configured = `http://svc:hunter2@${host}/graphql?api_key=secret-key#frag`;
  redacted = `http://${host}/graphql`;
  registry = createRemoteSchemaRegistry({ logger, retry: false });
  gateway = await startGateway(registry);
  const plan = await registry.plan([
    { name: 'plain', definition: { url: configured } },
    { name: 'nested', definition: { url: configured, customization: { root_fields_namespace: 'ns' } } },
  ]);
  expect(plan.problems).toEqual([]);
  registry.commit(plan);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await stub.close();
});

const message = (url: string) => `HTTP exception occurred while sending the request to "${url}"`;
/** A subscription names the transport it used, and the URL it connects to: `ws(s)://`, no fragment. */
const wsMessage = (url: string) => `WebSocket exception occurred while subscribing to "${url.replace(/^http/, 'ws').replace(/#.*$/, '')}"`;

async function errorOf(query: string, session?: object): Promise<{ message: string; path?: unknown }> {
  const response = await gateway.post({ query }, session ? { 'x-test-session': JSON.stringify(session) } : {});
  expect(response.status).toBe(200);
  expect(response.body.errors).toHaveLength(1);
  return response.body.errors[0];
}

async function subscriptionErrorOf(session?: object, query = 'subscription { countdown(from: 1) }'): Promise<unknown> {
  const results: unknown[] = [];
  const client = gateway.wsClient(session ? { session } : undefined);
  for await (const result of client.iterate({ query })) results.push(result);
  expect(results).toHaveLength(1);
  return (results[0] as { errors: Array<{ message: string }> }).errors[0]?.message;
}

describe('the URL of a failed remote in errors', () => {
  it('carries no user, password, query string or fragment for anyone but admin (fast path)', async () => {
    expect((await errorOf('{ hello }')).message).toBe(message(redacted));
    expect((await errorOf('{ hello }', user)).message).toBe(message(redacted));
    expect((await errorOf('{ hello }', namedAdmin)).message).toBe(message(redacted));
  });

  it('is as configured for admin (fast path)', async () => {
    expect((await errorOf('{ hello }', admin)).message).toBe(message(configured));
  });

  it('is redacted the same way through delegation', async () => {
    expect(await errorOf('{ ns { hello } }', user)).toMatchObject({ message: message(redacted), path: ['ns'] });
    expect(await errorOf('{ ns { hello } }', admin)).toMatchObject({ message: message(configured), path: ['ns'] });
    expect(await errorOf('mutation { ns { addMessage(input: {text: "x"}) { id } } }', user)).toMatchObject({
      message: message(redacted),
    });
  });

  it('is redacted the same way for subscriptions', async () => {
    expect(await subscriptionErrorOf(user)).toBe(wsMessage(redacted));
    expect(await subscriptionErrorOf()).toBe(wsMessage(redacted));
    expect(await subscriptionErrorOf(admin)).toBe(wsMessage(configured));
    // under a namespace
    expect(await subscriptionErrorOf(user, 'subscription { ns { countdown(from: 1) } }')).toBe(wsMessage(redacted));
    expect(await subscriptionErrorOf(admin, 'subscription { ns { countdown(from: 1) } }')).toBe(wsMessage(configured));
  });
});

describe('a URL read from the environment', () => {
  it('is named by its variable in every error, admin included: no answer shows the value of a variable', async () => {
    process.env['REDACTION_TEST_REMOTE_URL'] = configured;
    const fromEnv = createRemoteSchemaRegistry({ logger, retry: false });
    const envGateway = await startGateway(fromEnv);
    try {
      const plan = await fromEnv.plan([{ name: 'env', definition: { url_from_env: 'REDACTION_TEST_REMOTE_URL' } }]);
      expect(plan.problems).toEqual([]);
      fromEnv.commit(plan);
      for (const session of [admin, user, undefined]) {
        const response = await envGateway.post({ query: '{ hello }' }, session ? { 'x-test-session': JSON.stringify(session) } : {});
        expect(response.body.errors).toEqual([
          { message: message('{{REDACTION_TEST_REMOTE_URL}}'), extensions: { code: 'remote-schema-error', path: '$' } },
        ]);
      }
    } finally {
      delete process.env['REDACTION_TEST_REMOTE_URL'];
      await envGateway.close();
      await fromEnv.dispose();
    }
  });
});

describe('introspection errors', () => {
  it('name the remote without credentials (they reach the metadata API and its logs)', async () => {
    const down = await startStubRemote(() => {});
    const { host } = new URL(down.url);
    await down.close();
    const plan = await registry.plan([{ name: 'down', definition: { url: `http://svc:hunter2@${host}/graphql?api_key=secret-key` } }]);
    expect(plan.problems).toEqual([{ name: 'down', code: 'remote-schema-error', message: message(`http://${host}/graphql`) }]);
  });
});

describe('logs', () => {
  it('never show a remote URL with its credentials (failed calls, failed subscriptions, failed introspection)', () => {
    const warnings = logger.lines.filter((l) => l.startsWith('warn'));
    expect(warnings.some((l) => l.includes(`answer from "${redacted}" is not a GraphQL response`))).toBe(true);
    expect(warnings.some((l) => l.includes('remote subscription to "ws://') && l.includes('/graphql" failed'))).toBe(true);
    expect(warnings.some((l) => /request to "http:\/\/127\.0\.0\.1:\d+\/graphql" failed/.test(l))).toBe(true);
    for (const line of logger.lines) {
      expect(line).not.toContain('hunter2');
      expect(line).not.toContain('secret-key');
      expect(line).not.toContain('frag');
    }
  });
});
