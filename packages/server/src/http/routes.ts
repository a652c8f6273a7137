import type { Plugin } from 'graphql-yoga';

export interface ServiceRoutesOptions {
  version: string;
  /** The `/healthz` answer: `OK`, or a `WARN: …` line saying what is degraded. */
  health: () => string;
}

/** `GET /healthz` and `GET /v1/version`, answered before any authentication. */
export function useServiceRoutes(options: ServiceRoutesOptions): Plugin {
  const versionBody = JSON.stringify({ version: options.version });
  return {
    onRequest({ request, url, fetchAPI, endResponse }) {
      if (url.pathname === '/healthz') {
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
          return;
        }
        const body = options.health();
        endResponse(new fetchAPI.Response(body, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
      } else if (url.pathname === '/v1/version') {
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
          return;
        }
        endResponse(new fetchAPI.Response(versionBody, { status: 200, headers: { 'content-type': 'application/json' } }));
      }
    },
  };
}
