import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import { exportJWK, type JWK } from 'jose';

export type JwksMode = 'up' | 'down' | 'hang';

/** A real JWKS endpoint on 127.0.0.1 whose keys, headers and health the test changes at will. */
export interface JwksServer {
  readonly url: string;
  /** How many requests it has received. */
  readonly hits: number;
  keys: JWK[];
  headers: Record<string, string>;
  mode: JwksMode;
  close(): Promise<void>;
}

export async function publicJwk(key: KeyObject, kid: string, alg?: string): Promise<JWK> {
  return { ...(await exportJWK(key)), kid, use: 'sig', ...(alg !== undefined && { alg }) };
}

export async function startJwksServer(): Promise<JwksServer> {
  const hanging = new Set<ServerResponse>();
  const state = {
    hits: 0,
    keys: [] as JWK[],
    headers: {} as Record<string, string>,
    mode: 'up' as JwksMode,
  };
  const server: Server = createServer((_request, response) => {
    state.hits += 1;
    if (state.mode === 'hang') {
      hanging.add(response);
      return;
    }
    if (state.mode === 'down') {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', ...state.headers }).end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get hits() {
      return state.hits;
    },
    get keys() {
      return state.keys;
    },
    set keys(value) {
      state.keys = value;
    },
    get headers() {
      return state.headers;
    },
    set headers(value) {
      state.headers = value;
    },
    get mode() {
      return state.mode;
    },
    set mode(value) {
      state.mode = value;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Waits, without timers (they may be faked), until `condition` holds: I/O callbacks run between
 * `setImmediate` turns, so a fetch over loopback completes while we spin.
 */
export async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  const deadline = process.hrtime.bigint() + 5_000_000_000n;
  while (!condition()) {
    if (process.hrtime.bigint() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Lets pending I/O (a fetch that might have started) run for a few milliseconds of real time. */
export async function settle(ms = 30): Promise<void> {
  const deadline = process.hrtime.bigint() + BigInt(ms) * 1_000_000n;
  while (process.hrtime.bigint() < deadline) await new Promise((resolve) => setImmediate(resolve));
}
