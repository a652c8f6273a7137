import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics, type PrometheusContentType } from 'prom-client';

/**
 * Prometheus metrics of the server, served at `GET /v1/metrics` (prom-client's text format).
 *
 * The hot path never touches prom-client: a request adds to plain numbers and typed arrays kept
 * here, per label value bound once (no label hashing, no object per request), and prom-client reads
 * them when it is scraped, through its documented API, one registry per concern:
 *
 * - Node process metrics (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`, …):
 *   prom-client's `collectDefaultMetrics`, collected once per process and shown by every server of it;
 * - counters and gauges: prom-client metrics whose `collect()` sets them from the plain numbers;
 * - histograms: their bucket counts, sums and counts, in the form `getMetricsAsJSON()` gives,
 *   turned into a registry by `AggregatorRegistry.aggregate` (prom-client's way to show metrics
 *   counted elsewhere; a histogram has no setter, and `observe()` per request hashes its labels).
 *
 * `Registry.merge` puts the three together for a scrape ({@link ServerMetrics.snapshot}).
 *
 * Label values are bounded: operation types and outcomes are fixed sets, `remote_schema` is the
 * name of a configured remote schema, and `result` a verification error's name (at most
 * {@link MAX_JWT_RESULTS} of them). Never a user id, a token, a query text or an operation name.
 */

export type OperationType = 'query' | 'mutation' | 'subscription' | 'unknown';

const OPERATION_TYPES: readonly OperationType[] = ['query', 'mutation', 'subscription', 'unknown'];
/** Indexes of {@link OPERATION_TYPES}. */
export const QUERY = 0;
export const MUTATION = 1;
export const SUBSCRIPTION = 2;
export const UNKNOWN = 3;

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

/** One histogram: a {@link HistogramSeries} per value of its one label. */
class HistogramCounts {
  readonly #series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelName: string,
  ) {}

  /** The series of `value`, made once. */
  series(value: string): HistogramSeries {
    let series = this.#series.get(value);
    if (series === undefined) {
      series = new HistogramSeries({ [this.labelName]: value }, DURATION_BUCKETS);
      this.#series.set(value, series);
    }
    return series;
  }

  /** Drops the series of `value` (a new one starts from zero). */
  forget(value: string): void {
    this.#series.delete(value);
  }

  /** The histogram as `Registry.getMetricsAsJSON()` shows one: cumulative buckets, `+Inf`, sum and count. */
  toJSON(): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: MetricValue[] } {
    const { name } = this;
    const values: MetricValue[] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({ metricName: `${name}_bucket`, labels: { ...series.labels, le: bound }, value: cumulative });
      });
      values.push(
        { metricName: `${name}_bucket`, labels: { ...series.labels, le: '+Inf' }, value: series.count },
        { metricName: `${name}_sum`, labels: { ...series.labels }, value: series.sum },
        { metricName: `${name}_count`, labels: { ...series.labels }, value: series.count },
      );
    }
    return { name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}

interface MetricValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
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

/** The reasons of `svc_graphql_rejected_operations_total`. */
const REJECTION_REASONS = ['allowlist', 'introspection', 'depth', 'nodes', 'batch', 'time', 'rate'] as const;

/** The server's metrics: what the hot path adds to, and the registry `/v1/metrics` serves. */
export class ServerMetrics {
  /** Counters and gauges. */
  readonly #registry = new Registry();
  /** `svc_graphql_requests_total`, index `type * 2 + failed`. */
  readonly #requests = new Float64Array(OPERATION_TYPES.length * 2);
  readonly #execution: HistogramSeries[];
  readonly #executionTime: HistogramCounts;
  readonly #remoteDuration: HistogramCounts;
  readonly #remotes = new Map<string, RemoteSeries>();
  readonly #jwtResults = new Map<string, number>();
  /** ok, error */
  readonly #jwksFetches = new Float64Array(2);
  /** `svc_graphql_rejected_operations_total`, by reason. */
  readonly #rejected = new Map<string, number>(REJECTION_REASONS.map((reason) => [reason, 0]));
  #schemaSwaps = 0;
  /** The remote schemas of the live metadata, once a swap told them. */
  #presentRemotes: ReadonlySet<string> | undefined;
  #webSockets = 0;
  #subscriptions = 0;
  /** `svc_graphql_remote_subscriptions_refused_total`, by remote schema. */
  readonly #refusedSubscriptions = new Map<string, number>();
  #slowClientCloses = 0;
  #metadata: MetadataGauges | undefined;

  constructor() {
    const registry = this.#registry;

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
    this.#executionTime = new HistogramCounts(
      'svc_graphql_execution_time_seconds',
      'Time executing GraphQL queries and mutations (remote calls included; not parsing, validation or subscriptions).',
      'operation_type',
    );
    this.#execution = [this.#executionTime.series('query'), this.#executionTime.series('mutation')];

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
    this.#remoteDuration = new HistogramCounts(
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
    const rejected = this.#rejected;
    new Counter({
      name: 'svc_graphql_rejected_operations_total',
      help: 'Operations refused by the allow list, introspection options or API limits, by reason.',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [reason, count] of rejected) this.inc({ reason }, count);
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
    const refused = this.#refusedSubscriptions;
    new Counter({
      name: 'svc_graphql_remote_subscriptions_refused_total',
      help: 'Subscriptions refused because their remote schema had the most subscriptions open (--max-subscriptions-per-remote), by remote schema.',
      labelNames: ['remote_schema'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [remoteSchema, count] of refused) this.inc({ remote_schema: remoteSchema }, count);
      },
    });
    new Counter({
      name: 'svc_graphql_websocket_slow_client_closes_total',
      help: 'WebSocket connections closed with 1013 because more than 1 MiB was waiting to be sent to them.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(self.#slowClientCloses);
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

  /**
   * Everything as it is now, in one registry (the Prometheus text format: `snapshot().metrics()`):
   * the process metrics, the counters and gauges (prom-client calls their `collect()`), and the
   * histograms.
   */
  snapshot(): Registry {
    const histograms = AggregatorRegistry.aggregate<PrometheusContentType>([[this.#executionTime.toJSON(), this.#remoteDuration.toJSON()]]);
    return Registry.merge([processMetrics(), this.#registry, histograms]);
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

  /** An operation refused by a lock-down check. */
  countRejectedOperation(reason: (typeof REJECTION_REASONS)[number]): void {
    this.#rejected.set(reason, (this.#rejected.get(reason) ?? 0) + 1);
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
    for (const name of this.#refusedSubscriptions.keys()) if (!present.has(name)) this.#refusedSubscriptions.delete(name);
  }

  /** A subscription refused: `remoteSchema` had the most subscriptions open. */
  countRefusedSubscription(remoteSchema: string): void {
    if (this.#presentRemotes !== undefined && !this.#presentRemotes.has(remoteSchema)) return;
    this.#refusedSubscriptions.set(remoteSchema, (this.#refusedSubscriptions.get(remoteSchema) ?? 0) + 1);
  }

  /** A WebSocket closed with 1013: too much was waiting to be sent to it. */
  countSlowClientClose(): void {
    this.#slowClientCloses++;
  }

  /** A WebSocket connection opened: counted among the open ones until {@link webSocketClosed}. */
  webSocketOpened(): void {
    this.#webSockets++;
  }

  webSocketClosed(): void {
    this.#webSockets--;
  }

  subscriptionStarted(): void {
    this.#subscriptions++;
  }

  subscriptionEnded(): void {
    this.#subscriptions--;
  }
}
