/**
 * The console talks to the server like any client: `POST /v1/metadata`, `POST /v1/graphql` and
 * `GET /v1/session`, on the origin that served the page, with the admin secret the user gave (the
 * page has no secret of its own). Every answer is kept as the server gave it, so that each page
 * shows the server's own message and code.
 */

export const ADMIN_SECRET_HEADER = 'X-Svc-Admin-Secret';
export const ROLE_HEADER = 'X-Svc-Role';

/**
 * A refusal as the server wrote it, with its code; `status` 0 when the server could not be
 * reached. A failure the console finds itself (no answer, an answer that is not JSON) has no code.
 */
export interface ServerError {
  status: number;
  code?: string;
  message: string;
  /** The JSON path of the request part at fault (`$.args.definition.url`), when the server names one. */
  path?: string;
}

export type Answer<T> = { ok: true; status: number; value: T } | { ok: false; error: ServerError };

/** Reads an error body of either shape the server answers: `{error, code, path}` or `{errors: [{message, extensions}]}`. */
export function errorOf(status: number, body: unknown, fallback: string): ServerError {
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>;
    if (typeof record['error'] === 'string') {
      return {
        status,
        message: record['error'],
        ...(typeof record['code'] === 'string' && { code: record['code'] }),
        ...(typeof record['path'] === 'string' && { path: record['path'] }),
      };
    }
    const first = Array.isArray(record['errors']) ? (record['errors'][0] as Record<string, unknown> | undefined) : undefined;
    if (first && typeof first['message'] === 'string') {
      const extensions = (first['extensions'] ?? {}) as Record<string, unknown>;
      return {
        status,
        message: first['message'],
        ...(typeof extensions['code'] === 'string' && { code: extensions['code'] }),
        ...(typeof extensions['path'] === 'string' && { path: extensions['path'] }),
      };
    }
  }
  return { status, message: fallback };
}

async function send<T>(input: string, init: RequestInit): Promise<Answer<T>> {
  let response: Response;
  try {
    response = await fetch(input, { ...init, credentials: 'same-origin', cache: 'no-store' });
  } catch (error) {
    return { ok: false, error: { status: 0, message: `the server cannot be reached: ${(error as Error).message}` } };
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) return { ok: false, error: errorOf(response.status, body, text.trim() || `${response.status} ${response.statusText}`) };
  if (body === undefined) return { ok: false, error: { status: response.status, message: 'the server answered something that is not JSON' } };
  return { ok: true, status: response.status, value: body as T };
}

function adminHeaders(secret: string | undefined): Record<string, string> {
  return secret === undefined ? {} : { [ADMIN_SECRET_HEADER]: secret };
}

/** One metadata API request. */
export function callMetadata<T = unknown>(
  type: string,
  args: unknown,
  secret: string | undefined,
  extra: { version?: 1 | 2; resource_version?: number } = {},
): Promise<Answer<T>> {
  return send<T>('/v1/metadata', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...adminHeaders(secret) },
    body: JSON.stringify({ type, args, ...extra }),
  });
}

export interface GraphqlResult<T = unknown> {
  data?: T | null;
  errors?: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }>;
}

/** One GraphQL request as admin (introspection of the live schema). */
export function callGraphql<T = unknown>(query: string, secret: string | undefined): Promise<Answer<GraphqlResult<T>>> {
  return send<GraphqlResult<T>>('/v1/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...adminHeaders(secret) },
    body: JSON.stringify({ query }),
  });
}

/** The session the server derives from these request headers (`GET /v1/session`). */
export interface DerivedSession {
  role: string;
  is_admin: boolean;
  variables: Record<string, string>;
  expires_at?: string;
}

export function fetchSession(headers: Record<string, string>): Promise<Answer<DerivedSession>> {
  return send<DerivedSession>('/v1/session', { method: 'GET', headers: { accept: 'application/json', ...headers } });
}

export function fetchVersion(): Promise<Answer<{ version: string }>> {
  return send<{ version: string }>('/v1/version', { method: 'GET' });
}

/** The server's switches the metadata does not hold (`GET /v1alpha1/config`, admin only). */
export interface ServerConfig {
  version: string;
  is_admin_secret_set: boolean;
  is_remote_schema_permissions_enabled: boolean;
  is_allow_list_enabled: boolean;
  rate_limit_store: 'redis' | 'local';
  is_console_enabled: boolean;
}

export function fetchConfig(secret: string | undefined): Promise<Answer<ServerConfig>> {
  return send<ServerConfig>('/v1alpha1/config', { method: 'GET', headers: { accept: 'application/json', ...adminHeaders(secret) } });
}
