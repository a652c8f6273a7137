import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonNestedDeeperThan, valueNestedDeeperThan } from '../src/json-depth.js';

/** The nesting of a JSON value, objects and arrays counted. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('JSON nesting bounds', () => {
  it('count objects and arrays, not brackets inside strings or after escaped quotes', () => {
    const text = `{"a":"[[[[{{{{\\"[[[[","b":[[{"c":"]]]]"}]]}`;
    expect(jsonNestedDeeperThan(text, 3)).toBe(true);
    expect(jsonNestedDeeperThan(text.padEnd(100, ' '), 4)).toBe(false);
    expect(jsonNestedDeeperThan(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBe(true);
    expect(valueNestedDeeperThan({ a: [[{ b: 1 }]] }, 3)).toBe(true);
    expect(valueNestedDeeperThan({ a: [[{ b: 1 }]] }, 4)).toBe(false);
  });

  it('agree with the depth of the parsed value, on the text and on the value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 12 }), (value, limit) => {
        const deeper = depthOf(value) > limit;
        // Padded so that the shortcut for short texts does not decide.
        expect(jsonNestedDeeperThan(JSON.stringify(value).padEnd(2 * limit + 1, ' '), limit)).toBe(deeper);
        expect(valueNestedDeeperThan(value, limit)).toBe(deeper);
      }),
      { numRuns: 500 },
    );
  });
});
