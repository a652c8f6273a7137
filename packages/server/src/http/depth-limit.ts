/** The deepest nesting of `{ ( [` in GraphQL source, skipping strings and comments; stops counting past `limit`. */
export function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x23 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22 /* " */) {
      if (text.startsWith('"""', i)) {
        // A block string ends at the first `"""` that is not escaped as `\"""`.
        let end = text.indexOf('"""', i + 3);
        while (end !== -1 && text.charCodeAt(end - 1) === 0x5c) end = text.indexOf('"""', end + 3);
        i = end === -1 ? text.length : end + 2;
      } else {
        for (i++; i < text.length && text.charCodeAt(i) !== 0x22 && text.charCodeAt(i) !== 0x0a; i++) {
          if (text.charCodeAt(i) === 0x5c /* \ */) i++;
        }
      }
    } else if (c === 0x7b || c === 0x28 || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x29 || c === 0x5d) {
      depth--;
    }
  }
  return deepest;
}
