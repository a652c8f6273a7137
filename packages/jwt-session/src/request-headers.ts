import type { TokenLocation } from './config.js';
import { malformedAuthorizationHeader } from './errors.js';

/** Headers as a fetch `Headers`, or a plain record such as Node's `IncomingHttpHeaders`. */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Case-insensitive read access to request headers, whatever their shape. */
export interface HeaderReader {
  get(name: string): string | undefined;
  /** All `[lower-cased name, value]` pairs. */
  entries(): Iterable<[string, string]>;
}

export function headerReader(input: HeadersInput | undefined | null): HeaderReader {
  if (input === undefined || input === null) return { get: () => undefined, entries: () => [] };
  if (typeof (input as Headers).get === 'function' && typeof (input as Headers).entries === 'function') {
    const headers = input as Headers;
    return { get: (name) => headers.get(name) ?? undefined, entries: () => headers.entries() };
  }
  const map = new Map<string, string>();
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    let text: string | undefined;
    if (typeof value === 'string') text = value;
    else if (Array.isArray(value)) text = value.filter((v) => typeof v === 'string').join(', ');
    else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
    if (text === undefined) continue;
    const key = name.toLowerCase();
    const previous = map.get(key);
    map.set(key, previous === undefined ? text : `${previous}, ${text}`);
  }
  return { get: (name) => map.get(name.toLowerCase()), entries: () => map.entries() };
}

/**
 * The token at the configured location (`Authorization: Bearer`, a cookie or a custom header), or `undefined` when the request carries none.
 *
 * @throws {SessionError} 400 `invalid-headers` when `Authorization` is present but not `Bearer <token>`.
 */
export function readToken(headers: HeaderReader, location: TokenLocation): string | undefined {
  switch (location.type) {
    case 'Authorization': {
      const value = headers.get('authorization');
      if (value === undefined) return undefined;
      const match = /^\s*bearer +(\S+)\s*$/i.exec(value);
      if (match?.[1] === undefined) throw malformedAuthorizationHeader();
      return match[1];
    }
    case 'CustomHeader': {
      const value = headers.get(location.name)?.trim();
      return value === undefined || value === '' ? undefined : value;
    }
    case 'Cookie': {
      const cookie = headers.get('cookie');
      if (cookie === undefined) return undefined;
      for (const pair of cookie.split(';')) {
        const eq = pair.indexOf('=');
        if (eq === -1) continue;
        if (pair.slice(0, eq).trim() === location.name) {
          const value = pair.slice(eq + 1).trim();
          return value === '' ? undefined : value;
        }
      }
      return undefined;
    }
  }
}
