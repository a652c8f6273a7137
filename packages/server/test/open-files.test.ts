import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { bearerOf, metadataCall } from './utils/roles.js';
import { startServerProcess, type ServerProcess } from './utils/server-process.js';

/**
 * The server run out of file descriptors by its subscribers (every subscriber holds two sockets:
 * its own and its session's upstream one): the subscriptions it cannot open upstream are answered
 * with an error, the others go on, the process stays up and serves again once sockets are freed.
 * Run as a user runs it (`svc-graphql serve`), its open-file limit lowered once it listens (as
 * `ulimit -n` or a container's limit would hold it), with real graphql-ws clients.
 */

const ADMIN_SECRET = 'open-files-test-admin-secret';
const KEY = 'open-files-test-key-of-at-least-32-characters';
// About 25 descriptors are the process's own (pipes, epoll, eventfd, the listening socket).
const OPEN_FILES = 128;
const SUBSCRIBERS = 80;
const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-open-files-'));
let remote: RunningRemote;
let server: ServerProcess;

beforeAll(async () => {
  remote = await startSampleRemote({ name: 'sample' });
  server = await startServerProcess(
    [
      'serve',
      '--server-port',
      '0',
      '--database-url',
      `file:${join(dir, 'metadata.json')}`,
      '--admin-secret',
      ADMIN_SECRET,
      '--jwt-secret',
      JSON.stringify({ type: 'HS256', key: KEY }),
    ],
    { openFiles: OPEN_FILES },
  );
  const added = await metadataCall(server.url, ADMIN_SECRET, { type: 'add_remote_schema', args: { name: 'sample', definition: { url: remote.url } } });
  expect(added).toEqual({ status: 200, body: { message: 'success' } });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await remote?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A client whose connection is acknowledged (its socket accepted and its session read). */
async function connected(userId: string): Promise<Client> {
  const headers = await bearerOf(KEY, 'user', { 'x-svc-user-id': userId });
  return new Promise<Client>((done, fail) => {
    const client = createClient({
      url: `${server.url.replace(/^http/, 'ws')}/v1/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { headers },
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: fail,
      on: { connected: () => done(client) },
    });
  });
}

interface Outcome {
  /** Countdown values received, in order. */
  readonly values: number[];
  /** The first error's message, if the subscription failed. */
  error?: string;
}

function subscribe(client: Client, from: number): Outcome {
  const outcome: Outcome = { values: [] };
  client.subscribe<{ countdown: number }>(
    { query: `subscription { countdown(from: ${from}, intervalMs: 50) }` },
    {
      next: (result) => {
        if (result.errors) outcome.error ??= result.errors[0]?.message ?? 'an error without a message';
        else if (result.data) outcome.values.push(result.data.countdown);
      },
      error: (error) => {
        outcome.error ??= Array.isArray(error) ? String(error[0]?.message) : error instanceof Error ? error.message : `closed ${(error as { code?: number }).code}`;
      },
      complete: () => {},
    },
  );
  return outcome;
}

async function waitFor(check: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it('answers the subscriptions it cannot open upstream with an error, keeps the others and recovers', async () => {
  // Every client's own socket first: 80 of them fit under the limit; their upstream sockets do not all.
  const clients: Client[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) clients.push(await connected(`user-${i}`));
  const outcomes = clients.map((client) => subscribe(client, 100_000));
  await waitFor(() => outcomes.every((outcome) => outcome.error !== undefined || outcome.values.length > 0));

  const failed = outcomes.filter((outcome) => outcome.error !== undefined);
  const running = outcomes.filter((outcome) => outcome.error === undefined);
  const upstreamUrl = remote.url.replace(/^http/, 'ws');
  expect(failed.length).toBeGreaterThan(0);
  expect(running.length).toBeGreaterThan(0);
  expect(new Set(failed.map((outcome) => outcome.error))).toEqual(new Set([`WebSocket exception occurred while subscribing to "${upstreamUrl}"`]));
  expect(server.stderr()).toMatch(/warn remote subscription to "ws:\/\/127\.0\.0\.1:\d+\/graphql" failed: connect EMFILE/);

  // The subscriptions that got their upstream socket go on, in order, after the others failed.
  const seen = running.map((outcome) => outcome.values.length);
  await waitFor(() => running.every((outcome, i) => outcome.values.length >= seen[i]! + 3));
  for (const outcome of running) expect(outcome.values).toEqual(outcome.values.map((_, i) => 100_000 - i));
  // Still out of files here: a new connection may be accepted and closed at once; the process stays up.
  expect(server.child.exitCode).toBeNull();

  // Once the subscribers leave, their sockets are freed: a new subscriber is served.
  await Promise.all(clients.map((client) => client.dispose()));
  let later: Outcome = { values: [], error: 'not tried' };
  await waitFor(() => {
    if (later.values.length > 0) return true;
    if (later.error !== undefined) {
      later = { values: [] };
      void connected('user-later').then((client) => {
        clients.push(client);
        later = subscribe(client, 3);
      }, () => (later = { values: [], error: 'refused' }));
    }
    return false;
  });
  expect(later.values[0]).toBe(3);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(server.child.exitCode).toBeNull();
  await Promise.all(clients.map((client) => client.dispose()));
}, 60_000);
