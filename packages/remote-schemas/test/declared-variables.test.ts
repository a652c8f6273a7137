import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { declaredVariables } from '../src/sent-document.js';

describe('declaredVariables', () => {
  const document = parse('query A($a: Int, $__proto__: String) { x } query B($b: Int) { y }');

  it('keeps the values of the chosen operation\'s variables only', () => {
    expect(declaredVariables(document, 'A', { a: 1, b: 2, c: 3 })).toEqual({ a: 1 });
    expect(declaredVariables(document, 'B', { a: 1, b: 2 })).toEqual({ b: 2 });
  });

  it('hands back the same object when it holds nothing else, and nothing when there is nothing', () => {
    const given = { a: 1 };
    expect(declaredVariables(document, 'A', given)).toBe(given);
    expect(declaredVariables(document, 'A', null)).toBeNull();
    expect(declaredVariables(document, 'A', undefined)).toBeUndefined();
    expect(declaredVariables(parse('{ x }'), undefined, { a: 1 })).toEqual({});
  });

  it('keeps a variable named __proto__ as a value, never as a prototype', () => {
    const given = JSON.parse('{"__proto__": "p", "z": 1}') as Record<string, unknown>;
    const kept = declaredVariables(document, 'A', given)!;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.keys(kept)).toEqual(['__proto__']);
    expect(kept['__proto__']).toBe('p');
  });
});
