import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { ExecutionResult } from 'graphql';
import type { Session, SessionError } from '@svc-graphql/jwt-session';
import type { ClientHeaders } from '@svc-graphql/remote-schemas';
import type { RejectionReason } from './lockdown/rejections.js';

/**
 * What the server knows of one request, filled in as it runs: one typed record per HTTP request
 * (and per WebSocket upgrade), and one per graphql-ws operation. Every part of the server reaches
 * it with {@link RequestRecords.of}, from whatever it holds: the Node request, Yoga's server
 * context, or the GraphQL context of an HTTP request or a graphql-ws operation.
 */
export interface RequestRecord {
  /** `x-request-id`: the client's own when it is fit to be echoed, else a new UUID. */
  readonly id: string;
  /** `performance.now()` when the request (or upgrade) was first seen: its latency starts there. */
  readonly startedMs: number;
  /** The client's headers (graphql-ws: the upgrade's, with `connection_init`'s `headers` over them). */
  readonly headers: ClientHeaders;
  /**
   * Who the request is, once known: from the direct lane, from `useJwtSession` (HTTP through
   * Yoga), or from the connection (graphql-ws).
   */
  session: Session | undefined;

  // The http-log entry and the span.
  operationType: string | null;
  operationName: string | null;
  role: string | null;
  /** Calls made to remotes for it (`remote_calls`). */
  remoteCalls: number;
  /** The SERVER span of a `/v1/graphql` request (a no-op span without an OpenTelemetry SDK). */
  span: Span | undefined;
  /** The status the client was sent when Node's parser refused the rest of this request (its body). */
  refusedWith: number | undefined;

  // Metrics.
  /** The operation's type as an index of the request counts (observability/metrics.ts), once parsed. */
  countedType: number | undefined;
  /** `performance.now()` when its execution started. */
  executionStartedMs: number | undefined;
  /** An HTTP request to the GraphQL endpoint not counted yet. */
  uncounted: boolean;

  /** What the direct lane did before handing the request to Yoga; see http/direct-lane.ts. */
  handover: Handover | undefined;

  // Lock-down (lockdown/plugin.ts).
  /** The request is a batch (a JSON array of operations). */
  batch: boolean;
  /** The direct lane checked (and counted) its operation already: Yoga's path does not again. */
  lockdownChecked: boolean;
  /** Why the lock-down refused it (of a batch: the first operation refused), for the http-log entry. */
  rejected: RejectionReason | undefined;
}

/**
 * What the server reads of a client's HTTP request (or WebSocket upgrade): its headers and the
 * address it came from. A Node `IncomingMessage` is one; a graphql-ws connection keeps only these
 * of its upgrade request, not the whole message, for as long as it is open.
 */
export interface ClientRequest {
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

/** What the direct lane did for a request before handing it to Yoga. */
export interface Handover {
  /** The session it resolved, or the refusal. */
  session?: Session | SessionError;
  /** The remotes' answer (or what the call threw), and when the call started. */
  outcome?: { started: number; result?: ExecutionResult; thrown?: unknown };
}

const MAX_REQUEST_ID_LENGTH = 128;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** The client's `x-request-id` when it is 1 to 128 printable ASCII characters, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header.join(', ') : header;
  return value !== undefined && value.length > 0 && value.length <= MAX_REQUEST_ID_LENGTH && PRINTABLE_ASCII.test(value)
    ? value
    : randomUUID();
}

function newRecord(id: string, startedMs: number, headers: ClientHeaders, session: Session | undefined): RequestRecord {
  return {
    id,
    startedMs,
    headers,
    session,
    operationType: null,
    operationName: null,
    role: null,
    remoteCalls: 0,
    span: undefined,
    refusedWith: undefined,
    countedType: undefined,
    executionStartedMs: undefined,
    uncounted: false,
    handover: undefined,
    batch: false,
    lockdownChecked: false,
    rejected: undefined,
  };
}

/**
 * The records of one server's requests. A record is kept on the request or context it belongs
 * to, under a symbol of this instance (a property lookup, and nothing for the garbage collector to
 * track beyond the object itself): it lives as long as that object, and one server's records are
 * never another's.
 */
export class RequestRecords {
  readonly #key: symbol = Symbol('svc-graphql request record');

  #get(holder: object): RequestRecord | undefined {
    return (holder as Record<symbol, RequestRecord | undefined>)[this.#key];
  }

  #set(holder: object, record: RequestRecord): void {
    (holder as Record<symbol, RequestRecord | undefined>)[this.#key] = record;
  }

  /** The record of an HTTP request or WebSocket upgrade, made when first asked for. */
  open(request: ClientRequest): RequestRecord {
    let record = this.#get(request);
    if (record === undefined) {
      record = newRecord(requestIdFrom(request.headers['x-request-id']), performance.now(), request.headers, undefined);
      this.#set(request, record);
    }
    return record;
  }

  /** `request`'s record (made if need be) is also `holder`'s: what a connection keeps of its upgrade. */
  share(request: ClientRequest, holder: object): void {
    this.#set(holder, this.open(request));
  }

  /**
   * The record of a graphql-ws operation whose GraphQL context is `context`, on the connection
   * whose upgrade is `connection`: it carries the connection's id.
   */
  openOperation(context: object, connection: RequestRecord, headers: ClientHeaders, session: Session | undefined): RequestRecord {
    const record = newRecord(connection.id, performance.now(), headers, session);
    this.#set(context, record);
    return record;
  }

  /**
   * The record of a request, from what a part of the server holds: the Node request, Yoga's server
   * context (`{ req, res }`), or a GraphQL context (HTTP: the server context, extended; graphql-ws:
   * the operation's own).
   */
  of(holder: unknown): RequestRecord | undefined {
    if (typeof holder !== 'object' || holder === null) return undefined;
    const own = this.#get(holder);
    if (own !== undefined) return own;
    const req = (holder as { req?: unknown }).req;
    return typeof req === 'object' && req !== null ? this.#get(req) : undefined;
  }
}
