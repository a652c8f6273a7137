import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createYoga } from 'graphql-yoga';
import { useMetadataApi, type MetadataApiOptions, type MetadataLogger } from '../../src/index.js';

export const silentLogger: MetadataLogger = { debug() {}, info() {}, warn() {}, error() {} };

export interface MetadataResult {
  status: number;
  body: any;
}

export interface RunningMetadataServer {
  url: string;
  /** POSTs `body` (JSON-encoded unless a string) as the admin, unless `headers` say otherwise. */
  post(body: unknown, headers?: Record<string, string>): Promise<MetadataResult>;
  close(): Promise<void>;
}

/**
 * Test authentication: `x-test-role` picks the role (default `admin`); `x-test-reject` makes
 * `authenticate` throw the host's error shape.
 */
export async function authenticateFromHeaders(request: Request) {
  if (request.headers.has('x-test-reject')) {
    throw Object.assign(new Error('invalid x-svc-admin-secret'), { status: 401, code: 'access-denied' });
  }
  const role = request.headers.get('x-test-role') ?? 'admin';
  return { role, isAdmin: role === 'admin' };
}

/** A Yoga app with only the metadata plugin, on 127.0.0.1 port 0. */
export async function startMetadataServer(
  options: Omit<MetadataApiOptions, 'authenticate'> & Partial<Pick<MetadataApiOptions, 'authenticate'>>,
): Promise<RunningMetadataServer> {
  const yoga = createYoga({
    logging: false,
    plugins: [useMetadataApi({ authenticate: authenticateFromHeaders, ...options } as MetadataApiOptions)],
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${String(port)}/v1/metadata`;
  return {
    url,
    async post(body, headers = {}) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await yoga.dispose();
    },
  };
}

/** A fresh directory under the OS temp dir, removed by the returned function. */
export async function temporaryDirectory(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'svc-graphql-metadata-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
