import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, BIN, ROOT } from './utils/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


function start(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', BIN, ...args], { cwd: ROOT, env: cleanEnv(env) });
}

async function runToExit(args: string[], env: Record<string, string> = {}) {
  const child = start(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  return { code, stdout, stderr };
}

/** Starts `svc-graphql serve` and waits for its listening line. */
async function startServing(args: string[], env: Record<string, string> = {}) {
  const child = start(['serve', '--server-port', '0', ...args], env);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((done, fail) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^svc-graphql listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) done(match[1] as string);
    });
    child.on('exit', (code) => fail(new Error(`exited with ${code}: ${stderr}`)));
  });
  const exited = new Promise<number | null>((done) => child.on('exit', done));
  return { child, url, exited, stderr: () => stderr };
}

const HS_KEY = 'an HS256 secret of at least 32 characters';

describe('svc-graphql serve: fatal configuration errors', () => {
  // The processes start in parallel: each pays for loading TypeScript, and the suite has a budget.
  it('exits 1 with one line on stderr naming the flag or variable and the reason', async () => {
    // A port that is taken: the failure comes after the store has loaded.
    const taken = createNetServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const takenPort = String((taken.address() as AddressInfo).port);
    const [namespaces, noAdmin, unknownFlag, badJson, shortKey, database, busy, emptySecret] = await Promise.all([
      runToExit(['serve'], {
        SVC_GRAPHQL_ADMIN_SECRET: 'secret',
        SVC_GRAPHQL_JWT_SECRET: JSON.stringify({ type: 'HS256', key: HS_KEY, claims_namespace: 'a', claims_namespace_path: '$.b' }),
      }),
      runToExit(['serve', '--jwt-secret', JSON.stringify({ type: 'HS256', key: HS_KEY })]),
      runToExit(['serve', '--server-prot', '80']),
      runToExit(['serve', '--admin-secret', 's', '--jwt-secret', '{"type":"HS256",']),
      runToExit(['serve', '--admin-secret', 's'], { SVC_GRAPHQL_JWT_SECRET: JSON.stringify({ type: 'HS256', key: 'short' }) }),
      runToExit(['--database-url', 'postgres://postgres@127.0.0.1:1/test', 'serve', '--server-port', '0']),
      runToExit(['serve', '--database-url', `file:${join(dir, 'busy.json')}`, '--server-port', takenPort]),
      // A secret that came out empty must not leave the server open to everyone as admin.
      runToExit(['serve', '--server-port', '0', '--database-url', `file:${join(dir, 'empty.json')}`], { SVC_GRAPHQL_ADMIN_SECRET: '' }),
    ]);
    taken.close();
    for (const result of [namespaces, noAdmin, unknownFlag, badJson, shortKey, database, busy, emptySecret]) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
    expect(namespaces.stderr).toBe(
      'Fatal error: SVC_GRAPHQL_JWT_SECRET: claims_namespace and claims_namespace_path both cannot be set\n',
    );
    expect(noAdmin.stderr).toBe(
      'Fatal error: --jwt-secret: JWT mode needs an admin secret: set --admin-secret or SVC_GRAPHQL_ADMIN_SECRET\n',
    );
    expect(unknownFlag.stderr).toBe('Fatal error: --server-prot: unknown flag\n');
    expect(badJson.stderr).toMatch(/^Fatal error: --jwt-secret: \S/);
    expect(shortKey.stderr).toMatch(/^Fatal error: SVC_GRAPHQL_JWT_SECRET: .*32/);
    expect(database.stderr).toMatch(/^Fatal error: --database-url: \S/);
    expect(busy.stderr).toBe(`Fatal error: --server-port: 127.0.0.1:${takenPort} is already in use\n`);
    expect(emptySecret.stderr).toBe('Fatal error: SVC_GRAPHQL_ADMIN_SECRET: must not be empty\n');
  }, 60_000);
});

describe('svc-graphql serve: running', () => {
  it('prints the listening line, serves /healthz and /v1/version, and stops with status 0 on SIGTERM', async () => {
    const server = await startServing(['--database-url', `file:${join(dir, 'run.json')}`]);
    try {
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.text()).toBe('OK');
      const version = await fetch(`${server.url}/v1/version`);
      expect(await version.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
      const graphql = await fetch(`${server.url}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ no_queries_available }' }),
      });
      expect(await graphql.json()).toEqual({ data: { no_queries_available: null } });
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
  }, 60_000);

  it('keeps metadata across a restart on the embedded store', async () => {
    const file = join(dir, 'restart.json');
    const first = await startServing(['--database-url', `file:${file}`, '--admin-secret', 'secret']);
    const call = (url: string, body: unknown) =>
      fetch(`${url}/v1/metadata`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-admin-secret': 'secret' },
        body: JSON.stringify(body),
      });
    // A remote that is down is still recorded, as an inconsistent object.
    const replace = await call(first.url, {
      type: 'replace_metadata',
      args: {
        allow_inconsistent_metadata: true,
        metadata: { version: 3, remote_schemas: [{ name: 'down', definition: { url: 'http://127.0.0.1:1/graphql' } }] },
      },
    });
    expect(replace.status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await startServing(['--database-url', `file:${file}`, '--admin-secret', 'secret']);
    try {
      const exported = await call(second.url, { type: 'export_metadata', args: {} });
      expect(await exported.json()).toEqual({
        version: 3,
        remote_schemas: [
          { name: 'down', definition: { url: 'http://127.0.0.1:1/graphql', forward_client_headers: false, timeout_seconds: 60 } },
        ],
      });
      const health = await fetch(`${second.url}/healthz`);
      expect(await health.text()).toBe('WARN: inconsistent metadata');
    } finally {
      second.child.kill('SIGINT');
    }
    expect(await second.exited).toBe(0);
  }, 60_000);
});
