import { SessionError, sessionErrorResponse, type Session } from '@svc-graphql/jwt-session';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../observability/logger.js';

/** Where a client reads the session the server derives from its own request. */
export const SESSION_PATH = '/v1/session';

/** The answer of `GET /v1/session`: the caller's own session, as the server derived it. */
export interface SessionAnswer {
  role: string;
  is_admin: boolean;
  /** Session variables, names lower-cased with their `x-svc-` prefix (the role included). */
  variables: Record<string, string>;
  /** When the token expires (ISO 8601); only for a token with `exp`. */
  expires_at?: string;
}

export interface SessionRouteOptions {
  /** The same resolver `/v1/graphql` uses: the answer is the session a GraphQL request with these headers gets. */
  resolve: (headers: Headers) => Promise<Session>;
  logger: Logger;
}

/**
 * `GET /v1/session`: the session the server derives from the request's own headers (admin secret,
 * token, `x-svc-*` headers), or the refusal `/v1/graphql` would answer, with the same status, code
 * and message. Read-only, and about the caller only: it tells nobody anything they did not send.
 * The console's API page shows it next to GraphiQL.
 */
export function useSessionRoute(options: SessionRouteOptions): Plugin {
  return {
    async onRequest({ request, url, fetchAPI, endResponse }) {
      if (url.pathname !== SESSION_PATH) return;
      const resolved = await sessionOfGet(request, fetchAPI.Response, options, SESSION_PATH);
      if ('answer' in resolved) {
        endResponse(resolved.answer);
        return;
      }
      const { session } = resolved;
      const answer: SessionAnswer = {
        role: session.role,
        is_admin: session.isAdmin,
        variables: session.variables,
        ...(session.expiresAt !== undefined && { expires_at: session.expiresAt.toISOString() }),
      };
      endResponse(
        new fetchAPI.Response(request.method === 'HEAD' ? null : JSON.stringify(answer), {
          status: 200,
          // The answer is the caller's own and changes with their headers: never kept by a cache.
          headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
        }),
      );
    },
  };
}

/**
 * The caller's session for a read-only route (`GET`, `HEAD`), or what ends the request: 405 for
 * another method, the refusal `/v1/graphql` would answer (same status, code and message), or 500.
 */
export async function sessionOfGet(
  request: Request,
  ResponseClass: typeof Response,
  options: SessionRouteOptions,
  path: string,
): Promise<{ session: Session } | { answer: Response }> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return { answer: new ResponseClass(null, { status: 405, headers: { allow: 'GET, HEAD' } }) };
  try {
    return { session: await options.resolve(request.headers) };
  } catch (error) {
    if (error instanceof SessionError) return { answer: sessionErrorResponse(error, ResponseClass) };
    options.logger.error(`resolving a session for ${path} failed:`, error);
    return {
      answer: new ResponseClass(JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected', path: '$' } }] }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      }),
    };
  }
}
