// One autocannon run for `pnpm bench edge`: like `runLoad` (load.ts), but a request body may be a
// Buffer built once, a check also sees the response headers, and a connection the server closes
// after its answer (`Connection: close`, as with a 413) is handled correctly.
//
// Why the last point needs code: after every answer autocannon 8 writes the next request at once,
// on the same connection. When the server is closing that connection the request is lost, and the
// client's queue of requests in flight keeps an entry for it: the answer on the next connection is
// then paired with that stale entry (its latency measured from the lost request's start) and the
// queue grows by one per connection; writing a large body into the closing socket also ends in
// EPIPE / ECONNRESET errors that say nothing about the answer. `setupClient` below makes a client
// that has read an answer with `Connection: close` drop that connection and open a new one (what
// autocannon's own `reconnectRate` does, which however drops the answer from the counts), so every
// request gets its own connection and its latency counts from when it was queued, just before the
// TCP connect. A connection error is then always a request that got no answer.
import autocannon from 'autocannon';
import { answerFigures, type LoadResult } from './load.js';

export interface EdgeRequest {
  readonly headers?: Readonly<Record<string, string>>;
  /** A Buffer is sent as it is (autocannon copies it into the request, so it may be reused). */
  readonly body: string | Buffer;
}

/** Returns why a response is wrong, or undefined when it is right. Runs on every response. */
export type EdgeCheck = (status: number, body: string, headers: Readonly<Record<string, string>>) => string | undefined;

export interface EdgeLoadOptions {
  /** Full URL, e.g. http://127.0.0.1:4000/v1/graphql. */
  readonly url: string;
  readonly connections: number;
  /** Seconds. */
  readonly duration: number;
  /** Called once per request with a run-wide counter (0, 1, 2, ...) across all connections. */
  readonly request: (index: number) => EdgeRequest;
  readonly check: EdgeCheck;
}

export interface EdgeLoadResult extends LoadResult {
  /** Answers after which the server closed the connection. */
  readonly closedByServer: number;
}

const MAX_REASONS = 8;

/** Response headers as autocannon hands them over (names as sent), with lower-case names. */
function lowerCaseHeaders(raw: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw && typeof raw === 'object') {
    for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
  }
  return headers;
}

/** What autocannon's client (lib/httpClient.js) has that its type definitions leave out. */
interface ClientInternals {
  _doRequest?: () => void;
  /** Removes the connection's listeners, destroys it and connects again (sending the next request). */
  _resetConnection?: () => void;
}

export async function runEdgeLoad(options: EdgeLoadOptions, firstIndex = 0): Promise<EdgeLoadResult> {
  const reasons = new Map<string, number>();
  let bad = 0;
  let next = firstIndex;
  let closedByServer = 0;
  let connectionErrors = 0;
  const url = new URL(options.url);

  const record = (reason: string): void => {
    bad += 1;
    const key = reason.replace(/\d{3,}/g, 'N');
    if (reasons.has(key) || reasons.size < MAX_REASONS) reasons.set(key, (reasons.get(key) ?? 0) + 1);
  };

  const opts: autocannon.Options = {
    url: url.origin,
    connections: options.connections,
    pipelining: 1,
    duration: options.duration,
    timeout: 10,
    setupClient: (client) => {
      const internals = client as unknown as ClientInternals;
      const doRequest = internals._doRequest;
      const resetConnection = internals._resetConnection;
      if (typeof doRequest !== 'function' || typeof resetConnection !== 'function') {
        throw new Error('edge-load: the autocannon client lacks _doRequest / _resetConnection (autocannon changed?)');
      }
      // Each connection error or timeout is a request without an answer; the reason says which.
      const emitter = client as NodeJS.EventEmitter;
      emitter.on('connError', (error: NodeJS.ErrnoException) => {
        connectionErrors += 1;
        record(`connection error before an answer: ${error.code ?? error.message}`);
      });
      emitter.on('timeout', () => {
        connectionErrors += 1;
        record('timeout (10 s without an answer)');
      });
      let closing = false;
      // http-parser-js's header info: `shouldKeepAlive` is false for `Connection: close`.
      // (The type definitions know only the 'body' and 'response' events; 'headers' exists too.)
      emitter.on('headers', (info: { shouldKeepAlive?: boolean }) => {
        closing = info.shouldKeepAlive === false;
      });
      // Called right after an answer was counted (and when a new connection is ready for its first request).
      internals._doRequest = function (this: unknown) {
        if (closing) {
          closing = false;
          closedByServer += 1;
          resetConnection.call(this);
          return;
        }
        doRequest.call(this);
      };
    },
    requests: [
      {
        method: 'POST',
        path: url.pathname + url.search,
        setupRequest: (req) => {
          const made = options.request(next);
          next += 1;
          return {
            ...req,
            headers: { ...req.headers, 'content-type': 'application/json', ...made.headers },
            body: made.body,
          };
        },
        onResponse: (status, body, _context, headers) => {
          const reason = options.check(status, body, lowerCaseHeaders(headers));
          if (reason !== undefined) record(reason);
        },
      },
    ],
  };
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(opts, (error: unknown, res: autocannon.Result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve(res);
    });
  });
  const seconds = (performance.now() - started) / 1000;
  // autocannon's own count of connection errors and timeouts, should the listeners above miss any.
  for (let i = connectionErrors; i < result.errors; i++) record('connection error or timeout');
  // autocannon 8 records the latency of every answer (2xx or not) unless `excludeErrorStats`.
  return { ...answerFigures(result), seconds, failures: bad, reasons, requestsBuilt: next, closedByServer };
}
