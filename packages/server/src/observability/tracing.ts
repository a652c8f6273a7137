import { diag, DiagLogLevel } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Logger } from './logger.js';
import { VERSION } from '../version.js';

/** Registered OpenTelemetry tracing: `shutdown()` sends the spans still buffered and stops. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/** How long `shutdown()` waits for the last spans to be sent. */
const SHUTDOWN_TIMEOUT_MS = 5000;

/**
 * Registers the OpenTelemetry Node tracer provider, exporting over OTLP/HTTP (JSON bodies), when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; `undefined` (and
 * nothing registered: every span is the API's no-op) otherwise, or when `OTEL_SDK_DISABLED=true`
 * or `OTEL_TRACES_EXPORTER=none`. Everything else comes from the standard `OTEL_*` variables the
 * SDK reads (headers, timeout, sampler, batch sizes, `OTEL_RESOURCE_ATTRIBUTES`);
 * `OTEL_SERVICE_NAME` defaults to `svc-graphql`. The context manager is AsyncLocalStorage's, and
 * the propagators W3C trace context and baggage.
 */
export function startTracing(logger: Logger, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  const endpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (!endpoint) return undefined;
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return undefined;
  if (env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none') return undefined;
  const protocol = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'])?.trim();
  if (protocol && protocol !== 'http/json') {
    logger.warn(`OpenTelemetry: OTLP protocol "${protocol}" is not supported; traces are sent as http/json`);
  }
  // The SDK's own problems (an export that failed, …) as warnings: their first text only, never
  // the objects that come with them (a request's headers may hold OTEL_EXPORTER_OTLP_HEADERS).
  const report = (message: string) => {
    const error = sdkError(message);
    if (error) logger.warn('OpenTelemetry: sending traces failed:', error);
    else logger.warn(`OpenTelemetry: ${message}`);
  };
  diag.setLogger(
    {
      error: report,
      warn: report,
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'svc-graphql', 'service.version': VERSION }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  logger.info(`OpenTelemetry: sending traces over OTLP/HTTP as "${String(resource.attributes['service.name'])}"`);
  return {
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((done) => {
        timer = setTimeout(done, SHUTDOWN_TIMEOUT_MS);
      });
      try {
        await Promise.race([provider.shutdown(), timedOut]);
      } catch (error) {
        logger.warn(`OpenTelemetry: shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The SDK reports a failed export as the JSON of the error (its name, message, stack and own
 * fields): an `Error` of its name, message and stack alone, which the log writes as any error.
 */
function sdkError(message: string): Error | undefined {
  if (!message.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  const { name, message: text, stack } = (parsed ?? {}) as { name?: unknown; message?: unknown; stack?: unknown };
  if (typeof text !== 'string') return undefined;
  const error = new Error(text);
  error.name = typeof name === 'string' ? name : 'Error';
  error.stack = typeof stack === 'string' ? stack : `${error.name}: ${text}`;
  return error;
}
