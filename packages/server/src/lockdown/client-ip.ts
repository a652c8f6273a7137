/**
 * The client's address for rate limits: the socket's, or behind `--trust-proxy N` proxies the N-th
 * address from the right of `X-Forwarded-For` (1: the one proxy in front of us). Each trusted
 * proxy appends the address it saw, so the addresses a client writes itself are always further
 * left and never chosen: a client cannot pick its own bucket.
 */
import { isIP } from 'node:net';

/** `::ffff:1.2.3.4` → `1.2.3.4`, `[::1]:8080` → `::1`, `1.2.3.4:80` → `1.2.3.4`; `undefined` when not an address. */
export function normalizeAddress(text: string): string | undefined {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed?.[1] !== undefined) address = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  const family = isIP(address);
  if (family === 0) return undefined;
  if (family === 6) {
    const lower = address.toLowerCase();
    const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/.exec(lower);
    return mapped?.[1] ?? lower;
  }
  return address;
}

/**
 * The client address of a request. `forwardedFor`: the `X-Forwarded-For` header's values (several
 * headers are one list, in order). With `trustProxy` 0 the header is ignored. When the list has
 * fewer than `trustProxy` addresses (the request did not come through every proxy), or the chosen
 * entry is not an address, the socket's address is used: never one a client could have written.
 */
export function clientIp(socketAddress: string | undefined, forwardedFor: string | readonly string[] | null | undefined, trustProxy: number): string {
  const socket = (socketAddress === undefined ? undefined : normalizeAddress(socketAddress)) ?? socketAddress ?? 'unknown';
  if (trustProxy <= 0 || forwardedFor === null || forwardedFor === undefined) return socket;
  const list = (typeof forwardedFor === 'string' ? [forwardedFor] : forwardedFor).flatMap((value) => value.split(','));
  const entry = list[list.length - trustProxy];
  if (entry === undefined) return socket;
  return normalizeAddress(entry) ?? socket;
}
