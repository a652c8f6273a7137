// The hostile requests of `pnpm bench edge`, built once as Buffers.
//
// Yoga caches parse results by document text, failed parses included: a document sent twice is
// answered from that cache the second time, without the limits' work. An attacker varies the text,
// so every document here carries a request number in a fixed-width slot, overwritten in place
// before each request (autocannon copies the body into its request buffer, so reusing it is safe).

const SLOT = '#'.repeat(10);

/** A JSON request body with a 10-digit slot that `fill` overwrites with the request number. */
export class NumberedBody {
  readonly buffer: Buffer;
  private readonly offset: number;

  /** `query` must contain `#ID#` once, where a name character may stand (it becomes 10 digits). */
  constructor(query: string) {
    const json = JSON.stringify({ query: query.replace('#ID#', SLOT) });
    this.offset = json.indexOf(SLOT);
    if (this.offset < 0 || json.indexOf(SLOT, this.offset + 1) >= 0) throw new Error('NumberedBody: need exactly one #ID#');
    this.buffer = Buffer.from(json, 'latin1');
    if (this.buffer.length !== json.length) throw new Error('NumberedBody: ASCII only');
    // The slot's `#` would start a comment: never leave it unfilled.
    this.fill(0);
  }

  fill(index: number): Buffer {
    this.buffer.write(String(index % 1e10).padStart(10, '0'), this.offset, 'latin1');
    return this.buffer;
  }
}

/** A request body of exactly `bytes` bytes of JSON (a `hello` query with a long argument). */
export function bodyOfSize(bytes: number): Buffer {
  const head = '{"query":"{ hello(name: \\"';
  const tail = '\\") }"}';
  const fill = bytes - head.length - tail.length;
  if (fill < 0) throw new Error('bodyOfSize: too small');
  const body = Buffer.from(`${head}${'x'.repeat(fill)}${tail}`, 'latin1');
  if (body.length !== bytes) throw new Error('bodyOfSize: length mismatch');
  return body;
}

/** `{ t<n> a a … a }`: `tokens` lexical tokens in all (braces included), 2 bytes per token. */
export function manyTokens(tokens: number): NumberedBody {
  return new NumberedBody(`{ t#ID# ${'a '.repeat(tokens - 3)}}`);
}

/**
 * `levels` levels of selection sets, none of them deeper than one level in the text: the operation
 * `{ ...F1 }` and fragments F1 … F(levels-1), each `{ ...F(i+1) }`, the last `{ __typename }`.
 * Written out in place the fragments nest `levels` deep.
 */
export function fragmentChain(levels: number): NumberedBody {
  const fragments: string[] = [];
  for (let i = 1; i < levels; i++) {
    fragments.push(i === levels - 1 ? `fragment F${i} on Query { __typename }` : `fragment F${i} on Query { ...F${i + 1} }`);
  }
  return new NumberedBody(`query Q#ID# { ...F1 } ${fragments.join(' ')}`);
}

/** `{a{a{a … }}}` nested `levels` deep in the text (the first field carries the number). */
export function nestedText(levels: number): NumberedBody {
  return new NumberedBody(`{t#ID#${'{a'.repeat(levels - 1)}${'}'.repeat(levels)}`);
}

/** Lexical tokens of a GraphQL document as graphql-js counts them (for the report only). */
export async function countTokens(buffer: Buffer): Promise<number> {
  const { Lexer, Source, TokenKind } = await import('graphql');
  const { query } = JSON.parse(buffer.toString('latin1')) as { query: string };
  const lexer = new Lexer(new Source(query));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n++;
  return n;
}
