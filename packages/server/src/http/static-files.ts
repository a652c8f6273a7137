import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';

const gzip = promisify(gzipCallback);

type Bytes = Uint8Array<ArrayBuffer>;

/** Files whose name carries their content's hash: cached by browsers for good. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** A file the server holds in memory and sends as it is, or gzipped (once, on the first request that accepts it). */
export interface StaticFile {
  readonly type: string;
  readonly body: Bytes;
  /** A strong validator of the contents, for `If-None-Match`. */
  readonly etag: string;
  gzipped?: Promise<Bytes>;
}

export function staticFile(type: string, body: Uint8Array): StaticFile {
  const bytes = new Uint8Array(body);
  return { type, body: bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` };
}

/** Whether an `Accept-Encoding` header accepts gzip (`gzip` or `*`, with a `q` above 0). */
export function acceptsGzip(header: string | null): boolean {
  if (header === null) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** Files this small are sent as they are: gzip would save little and cost a round of CPU. */
const GZIP_THRESHOLD = 1024;

/**
 * The answer to a `GET` or `HEAD` of a static file: gzipped when the client accepts it,
 * `304 Not Modified` when its `If-None-Match` names the file's current contents.
 */
export async function staticFileResponse(
  request: Request,
  ResponseCtor: typeof Response,
  file: StaticFile,
  headers: Record<string, string>,
): Promise<Response> {
  const answer: Record<string, string> = {
    ...headers,
    'content-type': file.type,
    etag: file.etag,
    'x-content-type-options': 'nosniff',
    vary: 'Accept-Encoding',
  };
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch !== null && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag)) {
    return new ResponseCtor(null, { status: 304, headers: answer });
  }
  let body = file.body;
  if (file.body.byteLength > GZIP_THRESHOLD && acceptsGzip(request.headers.get('accept-encoding'))) {
    file.gzipped ??= gzip(file.body).then((zipped) => new Uint8Array(zipped));
    body = await file.gzipped;
    answer['content-encoding'] = 'gzip';
  }
  answer['content-length'] = String(body.byteLength);
  return new ResponseCtor(request.method === 'HEAD' ? null : body, { status: 200, headers: answer });
}
