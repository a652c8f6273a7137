import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createServer, type SvcGraphqlServer } from '../../src/index.js';
import { signHs256, userClaims } from './fuzz-tokens.js';

export const ADMIN_SECRET = 'fuzz-admin-secret';
export const JWT_KEY = 'the fuzz suite HS256 key, well over 32 characters';
/** The name under which the sample remote is added. */
export const SAMPLE = 'sample';
/** The role of the tokens that are meant to get through. */
export const USER_ROLE = 'user';

/** How long any one request (or WebSocket exchange) may take before the property fails. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** A response read to its end within {@link REQUEST_TIMEOUT_MS}. */
export interface ReadResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** The server under test with the sample remote added, and what the properties need around it. */
export interface FuzzTarget {
  readonly server: SvcGraphqlServer;
  readonly remote: RunningRemote;
  /** An http URL on 127.0.0.1 where nothing listens: a connection there is refused at once. */
  readonly deadUrl: string;
  /** What `export_metadata` answers for the metadata the properties start from: the sample remote alone. */
  readonly baselineText: string;
  /** Sends a request to the server and reads the whole answer, within {@link REQUEST_TIMEOUT_MS}. */
  send(path: string, init: RequestInit): Promise<ReadResponse>;
  /** What `export_metadata` answers now. */
  exportMetadata(): Promise<string>;
  /** Puts the baseline metadata back when a property changed it, and checks that it is back. */
  restoreBaseline(): Promise<void>;
  /** Throws unless `/healthz` answers 200 `OK` and a plain query through the sample remote returns its data. */
  assertHealthy(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the sample remote and one server (file store in a temporary directory, admin secret, HS256
 * JWT) and adds the remote through `/v1/metadata`.
 */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-graphql-fuzz-'));
  const remote = await startSampleRemote({ port: 0 });
  let server: SvcGraphqlServer;
  try {
    server = await createServer({
      port: 0,
      databaseUrl: `file:${join(dir, 'metadata.json')}`,
      adminSecret: ADMIN_SECRET,
      jwtSecret: { type: 'HS256', key: JWT_KEY },
      logLevel: 'error',
    });
  } catch (error) {
    await remote.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const deadUrl = `http://127.0.0.1:${await freePort()}/graphql`;

  const send = async (path: string, init: RequestInit): Promise<ReadResponse> => {
    const response = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  const metadata = (body: unknown) =>
    send('/v1/metadata', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-admin-secret': ADMIN_SECRET },
      body: JSON.stringify(body),
    });
  const exportMetadata = async (): Promise<string> => {
    const answer = await metadata({ type: 'export_metadata', args: {} });
    if (answer.status !== 200) throw new Error(`export_metadata answered ${answer.status}: ${answer.text}`);
    return answer.text;
  };
  // A remote that answers slowly is cut off by the server (5 s) before any request of ours times out.
  const baseline = { version: 3, remote_schemas: [{ name: SAMPLE, definition: { url: remote.url, timeout_seconds: 5 } }] };
  const replaceWithBaseline = async () => {
    const replaced = await metadata({ type: 'replace_metadata', args: baseline });
    if (replaced.status !== 200) throw new Error(`cannot restore the baseline metadata: ${replaced.status} ${replaced.text}`);
  };
  await replaceWithBaseline();
  const baselineText = await exportMetadata();

  return {
    server,
    remote,
    deadUrl,
    baselineText,
    send,
    exportMetadata,
    async restoreBaseline() {
      if ((await exportMetadata()) === baselineText) return;
      await replaceWithBaseline();
      const now = await exportMetadata();
      if (now !== baselineText) throw new Error(`the baseline metadata did not come back: ${now}`);
    },
    async assertHealthy() {
      const health = await send('/healthz', { method: 'GET' });
      if (health.status !== 200 || health.text !== 'OK') throw new Error(`/healthz answered ${health.status} ${health.text}`);
      const userToken = signHs256(userClaims(USER_ROLE), JWT_KEY);
      for (const headers of [{ 'x-svc-admin-secret': ADMIN_SECRET }, { authorization: `Bearer ${userToken}` }]) {
        const answer = await send('/v1/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query: 'query Check($name: String) { hello(name: $name) }', variables: { name: 'fuzz' } }),
        });
        if (answer.status !== 200 || answer.text !== JSON.stringify({ data: { hello: 'Hello, fuzz!' } })) {
          throw new Error(`a plain query answered ${answer.status} ${answer.text}`);
        }
      }
    },
    async close() {
      await server.close();
      await remote.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port on 127.0.0.1 that was free a moment ago and is closed again. */
async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}
