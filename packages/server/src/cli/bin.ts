#!/usr/bin/env node
import { ConfigError, parseCommandLine, settingLabel, USAGE, type ServeConfig } from './command-line.js';
import type { SvcGraphqlServer } from '../server.js';
import type { Tracing } from '../observability/tracing.js';
import { VERSION } from '../version.js';

/** Exits with status 1 and one line naming the setting. */
function fatal(setting: string | undefined, message: string): never {
  process.stderr.write(`Fatal error: ${setting ? `${setting}: ` : ''}${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: ServeConfig;
  try {
    const parsed = parseCommandLine(process.argv.slice(2));
    if (parsed.command === 'help') {
      process.stdout.write(USAGE);
      return;
    }
    if (parsed.command === 'version') {
      process.stdout.write(`${VERSION}\n`);
      return;
    }
    if (parsed.command === 'import-hasura-metadata') {
      const { runImportHasuraMetadata } = await import('./import-hasura/command.js');
      process.exitCode = await runImportHasuraMetadata(parsed.path);
      return;
    }
    config = parsed.config;
  } catch (error) {
    if (error instanceof ConfigError) fatal(error.setting, error.message);
    throw error;
  }

  // Loaded only now, so that `--help` and flag errors answer without loading the whole server.
  const { createServer } = await import('../server.js');
  const { ServerOptionError } = await import('../errors.js');
  const { createLogger } = await import('../observability/logger.js');
  // Start-up lines are held until the server listens: a start that fails says so in one line.
  let held: string[] | undefined = [];
  const logger = createLogger(
    config.logLevel,
    (line) => {
      if (held) held.push(line);
      else process.stderr.write(line);
    },
    config.logFormat,
  );
  // OpenTelemetry's SDK is loaded only when traces are asked for (standard OTEL_* variables).
  let tracing: Tracing | undefined;
  if (process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] || process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    const { startTracing } = await import('../observability/tracing.js');
    try {
      tracing = startTracing(logger);
    } catch (error) {
      const variable = process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
      fatal(variable, error instanceof Error ? error.message : String(error));
    }
  }
  let server: SvcGraphqlServer;
  try {
    const { sources: _sources, ...settings } = config;
    server = await createServer({ ...settings, logger });
  } catch (error) {
    if (error instanceof ServerOptionError) fatal(settingLabel(config, error.option), error.message);
    fatal(undefined, error instanceof Error ? error.message : String(error));
  }

  for (const line of held) process.stderr.write(line);
  held = undefined;
  process.stdout.write(`svc-graphql listening on ${server.url}\n`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info(`received ${signal}`);
    server.close().then(
      // The spans still buffered are sent before the process ends.
      async () => {
        await tracing?.shutdown();
        process.exit(0);
      },
      (error: unknown) => {
        logger.error(`shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  fatal(undefined, error instanceof Error ? error.message : String(error));
});
