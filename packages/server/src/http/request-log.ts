import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { getOperationAST, Kind, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger, ServerLogger } from '../observability/logger.js';
import type { RequestRecord, RequestRecords } from '../request-record.js';
import { VERSION } from '../version.js';
import { normalizeAccept, normalizeContentType } from './media-type.js';

/**
 * Request ids, the `http-log` line and the server span of each HTTP request.
 *
 * Every response carries `x-request-id`: the client's own when it sent one of 1 to 128 printable
 * ASCII characters, else a new UUID. GraphQL operations see it as `context.requestId` (remote
 * schemas send it on to remotes). At `info`, one `http-log` entry per request once its response is
 * done: id, method, path (without the query string), status, latency, operation type and name,
 * role and the number of calls made to remotes. Nothing else of the request is logged: no header,
 * no query string, no variable.
 */

/** The longest path written in a log line or a span (Node bounds the whole request line anyway). */
const MAX_LOGGED_PATH = 1024;

/** Counts one call to a remote for the request of a GraphQL context (its `remote_calls`). */
export function remoteCallCounter(records: RequestRecords): (graphqlContext: unknown) => void {
  return (graphqlContext) => {
    const record = records.of(graphqlContext);
    if (record) record.remoteCalls += 1;
  };
}

export interface RequestTrackingOptions {
  records: RequestRecords;
  logger: Logger | ServerLogger;
  /** Requests to this path get a SERVER span (and continue the client's `traceparent`). */
  graphqlPath: string;
  /** Requests to this path continue the client's `traceparent` (their operation spans are its children). */
  metadataPath: string;
}

/**
 * Wraps the Node request handler: id and `x-request-id` header first (so every answer has it,
 * errors included), the span of a GraphQL request made active around the handler (every span
 * started while it runs, the calls to remotes included, is its child), and the `http-log` entry
 * once the response is done (or the connection closed).
 */
export function trackRequests(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: RequestTrackingOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { graphqlPath, metadataPath, records } = options;
  const tracer = trace.getTracer('@svc-graphql/server', VERSION);
  const log = httpLogWriter(options.logger);
  return (req, res) => {
    normalizeContentType(req);
    normalizeAccept(req);
    const record = records.open(req);
    const id = record.id;
    res.setHeader('x-request-id', id);
    const path = pathOf(req.url);
    res.once('close', () => {
      const status = record.refusedWith ?? res.statusCode;
      const span = record.span;
      if (span !== undefined) {
        if (span.isRecording()) {
          span.setAttribute('http.response.status_code', status);
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      }
      log?.({
        request_id: id,
        method: req.method ?? '',
        path,
        status,
        latency_ms: millisecondsSince(record.startedMs),
        operation_type: record.operationType,
        operation_name: record.operationName,
        role: record.role,
        remote_calls: record.remoteCalls,
        // Only on a request the lock-down refused: `allowlist`, `rate`, `depth`...
        ...(record.rejected !== undefined && { rejected: record.rejected }),
      });
    });
    if (path === graphqlPath) {
      // Without an OpenTelemetry SDK these are the API's no-ops: no span is recorded.
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(`${req.method ?? 'GET'} ${graphqlPath}`, { kind: SpanKind.SERVER }, parent);
      if (span.isRecording()) {
        span.setAttribute('http.request.method', req.method ?? '');
        span.setAttribute('url.path', path);
        span.setAttribute('svc_graphql.request_id', id);
      }
      record.span = span;
      context.with(trace.setSpan(parent, span), handler, undefined, req, res);
    } else if (path === metadataPath) {
      context.with(propagation.extract(ROOT_CONTEXT, req.headers), handler, undefined, req, res);
    } else {
      handler(req, res);
    }
  };
}

type HttpLogFields = {
  request_id: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  operation_type: string | null;
  operation_name: string | null;
  role: string | null;
  remote_calls: number;
};

/**
 * The `http-log` entry of a WebSocket upgrade request, written when its handshake is answered:
 * status 101, or the status of the refusal. The connection's operations are not part of it (a
 * connection carries many); its id is the one they see as `context.requestId`.
 */
export function upgradeLog(logger: Logger | ServerLogger, records: RequestRecords): (request: IncomingMessage, status: number) => void {
  const log = httpLogWriter(logger);
  return (request, status) => {
    const record = records.open(request);
    log?.(withoutOperation(record.id, request.method ?? '', pathOf(request.url), status, millisecondsSince(record.startedMs)));
  };
}

/**
 * Answers what Node's HTTP parser refuses (a malformed request line, header or chunk, headers or
 * chunk extensions over Node's limits, a request too slow to arrive) as Node does, 400, 431, 413 or
 * 408 and then the connection destroyed, but with `x-request-id` like every other answer. When the
 * refused bytes are the body of the request being handled, the answer carries that request's id
 * and its own `http-log` entry (written when its connection closes) shows the status sent;
 * otherwise (a request that was never read, pipelined or not) the refusal is an entry of its own,
 * with method and path empty.
 */
export function clientErrorAnswer(logger: Logger | ServerLogger, records: RequestRecords): (error: Error & { code?: string }, socket: Duplex) => void {
  const log = httpLogWriter(logger);
  return (error, socket) => {
    try {
      // The response in flight on this connection, if any (null or absent between requests), and
      // whether its header went out already (Node's own test before it answers).
      const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
      const headerSent = pending !== undefined && (pending as ServerResponse & { _headerSent?: boolean })._headerSent === true;
      if (error.code !== 'ECONNRESET' && socket.writable && !headerSent) {
        const status =
          error.code === 'HPE_HEADER_OVERFLOW'
            ? 431
            : error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
              ? 413
              : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
                ? 408
                : 400;
        // The request whose body was being read when the parser gave up: the refusal is its answer.
        const reading = pending?.req !== undefined && !pending.req.complete ? records.of(pending.req) : undefined;
        const id = reading?.id ?? randomUUID();
        socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nx-request-id: ${id}\r\n\r\n`);
        if (reading !== undefined) {
          reading.refusedWith = status;
        } else {
          log?.(withoutOperation(id, '', '', status, 0));
        }
      }
    } catch (failure) {
      // Never thrown on: an exception here would reach the process as uncaught.
      logger.error('answering a request the HTTP parser refused failed:', failure);
    } finally {
      // As Node does: nothing more is read or written on this connection.
      socket.destroy();
    }
  };
}

/** The `http-log` fields of an answer that ran no operation (an upgrade, a refusal of the parser). */
function withoutOperation(id: string, method: string, path: string, status: number, latencyMs: number): HttpLogFields {
  return { request_id: id, method, path, status, latency_ms: latencyMs, operation_type: null, operation_name: null, role: null, remote_calls: 0 };
}

/** Milliseconds since `startedMs`, to the microsecond. */
function millisecondsSince(startedMs: number): number {
  return Math.round((performance.now() - startedMs) * 1000) / 1000;
}

/** Writes `http-log` entries at `info`; `undefined` when the level leaves them out. */
function httpLogWriter(logger: Logger | ServerLogger): ((fields: HttpLogFields) => void) | undefined {
  if ('entry' in logger) {
    if (!logger.enabled('info')) return undefined;
    return (fields) => logger.entry('info', 'http-log', `${fields.method} ${fields.path} ${fields.status}`, fields);
  }
  // A logger given to createServer: the entry as an object after its type.
  return (fields) => logger.info('http-log', { type: 'http-log', ...fields });
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > MAX_LOGGED_PATH ? path.slice(0, MAX_LOGGED_PATH) : path;
}

/**
 * Puts `context.requestId` in every GraphQL context (HTTP and graphql-ws), and notes the
 * operation's type and name and the request's role for the `http-log` entry and the span.
 */
export function useRequestTracking(records: RequestRecords): Plugin {
  return {
    onContextBuilding({ context, extendContext }) {
      const record = records.of(context);
      if (record) extendContext({ requestId: record.id } as Record<string, unknown>);
    },
    onParse({ context }) {
      const record = records.of(context);
      if (!record) return undefined;
      return ({ result }) => {
        const operationName = (context as { params?: { operationName?: unknown } }).params?.operationName;
        noteRequest(record, isDocument(result) ? result : undefined, operationName);
      };
    },
  };
}

/**
 * The role of a request and the operation its document names (when it parsed), for its http-log
 * entry: once Yoga parsed it, or when it is refused before (by the lock-down).
 */
export function noteRequest(record: RequestRecord, document: DocumentNode | undefined, operationName: unknown): void {
  record.role = record.session?.role ?? null;
  if (document === undefined) return;
  const operation = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
  if (operation) noteOperation(record, operation.operation, operation.name?.value ?? null);
}

/** The operation of a request (and its span's attributes), found by Yoga's parse or by the direct lane. */
export function noteOperation(record: RequestRecord, type: string, name: string | null): void {
  record.operationType = type;
  record.operationName = name;
  const span = record.span;
  if (span?.isRecording()) {
    span.setAttribute('graphql.operation.type', type);
    if (name !== null) span.setAttribute('graphql.operation.name', name);
  }
}

function isDocument(value: unknown): value is DocumentNode {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === Kind.DOCUMENT;
}
