import fc from 'fast-check';
import { parse, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { allowlistKey, createAllowlistTable } from '../../src/lockdown/allowlist.js';
import { canonicalDocument, MAX_CANONICAL_DEPTH } from '../../src/lockdown/canonical-document.js';
import { createDocumentFactsCache } from '../../src/lockdown/document-facts.js';

const key = (text: string) => allowlistKey(parse(text));

describe('the canonical text of a document', () => {
  const base = 'query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }';

  it.each([
    ['whitespace, commas and comments', '# list orders\nquery Orders($id: ID! $n: Int = 3) {\n  orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) {\n    id, total\n    ...Line # lines\n  }\n}\nfragment Line on Order { lines { sku } }'],
    ['__typename fields, aliased or not, at any level', 'query Orders($id: ID!, $n: Int = 3) { __typename orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { t: __typename id total ...Line } } fragment Line on Order { __typename lines { sku __typename } }'],
    ['the order of arguments and of object fields', 'query Orders($id: ID!, $n: Int = 3) { orders(filter: {tag: "a", status: OPEN}, first: $n, user: $id) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
    ['a block string for a string', 'query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: """a"""}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
  ])('is the same whatever the %s', (_, variant) => {
    expect(key(variant)).toBe(key(base));
  });

  it('is the same for `{ … }` and `query { … }`', () => {
    expect(key('{ a }')).toBe(key('query { a }'));
  });

  it.each([
    ['an operation name', 'query Other($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
    ['the order of fields', 'query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { total id ...Line } } fragment Line on Order { lines { sku } }'],
    ['an argument value', 'query Orders($id: ID!, $n: Int = 4) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
    ['an alias', 'query Orders($id: ID!, $n: Int = 3) { o: orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
    ['a directive', 'query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) { id total ...Line } } fragment Line on Order { lines { sku } }'],
    ['a variable type', 'query Orders($id: ID, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
    ['one more field', 'query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku qty } }'],
    ['the order of definitions', 'fragment Line on Order { lines { sku } } query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: OPEN, tag: "a"}) @cached(ttl: 5) { id total ...Line } }'],
    ['a string for an enum', 'query Orders($id: ID!, $n: Int = 3) { orders(user: $id, first: $n, filter: {status: "OPEN", tag: "a"}) @cached(ttl: 5) { id total ...Line } } fragment Line on Order { lines { sku } }'],
  ])('differs by %s', (_, variant) => {
    expect(key(variant)).not.toBe(key(base));
  });

  it('keeps field selections apart from their sub-selections and siblings', () => {
    expect(key('{ a { b } c }')).not.toBe(key('{ a { b c } }'));
    expect(key('{ a(x: "b,c") }')).not.toBe(key('{ a(x: "b", c: 1) }'));
    expect(key('{ a { __typename } }')).not.toBe(key('{ a }'));
  });

  it('has none for a document nested deeper than its bound, which is then never allowed', () => {
    const deep = parse(`${'{ a '.repeat(MAX_CANONICAL_DEPTH + 1)}${'}'.repeat(MAX_CANONICAL_DEPTH + 1)}`);
    expect(canonicalDocument(deep)).toBeUndefined();
    expect(createAllowlistTable({}).allows(allowlistKey(deep), 'user')).toBe(false);
  });

  it('does not change when printed and parsed again, or when arguments are shuffled and __typename added (property)', () => {
    const name = fc.constantFrom('a', 'b', 'c', 'node', 'items');
    const scalar = fc.oneof(fc.integer().map(String), fc.string({ maxLength: 5 }).map((s) => JSON.stringify(s)), fc.constantFrom('true', 'null', 'RED', '$v'));
    const args = fc.uniqueArray(fc.tuple(fc.constantFrom('x', 'y', 'z', 'w'), scalar), { selector: ([n]) => n, maxLength: 3 });
    const field: fc.Memo<{ text: string; shuffled: string }> = fc.memo((depth) =>
      fc
        .tuple(name, args, depth > 1 ? fc.array(field(depth - 1), { maxLength: 3 }) : fc.constant([]), fc.boolean())
        .map(([n, a, children, typename]) => {
          const argText = (list: Array<[string, string]>) => (list.length === 0 ? '' : `(${list.map(([k, v]) => `${k}: ${v}`).join(', ')})`);
          const sub = (pick: 'text' | 'shuffled') =>
            children.length === 0 ? '' : ` { ${children.map((child) => child[pick]).join(' ')}${pick === 'shuffled' && typename ? ' __typename' : ''} }`;
          return { text: `${n}${argText(a)}${sub('text')}`, shuffled: `${n}${argText([...a].reverse())}${sub('shuffled')}` };
        }),
    );
    fc.assert(
      fc.property(fc.array(field(4), { minLength: 1, maxLength: 4 }), (fields) => {
        const text = `query Q($v: Int) { ${fields.map((f) => f.text).join(' ')} }`;
        const shuffled = `query Q($v: Int) { __typename ${fields.map((f) => f.shuffled).join('\n')} }`;
        const document = parse(text);
        expect(allowlistKey(parse(print(document)))).toBe(allowlistKey(document));
        expect(allowlistKey(parse(shuffled))).toBe(allowlistKey(document));
        expect(allowlistKey(parse(`query Q($v: Int) { ${fields.map((f) => f.text).join(' ')} extra }`))).not.toBe(allowlistKey(document));
      }),
      { numRuns: 200 },
    );
  });
});

describe('the allow-list table', () => {
  const collections = [
    { name: 'everyone', definition: { queries: [{ name: 'hello', query: 'query Hello { hello }' }] } },
    { name: 'editors', definition: { queries: [{ name: 'users', query: '{ users { id } }' }, { name: 'broken', query: '{' }] } },
    { name: 'unlisted', definition: { queries: [{ name: 'secret', query: '{ secret }' }] } },
  ];
  const table = createAllowlistTable({
    query_collections: collections,
    allowlist: [{ collection: 'everyone' }, { collection: 'editors', scope: { global: false, roles: ['editor', 'manager'] } }],
  });

  it('allows a global collection to every role and a scoped one to its roles only', () => {
    expect(table.allows(key('# hi\nquery Hello { __typename hello }'), 'user')).toBe(true);
    expect(table.allows(key('{ users { id } }'), 'editor')).toBe(true);
    expect(table.allows(key('{ users { id } }'), 'manager')).toBe(true);
    expect(table.allows(key('{ users { id } }'), 'user')).toBe(false);
    expect(table.allows(key('{ secret }'), 'editor')).toBe(false);
    expect(table.allows(key('query Hello { hello world }'), 'user')).toBe(false);
    expect(table.size).toBe(2);
  });

  it('holds 10,000 documents, found by one lookup each, and reuses the keys of the table it replaces', () => {
    const queries = Array.from({ length: 10_000 }, (_, index) => ({ name: `q${String(index)}`, query: `query Q${String(index)}($id: ID!) { item(id: $id) { id n${String(index)} } }` }));
    const metadata = { query_collections: [{ name: 'big', definition: { queries } }], allowlist: [{ collection: 'big' }] };
    const big = createAllowlistTable(metadata);
    expect(big.size).toBe(10_000);
    expect(big.allows(key('query Q9999($id: ID!) { item(id: $id) { id n9999 } }'), 'user')).toBe(true);
    expect(big.allows(key('query Q9999($id: ID!) { item(id: $id) { n9999 id } }'), 'user')).toBe(false);
    const next = createAllowlistTable({ ...metadata, allowlist: [{ collection: 'big', scope: { global: false, roles: ['user'] } }] }, big);
    expect(next.keyByText.get(queries[5]!.query)).toBe(big.keyByText.get(queries[5]!.query));
    expect(next.allows(key(queries[5]!.query), 'user')).toBe(true);
    expect(next.allows(key(queries[5]!.query), 'guest')).toBe(false);
  });

  it('computes a document key once per document object', () => {
    const facts = createDocumentFactsCache();
    const document = parse('{ a }');
    expect(facts(document)).toBe(facts(document));
    expect(facts(document).allowlistKey).toBe(key('{ a }'));
    expect(facts(parse('{ a }'))).not.toBe(facts(document));
  });
});
