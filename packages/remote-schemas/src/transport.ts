import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { BoundedBody, declaredTooLarge, readBoundedText } from '@svc-graphql/bounded-body';

/** Parsed remote URLs kept by one transport (far more than remotes are configured). */
const MAX_PARSED_URLS = 1024;

export interface TransportResponse {
  status: number;
  text: string;
}

/**
 * One POST to a remote; rejects on network failure, when `timeoutMs` passes, when `signal` aborts
 * ({@link RemoteCallAbortedError}: the call is abandoned and its socket closed), or when the answer
 * is larger than the transport's limit. `resendable`: the request may be sent once more when a
 * reused keep-alive socket turns out to be closed before any byte of the answer arrived (true for
 * queries only: a mutation that may have reached the remote is never sent again).
 */
export type Transport = (
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  resendable: boolean,
  signal?: AbortSignal,
) => Promise<TransportResponse>;

export interface DisposableTransport {
  post: Transport;
  dispose(): void;
}

export interface TransportLimits {
  /** The largest answer read, in bytes; a larger one fails the call before it is buffered. */
  maxResponseBytes: number;
  /** Sockets per remote origin (default transport only); further calls queue. */
  maxSocketsPerRemote: number;
}

/** No answer within the call's `timeoutMs` (a remote's `timeout_seconds`). */
export class RemoteTimeoutError extends Error {
  override readonly name = 'RemoteTimeoutError';
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/** The operation the call was made for was abandoned (its `signal` aborted) before the answer came. */
export class RemoteCallAbortedError extends Error {
  override readonly name = 'RemoteCallAbortedError';
  constructor(options?: ErrorOptions) {
    super('the call was abandoned: its operation was aborted', options);
  }
}

function abortedError(signal: AbortSignal): RemoteCallAbortedError {
  return new RemoteCallAbortedError({ cause: signal.reason });
}

export function responseTooLarge(maxBytes: number): Error {
  return new Error(`the answer is larger than ${maxBytes} bytes`);
}

const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * Header values travel as bytes, and Node takes a string's characters as bytes (Latin-1). A value
 * with characters beyond that (a session variable `"名前"` from a token) is sent as its UTF-8
 * bytes, as other gateways send it, instead of failing the call.
 */
export function headerBytes(headers: Record<string, string>): Record<string, string> {
  let encoded: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (!BEYOND_LATIN1.test(value)) continue;
    encoded ??= { ...headers };
    encoded[name] = Buffer.from(value, 'utf8').toString('latin1');
  }
  return encoded ?? headers;
}

/** A transport over a caller-provided `fetch` (option `fetch`). */
export function fetchTransport(fetchFn: typeof fetch, limits: Pick<TransportLimits, 'maxResponseBytes'>): DisposableTransport {
  const { maxResponseBytes } = limits;
  return {
    async post(url, headers, body, timeoutMs, _resendable, signal) {
      if (signal?.aborted) throw abortedError(signal);
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        const response = await fetchFn(url, {
          method: 'POST',
          headers: headerBytes(headers),
          body,
          signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
        });
        return { status: response.status, text: await readBoundedText(response, { maxBytes: maxResponseBytes, tooLarge: responseTooLarge }) };
      } catch (error) {
        if (signal?.aborted) throw abortedError(signal);
        // The timeout signal's abort (a `TimeoutError` DOMException), before or during the answer's body.
        if ((error as { name?: unknown } | null)?.name === 'TimeoutError') throw new RemoteTimeoutError(timeoutMs);
        throw error;
      }
    },
    dispose() {},
  };
}

/**
 * The default transport: `node:http(s)` with keep-alive agents. On the proxy path it costs a good
 * deal less CPU per request than `fetch` (no WHATWG streams, no abort signal objects).
 */
export function nodeTransport(limits: TransportLimits): DisposableTransport {
  const { maxResponseBytes, maxSocketsPerRemote } = limits;
  // `maxSockets` is per origin: a flood of client requests queues here instead of opening
  // unbounded sockets to one remote; the timer of each call runs while it waits.
  const http = new HttpAgent({ keepAlive: true, maxSockets: maxSocketsPerRemote });
  const https = new HttpsAgent({ keepAlive: true, maxSockets: maxSocketsPerRemote });
  // Each remote's URL parsed once, not by node:http on every call (a remote has one or two URLs).
  const targets = new Map<string, RequestOptions>();
  const targetOf = (url: string): RequestOptions => {
    let target = targets.get(url);
    if (target === undefined) {
      if (targets.size >= MAX_PARSED_URLS) targets.clear();
      target = urlToHttpOptions(new URL(url));
      targets.set(url, target);
    }
    return target;
  };
  const send = (url: string, headers: Record<string, string>, payload: Buffer, timeoutMs: number, resendable: boolean, signal?: AbortSignal) =>
    new Promise<TransportResponse>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortedError(signal));
        return;
      }
      const secure = url.startsWith('https:');
      const request = (secure ? httpsRequest : httpRequest)({
        ...targetOf(url),
        method: 'POST',
        agent: secure ? https : http,
        headers: { ...headerBytes(headers), 'content-length': String(payload.length) },
      });
      const timer = setTimeout(() => {
        request.destroy(new RemoteTimeoutError(timeoutMs));
      }, timeoutMs);
      // The operation abandoned: the request is destroyed (its socket closed, never reused).
      const abort = () => request.destroy(abortedError(signal!));
      signal?.addEventListener('abort', abort, { once: true });
      const settled = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
      };
      const fail = (error: Error) => {
        settled();
        reject(error);
      };
      let socket: Socket | undefined;
      let readBefore = 0;
      if (resendable) {
        request.once('socket', (assigned: Socket) => {
          socket = assigned;
          readBefore = assigned.bytesRead;
        });
      }
      // `on`, not `once`: destroying a request after a first error may emit another.
      request.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the remote closed (idle timeout) just as we reused it: the remote
        // dropped the connection, most likely without reading the request; a query is sent once
        // more on a fresh socket, as Node's documentation advises for `reusedSocket`, but only when
        // not a byte of the answer came back. Never a mutation: the remote may have run it.
        if (
          resendable &&
          request.reusedSocket &&
          (error.code === 'ECONNRESET' || error.code === 'EPIPE') &&
          socket !== undefined &&
          socket.bytesRead === readBefore
        ) {
          resendable = false;
          settled();
          send(url, headers, payload, timeoutMs, false, signal).then(resolve, reject);
          return;
        }
        fail(error);
      });
      request.once('response', (response: IncomingMessage) => {
        if (declaredTooLarge(response.headers['content-length'], maxResponseBytes)) {
          fail(responseTooLarge(maxResponseBytes));
          request.destroy();
          return;
        }
        const body = new BoundedBody(maxResponseBytes);
        response.on('data', (chunk: Buffer) => {
          if (!body.push(chunk)) {
            fail(responseTooLarge(maxResponseBytes));
            // Closes the socket: the rest of the answer is never read.
            request.destroy();
          }
        });
        response.on('error', fail);
        response.once('end', () => {
          settled();
          resolve({ status: response.statusCode ?? 0, text: body.text() });
        });
      });
      request.end(payload);
    });
  return {
    post: (url, headers, body, timeoutMs, resendable, signal) => send(url, headers, Buffer.from(body), timeoutMs, resendable, signal),
    dispose() {
      http.destroy();
      https.destroy();
    },
  };
}
