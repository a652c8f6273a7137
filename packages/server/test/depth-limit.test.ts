import { describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { nestingDepth } from '../src/depth-limit.js';
import { expandedDepth } from '../src/limits.js';

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

  it('refuses a chain of spreads four times longer than the limit instead of recursing through it', () => {
    expect(expandedDepth(chain(1100), 256)).toBeGreaterThan(256);
  });
});
