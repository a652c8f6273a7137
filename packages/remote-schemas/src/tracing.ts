import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

/**
 * Spans of calls to remotes, through `@opentelemetry/api` only: without a registered SDK every
 * call below is the API's no-op (no span is recorded, nothing is injected), and the embedding
 * application chooses its own SDK and exporter.
 */
const tracer = trace.getTracer('@svc-graphql/remote-schemas');

/**
 * Starts the CLIENT span of one HTTP call to a remote, child of the active context (the server's
 * span of the client's request, or a metadata operation's span for an introspection), and writes
 * its W3C `traceparent` (and `tracestate`) into `headers`, the headers about to be sent.
 */
export function startRemoteSpan(remoteSchema: string, url: string, headers: Record<string, string>): Span {
  const parent = context.active();
  const span = tracer.startSpan(`remote_schema ${remoteSchema}`, { kind: SpanKind.CLIENT }, parent);
  if (span.isRecording()) {
    span.setAttribute('svc_graphql.remote_schema', remoteSchema);
    span.setAttribute('http.request.method', 'POST');
    const address = serverAddress(url);
    if (address) {
      span.setAttribute('server.address', address.host);
      if (address.port !== undefined) span.setAttribute('server.port', address.port);
    }
  }
  propagation.inject(trace.setSpan(parent, span), headers);
  return span;
}

/** Ends a span of {@link startRemoteSpan}: the answer's HTTP status, or the failure. */
export function endRemoteSpan(span: Span, status: number | undefined, failure?: string): void {
  if (span.isRecording()) {
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (failure !== undefined) {
      span.setAttribute('error.type', failure);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
    } else if (status !== undefined && status >= 400) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

function serverAddress(url: string): { host: string; port: number | undefined } | undefined {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
    return { host, port: parsed.port === '' ? undefined : Number(parsed.port) };
  } catch {
    return undefined;
  }
}
