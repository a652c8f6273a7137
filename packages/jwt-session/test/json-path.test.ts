import { describe, expect, it } from 'vitest';
import { parseJsonPath, readJsonPath } from '../src/json-path.js';

describe('JSON paths', () => {
  it.each([
    ['$', []],
    ['$.a.b', ['a', 'b']],
    ["$['a%']", ['a%']],
    ['$["a.b"]', ['a.b']],
    ["$['it\\'s']", ["it's"]],
    ['$.list[0].name', ['list', 0, 'name']],
    ['$.https://x.io/claims', ['https://x', 'io/claims']],
  ])('parses %s', (source, segments) => {
    expect(parseJsonPath(source).segments).toEqual(segments);
  });

  it.each([
    ['a.b', 'JSON path "a.b" must start with "$"'],
    ['$.', 'JSON path "$." has an empty key at position 1'],
    ['$[x]', 'JSON path "$[x]" expects a quoted key or an index at position 1'],
    ["$['a'", `JSON path "$['a'" has an unterminated bracket at position 1`],
    ['$a', 'JSON path "$a" has an unexpected "a" at position 1'],
  ])('refuses %s', (source, message) => {
    expect(() => parseJsonPath(source)).toThrowError(message);
  });

  it('reads values and answers undefined for anything missing, including inherited properties', () => {
    const value = { a: { 'b%': [{ c: 'x' }] } };
    expect(readJsonPath(value, parseJsonPath("$.a['b%'][0].c"))).toBe('x');
    expect(readJsonPath(value, parseJsonPath('$'))).toBe(value);
    expect(readJsonPath(value, parseJsonPath('$.a.missing'))).toBeUndefined();
    expect(readJsonPath(value, parseJsonPath("$.a['b%'][5]"))).toBeUndefined();
    expect(readJsonPath(value, parseJsonPath('$.a[0]'))).toBeUndefined();
    expect(readJsonPath(value, parseJsonPath('$.constructor'))).toBeUndefined();
  });
});
