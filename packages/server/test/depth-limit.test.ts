import { describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { nestingDepth } from '../src/http/depth-limit.js';
import { expandedDepth } from '../src/http/limits.js';

describe('nestingDepth', () => {
  it('counts braces, parentheses and brackets', () => {
    expect(nestingDepth('{ a { b(x: [1, {y: 2}]) } }', 100)).toBe(5);
    expect(nestingDepth('query { a }', 100)).toBe(1);
  });

  it('skips strings, block strings and comments', () => {
    expect(nestingDepth('{ a(s: "{{{{\\"{{") }', 100)).toBe(2);
    expect(nestingDepth('{ a(s: """ {{{{ \\""" {{ """) }', 100)).toBe(2);
    expect(nestingDepth('# {{{{{\n{ a }', 100)).toBe(1);
  });

  it('stops counting past the limit', () => {
    expect(nestingDepth('{a'.repeat(100_000), 10)).toBe(11);
  });
});

describe('expandedDepth', () => {
  const chain = (length: number) =>
    parse(
      `{ ...F0 } ${Array.from({ length }, (_, i) => (i === length - 1 ? `fragment F${i} on Query { a }` : `fragment F${i} on Query { ...F${i + 1} }`)).join(' ')}`,
    );

  it('adds no level for a spread: the fragment selections count where they are spread', () => {
    expect(expandedDepth(parse('{ a { ...F } } fragment F on T { b { c } }'), 256)).toBe(3);
    expect(expandedDepth(parse('{ a { ... on T { b { c } } } }'), 256)).toBe(4);
    expect(expandedDepth(chain(500), 256)).toBe(1);
  });

  it('counts a chain of 20,000 spreads as the one level it is, without recursing through it', () => {
    expect(expandedDepth(chain(20_000), 256)).toBe(1);
  });

  it('adds up levels along a chain of fragments that each open one, and stops past the limit', () => {
    const nested = (length: number) =>
      parse(
        `{ ...F0 } ${Array.from({ length }, (_, i) => (i === length - 1 ? `fragment F${i} on Query { a }` : `fragment F${i} on Query { a { ...F${i + 1} } }`)).join(' ')}`,
      );
    // The operation's own selection set, then one level per fragment but the last.
    expect(expandedDepth(nested(256), 256)).toBe(256);
    expect(expandedDepth(nested(257), 256)).toBe(257);
    expect(expandedDepth(nested(20_000), 256)).toBeGreaterThan(256);
  });
});
