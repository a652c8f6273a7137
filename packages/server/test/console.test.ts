import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, parseCommandLine, ServerOptionError, type SvcGraphqlServer } from '../src/index.js';

/**
 * The web console at /console (its files, cache headers, Content-Security-Policy and client-side
 * routes; off unless asked) and GET /v1/session, the session a request's headers give, which the
 * console's API page shows. The pages themselves are tested in a browser in console-browser.test.ts.
 */

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const ADMIN_SECRET = 'console-test-admin-secret';
const KEY = 'a console test secret of 32+ characters!';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-console-'));

let withConsole: SvcGraphqlServer;
let withoutConsole: SvcGraphqlServer;

beforeAll(async () => {
  [withConsole, withoutConsole] = await Promise.all([
    createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'with.json')}`,
      adminSecret: ADMIN_SECRET,
      jwtSecret: { type: 'HS256', key: KEY },
      unauthorizedRole: 'anonymous',
      enableConsole: true,
      logger: quiet,
    }),
    createServer({ port: 0, databaseUrl: `file:${join(dir, 'without.json')}`, adminSecret: ADMIN_SECRET, logger: quiet }),
  ]);
});

afterAll(async () => {
  await Promise.all([withConsole?.close(), withoutConsole?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', fail);
    }).on('error', fail);
  });
}

/** The `src` and `href` of the page's elements. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((match) => match[1] as string);
}

describe('GET /console', () => {
  it('is off unless asked: 404 without --enable-console', async () => {
    for (const path of ['/console', '/console/', '/console/remote-schemas', '/console/assets/index.js']) {
      const response = await fetch(`${withoutConsole.url}${path}`, { headers: { accept: 'text/html' } });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
    }
  });

  it('serves the page under a strict Content-Security-Policy, no inline script, every file from this server', async () => {
    const response = await fetch(`${withConsole.url}/console`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await response.text();
    expect(html).toContain('<div id="root"></div>');
    // Every script is a file (no inline code, which the policy would refuse).
    for (const script of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? []) expect(script).toMatch(/^<script [^>]*src="\/console\/assets\/[^"]+\.js"[^>]*><\/script>$/);
    const urls = referencedUrls(html);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      expect(url).toMatch(/^\/console\//);
      const file = await fetch(`${withConsole.url}${url}`);
      expect({ url, status: file.status }).toEqual({ url, status: 200 });
      expect(file.headers.get('cache-control')).toBe(url.startsWith('/console/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      expect(file.headers.get('content-security-policy')).toBeNull();
    }
  });

  it('answers client-side routes with the page, and a missing asset with 404, never with HTML', async () => {
    const page = await (await fetch(`${withConsole.url}/console`)).text();
    for (const path of ['/console/', '/console/remote-schemas/add', '/console/permissions/a%20remote/user', '/console/no/such/page']) {
      const response = await fetch(`${withConsole.url}${path}`);
      expect({ path, status: response.status, type: response.headers.get('content-type') }).toEqual({ path, status: 200, type: 'text/html; charset=utf-8' });
      expect(await response.text()).toBe(page);
    }
    const missing = await fetch(`${withConsole.url}/console/assets/index-00000000.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    // Not under /console: not the console's.
    expect((await fetch(`${withConsole.url}/consoles`)).status).toBe(404);
    const post = await fetch(`${withConsole.url}/console`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('gzips what the browser accepts, revalidates with ETag, and answers HEAD without a body', async () => {
    const html = await (await fetch(`${withConsole.url}/console`)).text();
    const script = referencedUrls(html).find((url) => url.endsWith('.js')) as string;
    const plain = await rawGet(`${withConsole.url}${script}`, { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const zipped = await rawGet(`${withConsole.url}${script}`, { 'accept-encoding': 'gzip, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(zipped.body.byteLength).toBeLessThan(plain.body.byteLength / 2);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);

    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await rawGet(`${withConsole.url}/console/`, { 'if-none-match': (await rawGet(`${withConsole.url}/console/`, {})).headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body.byteLength).toBe(0);

    const head = await fetch(`${withConsole.url}${script}`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(plain.body.byteLength);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('refuses to start when asked for a console that is not built, naming the setting', async () => {
    const empty = join(dir, 'empty-build');
    mkdirSync(empty);
    const failure = await createServer({ port: 0, databaseUrl: `file:${join(dir, 'unbuilt.json')}`, enableConsole: true, consoleRoot: empty, logger: quiet }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ServerOptionError);
    expect(failure).toMatchObject({ option: 'consoleRoot', message: expect.stringContaining('the console is not built') });
  });
});

describe('--enable-console', () => {
  it('is off by default for svc-graphql serve, on with the flag or SVC_GRAPHQL_ENABLE_CONSOLE', () => {
    const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      const parsed = parseCommandLine(argv, env);
      if (parsed.command !== 'serve') throw new Error(parsed.command);
      return parsed.config.enableConsole;
    };
    expect(config(['serve'])).toBe(false);
    expect(config(['serve', '--enable-console'])).toBe(true);
    expect(config(['serve', '--enable-console=false'], { SVC_GRAPHQL_ENABLE_CONSOLE: 'true' })).toBe(false);
    expect(config(['serve'], { SVC_GRAPHQL_ENABLE_CONSOLE: 'true' })).toBe(true);
    expect(() => config(['serve'], { SVC_GRAPHQL_ENABLE_CONSOLE: 'yes' })).toThrow('expected "true" or "false", but got "yes"');
  });

  it('is on for pnpm start, which serves the console with the embedded defaults', async () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['start']).toContain('--enable-console');
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SVC_GRAPHQL_') && !key.startsWith('npm_')) env[key] = value;
    // Its own process group, so that whatever it leaves behind can be stopped at the end.
    const child = spawn('pnpm', ['-s', 'start', '--server-port', '0', '--database-url', `file:${join(dir, 'start.json')}`], { cwd: ROOT, env, detached: true });
    const closed = new Promise((done) => child.on('close', done));
    let stderr = '';
    try {
      const url = await new Promise<string>((done, fail) => {
        let stdout = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /svc-graphql listening on (http:\/\/\S+)/.exec(stdout);
          if (match) done(match[1] as string);
        });
        child.on('exit', (code) => fail(new Error(`pnpm start exited with ${code}: ${stderr}`)));
      });
      const page = await fetch(`${url}/console`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="root"></div>');
      // SIGTERM to pnpm alone (what a process manager sends) reaches the server, which stops
      // gracefully: the script runs the server in pnpm's own child, not behind a shell.
      child.kill('SIGTERM');
      await closed;
      expect(stderr).toMatch(/received SIGTERM[\s\S]*stopped/);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
  }, 60_000);
});

describe('GET /v1/session', () => {
  const session = async (headers: Record<string, string>, server = withConsole) => {
    const response = await fetch(`${server.url}/v1/session`, { headers });
    return { status: response.status, cache: response.headers.get('cache-control'), body: (await response.json()) as unknown };
  };

  it('answers the admin secret with admin, or the role and x-svc-* headers it picks', async () => {
    expect(await session({ 'x-svc-admin-secret': ADMIN_SECRET })).toEqual({
      status: 200,
      cache: 'no-store',
      body: { role: 'admin', is_admin: true, variables: { 'x-svc-role': 'admin' } },
    });
    expect(await session({ 'x-svc-admin-secret': ADMIN_SECRET, 'X-Svc-Role': 'user', 'X-Svc-User-Id': '42', 'x-other': 'not a session variable' })).toEqual({
      status: 200,
      cache: 'no-store',
      body: { role: 'user', is_admin: false, variables: { 'x-svc-role': 'user', 'x-svc-user-id': '42' } },
    });
  });

  it('answers a token with the role and claims it carries, and when it expires', async () => {
    const expires = Math.floor(Date.now() / 1000) + 600;
    const token = await new SignJWT({
      'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-user-id': '7' },
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(expires)
      .sign(new TextEncoder().encode(KEY));
    const answer = await session({ authorization: `Bearer ${token}`, 'x-svc-role': 'editor' });
    expect(answer).toEqual({
      status: 200,
      cache: 'no-store',
      body: {
        role: 'editor',
        is_admin: false,
        variables: expect.objectContaining({ 'x-svc-role': 'editor', 'x-svc-user-id': '7' }),
        expires_at: new Date(expires * 1000).toISOString(),
      },
    });
  });

  it('answers a token whose exp is past what a date can hold as one that does not expire, on every route', async () => {
    // Some issuers write Number.MAX_SAFE_INTEGER for "never".
    const token = await new SignJWT({
      'https://svc-graphql.dev/jwt/claims': { 'x-svc-default-role': 'user', 'x-svc-allowed-roles': ['user'] },
      exp: Number.MAX_SAFE_INTEGER,
    })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(KEY));
    expect(await session({ authorization: `Bearer ${token}` })).toEqual({
      status: 200,
      cache: 'no-store',
      body: { role: 'user', is_admin: false, variables: { 'x-svc-role': 'user' } },
    });
    // Over graphql-ws the connection is acknowledged and stays open (it was closed at once as expired).
    const socket = new WebSocket(withConsole.wsUrl, 'graphql-transport-ws');
    const messages: string[] = [];
    let closed: number | undefined;
    socket.on('message', (data) => messages.push(String(data)));
    socket.on('close', (code) => (closed = code));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { headers: { authorization: `Bearer ${token}` } } }));
    await expect.poll(() => messages).toEqual(['{"type":"connection_ack"}']);
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ __typename }' } }));
    await expect.poll(() => messages.length).toBe(3);
    expect(messages.slice(1)).toEqual(['{"id":"1","type":"next","payload":{"data":{"__typename":"Query"}}}', '{"id":"1","type":"complete"}']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed).toBeUndefined();
    socket.close();
  });

  it('answers a refusal exactly as /v1/graphql does, and a request with nothing with the unauthorized role', async () => {
    for (const headers of [{ 'x-svc-admin-secret': 'wrong' }, { authorization: 'Bearer not.a.token' }, { authorization: 'Basic abc' }]) {
      const graphql = await fetch(`${withConsole.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"query":"{ __typename }"}' });
      const expected = { status: graphql.status, body: (await graphql.json()) as unknown };
      const answer = await session(headers);
      expect({ status: answer.status, body: answer.body }).toEqual(expected);
      expect(answer.status).toBeGreaterThanOrEqual(400);
    }
    expect((await session({})).body).toEqual({ role: 'anonymous', is_admin: false, variables: { 'x-svc-role': 'anonymous' } });
    expect(await session({}, withoutConsole)).toEqual({
      status: 401,
      cache: null,
      body: { errors: [{ message: 'x-svc-admin-secret required, but not found', extensions: { code: 'access-denied', path: '$' } }] },
    });
    const post = await fetch(`${withConsole.url}/v1/session`, { method: 'POST' });
    expect(post.status).toBe(405);
  });
});
