// One autocannon run against one URL, with every response checked.
//
// Each request goes through `setupRequest`, also when it never changes, so that every case of a
// benchmark costs the load generator the same and only the server side differs between cases.
import { Agent, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';

/** What a single request carries; produced fresh for every request. */
export interface RequestSpec {
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Returns why a response is wrong, or undefined when it is right. Runs on every response. */
export type ResponseCheck = (status: number, body: string) => string | undefined;

export interface LoadOptions {
  /** Full URL, e.g. http://127.0.0.1:4000/graphql. */
  readonly url: string;
  readonly connections: number;
  /** Seconds. */
  readonly duration: number;
  /** Called once per request with a run-wide counter (0, 1, 2, ...) across all connections. */
  readonly request: (index: number) => RequestSpec;
  readonly check?: ResponseCheck;
  /** Stop as soon as this settles (then `duration` is only the upper bound). */
  readonly until?: Promise<unknown>;
}

export interface LoadResult {
  /** Responses received (good or bad). */
  readonly responses: number;
  readonly seconds: number;
  /** Responses per second. */
  readonly rps: number;
  /** Milliseconds, 2xx responses only (autocannon records latency for 2xx only). */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Bad responses plus connection errors and timeouts. */
  readonly failures: number;
  /** Failure reasons with their counts (the first few distinct ones). */
  readonly reasons: ReadonlyMap<string, number>;
  /** How many requests were built (the next free index for `request`). */
  readonly requestsBuilt: number;
}

/**
 * The default check: HTTP 200, a JSON object with `data` and without `errors`.
 * A GraphQL error answered with 200 is a failure too: a benchmark that counts it as a success
 * measures how fast the server can say no.
 */
export const graphqlOk: ResponseCheck = (status, body) => {
  if (status !== 200) return `HTTP ${status}: ${body.slice(0, 160)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `not JSON: ${body.slice(0, 160)}`;
  }
  if (typeof parsed !== 'object' || parsed === null) return `not an object: ${body.slice(0, 160)}`;
  if ('errors' in parsed) return `errors: ${JSON.stringify((parsed as { errors: unknown }).errors).slice(0, 200)}`;
  if (!('data' in parsed) || (parsed as { data: unknown }).data === null) return `no data: ${body.slice(0, 160)}`;
  return undefined;
};

/** `graphqlOk` plus a check of `data` (e.g. that the expected field came back). */
export function graphqlData(expect: (data: Record<string, unknown>) => string | undefined): ResponseCheck {
  return (status, body) => {
    const bad = graphqlOk(status, body);
    if (bad !== undefined) return bad;
    const { data } = JSON.parse(body) as { data: Record<string, unknown> };
    return expect(data);
  };
}

const MAX_REASONS = 8;

/** Counts failures and keeps the first few distinct reasons (numbers folded, so they group). */
function failureLog() {
  const reasons = new Map<string, number>();
  const log = {
    bad: 0,
    reasons,
    record(reason: string): void {
      log.bad += 1;
      const key = reason.replace(/\d{3,}/g, 'N');
      if (reasons.has(key) || reasons.size < MAX_REASONS) reasons.set(key, (reasons.get(key) ?? 0) + 1);
    },
  };
  return log;
}

export async function runLoad(options: LoadOptions, firstIndex = 0): Promise<LoadResult> {
  const check = options.check ?? graphqlOk;
  const failures = failureLog();
  const { reasons, record } = failures;
  let next = firstIndex;
  const url = new URL(options.url);

  const started = performance.now();
  const opts: autocannon.Options = {
    url: url.origin,
    connections: options.connections,
    pipelining: 1,
    duration: options.duration,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: url.pathname + url.search,
        setupRequest: (req) => {
          const spec = options.request(next);
          next += 1;
          return {
            ...req,
            headers: { ...req.headers, 'content-type': 'application/json', ...spec.headers },
            body: spec.body,
          };
        },
        onResponse: (status, body) => {
          const reason = check(status, body);
          if (reason !== undefined) record(reason);
        },
      },
    ],
  };
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(opts, (error: unknown, result: autocannon.Result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve(result);
    });
    const stop = (): void => instance.stop();
    options.until?.then(stop, stop);
  });
  const result = await finished;
  const seconds = (performance.now() - started) / 1000;
  const connectionFailures = result.errors; // includes timeouts
  if (connectionFailures > 0) {
    failures.bad += connectionFailures;
    reasons.set('connection error or timeout', (reasons.get('connection error or timeout') ?? 0) + connectionFailures);
  }
  return { ...answerFigures(result), seconds, failures: failures.bad, reasons, requestsBuilt: next };
}

/**
 * Open-loop load at a fixed rate, for comparing latency at the same req/s: requests leave on
 * schedule (`rate` per second, caught up on every 1 ms timer tick) whatever the answers do, over a
 * keep-alive agent of up to `connections` sockets (more queue in the agent, and that wait counts);
 * latency is from sending to the last byte of the answer, in fractional milliseconds. Not
 * autocannon's `overallRate`: that sends each connection's quota for a second in one burst at the
 * start of the second and back-fills its histogram for coordinated omission at a 1 ms interval, so
 * its p99 measures how a burst drains rather than a steady rate.
 */
export async function runPaced(options: LoadOptions & { readonly rate: number }, firstIndex = 0): Promise<LoadResult> {
  const check = options.check ?? graphqlOk;
  const failures = failureLog();
  const url = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const inFlight = new Set<Promise<void>>();
  let next = firstIndex;
  const send = (): void => {
    const spec = options.request(next);
    next += 1;
    const body = Buffer.from(spec.body);
    const sentAt = performance.now();
    const done = new Promise<void>((resolve) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length, ...spec.headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            latencies.push(performance.now() - sentAt);
            const reason = check(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'));
            if (reason !== undefined) failures.record(reason);
            resolve();
          });
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', (error) => {
        failures.record(`connection error or timeout: ${error.message}`);
        resolve();
      });
      req.end(body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  const started = performance.now();
  await new Promise<void>((finished) => {
    let sent = 0;
    const tick = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= options.duration) {
        clearInterval(tick);
        finished();
        return;
      }
      for (const due = Math.floor(elapsed * options.rate); sent < due; sent++) send();
    }, 1);
  });
  await Promise.all(inFlight);
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN) * 10) / 10;
  return {
    responses: sorted.length,
    seconds: (performance.now() - started) / 1000,
    rps: sorted.length / options.duration,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    failures: failures.bad,
    reasons: failures.reasons,
    requestsBuilt: next,
  };
}

/** Answers, req/s and latency percentiles of one autocannon run (every status counts). */
export function answerFigures(result: autocannon.Result): { responses: number; rps: number; p50: number; p99: number; max: number } {
  const responses = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  return { responses, rps: responses / result.duration, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max };
}

export function describeFailures(reasons: ReadonlyMap<string, number>): string {
  return [...reasons].map(([reason, count]) => `${count} x ${reason}`).join('\n');
}
