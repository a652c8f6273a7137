import type { IncomingMessage } from 'node:http';

/**
 * Media types are case-insensitive (`Application/JSON` is `application/json`), but Yoga and the
 * direct lane match a request's `Content-Type` as written: its type is lower-cased (and the blanks
 * before its parameters dropped) before the request is routed. Its parameters are kept as sent.
 */
export function normalizeContentType(req: IncomingMessage): void {
  const value = req.headers['content-type'];
  if (value === undefined) return;
  const end = value.indexOf(';');
  const type = end === -1 ? value : value.slice(0, end);
  const normal = type.trim().toLowerCase();
  if (normal === type) return;
  const written = end === -1 ? normal : `${normal}${value.slice(end)}`;
  req.headers['content-type'] = written;
  // The Fetch `Request` Yoga is given is built from the raw header list.
  const raw = req.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index]!.toLowerCase() === 'content-type') raw[index + 1] = written;
  }
}
