import type { MetadataService } from './service.js';
import type { MetadataServiceOptions } from './service-options.js';

export { consoleLogger, DEFAULT_CONFLICT_RETRY_TIMEOUT_MS } from './service-options.js';
export type { MetadataLogger, MetadataServiceOptions } from './service-options.js';

/** Who is calling, as decided by the host (admin secret, JWT…). */
export interface MetadataIdentity {
  role: string;
  /** Only admins may call the metadata API; everyone else gets 403 `access-denied`. */
  isAdmin: boolean;
}

/**
 * An error `authenticate` may throw to answer the request itself, e.g.
 * `{ status: 401, code: 'access-denied', message: 'invalid x-svc-admin-secret' }`.
 */
export interface MetadataAuthenticationError {
  status: number;
  code: string;
  message: string;
}

interface MetadataApiRouteOptions {
  /**
   * The route answered by the plugin.
   * @default '/v1/metadata'
   */
  path?: string;
  /**
   * Larger bodies are answered 413 without being read to the end.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Decides who sent the request. Throwing a {@link MetadataAuthenticationError} answers
   * `{"error": message, "path": "$", "code": code}` with its status; any other error is a 500.
   */
  authenticate: (request: Request) => Promise<MetadataIdentity>;
  /**
   * Decides whether a request carrying an `Origin` header may call the route. A request whose
   * `Origin` is refused is answered 403 `access-denied` `cross-origin metadata requests are not
   * allowed` before anything else is looked at (its credentials included): a page in a browser
   * must never change the metadata of a server its visitor can reach. Requests without `Origin`
   * (curl, other servers, same-origin GET) are not affected. An error thrown here is answered
   * 500, and the request is not applied.
   * @default the origin must equal the request URL's own origin (scheme, host and port)
   */
  isAllowedOrigin?: (origin: string, request: Request) => boolean;
}

/**
 * Options of `useMetadataApi()`: either a service the host created and initialized (it then also
 * closes it), or what is needed to create one (the plugin then initializes it at once and closes
 * it when Yoga is disposed).
 */
export type MetadataApiOptions = MetadataApiRouteOptions &
  (
    | (MetadataServiceOptions & { service?: MetadataService })
    | (Partial<MetadataServiceOptions> & { service: MetadataService })
  );

export const DEFAULT_METADATA_PATH = '/v1/metadata';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface NormalizedRouteOptions {
  path: string;
  maxBodyBytes: number;
  authenticate: (request: Request) => Promise<MetadataIdentity>;
  isAllowedOrigin: (origin: string, request: Request) => boolean;
}

/** Same-origin only: the page that sends the request was served by this very server. */
export function isSameOrigin(origin: string, request: Request): boolean {
  return origin === new URL(request.url).origin;
}

/** Misconfiguration is reported when the plugin is created, naming the option. */
export function normalizeRouteOptions(options: MetadataApiOptions): NormalizedRouteOptions {
  const path = options.path ?? DEFAULT_METADATA_PATH;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(`useMetadataApi: "path" must start with "/", but got ${JSON.stringify(path)}`);
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new TypeError(`useMetadataApi: "maxBodyBytes" must be a positive integer, but got ${String(maxBodyBytes)}`);
  }
  if (typeof options.authenticate !== 'function') {
    throw new TypeError('useMetadataApi: "authenticate" must be a function');
  }
  const isAllowedOrigin = options.isAllowedOrigin ?? isSameOrigin;
  if (typeof isAllowedOrigin !== 'function') {
    throw new TypeError('useMetadataApi: "isAllowedOrigin" must be a function');
  }
  return { path, maxBodyBytes, authenticate: options.authenticate, isAllowedOrigin };
}
