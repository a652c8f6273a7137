/** One minute: the refresh interval for `no-cache`, `no-store`, directives without an age, and floors. */
export const DEFAULT_REFRESH_MS = 60_000;

/**
 * When to fetch the JWKS next after a successful fetch, the cache headers read as one rule:
 *
 * - `no-cache` / `no-store` → 60 s (they win over `max-age`);
 * - `max-age` / `s-maxage` (with or without `must-revalidate`) → that many seconds;
 * - a `Cache-Control` with neither → 60 s;
 * - no `Cache-Control` but a parseable `Expires` → at that time;
 * - any of these under one second → 60 s;
 * - nothing parseable → never after the first fetch (`undefined`), 60 s after a later one.
 *
 * @returns milliseconds until the next fetch, or `undefined` for "never".
 */
export function nextRefreshDelay(headers: Headers, nowMs: number, isFirstFetch: boolean): number | undefined {
  const cacheControl = headers.get('cache-control');
  if (cacheControl !== null) {
    const directives = parseCacheControl(cacheControl);
    if (directives.has('no-cache') || directives.has('no-store')) return DEFAULT_REFRESH_MS;
    const age = parseSeconds(directives.get('max-age')) ?? parseSeconds(directives.get('s-maxage'));
    if (age !== undefined) return atLeastOneSecond(age * 1000);
    return DEFAULT_REFRESH_MS;
  }
  const expires = headers.get('expires');
  if (expires !== null) {
    const at = Date.parse(expires);
    if (!Number.isNaN(at)) return atLeastOneSecond(at - nowMs);
  }
  return isFirstFetch ? undefined : DEFAULT_REFRESH_MS;
}

function atLeastOneSecond(ms: number): number {
  return ms < 1000 ? DEFAULT_REFRESH_MS : ms;
}

function parseSeconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function parseCacheControl(header: string): Map<string, string | undefined> {
  const directives = new Map<string, string | undefined>();
  for (const part of header.split(',')) {
    const [rawName = '', ...rest] = part.split('=');
    const name = rawName.trim().toLowerCase();
    if (name === '') continue;
    const value = rest.length === 0 ? undefined : rest.join('=').trim().replace(/^"(.*)"$/, '$1');
    if (!directives.has(name)) directives.set(name, value);
  }
  return directives;
}
