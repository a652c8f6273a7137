import { getNullableType, isEnumType, isListType, isNonNullType, isScalarType, type GraphQLInputType } from 'graphql';

// How a preset reads a session variable's text as a value of its argument's or input field's type.

const INT = /^-?\d+$/;

/** A session variable's text as a value of `type`; throws with the reason when it is not one. */
export function coerceSessionText(text: string, type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error('a list is written as a JSON array');
    }
    if (!Array.isArray(parsed)) throw new Error('a list is written as a JSON array');
    return parsed.map((item) => coerceJson(item, nullable.ofType as GraphQLInputType));
  }
  if (isEnumType(nullable)) {
    if (!nullable.getValue(text)) throw new Error(`"${nullable.name}" has no value named as given`);
    return text;
  }
  if (isScalarType(nullable)) {
    switch (nullable.name) {
      case 'Int':
        return int(text.trim());
      case 'Float': {
        const number = Number(text.trim());
        if (text.trim() === '' || !Number.isFinite(number)) throw new Error('not a number');
        return number;
      }
      case 'Boolean': {
        const lower = text.trim().toLowerCase();
        if (lower !== 'true' && lower !== 'false') throw new Error('not "true" or "false"');
        return lower === 'true';
      }
      case 'String':
      case 'ID':
        return text;
      default:
        // A custom scalar: JSON text when it is some, else the text itself.
        try {
          return JSON.parse(text) as unknown;
        } catch {
          return text;
        }
    }
  }
  // An input object: JSON text, checked by the remote.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('an input object is written as a JSON object');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('an input object is written as a JSON object');
  return parsed;
}

function int(text: string): number {
  const number = Number(text);
  if (!INT.test(text) || number > 2147483647 || number < -2147483648) throw new Error('not a 32-bit integer');
  return number;
}

/** An item of a JSON array given for a list. */
function coerceJson(value: unknown, type: GraphQLInputType): unknown {
  if (value === null) {
    if (isNonNullType(type)) throw new Error('null in a list of non-null items');
    return null;
  }
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    if (!Array.isArray(value)) throw new Error('a list is written as a JSON array');
    return value.map((item) => coerceJson(item, nullable.ofType as GraphQLInputType));
  }
  if (isEnumType(nullable)) {
    if (typeof value !== 'string' || !nullable.getValue(value)) throw new Error(`an item is not a value of "${nullable.name}"`);
    return value;
  }
  if (isScalarType(nullable)) {
    switch (nullable.name) {
      case 'Int':
        if (typeof value === 'number' && Number.isInteger(value)) return int(String(value));
        if (typeof value === 'string') return int(value.trim());
        throw new Error('an item is not an integer');
      case 'Float':
        if (typeof value === 'number') return value;
        throw new Error('an item is not a number');
      case 'Boolean':
        if (typeof value === 'boolean') return value;
        throw new Error('an item is not a boolean');
      case 'String':
        if (typeof value === 'string') return value;
        throw new Error('an item is not a string');
      case 'ID':
        if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))) return String(value);
        throw new Error('an item is not an ID');
      default:
        return value;
    }
  }
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error('an item is not an object');
  return value;
}
