import { readBoundedText } from '@svc-graphql/bounded-body';
import { MetadataApiError } from './errors.js';

/**
 * Reads a request body as UTF-8 text (a leading byte-order mark dropped), refusing with 413 as
 * soon as it grows past `limit` bytes: a client cannot make the server buffer more than that,
 * whatever its `Content-Length` says. The rest of a refused body is left to the HTTP server, so
 * that the 413 reaches the client.
 */
export function readLimitedText(request: Request, limit: number): Promise<string> {
  return readBoundedText(request, {
    maxBytes: limit,
    cancel: false,
    tooLarge: (max) => new MetadataApiError('payload-too-large', `request body is larger than ${String(max)} bytes`, '$'),
  });
}

/** Parses JSON text; anything malformed is `parse-failed` at `$`. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new MetadataApiError('parse-failed', `invalid JSON: ${error instanceof Error ? error.message : String(error)}`, '$');
  }
}
