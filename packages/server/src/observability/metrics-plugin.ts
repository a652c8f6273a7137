import { createHash, timingSafeEqual } from 'node:crypto';
import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { RequestRecord, RequestRecords } from '../request-record.js';
import { MUTATION, QUERY, SUBSCRIPTION, UNKNOWN, type ServerMetrics } from './metrics.js';

/**
 * Where the server's metrics are counted (the Envelop hooks of HTTP and graphql-ws requests, the
 * direct lane, graphql-ws refusals) and where they are served (`GET /v1/metrics`).
 */

/** The operation type of `document` (with `operationName`), as an index into the request counts. */
function operationTypeIndex(document: DocumentNode, operationName: unknown): number {
  const operation = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
  if (operation === null || operation === undefined) return UNKNOWN;
  return operation.operation === 'query' ? QUERY : operation.operation === 'mutation' ? MUTATION : SUBSCRIPTION;
}

function failed(result: unknown): boolean {
  const errors = (result as ExecutionResult | null | undefined)?.errors;
  return errors !== undefined && errors.length > 0;
}

/**
 * Counts a graphql-ws operation once its result is known (a stream, a subscription that started,
 * counts as a success), its type as the metrics plugin found it when parsing. `pending` is
 * returned as it is without metrics.
 */
export function countWebSocketResult<T>(metrics: ServerMetrics | undefined, record: RequestRecord | undefined, pending: Promise<T>): Promise<T> {
  if (metrics === undefined) return pending;
  return pending.then((result) => {
    metrics.countRequest(record?.countedType ?? UNKNOWN, !isAsyncIterable(result) && failed(result));
    return result;
  });
}

/**
 * Counts a graphql-ws operation refused before execution, as `failed`: of unknown type without a
 * document (too many operations, a syntax error), else of the document's type (validation errors).
 */
export function countWebSocketRefusal(metrics: ServerMetrics | undefined, document: DocumentNode | undefined, operationName: unknown): void {
  metrics?.countRequest(document === undefined ? UNKNOWN : operationTypeIndex(document, operationName), true);
}

/** An HTTP request answered before Yoga (the server's direct lane) without errors, and its execution time. */
export function countDirectAnswer(metrics: ServerMetrics, type: 'query' | 'mutation', seconds: number): void {
  const index = type === 'mutation' ? MUTATION : QUERY;
  metrics.countRequest(index, false);
  metrics.observeExecution(index, seconds);
}

/**
 * The execution of the operation of `record` started at `started` (`performance.now()`): for an
 * operation the direct lane ran before handing the request to Yoga.
 */
export function backdateExecution(record: RequestRecord, started: number): void {
  if (record.executionStartedMs !== undefined) record.executionStartedMs = started;
}

/**
 * Counts GraphQL requests and operations, and times their execution, for HTTP and (through the
 * same Envelop hooks) graphql-ws. Must come first among the plugins: a request another plugin
 * answers in `onRequest` (a 401, a 413) is then still counted.
 *
 * Over HTTP, each request to `graphqlPath` that gets an answer is counted once: from its result
 * when it got one (`failed` when it has errors; a stream counts as a success when it starts), else
 * as `unknown` and `failed` when it was refused with a 4xx/5xx before any GraphQL work (bad JSON,
 * authentication, body too large). `OPTIONS` and the GraphiQL page are not GraphQL requests.
 * Over graphql-ws the server counts each operation itself ({@link countWebSocketResult}).
 */
export function useMetrics(metrics: ServerMetrics, graphqlPath: string, records: RequestRecords): Plugin {
  const graphqlPathSlash = `${graphqlPath}/`;
  // Shared callbacks: nothing is allocated per request for them.
  const parseDone = ({ context, result }: { context: unknown; result: unknown }) => {
    if (result instanceof Error || result === null || typeof result !== 'object') return;
    const record = records.of(context);
    if (record === undefined) return;
    const operationName = (context as { params?: { operationName?: unknown } }).params?.operationName;
    record.countedType = operationTypeIndex(result as DocumentNode, operationName);
  };
  const executeDone = {
    onExecuteDone({ args }: { args: { contextValue?: unknown } }) {
      const record = records.of(args.contextValue);
      const started = record?.executionStartedMs;
      if (started === undefined) return;
      metrics.observeExecution(record?.countedType === MUTATION ? MUTATION : QUERY, (performance.now() - started) / 1000);
    },
  };
  const subscriptionEnd = { onEnd: () => metrics.subscriptionEnded() };
  const subscribeDone = {
    onSubscribeResult({ result }: { result: unknown }) {
      if (!isAsyncIterable(result)) return undefined;
      metrics.subscriptionStarted();
      return subscriptionEnd;
    },
  };
  return {
    onRequest({ request, url, serverContext }) {
      if (request.method === 'OPTIONS') return;
      const path = url.pathname;
      if (path !== graphqlPath && path !== graphqlPathSlash) return;
      const record = records.of(serverContext);
      if (record) record.uncounted = true;
    },
    onParse() {
      return parseDone;
    },
    onExecute({ context }) {
      const record = records.of(context);
      if (record === undefined) return undefined;
      record.executionStartedMs = performance.now();
      return executeDone;
    },
    onSubscribe() {
      return subscribeDone;
    },
    onResultProcess({ result, serverContext }) {
      const record = records.of(serverContext);
      if (record?.uncounted !== true) return;
      record.uncounted = false;
      if (Array.isArray(result)) {
        // A batch (not enabled on this server): each operation on its own, of unknown type.
        for (const one of result) metrics.countRequest(UNKNOWN, failed(one));
        return;
      }
      metrics.countRequest(record.countedType ?? UNKNOWN, !isAsyncIterable(result) && failed(result));
    },
    onResponse({ response, serverContext }) {
      const record = records.of(serverContext);
      if (record?.uncounted !== true) return;
      record.uncounted = false;
      if (response.status >= 400) metrics.countRequest(UNKNOWN, true);
    },
  };
}

/** Who may read `/v1/metrics`. */
export interface MetricsAccess {
  /** Then only `Authorization: Bearer <metricsSecret>`. */
  metricsSecret?: string | undefined;
  /** Else, when set, the admin secret header. Else anyone. */
  adminSecret?: string | undefined;
  /** @default 'x-svc-admin-secret' */
  adminSecretHeader?: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time comparison (the digests have one length whatever the inputs). */
function sameSecret(given: string, expected: Buffer): boolean {
  return timingSafeEqual(digest(given), expected);
}

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * `GET /v1/metrics` (and `HEAD`): the Prometheus text format of `metrics.snapshot()`.
 *
 * Access: with a metrics secret, only `Authorization: Bearer <secret>`; otherwise, with an admin
 * secret, only the admin secret header; otherwise open. Anything else is answered 401 with
 * `{"error": M, "path": "$", "code": "access-denied"}` (and `WWW-Authenticate: Bearer` when a
 * metrics secret is asked for). Secrets are compared in constant time.
 */
export function useMetricsEndpoint(metrics: ServerMetrics, access: MetricsAccess, path = '/v1/metrics'): Plugin {
  const metricsSecret = access.metricsSecret === undefined ? undefined : digest(access.metricsSecret);
  const adminSecret = access.adminSecret === undefined ? undefined : digest(access.adminSecret);
  const adminHeader = (access.adminSecretHeader ?? 'x-svc-admin-secret').toLowerCase();
  const refusal = (fetchAPI: { Response: typeof Response }, message: string, headers: Record<string, string> = {}) =>
    new fetchAPI.Response(JSON.stringify({ error: message, path: '$', code: 'access-denied' }), {
      status: 401,
      headers: { 'content-type': 'application/json', ...headers },
    });
  const denied = (request: Request, fetchAPI: { Response: typeof Response }): Response | undefined => {
    if (metricsSecret !== undefined) {
      const challenge = { 'www-authenticate': 'Bearer realm="metrics"' };
      const authorization = request.headers.get('authorization');
      if (authorization === null) return refusal(fetchAPI, 'Authorization: Bearer <metrics secret> required, but not found', challenge);
      const token = BEARER.exec(authorization)?.[1];
      if (token === undefined || !sameSecret(token, metricsSecret)) return refusal(fetchAPI, 'invalid metrics secret', challenge);
      return undefined;
    }
    if (adminSecret !== undefined) {
      const given = request.headers.get(adminHeader);
      if (given === null) return refusal(fetchAPI, `${adminHeader} required, but not found`);
      if (!sameSecret(given, adminSecret)) return refusal(fetchAPI, `invalid ${adminHeader}`);
    }
    return undefined;
  };
  return {
    onRequest({ request, url, fetchAPI, endResponse }) {
      if (url.pathname !== path) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
        return;
      }
      const refused = denied(request, fetchAPI);
      if (refused) {
        endResponse(refused);
        return;
      }
      const registry = metrics.snapshot();
      return registry.metrics().then((text) => {
        endResponse(
          new fetchAPI.Response(request.method === 'HEAD' ? null : text, {
            status: 200,
            headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' },
          }),
        );
      });
    },
  };
}
