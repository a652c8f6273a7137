import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import { exportJWK, type JWK } from 'jose';

/**
 * `huge`: the key set padded to 2 MiB, with its Content-Length. `huge-chunked`: the key set padded
 * to 32 MiB, streamed without Content-Length as fast as the client reads. `redirect`: a 302 to
 * another path of this server that serves the key set.
 */
export type JwksMode = 'up' | 'down' | 'hang' | 'huge' | 'huge-chunked' | 'redirect';

const MIB = 1024 * 1024;

/** A real JWKS endpoint on 127.0.0.1 whose keys, headers and health the test changes at will. */
export interface JwksServer {
  readonly url: string;
  /** How many requests it has received at `url`. */
  readonly hits: number;
  /** How many requests followed a `redirect` answer to its target. */
  readonly redirectTargetHits: number;
  /** How many `huge-chunked` answers the client cut off before their end. */
  readonly abandonedStreams: number;
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
    redirectTargetHits: 0,
    abandonedStreams: 0,
    keys: [] as JWK[],
    headers: {} as Record<string, string>,
    mode: 'up' as JwksMode,
  };
  const server: Server = createServer((request, response) => {
    if (request.url === '/moved/jwks.json') {
      state.redirectTargetHits += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
      return;
    }
    state.hits += 1;
    if (state.mode === 'redirect') {
      response.writeHead(302, { location: '/moved/jwks.json' }).end();
      return;
    }
    if (state.mode === 'huge') {
      const body = paddedKeySet(state.keys, 2 * MIB);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
      return;
    }
    if (state.mode === 'huge-chunked') {
      streamPaddedKeySet(state.keys, 32 * MIB, response, () => (state.abandonedStreams += 1));
      return;
    }
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
    get redirectTargetHits() {
      return state.redirectTargetHits;
    },
    get abandonedStreams() {
      return state.abandonedStreams;
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

/** A valid JWKS document of exactly `size` bytes: the keys, then a padding member. */
function paddedKeySet(keys: JWK[], size: number): Buffer {
  const head = `{"keys":${JSON.stringify(keys)},"padding":"`;
  return Buffer.from(`${head}${'x'.repeat(size - head.length - 2)}"}`);
}

/** Writes a padded key set of `size` bytes in 64 KiB chunks (no Content-Length), honouring backpressure. */
function streamPaddedKeySet(keys: JWK[], size: number, response: ServerResponse, onAbandoned: () => void): void {
  const body = paddedKeySet(keys, size);
  const chunk = 64 * 1024;
  let offset = 0;
  response.writeHead(200, { 'content-type': 'application/json' });
  response.on('close', () => {
    if (!response.writableFinished) onAbandoned();
  });
  const pump = (): void => {
    while (offset < body.length && !response.destroyed) {
      const next = body.subarray(offset, offset + chunk);
      offset += next.length;
      if (offset >= body.length) {
        response.end(next);
        return;
      }
      if (!response.write(next)) return;
    }
  };
  response.on('drain', pump);
  pump();
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
