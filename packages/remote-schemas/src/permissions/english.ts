/** Helpers for the messages of permission checks. */

export function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

export function repeatedNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of names) (seen.has(name) ? repeated : seen).add(name);
  return [...repeated];
}

/** `"a"`, `"a" and "b"`, `"a", "b", and "c"`. */
export function englishList(names: Iterable<string>): string {
  const quoted = [...names].map((name) => `"${name}"`);
  if (quoted.length <= 2) return quoted.join(' and ');
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1) ?? ''}`;
}
