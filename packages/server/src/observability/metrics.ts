import { createHash, timingSafeEqual } from 'node:crypto';
import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { WebSocket } from 'ws';

/**
 * Prometheus metrics of the server, served at `GET /v1/metrics` (prom-client's text format).
 *
 * The hot path never touches prom-client: a request adds to plain numbers and typed arrays kept
 * here, per label value bound once (no label hashing, no object per request), and prom-client reads
 * them when it is scraped (counters and gauges through their `collect()`, histograms through `get()`).
 * prom-client's own Node process metrics (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`,
 * …) are collected once per process and shown by every server of it.
 *
 * Label values are bounded: operation types and outcomes are fixed sets, `remote_schema` is the
 * name of a configured remote schema, and `result` a verification error's name (at most
 * {@link MAX_JWT_RESULTS} of them). Never a user id, a token, a query text or an operation name.
 */

export type OperationType = 'query' | 'mutation' | 'subscription' | 'unknown';

const OPERATION_TYPES: readonly OperationType[] = ['query', 'mutation', 'subscription', 'unknown'];
const QUERY = 0;
const MUTATION = 1;
const SUBSCRIPTION = 2;
const UNKNOWN = 3;

/** Seconds; a remote's `timeout_seconds` defaults to 60. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Distinct `result` values of `svc_graphql_jwt_verifications_total`, `other` included; past them, results count as `other`. */
export const MAX_JWT_RESULTS = 32;
const JWT_RESULT = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const REMOTE_OUTCOMES = ['ok', 'error', 'timeout'] as const;
export type RemoteOutcome = (typeof REMOTE_OUTCOMES)[number];

/** Where the metadata gauges are read from, when scraped. */
export interface MetadataGauges {
  inconsistentObjects(): number;
  resourceVersion(): number;
}

/** A histogram's counts for one label value. */
class HistogramSeries {
  /** Per bucket (not cumulative), the last one past the largest bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
  }
}

type HistogramData = Awaited<ReturnType<Histogram['get']>>;

/**
 * A prom-client histogram whose counts live in {@link HistogramSeries} (bound once per label
 * value): prom-client's own `observe()` hashes its labels on every call.
 */
class BoundHistogram extends Histogram<string> {
  readonly #series = new Map<string, HistogramSeries>();
  readonly #bounds: readonly number[];
  readonly #labelName: string;

  constructor(registry: Registry, name: string, help: string, labelName: string) {
    super({ name, help, labelNames: [labelName], buckets: DURATION_BUCKETS, registers: [registry] });
    this.#bounds = DURATION_BUCKETS;
    this.#labelName = labelName;
  }

  /** Drops the series of `value` (a new one starts from zero). */
  forget(value: string): void {
    this.#series.delete(value);
  }

  series(value: string): HistogramSeries {
    let series = this.#series.get(value);
    if (series === undefined) {
      series = new HistogramSeries({ [this.#labelName]: value }, this.#bounds);
      this.#series.set(value, series);
    }
    return series;
  }

  override async get(): Promise<HistogramData> {
    const { name, help } = this as unknown as { name: string; help: string };
    // prom-client's typings give `type` as a numeric enum; at run time it is the text of the format.
    return { name, help, type: 'histogram' as unknown as HistogramData['type'], aggregator: 'sum', values: this.#values(name) } as HistogramData;
  }

  /** What prom-client's registry formats (it prefers this to `get()` when present). */
  async getForPromString(): Promise<HistogramData> {
    return this.get();
  }

  #values(name: string): HistogramData['values'] {
    const values: HistogramData['values'] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({ metricName: `${name}_bucket`, labels: { ...series.labels, le: bound }, value: cumulative });
      });
      values.push(
        { metricName: `${name}_bucket`, labels: { ...series.labels, le: '+Inf' }, value: series.count },
        { metricName: `${name}_sum`, labels: { ...series.labels }, value: series.sum },
        { metricName: `${name}_count`, labels: { ...series.labels }, value: series.count },
      );
    }
    return values;
  }
}

/** A remote schema's counts. */
interface RemoteSeries {
  /** By outcome: ok, error, timeout. */
  outcomes: Float64Array;
  duration: HistogramSeries;
}

let processRegistry: Registry | undefined;

/** Node process metrics, collected once per process whatever the number of servers in it. */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The server's metrics: what the hot path adds to, and the registry `/v1/metrics` serves. */
export class ServerMetrics {
  readonly registry = new Registry();
  /** `svc_graphql_requests_total`, index `type * 2 + failed`. */
  readonly #requests = new Float64Array(OPERATION_TYPES.length * 2);
  readonly #execution: HistogramSeries[];
  readonly #remoteDuration: BoundHistogram;
  readonly #remotes = new Map<string, RemoteSeries>();
  readonly #jwtResults = new Map<string, number>();
  /** ok, error */
  readonly #jwksFetches = new Float64Array(2);
  #schemaSwaps = 0;
  /** The remote schemas of the live metadata, once a swap told them. */
  #presentRemotes: ReadonlySet<string> | undefined;
  #webSockets = 0;
  #subscriptions = 0;
  #metadata: MetadataGauges | undefined;

  constructor() {
    const registry = this.registry;
    for (const metric of processMetrics().getMetricsAsArray()) registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);

    const requests = this.#requests;
    new Counter({
      name: 'svc_graphql_requests_total',
      help: 'GraphQL requests (HTTP) and operations (graphql-ws) answered, by operation type and whether the answer had errors.',
      labelNames: ['operation_type', 'response_status'],
      registers: [registry],
      collect() {
        this.reset();
        OPERATION_TYPES.forEach((operationType, type) => {
          this.inc({ operation_type: operationType, response_status: 'success' }, requests[type * 2] as number);
          this.inc({ operation_type: operationType, response_status: 'failed' }, requests[type * 2 + 1] as number);
        });
      },
    });
    const execution = new BoundHistogram(
      registry,
      'svc_graphql_execution_time_seconds',
      'Time executing GraphQL queries and mutations (remote calls included; not parsing, validation or subscriptions).',
      'operation_type',
    );
    this.#execution = [execution.series('query'), execution.series('mutation')];

    const remotes = this.#remotes;
    new Counter({
      name: 'svc_graphql_remote_requests_total',
      help: 'HTTP calls to remote schemas for client queries and mutations, by remote schema and outcome.',
      labelNames: ['remote_schema', 'outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [remoteSchema, series] of remotes) {
          REMOTE_OUTCOMES.forEach((outcome, i) => this.inc({ remote_schema: remoteSchema, outcome }, series.outcomes[i] as number));
        }
      },
    });
    this.#remoteDuration = new BoundHistogram(
      registry,
      'svc_graphql_remote_request_duration_seconds',
      'Duration of HTTP calls to remote schemas, by remote schema.',
      'remote_schema',
    );

    const jwtResults = this.#jwtResults;
    new Counter({
      name: 'svc_graphql_jwt_verifications_total',
      help: 'JWT verifications (cached ones included), by result: ok or the error name.',
      labelNames: ['result'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [result, count] of jwtResults) this.inc({ result }, count);
      },
    });
    const jwks = this.#jwksFetches;
    new Counter({
      name: 'svc_graphql_jwks_fetches_total',
      help: 'JWKS fetches (start-up, refresh, unknown key id), by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ outcome: 'ok' }, jwks[0] as number);
        this.inc({ outcome: 'error' }, jwks[1] as number);
      },
    });
    const self = this;
    new Gauge({
      name: 'svc_graphql_websocket_connections',
      help: 'Open WebSocket connections.',
      registers: [registry],
      collect() {
        this.set(self.#webSockets);
      },
    });
    new Gauge({
      name: 'svc_graphql_active_subscriptions',
      help: 'Running subscriptions (graphql-ws and HTTP streams).',
      registers: [registry],
      collect() {
        this.set(self.#subscriptions);
      },
    });
    new Counter({
      name: 'svc_graphql_schema_swaps_total',
      help: 'Times the live GraphQL schema was replaced (metadata changes, reloads, remotes back after a retry).',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(self.#schemaSwaps);
      },
    });
    new Gauge({
      name: 'svc_graphql_inconsistent_objects',
      help: 'Inconsistent metadata objects.',
      registers: [registry],
      collect() {
        this.set(self.#metadata?.inconsistentObjects() ?? 0);
      },
    });
    new Gauge({
      name: 'svc_graphql_metadata_resource_version',
      help: 'Resource version of the metadata in use.',
      registers: [registry],
      collect() {
        this.set(self.#metadata?.resourceVersion() ?? 0);
      },
    });
  }

  /** Where the metadata gauges come from (known once the metadata service exists). */
  setMetadata(source: MetadataGauges): void {
    this.#metadata = source;
  }

  /** One GraphQL request (HTTP) or graphql-ws operation answered. */
  countRequest(type: number, failed: boolean): void {
    (this.#requests[type * 2 + (failed ? 1 : 0)] as number)++;
  }

  /** `execute` of a query (0) or mutation (1) took `seconds`. */
  observeExecution(type: number, seconds: number): void {
    this.#execution[type]?.observe(seconds);
  }

  /** An HTTP call to a remote schema for a client operation. */
  countRemoteRequest(remoteSchema: string, outcome: RemoteOutcome, seconds: number): void {
    let series = this.#remotes.get(remoteSchema);
    if (series === undefined) {
      // A call that was under way when its remote was removed: its series stays dropped.
      if (this.#presentRemotes !== undefined && !this.#presentRemotes.has(remoteSchema)) return;
      series = { outcomes: new Float64Array(REMOTE_OUTCOMES.length), duration: this.#remoteDuration.series(remoteSchema) };
      this.#remotes.set(remoteSchema, series);
    }
    const index = outcome === 'ok' ? 0 : outcome === 'error' ? 1 : 2;
    (series.outcomes[index] as number)++;
    series.duration.observe(seconds);
  }

  /** A token verification: `ok` or the error's name (anything else than a short name is `other`). */
  countJwtVerification(result: string): void {
    const results = this.#jwtResults;
    let key = result;
    if (!results.has(key) && (!JWT_RESULT.test(key) || results.size >= MAX_JWT_RESULTS)) key = 'other';
    results.set(key, (results.get(key) ?? 0) + 1);
  }

  countJwksFetch(outcome: 'ok' | 'error'): void {
    (this.#jwksFetches[outcome === 'ok' ? 0 : 1] as number)++;
  }

  /**
   * A schema swap. The series of remote schemas no longer in the metadata are dropped, so that
   * adding and removing remotes of new names does not grow the scrape for good (a remote that comes
   * back starts from zero, as counters do after a restart).
   */
  countSchemaSwap(remoteSchemas?: readonly string[]): void {
    this.#schemaSwaps++;
    if (remoteSchemas === undefined) return;
    const present = new Set(remoteSchemas);
    this.#presentRemotes = present;
    for (const name of this.#remotes.keys()) {
      if (present.has(name)) continue;
      this.#remotes.delete(name);
      this.#remoteDuration.forget(name);
    }
  }

  /** Counts `socket` among the open WebSocket connections until it closes. */
  trackWebSocket(socket: WebSocket): void {
    this.#webSockets++;
    socket.once('close', () => {
      this.#webSockets--;
    });
  }

  subscriptionStarted(): void {
    this.#subscriptions++;
  }

  subscriptionEnded(): void {
    this.#subscriptions--;
  }
}

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

/** Per-request state kept on the GraphQL context (HTTP: the server context, which Yoga extends). */
const TYPE = Symbol('svc-graphql.metrics.type');
const STARTED = Symbol('svc-graphql.metrics.started');
/** On the server context of a request to the GraphQL endpoint: `true` until it is counted. */
const UNCOUNTED = Symbol('svc-graphql.metrics.uncounted');

interface MetricsContext {
  [TYPE]?: number;
  [STARTED]?: number;
  [UNCOUNTED]?: boolean;
  params?: { operationName?: unknown };
}

/** The operation type the metrics plugin found for the operation whose context is `context`. */
function operationTypeOfContext(context: unknown): number {
  return (context as MetricsContext | null | undefined)?.[TYPE] ?? UNKNOWN;
}

/**
 * Counts a graphql-ws operation once its result is known (a stream, a subscription that started,
 * counts as a success), its type as the metrics plugin found it when parsing. `pending` is
 * returned as it is without metrics.
 */
export function countWebSocketResult<T>(metrics: ServerMetrics | undefined, args: { contextValue?: unknown }, pending: Promise<T>): Promise<T> {
  if (metrics === undefined) return pending;
  return pending.then((result) => {
    metrics.countRequest(operationTypeOfContext(args.contextValue), !isAsyncIterable(result) && failed(result));
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
 * The execution of the operation of `context` started at `started` (`performance.now()`): for an
 * operation the direct lane ran before handing the request to Yoga.
 */
export function backdateExecution(context: unknown, started: number): void {
  const ctx = context as MetricsContext | null | undefined;
  if (ctx && ctx[STARTED] !== undefined) ctx[STARTED] = started;
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
export function useMetrics(metrics: ServerMetrics, graphqlPath: string): Plugin {
  const graphqlPathSlash = `${graphqlPath}/`;
  // Shared callbacks: nothing is allocated per request for them.
  const parseDone = ({ context, result }: { context: unknown; result: unknown }) => {
    if (result instanceof Error || result === null || typeof result !== 'object') return;
    const ctx = context as MetricsContext;
    ctx[TYPE] = operationTypeIndex(result as DocumentNode, ctx.params?.operationName);
  };
  const executeDone = {
    onExecuteDone({ args }: { args: { contextValue?: unknown } }) {
      const ctx = args.contextValue as MetricsContext | undefined;
      const started = ctx?.[STARTED];
      if (started === undefined) return;
      metrics.observeExecution(ctx?.[TYPE] === MUTATION ? MUTATION : QUERY, (performance.now() - started) / 1000);
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
      if (path === graphqlPath || path === graphqlPathSlash) (serverContext as MetricsContext)[UNCOUNTED] = true;
    },
    onParse() {
      return parseDone;
    },
    onExecute({ context }) {
      (context as MetricsContext)[STARTED] = performance.now();
      return executeDone;
    },
    onSubscribe() {
      return subscribeDone;
    },
    onResultProcess({ result, serverContext }) {
      const ctx = serverContext as MetricsContext;
      if (ctx[UNCOUNTED] !== true) return;
      ctx[UNCOUNTED] = false;
      if (Array.isArray(result)) {
        // A batch (not enabled on this server): each operation on its own, of unknown type.
        for (const one of result) metrics.countRequest(UNKNOWN, failed(one));
        return;
      }
      metrics.countRequest(ctx[TYPE] ?? UNKNOWN, !isAsyncIterable(result) && failed(result));
    },
    onResponse({ response, serverContext }) {
      const ctx = serverContext as MetricsContext;
      if (ctx[UNCOUNTED] !== true) return;
      ctx[UNCOUNTED] = false;
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
 * `GET /v1/metrics` (and `HEAD`): the Prometheus text format of `metrics.registry`.
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
      return metrics.registry.metrics().then((text) => {
        endResponse(
          new fetchAPI.Response(request.method === 'HEAD' ? null : text, {
            status: 200,
            headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' },
          }),
        );
      });
    },
  };
}
