import type { Plugin } from 'graphql-yoga';
import { InvalidValueError } from '../errors.js';

/**
 * Which browser origins the server trusts (`--cors-domain`, `--disable-cors`): CORS headers, the
 * metadata API's cross-origin refusal and whether a WebSocket upgrade's cookie is read.
 */
export interface OriginPolicy {
  /** `--cors-domain *`: every origin gets `Access-Control-Allow-Origin: *`, none is "listed". */
  readonly anyOrigin: boolean;
  /** CORS headers are left out entirely (`--disable-cors`). */
  readonly disabled: boolean;
  /** A listed origin (never true for `*`). */
  isListed(origin: string): boolean;
  /** The server's own origin (the address it listens on, and its loopback names). */
  isOwn(origin: string): boolean;
}

const WILDCARD_LABELS = '[a-z0-9-]+(?:\\.[a-z0-9-]+)*';

/**
 * Reads `--cors-domain`: `*`, or comma-separated origins with scheme (and port when not the
 * default), where `*` in the host stands for one or more labels (`https://*.example.com`).
 * Throws an {@link InvalidValueError} naming the entry that is not an origin.
 */
export function parseCorsDomains(text: string): { any: true } | { any: false; patterns: RegExp[] } {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) throw new InvalidValueError('expected "*" or a comma-separated list of origins, but got nothing');
  if (entries.includes('*')) {
    if (entries.length > 1) throw new InvalidValueError('"*" cannot be combined with other origins');
    return { any: true };
  }
  const patterns = entries.map((entry) => {
    const match = /^(https?):\/\/([^/:?#]+)(:\d{1,5})?\/?$/i.exec(entry);
    const host = match?.[2];
    if (!match || host === undefined || !/^(\*\.)?[a-z0-9.*\[\]:-]+$/i.test(host) || /\*.*\*/.test(host)) {
      throw new InvalidValueError(`"${entry}" is not an origin like https://app.example.com or https://*.example.com:8443`);
    }
    const scheme = (match[1] as string).toLowerCase();
    const port = match[3] ?? '';
    const hostPattern = host
      .toLowerCase()
      .split('*')
      .map((part) => part.replace(/[.[\]]/g, (c) => `\\${c}`))
      .join(WILDCARD_LABELS);
    return new RegExp(`^${scheme}://${hostPattern}${port}$`);
  });
  return { any: false, patterns };
}

/** The origins a browser shows for a page served by this server, given where it listens. */
export function ownOrigins(host: string, port: number): Set<string> {
  const loopback = ['127.0.0.1', 'localhost', '::1', '0.0.0.0', '::'];
  const names = loopback.includes(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
  return new Set(names.map((name) => `http://${name}:${port}`.toLowerCase()));
}

export function createOriginPolicy(options: {
  corsDomain: string;
  disableCors: boolean;
  ownOrigins: () => ReadonlySet<string>;
}): OriginPolicy {
  const domains = parseCorsDomains(options.corsDomain);
  const listed = domains.any ? [] : domains.patterns;
  return {
    anyOrigin: domains.any,
    disabled: options.disableCors,
    isListed: (origin) => {
      const normalized = origin.toLowerCase();
      return listed.some((pattern) => pattern.test(normalized));
    },
    isOwn: (origin) => options.ownOrigins().has(origin.toLowerCase()),
  };
}

const ALLOWED_METHODS = 'GET, POST, OPTIONS';
const PREFLIGHT_MAX_AGE_SECONDS = '86400';

function allowedOriginHeaders(policy: OriginPolicy, origin: string | undefined): Record<string, string> | undefined {
  if (policy.anyOrigin) return { 'access-control-allow-origin': '*' };
  if (origin === undefined || !policy.isListed(origin)) return undefined;
  return { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' };
}

/**
 * The CORS headers of an answer (not a preflight) to a request from `origin`, as {@link useCors}
 * adds them: `Vary: Origin` whenever origins are listed, and the allowed origin's headers.
 */
export function corsAnswerHeaders(policy: OriginPolicy, origin: string | undefined): Record<string, string> | undefined {
  if (policy.disabled) return undefined;
  const allowed = allowedOriginHeaders(policy, origin);
  return policy.anyOrigin ? allowed : { vary: 'Origin', ...allowed };
}

/**
 * CORS headers as `--cors-domain` says: with `*`, `Access-Control-Allow-Origin: *` and never
 * credentials (a page can read answers but not act with its visitor's cookies); a listed origin gets
 * itself back with `Vary: Origin` and `Access-Control-Allow-Credentials: true`; any other origin
 * gets no CORS headers. Preflight requests are answered here with 204.
 */
export function useCors(policy: OriginPolicy): Plugin {
  const headersFor = (origin: string | null) => allowedOriginHeaders(policy, origin ?? undefined);
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (policy.disabled || request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return;
      const headers: Record<string, string> = { 'content-length': '0' };
      if (!policy.anyOrigin) headers['vary'] = 'Origin';
      const allowed = headersFor(request.headers.get('origin'));
      if (allowed) {
        Object.assign(headers, allowed, {
          'access-control-allow-methods': ALLOWED_METHODS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
        });
        const requested = request.headers.get('access-control-request-headers');
        if (requested) headers['access-control-allow-headers'] = requested;
      }
      endResponse(new fetchAPI.Response(null, { status: 204, headers }));
    },
    onResponse({ request, response }) {
      if (policy.disabled || request.method === 'OPTIONS') return;
      // The answer depends on the Origin whenever origins are listed: caches must keep them apart.
      if (!policy.anyOrigin) response.headers.append('vary', 'Origin');
      const allowed = headersFor(request.headers.get('origin'));
      if (!allowed) return;
      for (const [name, value] of Object.entries(allowed)) response.headers.set(name, value);
    },
  };
}
