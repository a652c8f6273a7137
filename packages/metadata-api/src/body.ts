import { MetadataApiError } from './errors.js';

/**
 * Reads a request body as UTF-8 text, refusing with 413 as soon as it grows past `limit` bytes:
 * a client cannot make the server buffer more than that, whatever its `Content-Length` says.
 */
export async function readLimitedText(request: Request, limit: number): Promise<string> {
  const tooLarge = () =>
    new MetadataApiError('payload-too-large', `request body is larger than ${String(limit)} bytes`, '$');
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder('utf-8');
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/** Parses JSON text; anything malformed is `parse-failed` at `$`. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new MetadataApiError('parse-failed', `invalid JSON: ${error instanceof Error ? error.message : String(error)}`, '$');
  }
}
