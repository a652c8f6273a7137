import fc from 'fast-check';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDocumentFactsCache, selectOperation } from '../../src/lockdown/document-facts.js';
import { measureFragments, measureOperation } from '../../src/lockdown/operation-cost.js';

function measure(text: string, operationName?: string) {
  const document = parse(text);
  const operation = selectOperation(document, operationName);
  if (operation === undefined) throw new Error('no operation');
  return measureOperation(operation, measureFragments(document));
}

describe('depth and nodes', () => {
  it('count a root field at depth 1 and every field selection as a node', () => {
    expect(measure('{ a { b { c } } }')).toEqual({ depth: 3, nodes: 3, introspection: false });
    expect(measure('{ a b c }')).toEqual({ depth: 1, nodes: 3, introspection: false });
  });

  it('count aliases of one field as nodes of their own, and __typename nowhere', () => {
    expect(measure('{ x: a { id } y: a { id } __typename }')).toEqual({ depth: 2, nodes: 4, introspection: false });
    expect(measure('{ a { b { __typename } } }')).toEqual({ depth: 2, nodes: 2, introspection: false });
    expect(measure('{ __typename }')).toEqual({ depth: 0, nodes: 0, introspection: false });
  });

  it('expand fragments and inline fragments where they are spread, adding no level of their own', () => {
    const text = 'query Q { a { ...F ... on A { e { f } } } } fragment F on A { b { ...G } c } fragment G on B { d }';
    expect(measure(text)).toEqual({ depth: 3, nodes: 6, introspection: false });
  });

  it('measure the operation a request runs, with its fragments only', () => {
    const text = 'query Small { a } query Big { a { b { c { ...F } } } } fragment F on C { d e }';
    expect(measure(text, 'Small')).toEqual({ depth: 1, nodes: 1, introspection: false });
    expect(measure(text, 'Big')).toEqual({ depth: 4, nodes: 5, introspection: false });
    expect(selectOperation(parse(text), undefined)).toBeUndefined();
  });

  it('count a fragment bomb without expanding it (2^60 fields, counted in one pass, saturating)', () => {
    const levels = 60;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment F${String(i)} on T { ...F${String(i + 1)} ...F${String(i + 1)} }`);
    const text = `{ root { ...F0 } } ${fragments.join(' ')} fragment F${String(levels)} on T { leaf }`;
    expect(measure(text)).toEqual({ depth: 2, nodes: Number.MAX_SAFE_INTEGER, introspection: false });
    // 2^40 + 1 is still exact.
    const exact = `{ root { ...F20 } } ${fragments.slice(20).join(' ')} fragment F${String(levels)} on T { leaf }`;
    expect(measure(exact).nodes).toBe(2 ** 40 + 1);
  });

  it('follow a chain of 20,000 spreads without exhausting the stack', () => {
    const count = 20_000;
    const fragments = Array.from({ length: count }, (_, i) => `fragment F${String(i)} on T { x${String(i)}: a ...F${String(i + 1)} }`);
    const text = `{ ...F0 } ${fragments.join(' ')} fragment F${String(count)} on T { end }`;
    expect(measure(text)).toEqual({ depth: 1, nodes: count + 1, introspection: false });
  });

  it('count a fragment cycle as nothing where it closes (validation refuses cycles)', () => {
    expect(measure('{ a { ...F } } fragment F on A { b ...G } fragment G on A { c ...F }').nodes).toBe(3);
  });
});

describe('introspection', () => {
  it.each([
    ['at the root', '{ __schema { types { name } } }'],
    ['under an alias', '{ s: __type(name: "User") { name } }'],
    ['in a fragment', '{ ...F } fragment F on Query { __schema { queryType { name } } }'],
    ['in an inline fragment', '{ ... on Query { __type(name: "A") { name } } }'],
    ['nested under a namespace field', '{ accounts { __type(name: "A") { name } } }'],
    ['in a fragment spread inside a fragment, deep', '{ a { ...F } } fragment F on A { b { ...G } } fragment G on B { ... { __schema { types { name } } } }'],
  ])('is found %s', (_, text) => {
    expect(measure(text).introspection).toBe(true);
  });

  it('is not __typename, nor a fragment the operation does not use', () => {
    expect(measure('{ __typename a { __typename } }').introspection).toBe(false);
    expect(measure('query A { a } query B { __schema { types { name } } }', 'A').introspection).toBe(false);
    expect(measure('query A { a } fragment F on Query { __schema { types { name } } }').introspection).toBe(false);
  });
});

describe('the facts cache', () => {
  it('measures each operation of a document once', () => {
    const facts = createDocumentFactsCache();
    const document = parse('query A { a } query B { a { b } }');
    expect(facts(document).operation('B')).toBe(facts(document).operation('B'));
    expect(facts(document).operation('B')).toEqual({ depth: 2, nodes: 2, introspection: false });
    expect(facts(document).operation('C')).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Fuzz: random documents with fragments (a DAG: fragment i spreads only fragments after it),
// aliases, inline fragments, directives and introspection fields, measured against a reference
// that writes the operation out with every spread replaced by its fragment's selections.

type Selection =
  | { kind: 'field'; name: string; alias: string | null; directive: boolean; children: Selection[] | null }
  | { kind: 'inline'; directive: boolean; children: Selection[] }
  | { kind: 'spread'; fragment: number; directive: boolean };

const fieldName = fc.constantFrom('a', 'b', 'c', 'node', '__typename', '__schema', '__type');

function selectionsArb(depth: number, spreadFrom: number, fragments: number): fc.Arbitrary<Selection[]> {
  const field = fc
    .tuple(fieldName, fc.option(fc.constantFrom('x', 'y', 'z')), fc.boolean(), depth > 0 ? fc.option(selectionsArb(depth - 1, spreadFrom, fragments), { freq: 2 }) : fc.constant(null))
    .map(([name, alias, directive, children]): Selection => ({ kind: 'field', name, alias, directive, children: name === '__typename' ? null : children }));
  const options: Array<fc.Arbitrary<Selection>> = [field];
  if (depth > 0) {
    options.push(fc.tuple(fc.boolean(), selectionsArb(depth - 1, spreadFrom, fragments)).map(([directive, children]): Selection => ({ kind: 'inline', directive, children })));
  }
  if (spreadFrom < fragments) {
    options.push(fc.tuple(fc.integer({ min: spreadFrom, max: fragments - 1 }), fc.boolean()).map(([fragment, directive]): Selection => ({ kind: 'spread', fragment, directive })));
  }
  return fc.array(fc.oneof(...options), { minLength: 1, maxLength: 3 });
}

function write(selections: Selection[]): string {
  const parts = selections.map((selection) => {
    const at = selection.directive ? ' @include(if: true)' : '';
    if (selection.kind === 'field') {
      const alias = selection.alias === null ? '' : `${selection.alias}: `;
      const args = selection.name === '__type' ? '(name: "T")' : '';
      return `${alias}${selection.name}${args}${at}${selection.children === null ? '' : ` { ${write(selection.children)} }`}`;
    }
    if (selection.kind === 'inline') return `...${at} { ${write(selection.children)} }`;
    return `...F${String(selection.fragment)}${at}`;
  });
  return parts.join(' ');
}

/** The reference: the operation written out (spreads replaced), then counted level by level. */
function reference(selections: Selection[], fragments: Selection[][], level: number): { depth: number; nodes: number; introspection: boolean } {
  let depth = 0;
  let nodes = 0;
  let introspection = false;
  const expanded: Array<{ selection: Selection; level: number }> = [];
  const expand = (list: Selection[], at: number) => {
    for (const selection of list) {
      if (selection.kind === 'spread') expand(fragments[selection.fragment] as Selection[], at);
      else if (selection.kind === 'inline') expand(selection.children, at);
      else expanded.push({ selection, level: at });
    }
  };
  expand(selections, level);
  for (const { selection, level: at } of expanded) {
    if (selection.kind !== 'field' || selection.name === '__typename') continue;
    nodes += 1;
    depth = Math.max(depth, at);
    if (selection.name === '__schema' || selection.name === '__type') introspection = true;
    if (selection.children !== null) {
      const sub = reference(selection.children, fragments, at + 1);
      nodes += sub.nodes;
      depth = Math.max(depth, sub.depth);
      introspection ||= sub.introspection;
    }
  }
  return { depth, nodes, introspection };
}

const documents = fc.integer({ min: 0, max: 4 }).chain((count) =>
  fc.tuple(
    selectionsArb(3, 0, count),
    fc.tuple(...Array.from({ length: count }, (_, i) => selectionsArb(2, i + 1, count))),
  ),
);

describe('fuzz: depth, nodes and introspection against the written-out operation', () => {
  it('agree for random documents with fragments, aliases, inline fragments and directives', () => {
    fc.assert(
      fc.property(documents, ([operation, fragments]) => {
        const text = `query Q { ${write(operation)} } ${fragments.map((f, i) => `fragment F${String(i)} on T { ${write(f)} }`).join(' ')}`;
        expect(measure(text)).toEqual(reference(operation, fragments, 1));
      }),
      { numRuns: 500 },
    );
  });

  it('count the same when every fragment is spread twice more, without writing anything out', () => {
    fc.assert(
      fc.property(documents, ([operation, fragments]) => {
        // Each fragment spreading the next one twice: the written-out size doubles per fragment.
        const doubled = fragments.map((f, i): Selection[] =>
          i + 1 < fragments.length ? [...f, { kind: 'spread', fragment: i + 1, directive: false }, { kind: 'spread', fragment: i + 1, directive: false }] : f,
        );
        const text = `query Q { ${write(operation)} } ${doubled.map((f, i) => `fragment F${String(i)} on T { ${write(f)} }`).join(' ')}`;
        expect(measure(text)).toEqual(reference(operation, doubled, 1));
      }),
      { numRuns: 200 },
    );
  });
});
