import { nodeKey } from './editing.js';

const HEAD = 'validation for the given role-based schema failed';

/**
 * The reasons of the server's `validation-failed` message for a permission: one after `because`,
 * or the ` • ` list after `for the following reasons:`. Any other message is one reason.
 */
export function validationReasons(message: string): string[] {
  if (!message.startsWith(HEAD)) return [message];
  const rest = message.slice(HEAD.length);
  if (rest.startsWith(' because ')) return [rest.slice(' because '.length)];
  return rest
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('•'))
    .map((line) => line.slice(1).trim());
}

const KIND_LABEL = '"(?:Object|Interface|Union|Enum|Input object|Scalar)": "([^"]+)"';
const PATTERNS: ReadonlyArray<{ pattern: RegExp; key: (match: RegExpExecArray) => string }> = [
  // the argument "a" of the field "f" of the "Object": "T"
  { pattern: new RegExp(`argument "([^"]+)" (?:of|does not exist in) the field "([^"]+)" of the ${KIND_LABEL}`), key: (m) => nodeKey(m[3], m[2], m[1]) },
  // type "X" used by the field "f" of the "Object": "T" / field "x" does not exist in the "Object": "T"
  { pattern: new RegExp(`field "([^"]+)" (?:of|does not exist in) the ${KIND_LABEL}`), key: (m) => nodeKey(m[2], m[1]) },
  // the field "x" of the "Input object": "T"
  { pattern: new RegExp(`the field "([^"]+)" of the ${KIND_LABEL}`), key: (m) => nodeKey(m[2], m[1]) },
  { pattern: /input value: "([^"]+)" of input object "([^"]+)"/, key: (m) => nodeKey(m[2], m[1]) },
  { pattern: /input object: "([^"]+)"/, key: (m) => nodeKey(m[1]) },
  { pattern: /^(?:enum|union|object|interface) "([^"]+)"/, key: (m) => nodeKey(m[1]) },
  { pattern: new RegExp(KIND_LABEL), key: (m) => nodeKey(m[1]) },
  { pattern: /^"([^"]+)" is the \w+ root of the upstream/, key: (m) => nodeKey(m[1]) },
];

/**
 * Where in the tree each reason of a server message belongs: the argument, field or type it names
 * (the most precise one it can tell), or `''` for the permission as a whole. Every reason is kept.
 */
export function placeReasons(message: string): Map<string, string[]> {
  const placed = new Map<string, string[]>();
  for (const reason of validationReasons(message)) {
    let key = '';
    for (const { pattern, key: keyOf } of PATTERNS) {
      const match = pattern.exec(reason);
      if (match) {
        key = keyOf(match);
        break;
      }
    }
    placed.set(key, [...(placed.get(key) ?? []), reason]);
  }
  return placed;
}
