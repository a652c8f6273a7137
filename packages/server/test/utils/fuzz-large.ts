import fc from 'fast-check';

/**
 * Requests that are hostile by size rather than by content: deep nesting, many tokens, big bodies
 * (with and without a Content-Length), deep JSON. Sizes straddle the server's limits (2 MiB of
 * body, 15000 tokens, 256 levels) so that both sides of each limit are tried. A case is a kind
 * and a size; the body is built from it in the run, so that a counterexample prints short.
 */

const MiB = 1024 * 1024;

function request(query: string, variables?: unknown): string {
  return JSON.stringify({ query, ...(variables !== undefined && { variables }) });
}

/** `[[[ … ]]]` as JSON text, built without recursion. */
function deepJson(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

function fragmentChain(n: number): string {
  const fragments = Array.from(
    { length: n },
    (_, i) => `fragment F${i} on User { posts { author { ${i + 1 < n ? `...F${i + 1}` : 'id'} } } }`,
  );
  return request(`query { user(id: "1") { ...F0 } } ${fragments.join(' ')}`);
}

/** Each kind of case: the sizes it is tried with, and its body for a size. */
const KINDS = {
  'nested selection sets': { min: 200, max: 20_000, body: (n: number) => request(`${'{a'.repeat(n)}${'}'.repeat(n)}`) },
  'a list nested this deep in an argument': {
    min: 200,
    max: 20_000,
    body: (n: number) => request(`{ hello(name: ${'['.repeat(n)}"x"${']'.repeat(n)}) }`),
  },
  // Two levels per fragment once expanded: 100 fragments are 200 levels, 400 are 800.
  'fragments spreading each other': { min: 100, max: 400, body: fragmentChain },
  'aliased root fields': {
    min: 1_000,
    max: 8_000,
    body: (n: number) => request(`{ ${Array.from({ length: n }, (_, i) => `a${i}: hello`).join(' ')} }`),
  },
  '__typename tokens': { min: 10_000, max: 40_000, body: (n: number) => request(`{ ${'__typename '.repeat(n)}}`) },
  'variable definitions': {
    min: 5_000,
    max: 20_000,
    body: (n: number) => request(`query Q(${Array.from({ length: n }, (_, i) => `$v${i}: String`).join(', ')}) { __typename }`),
  },
  'MiB of string argument': { min: 1, max: 4, body: (n: number) => request(`{ hello(name: "${'x'.repeat(n * MiB)}") }`) },
  'MiB of comment': { min: 1, max: 4, body: (n: number) => request(`#${'x'.repeat(n * MiB)}\n{ __typename }`) },
  'MiB of variables': {
    min: 1,
    max: 4,
    body: (n: number) => request('query ($name: String) { hello(name: $name) }', { name: 'x'.repeat(n * MiB) }),
  },
  'levels of variables': {
    min: 1_000,
    max: 200_000,
    body: (n: number) => `{"query":"query ($name: String) { hello(name: $name) }","variables":{"name":${deepJson(n)}}}`,
  },
  'levels of extensions': { min: 1_000, max: 200_000, body: (n: number) => `{"query":"{ hello }","extensions":{"x":${deepJson(n)}}}` },
  'string escapes': { min: 1_000, max: 50_000, body: (n: number) => request(`{ hello(name: "${'\\u00e9'.repeat(n)}") }`) },
  'MiB of whitespace': { min: 2, max: 3, body: (n: number) => `{"query":"{ __typename }"${' '.repeat(n * MiB)}}` },
} satisfies Record<string, { min: number; max: number; body: (size: number) => string }>;

export type LargeKind = keyof typeof KINDS;

export interface LargeCase {
  kind: LargeKind;
  size: number;
  /** Send the body as a stream: chunked, without a Content-Length. */
  chunked: boolean;
}

export const largeCase: fc.Arbitrary<LargeCase> = fc
  .constantFrom(...(Object.keys(KINDS) as LargeKind[]))
  .chain((kind) =>
    fc.record({ kind: fc.constant(kind), size: fc.integer({ min: KINDS[kind].min, max: KINDS[kind].max }), chunked: fc.boolean() }),
  );

export function largeBody(large: LargeCase): string {
  return KINDS[large.kind].body(large.size);
}

/** The body as a stream of 64 KiB chunks, so fetch sends it chunked. */
export function chunkedBody(body: string): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(body);
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
      offset += 64 * 1024;
    },
  });
}
