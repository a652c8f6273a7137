import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../observability/logger.js';

/**
 * `plugin` with its `onRequest` guarded: a route of ours that throws is answered with a masked
 * 500 (`Unexpected error.`, code `unexpected`) and the error goes to the log, instead of the
 * server framework's default answer, which is the error's stack as plain text.
 */
export function guardedRoute(plugin: Plugin, logger: Pick<Logger, 'error'>): Plugin {
  const { onRequest } = plugin;
  if (onRequest === undefined) return plugin;
  return {
    ...plugin,
    async onRequest(payload) {
      try {
        await onRequest(payload);
      } catch (error) {
        logger.error(`answering ${payload.request.method} ${payload.url.pathname} failed:`, error);
        const body = JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected', path: '$' } }] });
        payload.endResponse(new payload.fetchAPI.Response(body, { status: 500, headers: { 'content-type': 'application/json' } }));
      }
    },
  };
}
