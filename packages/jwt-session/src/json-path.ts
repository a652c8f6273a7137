/** One step of a JSON path: an object key or an array index. */
export type JsonPathSegment = string | number;

/** A parsed JSON path; `source` keeps the text for error messages. */
export interface JsonPath {
  readonly source: string;
  readonly segments: readonly JsonPathSegment[];
}

/**
 * Parses the JSON path subset Hasura accepts: `$`, `.key`, `['key']` / `["key"]` (any characters,
 * `\` escapes the quote) and `[0]`. Throws a plain `Error` with the reason; callers add the field name.
 */
export function parseJsonPath(source: string): JsonPath {
  if (!source.startsWith('$')) throw new Error(`JSON path "${source}" must start with "$"`);
  const segments: JsonPathSegment[] = [];
  let i = 1;
  while (i < source.length) {
    const c = source[i];
    if (c === '.') {
      let j = i + 1;
      while (j < source.length && source[j] !== '.' && source[j] !== '[') j++;
      const key = source.slice(i + 1, j);
      if (key === '') throw new Error(`JSON path "${source}" has an empty key at position ${i}`);
      segments.push(key);
      i = j;
    } else if (c === '[') {
      const q = source[i + 1];
      if (q === "'" || q === '"') {
        let j = i + 2;
        let key = '';
        while (j < source.length && source[j] !== q) {
          if (source[j] === '\\' && j + 1 < source.length) j++;
          key += source[j];
          j++;
        }
        if (source[j] !== q || source[j + 1] !== ']') {
          throw new Error(`JSON path "${source}" has an unterminated bracket at position ${i}`);
        }
        segments.push(key);
        i = j + 2;
      } else {
        const match = /^\[(\d+)\]/.exec(source.slice(i));
        if (match === null || match[1] === undefined) {
          throw new Error(`JSON path "${source}" expects a quoted key or an index at position ${i}`);
        }
        segments.push(Number(match[1]));
        i += match[0].length;
      }
    } else {
      throw new Error(`JSON path "${source}" has an unexpected "${c}" at position ${i}`);
    }
  }
  return { source, segments };
}

/** Reads the value at `path`; `undefined` when any step is missing. */
export function readJsonPath(value: unknown, path: JsonPath): unknown {
  let current = value;
  for (const segment of path.segments) {
    if (typeof segment === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[segment];
    } else {
      if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}
