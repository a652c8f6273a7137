import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket, { WebSocketServer } from 'ws';
import { buildSchema, graphqlSync } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type ServerOptions, type SvcGraphqlServer } from '../src/index.js';

/**
 * The server at the edge: request limits, WebSocket rules and browsers, each through a running
 * server and a real client.
 */

const KEY = 'an edge test secret of 32+ characters!';
const ADMIN_SECRET = 'edge-test-admin-secret';
const ADMIN = { 'x-svc-admin-secret': ADMIN_SECRET };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-edge-'));
let remote: RunningRemote;
const servers: SvcGraphqlServer[] = [];
let stores = 0;

async function start(options: ServerOptions = {}): Promise<SvcGraphqlServer> {
  const server = await createServer({
    port: 0,
    databaseUrl: `file:${join(dir, `metadata-${stores++}.json`)}`,
    adminSecret: ADMIN_SECRET,
    jwtSecret: JSON.stringify({ type: 'HS256', key: KEY, header: { type: 'Cookie', name: 'token' } }),
    logger: quiet,
    ...options,
  });
  servers.push(server);
  return server;
}

async function addSample(server: SvcGraphqlServer): Promise<void> {
  const response = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } }),
  });
  expect(response.status).toBe(200);
}

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function post(server: SvcGraphqlServer, body: string, headers: Record<string, string> = ADMIN): Promise<Response> {
  return fetch(`${server.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

function token(role: string): Promise<string> {
  return new SignJWT({
    'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': role, 'x-svc-allowed-roles': [role] },
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(KEY));
}

/** A graphql-ws client whose upgrade request carries `headers` (as a browser's would). */
function wsClient(server: SvcGraphqlServer, headers: Record<string, string> = {}, connectionHeaders?: Record<string, string>): Client {
  class WithHeaders extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return createClient({
    url: server.wsUrl,
    webSocketImpl: WithHeaders,
    retryAttempts: 0,
    lazy: true,
    ...(connectionHeaders && { connectionParams: { headers: connectionHeaders } }),
  });
}

async function first(client: Client, query: string): Promise<unknown> {
  const iterator = client.iterate({ query });
  try {
    const step = await iterator.next();
    return step.value;
  } finally {
    await iterator.return?.();
  }
}

function closeCode(client: Client): Promise<number> {
  return new Promise((resolve) => client.on('closed', (event) => resolve((event as { code: number }).code)));
}

const tooDeep = {
  errors: [{ message: 'the operation is nested too deeply: more than 256 levels', extensions: { code: 'validation-failed', path: '$' } }],
};

beforeAll(async () => {
  remote = await startSampleRemote({ port: 0 });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the body of a metadata request', () => {
  const replace = (comment: string) =>
    JSON.stringify({ type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'sample', definition: { url: remote.url }, comment }] } });
  const metadata = (server: SvcGraphqlServer, body: string) =>
    fetch(`${server.url}/v1/metadata`, { method: 'POST', headers: { 'content-type': 'application/json', ...ADMIN }, body });

  it('is bounded by --max-metadata-body-size: over it, 413 payload-too-large in the metadata error shape', async () => {
    const server = await start({ maxMetadataBodySize: 8192 });
    const over = await metadata(server, replace('c'.repeat(10_000)));
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({ error: 'request body is larger than 8192 bytes', path: '$', code: 'payload-too-large' });
    // Nothing was replaced; a body under the limit is served.
    const under = await metadata(server, replace('short'));
    expect(under.status).toBe(200);
    expect(await under.json()).toEqual({ message: 'success' });
  });

  it('takes a replace_metadata document of several MiB under the default (16 MiB)', async () => {
    const server = await start();
    const body = replace('c'.repeat(5 * 1024 * 1024));
    const response = await metadata(server, body);
    expect(await response.json()).toEqual({ message: 'success' });
    expect(response.status).toBe(200);
    const tooLarge = await metadata(server, replace('c'.repeat(16 * 1024 * 1024)));
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ error: 'request body is larger than 16777216 bytes', path: '$', code: 'payload-too-large' });
  });
});

describe('request limits', () => {
  let server: SvcGraphqlServer;
  beforeAll(async () => {
    server = await start({ maxRequestBodySize: 4096, maxQueryTokens: 100 });
    await addSample(server);
  });

  it('answers a body over the limit 413 from its Content-Length, closing the connection when it is far over', async () => {
    const tooLarge = {
      errors: [{ message: 'request body is larger than 4096 bytes', extensions: { code: 'payload-too-large', path: '$' } }],
    };
    // A little over: the rest is read and thrown away, so the client reads its 413 and may go on.
    const response = await post(server, JSON.stringify({ query: `{ hello(name: "${'x'.repeat(5000)}") }` }));
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).not.toBe('close');
    expect(await response.json()).toEqual(tooLarge);
    // Far over: not read at all.
    const far = await post(server, JSON.stringify({ query: `{ hello(name: "${'x'.repeat(40_000)}") }` }));
    expect(far.status).toBe(413);
    expect(far.headers.get('connection')).toBe('close');
    expect(await far.json()).toEqual(tooLarge);
  });

  it('answers a chunked body 413 as soon as it passes the limit, without waiting for its end', async () => {
    const url = new URL(`${server.url}/v1/graphql`);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', ...ADMIN } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      // 8 KiB written, the body never ended: only a streaming limit can answer this.
      request.write(`{"query":"{ hello(name: \\"${'y'.repeat(8192)}`);
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ message: 'request body is larger than 4096 bytes', extensions: { code: 'payload-too-large', path: '$' } }],
    });
  });

  it('serves a body within the limit', async () => {
    const response = await post(server, JSON.stringify({ query: '{ hello(name: "Ada") }' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { hello: 'Hello, Ada!' } });
  });

  it('refuses a document of more lexical tokens than the limit with 400, and serves one at the limit', async () => {
    // `{ a a … }`: two braces and the fields.
    const over = await post(server, JSON.stringify({ query: `{ ${'remoteName '.repeat(99)}}` }));
    expect(over.status).toBe(400);
    expect(await over.json()).toEqual({
      errors: [{ message: 'the operation has more than 100 tokens', extensions: { code: 'validation-failed', path: '$' } }],
    });
    const at = await post(server, JSON.stringify({ query: `{ ${'remoteName '.repeat(98)}}` }));
    expect(at.status).toBe(200);
    // Long enough to be counted by the lexer before parsing (more characters than the limit).
    const long = await post(server, JSON.stringify({ query: `{ ${'remoteName      '.repeat(120)}}` }));
    expect(long.status).toBe(400);
    expect(await long.json()).toEqual({
      errors: [{ message: 'the operation has more than 100 tokens', extensions: { code: 'validation-failed', path: '$' } }],
    });
  });

  it('refuses 300 levels built from shallow fragments with 400', async () => {
    const big = await start({ maxQueryTokens: 100_000 });
    const fragments = Array.from({ length: 300 }, (_, i) =>
      i === 299 ? `fragment F${i} on Query { __typename }` : `fragment F${i} on Query { ... on Query { ...F${i + 1} } }`,
    );
    const response = await post(big, JSON.stringify({ query: `{ ...F0 } ${fragments.join(' ')}` }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(tooDeep);
  });

  it('serves fragments spread into each other within the depth limit, and refuses the text nested too deep', async () => {
    const fragments = Array.from({ length: 20 }, (_, i) =>
      i === 19 ? `fragment F${i} on Query { remoteName }` : `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    );
    const big = await start({ maxQueryTokens: 100_000 });
    await addSample(big);
    const fine = await post(big, JSON.stringify({ query: `{ ...F0 } ${fragments.join(' ')}` }));
    expect(fine.status).toBe(200);
    expect(await fine.json()).toEqual({ data: { remoteName: 'sample' } });
    const nested = await post(big, JSON.stringify({ query: `${'{a'.repeat(3000)}${'}'.repeat(3000)}` }));
    expect(nested.status).toBe(400);
    expect(await nested.json()).toEqual(tooDeep);
  });

  it('counts a fragment spread as the selections it holds: written with fragments, an operation is as deep as written out', async () => {
    const big = await start({ maxQueryTokens: 100_000 });
    await addSample(big);
    // Nested selection sets: 1 the operation's, 2 user's (a User), then the set opened by `posts`
    // at odd levels (a Post) and by `author` at even ones (a User).
    const opening = (level: number) => (level % 2 === 1 ? 'posts' : 'author');
    const typeAt = (level: number) => (level % 2 === 1 ? 'Post' : 'User');
    const writtenOut = (depth: number) => {
      let inner = 'id';
      for (let level = depth; level >= 3; level--) inner = `${opening(level)} { ${inner} }`;
      return `{ user(id: "1") { ${inner} } }`;
    };
    const withFragments = (depth: number) => {
      // One fragment per level: F<level> holds what the set opened at that level selects.
      const fragments: string[] = [];
      for (let level = 3; level <= depth; level++) {
        const inside = level === depth ? 'id' : `${opening(level + 1)} { ...F${level + 1} }`;
        fragments.push(`fragment F${level} on ${typeAt(level)} { ${inside} }`);
      }
      return `{ user(id: "1") { posts { ...F3 } } } ${fragments.join(' ')}`;
    };
    for (const depth of [256, 257]) {
      for (const query of [writtenOut(depth), withFragments(depth)]) {
        const response = await post(big, JSON.stringify({ query }));
        const body = (await response.json()) as { data?: unknown; errors?: unknown };
        if (depth === 256) {
          expect(response.status).toBe(200);
          expect(body.errors).toBeUndefined();
          expect(body.data).toMatchObject({ user: { posts: expect.any(Array) } });
        } else {
          expect(response.status).toBe(400);
          expect(body).toEqual(tooDeep);
        }
      }
    }
  });

  it('answers the limits with 400 over graphql-ws too, keeping the connection', async () => {
    const client = wsClient(server, {}, ADMIN);
    await expect(first(client, `{ ${'remoteName '.repeat(99)}}`)).rejects.toMatchObject([
      { message: 'the operation has more than 100 tokens', extensions: { code: 'validation-failed', path: '$' } },
    ]);
    await expect(first(client, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await client.dispose();
  });

  it('closes a WebSocket whose message is larger than the body limit with 1009', async () => {
    const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    await new Promise((resolve) => socket.on('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: ADMIN } }));
    await new Promise((resolve) => socket.once('message', resolve));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `{ hello(name: "${'z'.repeat(5000)}") }` } }));
    expect(await closed).toBe(1009);
  });
});

describe('graphql-ws', () => {
  let server: SvcGraphqlServer;
  beforeAll(async () => {
    server = await start({ maxOperationsPerConnection: 2 });
    await addSample(server);
  });

  it('runs queries, mutations and subscriptions over one socket with the session of connection_init', async () => {
    const client = wsClient(server, {}, { cookie: `token=${await token('user')}` });
    await expect(first(client, '{ hello(name: "ws") }')).resolves.toEqual({ data: { hello: 'Hello, ws!' } });
    await expect(first(client, 'mutation { addMessage(input: { text: "over ws" }) { text author } }')).resolves.toEqual({
      data: { addMessage: { text: 'over ws', author: null } },
    });
    await expect(first(client, 'subscription { countdown(from: 2, intervalMs: 1) }')).resolves.toEqual({ data: { countdown: 2 } });
    await client.dispose();
  });

  it('fails an operation alone when graphql-js throws while validating it, keeping the connection', async () => {
    const client = wsClient(server, {}, ADMIN);
    // graphql-js 16's single-root-field rule throws for this instead of reporting it.
    await expect(first(client, 'subscription ($flag: Boolean!) { countdown(from: 1) @include(if: $flag) }')).rejects.toMatchObject([
      { message: 'Argument "if" of required type "Boolean!" was provided the variable "$flag" which was not provided a runtime value.' },
    ]);
    // No HTTP status leaks into what a socket shows.
    await expect(first(client, '{ hello @include(if: "yes") }')).rejects.toEqual([
      expect.not.objectContaining({ extensions: expect.objectContaining({ http: expect.anything() }) }),
    ]);
    await expect(first(client, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await client.dispose();
  });

  it('closes with 4400 a connection whose client sends a message only a server may send', async () => {
    const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    await new Promise((resolve) => socket.on('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: ADMIN } }));
    await new Promise((resolve) => socket.once('message', resolve));
    socket.send(JSON.stringify({ id: '1', type: 'next', payload: { data: {} } }));
    expect(await closed).toBe(4400);
  });

  it('bounds the operations running at once on one connection', async () => {
    const client = wsClient(server, {}, ADMIN);
    const open = [1, 2].map(() => client.iterate({ query: 'subscription { countdown(from: 1000, intervalMs: 1000) }' }));
    await Promise.all(open.map((iterator) => iterator.next()));
    await expect(first(client, '{ remoteName }')).rejects.toMatchObject([
      { message: 'too many operations at once on this connection (at most 2)', extensions: { code: 'validation-failed' } },
    ]);
    await open[0]?.return?.();
    await expect(first(client, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await open[1]?.return?.();
    await client.dispose();
  });
});

describe('HTTP subscriptions', () => {
  it('end at the expiry of the token with a last JWTExpired event', async () => {
    const server = await start();
    await addSample(server);
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const shortLived = await new SignJWT({
      'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'] },
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(expiresAt)
      .sign(new TextEncoder().encode(KEY));
    const response = await fetch(`${server.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', cookie: `token=${shortLived}` },
      body: JSON.stringify({ query: 'subscription { countdown(from: 1000, intervalMs: 200) }' }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).toBe(200);
    // The whole stream: it must end by itself.
    const text = await response.text();
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt * 1000);
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line !== 'data: ')
      .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
    expect(events.length).toBeGreaterThan(2);
    expect(events[0]).toEqual({ data: { countdown: 1000 } });
    expect(events.at(-1)).toEqual({
      errors: [{ message: 'Could not verify JWT: JWTExpired', extensions: { code: 'invalid-jwt', path: '$' } }],
    });
  });
});

/**
 * A raw remote of `sdl`: it answers introspection as a GraphQL server does, and hands every other
 * request to `answer`, which may misbehave; `onMessage`, when given, answers its graphql-ws
 * clients' messages, as misbehaving as it likes.
 */
async function startStubRemote(
  sdl: string,
  answer: (res: ServerResponse) => void,
  onMessage?: (socket: WebSocket, message: { type: string; id?: string }) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const schema = buildSchema(sdl);
  const stub = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { query: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      if (body.query.includes('__schema')) res.end(JSON.stringify(graphqlSync({ schema, source: body.query })));
      else answer(res);
    });
  });
  const sockets = onMessage && new WebSocketServer({ server: stub });
  sockets?.on('connection', (socket) => socket.on('message', (data) => onMessage?.(socket, JSON.parse(String(data)) as { type: string; id?: string })));
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(stub.address() as AddressInfo).port}/graphql`,
    close: () => {
      for (const socket of sockets?.clients ?? []) socket.terminate();
      sockets?.close();
      return new Promise((resolve) => stub.close(() => resolve()));
    },
  };
}

/** Adds the remote at `url` as `name`, as the admin. */
async function addRemote(server: SvcGraphqlServer, name: string, url: string): Promise<void> {
  const added = await fetch(`${server.url}/v1/metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ADMIN },
    body: JSON.stringify({ type: 'add_remote_schema', args: { name, definition: { url } } }),
  });
  expect(added.status).toBe(200);
}

/** A remote that answers `{ deep }` with JSON nested `levels` deep. */
function startDeepRemote(levels: number): Promise<{ url: string; close(): Promise<void> }> {
  const deep = `{"data":{"deep":${'['.repeat(levels)}${']'.repeat(levels)}}}`;
  return startStubRemote('scalar JSON type Query { deep: JSON }', (res) => res.end(deep));
}

/** A remote whose `{ slow }` answers after `ms`, counting the calls it holds at once. */
async function startSlowRemote(ms: number): Promise<{ url: string; mostAtOnce: () => number; calls: () => number; close(): Promise<void> }> {
  let open = 0;
  let most = 0;
  let calls = 0;
  const stub = await startStubRemote('type Query { slow: Int }', (res) => {
    calls++;
    most = Math.max(most, ++open);
    setTimeout(() => {
      open--;
      res.end('{"data":{"slow":1}}');
    }, ms);
  });
  return { ...stub, mostAtOnce: () => most, calls: () => calls };
}

describe('batches', () => {
  it('run at most 16 operations of one batch at once, leaving the remote to other clients', async () => {
    const slow = await startSlowRemote(20);
    try {
      const server = await start();
      await addRemote(server, 'slow', slow.url);
      const batch = post(server, JSON.stringify(Array.from({ length: 200 }, () => ({ query: '{ slow }' }))));
      // Another client's request while the batch runs.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const alone = await post(server, JSON.stringify({ query: '{ slow }' }));
      expect(await alone.json()).toEqual({ data: { slow: 1 } });
      const answers = (await (await batch).json()) as unknown[];
      expect(answers).toHaveLength(200);
      expect(answers.every((answer) => JSON.stringify(answer) === '{"data":{"slow":1}}')).toBe(true);
      expect(slow.calls()).toBe(201);
      // 16 of the batch and the other client's: the rest of the remote's sockets stay free for others.
      expect(slow.mostAtOnce()).toBeLessThanOrEqual(17);
    } finally {
      await slow.close();
    }
  });
});

describe('remote answers', () => {
  it('fails the fields of a remote whose answer nests deeper than any operation asks, over HTTP, SSE and graphql-ws, and goes on serving', async () => {
    const hostile = await startDeepRemote(100_000);
    try {
      const server = await start();
      await addSample(server);
      await addRemote(server, 'deep', hostile.url);
      const failed = { message: `HTTP exception occurred while sending the request to "${hostile.url}"`, extensions: { code: 'remote-schema-error' } };
      // The other remote's field keeps its data.
      const response = await post(server, JSON.stringify({ query: '{ deep hello }' }));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ data: { deep: null, hello: 'Hello, world!' }, errors: [{ ...failed, path: ['deep'] }] });
      const sse = await fetch(`${server.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...ADMIN },
        body: JSON.stringify({ query: '{ deep }' }),
        signal: AbortSignal.timeout(10_000),
      });
      const events = (await sse.text()).split('\n\n').filter((e) => e.startsWith('event: '));
      expect(events.map((e) => e.split('\n')[0])).toEqual(['event: next', 'event: complete']);
      expect(JSON.parse(events[0]!.slice(events[0]!.indexOf('data: ') + 6))).toMatchObject({ errors: [failed] });
      const client = wsClient(server, {}, ADMIN);
      try {
        expect(await first(client, '{ deep }')).toMatchObject({ errors: [failed] });
        // The same connection goes on.
        expect(await first(client, '{ hello }')).toEqual({ data: { hello: 'Hello, world!' } });
      } finally {
        await client.dispose();
      }
    } finally {
      await hostile.close();
    }
  });

  it('ends a subscription whose remote sends an event that is not a GraphQL result, and goes on serving', async () => {
    const bad = await startStubRemote(
      'type Query { ok: Int } type Subscription { tick: Int }',
      (res) => res.end('{"data":{"ok":1}}'),
      (socket, message) => {
        if (message.type === 'connection_init') socket.send('{"type":"connection_ack"}');
        if (message.type !== 'subscribe') return;
        socket.send(JSON.stringify({ id: message.id, type: 'next', payload: { data: { tick: 1 } } }));
        // `errors` that is not a list: it took the whole gateway down.
        socket.send(JSON.stringify({ id: message.id, type: 'next', payload: { errors: 'x' } }));
      },
    );
    try {
      const server = await start();
      await addSample(server);
      await addRemote(server, 'bad', bad.url);
      const client = wsClient(server, {}, ADMIN);
      try {
        const results: unknown[] = [];
        for await (const result of client.iterate({ query: 'subscription { tick }' })) results.push(result);
        const failed = `WebSocket exception occurred while subscribing to "${bad.url.replace(/^http/, 'ws')}"`;
        expect(results).toEqual([{ data: { tick: 1 } }, { errors: [{ message: failed, extensions: { code: 'remote-schema-error', path: '$' } }] }]);
        // The gateway, and this connection, go on.
        expect(await first(client, '{ hello }')).toEqual({ data: { hello: 'Hello, world!' } });
      } finally {
        await client.dispose();
      }
    } finally {
      await bad.close();
    }
  });

  it('answers fragments that each spread the one before twice (2^30 occurrences written in 30 lines) as execution does', async () => {
    const server = await start();
    await addSample(server);
    for (const condition of ['', ' @include(if: true)']) {
      let document = 'query { ...F30 }\nfragment F0 on Query { __typename hello }\n';
      for (let i = 1; i <= 30; i++) document += `fragment F${i} on Query { ...F${i - 1}${condition} ...F${i - 1}${condition} }\n`;
      const response = await post(server, JSON.stringify({ query: document }));
      expect(await response.json(), condition).toEqual({ data: { __typename: 'Query', hello: 'Hello, world!' } });
    }
    // And the server goes on.
    expect(await (await post(server, JSON.stringify({ query: '{ hello }' }))).json()).toEqual({ data: { hello: 'Hello, world!' } });
  });

  it('refuses variable values nested deeper than JSON is written, without calling the remote', async () => {
    const server = await start();
    await addSample(server);
    const received = remote.received.length;
    // Written by hand: JSON.stringify itself cannot write it.
    const nested = `${'['.repeat(5_000)}"x"${']'.repeat(5_000)}`;
    const response = await post(server, `{"query":"query ($n: String) { hello(name: $n) }","variables":{"n":${nested}}}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      errors: [{ message: 'variable values are nested too deeply: more than 1000 levels', extensions: { code: 'validation-failed', path: '$' } }],
    });
    expect(remote.received.length).toBe(received);
  });

  it('fails the fields of a remote whose answer is over the limit, and goes on serving', async () => {
    const server = await start({ maxRemoteResponseSize: 200_000 });
    await addSample(server);
    const name = 'n'.repeat(300_000);
    const response = await post(server, JSON.stringify({ query: 'query ($name: String) { hello(name: $name) }', variables: { name } }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      errors: [{ message: `HTTP exception occurred while sending the request to "${remote.url}"`, extensions: { code: 'remote-schema-error' } }],
    });
    const small = await post(server, JSON.stringify({ query: '{ hello(name: "small") }' }));
    expect(await small.json()).toEqual({ data: { hello: 'Hello, small!' } });
  });
});

describe('browsers', () => {
  const cors = (response: Response) => ({
    origin: response.headers.get('access-control-allow-origin'),
    credentials: response.headers.get('access-control-allow-credentials'),
    vary: response.headers.get('vary'),
  });

  it('answers every origin with Access-Control-Allow-Origin: * and never credentials by default', async () => {
    const server = await start();
    const response = await post(server, JSON.stringify({ query: '{ __typename }' }), { ...ADMIN, origin: 'https://evil.example' });
    expect(response.status).toBe(200);
    expect(cors(response)).toEqual({ origin: '*', credentials: null, vary: null });
    const preflight = await fetch(`${server.url}/v1/graphql`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type');
  });

  it('reflects only listed origins, wildcards included, with credentials and Vary: Origin', async () => {
    const server = await start({ corsDomain: 'https://app.example.com, https://*.example.org:8443' });
    const ask = (origin: string) => post(server, JSON.stringify({ query: '{ __typename }' }), { ...ADMIN, origin });
    expect(cors(await ask('https://app.example.com'))).toEqual({ origin: 'https://app.example.com', credentials: 'true', vary: 'Origin' });
    expect(cors(await ask('https://a.b.example.org:8443'))).toEqual({
      origin: 'https://a.b.example.org:8443',
      credentials: 'true',
      vary: 'Origin',
    });
    for (const other of ['https://evil.example', 'http://app.example.com', 'https://example.org:8443', 'https://x.example.org']) {
      expect(cors(await ask(other))).toMatchObject({ origin: null, credentials: null });
    }
    const preflight = await fetch(`${server.url}/v1/graphql`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses metadata requests from origins that are neither the server nor listed, whatever they carry', async () => {
    const server = await start({ corsDomain: 'https://app.example.com' });
    const ask = (origin: string | undefined) =>
      fetch(`${server.url}/v1/metadata`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ADMIN, ...(origin && { origin }) },
        body: JSON.stringify({ type: 'export_metadata', args: {} }),
      });
    const hostile = await ask('https://evil.example');
    expect(hostile.status).toBe(403);
    expect(await hostile.json()).toEqual({ error: 'cross-origin metadata requests are not allowed', path: '$', code: 'access-denied' });
    for (const origin of [undefined, server.url, 'https://app.example.com']) expect((await ask(origin)).status).toBe(200);

    const open = await start();
    const fromPage = await fetch(`${open.url}/v1/metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ADMIN, origin: 'https://evil.example' },
      body: JSON.stringify({ type: 'export_metadata', args: {} }),
    });
    // `*` lists no origin for the metadata API.
    expect(fromPage.status).toBe(403);
  });

  it('sends no CORS headers at all with disableCors', async () => {
    const server = await start({ disableCors: true });
    const response = await post(server, JSON.stringify({ query: '{ __typename }' }), { ...ADMIN, origin: 'https://app.example.com' });
    expect(cors(response)).toEqual({ origin: null, credentials: null, vary: null });
  });

  it('ignores the cookie of a WebSocket opened by a page of another origin, unless wsReadCookie', async () => {
    const server = await start({ corsDomain: 'https://app.example.com' });
    await addSample(server);
    const cookie = `token=${await token('user')}`;

    const hostile = wsClient(server, { origin: 'https://evil.example', cookie });
    const refused = closeCode(hostile);
    void first(hostile, '{ remoteName }').catch(() => undefined);
    expect(await refused).toBe(4403);
    await hostile.dispose();

    const listed = wsClient(server, { origin: 'https://app.example.com', cookie });
    await expect(first(listed, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await listed.dispose();

    // With a list, the server's own origin is one more origin that is not listed.
    const own = wsClient(server, { origin: server.url, cookie });
    const ownRefused = closeCode(own);
    void first(own, '{ remoteName }').catch(() => undefined);
    expect(await ownRefused).toBe(4403);
    await own.dispose();
    // Listed, it is trusted like any listed origin (the port is chosen first to be listed).
    const port = await freePort();
    const listing = await start({ port, corsDomain: `https://app.example.com,http://127.0.0.1:${port}` });
    await addSample(listing);
    const ownAllowed = wsClient(listing, { origin: listing.url, cookie });
    await expect(first(ownAllowed, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await ownAllowed.dispose();

    const withoutOrigin = wsClient(server, { cookie });
    await expect(first(withoutOrigin, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await withoutOrigin.dispose();

    const reading = await start({ corsDomain: 'https://app.example.com', wsReadCookie: true });
    await addSample(reading);
    const allowed = wsClient(reading, { origin: 'https://evil.example', cookie });
    await expect(first(allowed, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await allowed.dispose();
  });

  it('with the * default reads the cookie only of pages of the server itself', async () => {
    const server = await start();
    await addSample(server);
    const cookie = `token=${await token('user')}`;
    const own = wsClient(server, { origin: server.url, cookie });
    await expect(first(own, '{ remoteName }')).resolves.toEqual({ data: { remoteName: 'sample' } });
    await own.dispose();
    const other = wsClient(server, { origin: 'https://evil.example', cookie });
    const refused = closeCode(other);
    void first(other, '{ remoteName }').catch(() => undefined);
    expect(await refused).toBe(4403);
    await other.dispose();
  });
});
