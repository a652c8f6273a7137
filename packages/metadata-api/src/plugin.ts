import { STATUS_CODES } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { parseJson, readLimitedText } from './body.js';
import { MetadataApiError } from './errors.js';
import { consoleLogger, normalizeRouteOptions, type MetadataApiOptions } from './options.js';
import { createMetadataService, type MetadataService } from './service.js';

/**
 * Answers `POST /v1/metadata` inside a Yoga app, before any GraphQL handling: cross-origin
 * requests are refused, only admins may call it, bodies over `maxBodyBytes` get 413, and every
 * answer is JSON.
 */
export function useMetadataApi(options: MetadataApiOptions): Plugin {
  const route = normalizeRouteOptions(options);
  const logger = options.logger ?? consoleLogger;
  let service: MetadataService;
  let ready: Promise<void>;
  let owned = false;
  if (options.service !== undefined) {
    service = options.service;
    ready = Promise.resolve();
  } else {
    const { registry, store } = options;
    if (registry === undefined || store === undefined) {
      throw new TypeError('useMetadataApi: give either "service" or both "registry" and "store"');
    }
    service = createMetadataService({
      registry,
      store,
      ...(options.remoteSchemaPermissions === undefined ? {} : { remoteSchemaPermissions: options.remoteSchemaPermissions }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.conflictRetryTimeoutMs === undefined ? {} : { conflictRetryTimeoutMs: options.conflictRetryTimeoutMs }),
    });
    owned = true;
    ready = service.init();
    // Reported on every request below; an unhandled rejection would crash the host instead.
    ready.catch(() => undefined);
  }

  function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
    return new Response(JSON.stringify(body), {
      status,
      // The global Response leaves the reason phrase empty; clients and proxies show it.
      statusText: STATUS_CODES[status] ?? '',
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    });
  }

  async function answer(request: Request): Promise<Response> {
    // First of all: a browser attaches the visitor's cookies and reaches servers on the visitor's
    // machine, so whatever a cross-origin request carries, it proves nothing.
    const origin = request.headers.get('origin');
    if (origin !== null && !route.isAllowedOrigin(origin, request)) {
      const error = new MetadataApiError('access-denied', 'cross-origin metadata requests are not allowed', '$');
      return json(error.status, error.toBody());
    }
    if (request.method !== 'POST') {
      const error = new MetadataApiError('method-not-allowed', `method ${request.method} is not allowed; use POST`, '$');
      return json(error.status, error.toBody(), { allow: 'POST' });
    }
    let identity;
    try {
      identity = await route.authenticate(request);
    } catch (error) {
      const known = asAuthenticationError(error);
      if (known === undefined) throw error;
      return json(known.status, { error: known.message, path: '$', code: known.code }, known.headers);
    }
    // Only `isAdmin: true` itself is admin: an app's `"false"`, `1` or a missing identity is not.
    if ((identity as { isAdmin?: unknown } | null | undefined)?.isAdmin !== true) {
      return json(403, { error: 'restricted access : admin only', path: '$', code: 'access-denied' });
    }
    try {
      const body = parseJson(await readLimitedText(request, route.maxBodyBytes));
      await ready;
      const result = await service.handle(body);
      return json(result.status, result.body);
    } catch (error) {
      if (!(error instanceof MetadataApiError)) throw error;
      // The rest of an oversized body is never read: the connection cannot carry another request.
      const headers: Record<string, string> = error.code === 'payload-too-large' ? { connection: 'close' } : {};
      return json(error.status, error.toBody(), headers);
    }
  }

  return {
    onRequest({ request, url, endResponse }) {
      // Not async: every other route passes through here and should not pay for a promise.
      if (url.pathname !== route.path) return undefined;
      return answer(request)
        .catch((error: unknown) => {
          logger.error('metadata API request failed:', error);
          return json(500, { error: 'internal error', path: '$', code: 'unexpected' });
        })
        .then(endResponse);
    },
    async onDispose() {
      if (owned) await service.close();
    },
  };
}

function asAuthenticationError(
  error: unknown,
): { status: number; code: string; message: string; headers: Record<string, string> } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, code, message, headers } = error as Record<string, unknown>;
  if (typeof status !== 'number' || typeof code !== 'string' || typeof message !== 'string') return undefined;
  if (!Number.isInteger(status) || status < 400 || status > 599) return undefined;
  // Headers the authenticator wants on its answer, e.g. `WWW-Authenticate` on a 401 for a bad token.
  const extra: Record<string, string> = {};
  if (typeof headers === 'object' && headers !== null) {
    for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') extra[name] = value;
  }
  return { status, code, message, headers: extra };
}
