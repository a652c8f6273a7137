import type { GraphQLError } from 'graphql';

/** What a hidden name in a remote's error becomes. */
export const HIDDEN_NAME = '<hidden>';

const NAME = /[_A-Za-z][_0-9A-Za-z]*/g;

function scrubText(text: string, hidden: ReadonlySet<string>): string {
  return text.replace(NAME, (word) => (hidden.has(word) ? HIDDEN_NAME : word));
}

/** `value` with every hidden name in its string values replaced, at most `depth` levels deep (the rest dropped). */
function scrubValue(value: unknown, hidden: ReadonlySet<string>, depth: number): unknown {
  if (typeof value === 'string') return scrubText(value, hidden);
  if (value === null || typeof value !== 'object') return value;
  if (depth === 0) return null;
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, hidden, depth - 1));
  const out: Record<string, unknown> = {};
  // Keys are scrubbed as text is (a remote may key its details by type or field name), but for
  // `code`, the key clients match errors on.
  for (const [key, item] of Object.entries(value)) {
    let scrubbed = key === 'code' ? key : scrubText(key, hidden);
    // Two keys that read the same once scrubbed both stay, the later numbered.
    for (let n = 2; scrubbed !== key && Object.hasOwn(out, scrubbed); n++) scrubbed = `${scrubText(key, hidden)} (${String(n)})`;
    out[scrubbed] = scrubValue(item, hidden, depth - 1);
  }
  return out;
}

/**
 * Replaces, in place, every name of `hidden` (types, fields, arguments, enum values the role does
 * not see) that a remote's error quotes, in its message and the keys and string values of its
 * extensions, with `<hidden>`:
 * `Cannot return null for non-null field Post.title.` becomes
 * `Cannot return null for non-null field <hidden>.title.` when the role sees no `Post`. The errors
 * were just read from the remote's answer for this request.
 */
export function scrubHiddenNames(errors: readonly GraphQLError[], hidden: ReadonlySet<string>): void {
  if (hidden.size === 0) return;
  for (const error of errors) {
    const message = scrubText(error.message, hidden);
    if (message !== error.message) error.message = message;
    const { extensions } = error;
    if (extensions && Object.keys(extensions).length > 0) {
      const scrubbed = scrubValue(extensions, hidden, 16) as Record<string, unknown>;
      // A refusal before execution keeps the status it carries, hidden (see `asRequestErrors`).
      const http = Object.getOwnPropertyDescriptor(extensions, 'http');
      if (http && !http.enumerable) Object.defineProperty(scrubbed, 'http', http);
      (error as { extensions: unknown }).extensions = scrubbed;
    }
  }
}

/** The `extensions` of a remote's answer with the same replacement in their keys and text values. */
export function withoutHiddenNames(extensions: Record<string, unknown>, hidden: ReadonlySet<string>): Record<string, unknown> {
  return hidden.size === 0 ? extensions : (scrubValue(extensions, hidden, 16) as Record<string, unknown>);
}
