import { describe, expect, it } from 'vitest';
import { nestingDepth } from '../src/depth-limit.js';

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
