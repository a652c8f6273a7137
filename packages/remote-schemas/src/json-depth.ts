/**
 * Bounds on how deeply JSON may nest where the gateway reads or writes it: JSON.stringify (and
 * the graphql-js and Yoga code that walks a result) recurse once per level and overflow the stack
 * somewhere past a few thousand levels, so a value nested deeper is refused where it comes in.
 * No GraphQL answer or variable value of an operation nested at most 256 levels comes near it.
 */
export const MAX_JSON_NESTING = 1000;

/** Whether the JSON `text` nests objects and arrays more than `limit` levels deep (strings skipped). */
export function jsonNestedDeeperThan(text: string, limit: number = MAX_JSON_NESTING): boolean {
  // Each level takes at least two characters: a shorter text cannot be deeper.
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) {
      // Skip the string, escapes included.
      for (i++; i < text.length; i++) {
        const inner = text.charCodeAt(i);
        if (inner === 0x5c /* \ */) i++;
        else if (inner === 0x22) break;
      }
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

/** Whether `value` nests objects and arrays more than `limit` levels deep (walked without recursion). */
export function valueNestedDeeperThan(value: unknown, limit: number = MAX_JSON_NESTING): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<[object, number]> = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [object, depth] = item;
    if (depth > limit) return true;
    for (const child of Array.isArray(object) ? object : Object.values(object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Whether `value` holds a number JSON cannot write (`1e400` in a request's JSON is read as
 * Infinity; written again for a remote it would become `null`).
 */
export function holdsNonFiniteNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  const stack: object[] = [value];
  for (let object = stack.pop(); object !== undefined; object = stack.pop()) {
    for (const child of Array.isArray(object) ? object : Object.values(object)) {
      if (typeof child === 'number' && !Number.isFinite(child)) return true;
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return false;
}
