import { SpanStatusCode, trace } from '@opentelemetry/api';
import { OPERATIONS } from './operations.js';
import type { MetadataResponse } from './service.js';

/**
 * Spans of metadata operations through `@opentelemetry/api` only (a no-op unless the application
 * registers an OpenTelemetry SDK).
 */
const tracer = trace.getTracer('@svc-graphql/metadata-api');

/**
 * Runs one metadata request inside the span `metadata <type>` (child of the active context), whose
 * type is the request's own when it names an operation (`metadata unknown` otherwise: a span name
 * never carries what a client made up). Introspections of remotes it causes are its children.
 */
export function tracedMetadataRequest(body: unknown, run: () => Promise<MetadataResponse>): Promise<MetadataResponse> {
  const type = (body as { type?: unknown } | null | undefined)?.type;
  const known = typeof type === 'string' && Object.hasOwn(OPERATIONS, type) ? type : 'unknown';
  return tracer.startActiveSpan(`metadata ${known}`, async (span) => {
    try {
      const response = await run();
      if (span.isRecording()) {
        span.setAttribute('svc_graphql.metadata.operation', known);
        span.setAttribute('svc_graphql.metadata.status', response.status);
        const code = (response.body as { code?: unknown } | null | undefined)?.code;
        if (typeof code === 'string' && response.status >= 400) span.setAttribute('svc_graphql.metadata.error_code', code);
        if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return response;
    } finally {
      span.end();
    }
  });
}
