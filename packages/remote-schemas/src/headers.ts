import type { ClientHeaders, ForwardedSession } from './options.js';

/** Headers that describe the client's own connection or body, never the GraphQL request we send. */
const NOT_FORWARDED = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'connection',
  'expect',
  // Hop-by-hop (RFC 9110 7.6.1)
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  // The server's own request id and trace context are sent instead (the client's trace is
  // continued, not copied; its request id is checked before it is used).
  'x-request-id',
  'traceparent',
  'tracestate',
]);

export interface HeaderPolicy {
  sessionVariablePrefix: string;
  adminSecretHeader: string;
}

export interface ForwardInput {
  configured: ReadonlyArray<readonly [string, string]>;
  forwardClientHeaders: boolean;
  session: ForwardedSession | undefined;
  clientHeaders: ClientHeaders | undefined;
}

function entriesOf(headers: ClientHeaders): Array<[string, string]> {
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    const out: Array<[string, string]> = [];
    (headers as Headers).forEach((value, name) => out.push([name, value]));
    return out;
  }
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value === undefined) continue;
    out.push([name, Array.isArray(value) ? value.join(', ') : value]);
  }
  return out;
}

/**
 * The headers sent to a remote, names lower-cased. Highest priority first: configured
 * headers, then the session as `x-svc-*` headers, then the client's headers (when
 * `forward_client_headers`) without connection-level headers (the WebSocket handshake's included),
 * session headers and the admin secret.
 */
export function forwardedHeaders(input: ForwardInput, policy: HeaderPolicy): Record<string, string> {
  const out: Record<string, string> = {};
  if (input.forwardClientHeaders && input.clientHeaders) {
    const entries = entriesOf(input.clientHeaders);
    // Headers named in `Connection` are hop-by-hop too.
    const connectionScoped = new Set<string>();
    for (const [name, value] of entries) {
      if (name.toLowerCase() === 'connection') {
        for (const token of value.split(',')) connectionScoped.add(token.trim().toLowerCase());
      }
    }
    for (const [rawName, value] of entries) {
      const name = rawName.toLowerCase();
      if (
        NOT_FORWARDED.has(name) ||
        connectionScoped.has(name) ||
        name.startsWith('accept') ||
        // The client's WebSocket handshake (key, version, protocol, extensions): it belongs to
        // that one connection, never to a call we make (over graphql-ws or HTTP).
        name.startsWith('sec-websocket-') ||
        name.startsWith(policy.sessionVariablePrefix) ||
        name === policy.adminSecretHeader
      ) {
        continue;
      }
      out[name] = value;
    }
    for (const [rawName, value] of entries) {
      const name = rawName.toLowerCase();
      if (name === 'host') out['x-forwarded-host'] = value;
      else if (name === 'user-agent') out['x-forwarded-user-agent'] = value;
    }
  }
  if (input.session) {
    for (const [name, value] of Object.entries(input.session.variables)) {
      const lower = name.toLowerCase();
      if (lower.startsWith(policy.sessionVariablePrefix) && lower !== policy.adminSecretHeader) out[lower] = String(value);
    }
    out[`${policy.sessionVariablePrefix}role`] = input.session.role;
  }
  for (const [name, value] of input.configured) out[name.toLowerCase()] = value;
  return out;
}
