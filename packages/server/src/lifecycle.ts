import type { Server as HttpServer } from 'node:http';
import { ServerOptionError } from './errors.js';
import type { Logger } from './observability/logger.js';
import type { WebSocketEndpoint } from './ws/upgrade.js';

/** Listens, or fails with a {@link ServerOptionError} naming `port` (taken) or `host`. */
export function listen(server: HttpServer, host: string, port: number): Promise<void> {
  return new Promise((done, fail) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const reason =
        error.code === 'EADDRINUSE'
          ? `${host}:${port} is already in use`
          : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
            ? `cannot listen on ${host}: ${error.code}`
            : `cannot listen on ${host}:${port}: ${error.message}`;
      fail(
        error.code === 'EADDRINUSE'
          ? new ServerOptionError('port', 'ERR_ADDRESS_IN_USE', reason, { cause: error })
          : new ServerOptionError('host', 'ERR_ADDRESS_UNAVAILABLE', reason, { cause: error }),
      );
    };
    const onListening = () => {
      server.off('error', onError);
      done();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/** How long one cleanup step may take when the server stops before the next one runs anyway. */
export const CLEANUP_STEP_TIMEOUT_MS = 5_000;

/**
 * What the server holds that must be released when it stops (registry, store, timers), last first.
 * Each step gets {@link CLEANUP_STEP_TIMEOUT_MS}: a dependency that stopped answering (a database
 * that accepts connections but says nothing) must not hold the stop for a minute.
 */
export class Cleanups {
  readonly #steps: Array<{ name: string; step: () => Promise<void> | void }> = [];
  constructor(
    private readonly logger: Logger,
    private readonly stepTimeoutMs = CLEANUP_STEP_TIMEOUT_MS,
  ) {}

  add(step: () => Promise<void> | void, name = 'a cleanup step'): void {
    this.#steps.push({ name, step });
  }

  async run(): Promise<void> {
    for (const { name, step } of this.#steps.reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((done) => {
        timer = setTimeout(() => done('late'), this.stepTimeoutMs);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(step), late]);
        if (outcome === 'late') this.logger.warn(`shutting down: ${name} did not finish within ${this.stepTimeoutMs} ms; going on without it`);
      } catch (error) {
        this.logger.warn('error while shutting down:', error);
      } finally {
        clearTimeout(timer);
      }
    }
    this.#steps.length = 0;
  }
}

/**
 * Graceful stop: no new connections, in-flight requests finish (up to `timeoutMs`, then their
 * connections are closed), WebSockets close with 1001, then `cleanups` run.
 */
export async function shutDown(httpServer: HttpServer, webSockets: WebSocketEndpoint, cleanups: Cleanups, timeoutMs: number, logger: Logger): Promise<void> {
  logger.info('shutting down: finishing in-flight requests');
  const stopped = new Promise<void>((done) => httpServer.close(() => done()));
  // A keep-alive connection whose request finishes after close() would otherwise stay open
  // until its client lets go.
  httpServer.closeIdleConnections();
  const reaper = setInterval(() => httpServer.closeIdleConnections(), 50);
  webSockets.close(1001, 'Server shutting down');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((done) => {
    timer = setTimeout(() => done('timeout'), timeoutMs);
  });
  if ((await Promise.race([stopped, timedOut])) === 'timeout') {
    logger.warn(`requests still running after ${timeoutMs} ms; closing their connections`);
    httpServer.closeAllConnections();
    webSockets.terminate();
    await stopped;
  }
  clearTimeout(timer);
  clearInterval(reaper);
  await cleanups.run();
  logger.info('stopped');
}
