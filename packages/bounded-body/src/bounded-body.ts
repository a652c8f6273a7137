/**
 * One way to read an HTTP body whose size we do not control (a request from a client, an answer of
 * a remote or of a JWKS endpoint) as text:
 *
 * - **Bound.** A declared `Content-Length` over the limit is refused before a byte is read; a body
 *   without one (chunked) is counted as it arrives and refused at the first chunk past the limit,
 *   whose stream is then cancelled. No more than the limit is ever held.
 * - **Text.** The bytes are decoded as UTF-8; a sequence that is not UTF-8 becomes U+FFFD.
 * - **Byte-order mark.** One UTF-8 byte-order mark (EF BB BF) at the very start of the body is
 *   dropped, as WHATWG's `TextDecoder` (and so `fetch`'s `text()` and `json()`) drops it: JSON over
 *   HTTP may carry one, and `JSON.parse` would refuse it. A mark anywhere else, or a second one, is
 *   kept as U+FEFF. The limit counts the mark's bytes.
 */

/** The body is larger than the limit (by its `Content-Length`, or counted as it arrived). */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  readonly code = 'ERR_BODY_TOO_LARGE';
  constructor(readonly maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
  }
}

/** Whether a `Content-Length` value declares more than `maxBytes` (a missing or unparseable one does not). */
export function declaredTooLarge(contentLength: string | null | undefined, maxBytes: number): boolean {
  return contentLength != null && Number(contentLength) > maxBytes;
}

const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * The bytes of one body as they arrive, up to a limit; for bodies that arrive as Node stream events
 * (an `IncomingMessage`). {@link readBoundedText} uses it for WHATWG streams.
 */
export class BoundedBody {
  readonly #chunks: Uint8Array[] = [];
  #size = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes received so far, the refused chunk included. */
  get size(): number {
    return this.#size;
  }

  /**
   * Adds a chunk. `false` when the body has now passed the limit: the chunk is not kept, and the
   * caller must stop reading (cancel or destroy the stream).
   */
  push(chunk: Uint8Array): boolean {
    this.#size += chunk.byteLength;
    if (this.#size > this.maxBytes) return false;
    this.#chunks.push(chunk);
    return true;
  }

  /** The body as text, by the rules of this module (UTF-8, a leading byte-order mark dropped). */
  text(): string {
    const chunks = this.#chunks;
    const bytes = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
    const start = bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? BOM.length : 0;
    return Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.byteLength - start).toString('utf8');
  }
}

/** What {@link readBoundedText} reads: a fetch `Response` or `Request`. */
export interface BodySource {
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
}

export interface ReadBoundedOptions {
  /** The largest body read, in bytes. */
  maxBytes: number;
  /**
   * The error thrown for a larger body (the caller's wording and code).
   * @default (maxBytes) => new BodyTooLargeError(maxBytes)
   */
  tooLarge?: (maxBytes: number) => Error;
  /**
   * Whether a refused body's stream is cancelled. Yes for an answer the caller fetched: cancelling
   * aborts the transfer and frees the connection. No for a request a server is answering: its
   * stream belongs to the HTTP server, and cancelling it may close the connection before the
   * refusal is sent; reading simply stops, and the server disposes of the rest.
   * @default true
   */
  cancel?: boolean;
}

/**
 * Reads the body of `source` as text, refusing one of more than `maxBytes` (see the rules above).
 * A refused body's stream is cancelled (unless `cancel` is false) without waiting for the peer.
 *
 * @throws the error of `tooLarge` (by default a {@link BodyTooLargeError}); any error of the stream.
 */
export async function readBoundedText(source: BodySource, options: ReadBoundedOptions): Promise<string> {
  const { maxBytes } = options;
  const tooLarge = (): Error => (options.tooLarge ?? ((max: number) => new BodyTooLargeError(max)))(maxBytes);
  const stream = source.body;
  const cancel = options.cancel ?? true;
  if (declaredTooLarge(source.headers.get('content-length'), maxBytes)) {
    if (cancel) void stream?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const body = new BoundedBody(maxBytes);
  if (stream === null) return body.text();
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!body.push(value)) {
      // Cancelling aborts the transfer: nothing past the limit is read.
      if (cancel) void reader.cancel().catch(() => undefined);
      else reader.releaseLock();
      throw tooLarge();
    }
  }
  return body.text();
}
