import type { IncomingMessage } from 'node:http';

/** Sets header `name` (lower-case) of `req` to `value`, in its parsed headers and in the raw list Yoga's `Request` is built from. */
function rewriteHeader(req: IncomingMessage, name: string, value: string): void {
  req.headers[name] = value;
  const raw = req.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index]!.toLowerCase() === name) raw[index + 1] = value;
  }
}

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
  rewriteHeader(req, 'content-type', end === -1 ? normal : `${normal}${value.slice(end)}`);
}

/**
 * Yoga and the direct lane take the first media type of `Accept` they can answer in, whatever its
 * weight. An `Accept` with weights (`application/json;q=0.5, application/graphql-response+json`) is
 * rewritten in the order of its weights, most wanted first (the order as written among equals),
 * without the types it refuses (`q=0`) and without the weights.
 */
export function normalizeAccept(req: IncomingMessage): void {
  const value = req.headers.accept;
  if (value === undefined || !/;\s*q\s*=/i.test(value)) return;
  const ranked = value
    .split(',')
    .map((part, index) => {
      const params = part.split(';').map((param) => param.trim());
      const weight = params.slice(1).find((param) => /^q\s*=/i.test(param));
      const q = weight === undefined ? 1 : Number(weight.slice(weight.indexOf('=') + 1));
      const kept = params.filter((param) => param !== weight).join(';');
      return { kept, q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.q > 0 && entry.kept !== '')
    .sort((a, b) => b.q - a.q || a.index - b.index);
  // Every type refused: a type nothing is answered in, for the 406 an Accept nothing fits gets
  // (an empty Accept would read as "anything").
  rewriteHeader(req, 'accept', ranked.length === 0 ? 'application/x-svc-graphql-refused' : ranked.map((entry) => entry.kept).join(', '));
}
