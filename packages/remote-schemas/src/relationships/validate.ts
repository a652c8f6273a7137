import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLType,
} from 'graphql';
import type { LoadedRemote } from '../loaded-remote.js';
import type { RemoteFieldPath, RemoteRelationship } from './types.js';

/** A field of the source type whose value the arguments use (`"$x"`), as the source's own schema has it. */
export interface JoinField {
  readonly name: string;
  readonly type: GraphQLOutputType;
}

/** An argument the definition fixes: a literal, or a value with `"$x"` somewhere in it. */
export interface FixedArgument {
  readonly name: string;
  /** The argument's type in the target's own schema. */
  readonly type: GraphQLInputType;
  /** As written in the definition. */
  readonly value: unknown;
  /** The join fields the value uses (`"$x"` at any depth); empty for a literal. */
  readonly uses: readonly string[];
}

/** One level of `remote_field`, checked against the target's own schema. */
export interface Level {
  /** The field's own name. */
  readonly field: string;
  readonly args: readonly FixedArgument[];
}

/** A relationship checked against both remotes: everything its field and its calls need. */
export interface CompiledRelationship {
  readonly name: string;
  /** The source's own name of the type. */
  readonly typeName: string;
  readonly source: LoadedRemote;
  readonly target: LoadedRemote;
  /** In `lhs_fields` order, each once. */
  readonly joinFields: readonly JoinField[];
  readonly levels: readonly Level[];
  /** The last level's arguments the definition does not fix: the relationship field's arguments. */
  readonly clientArguments: readonly GraphQLArgument[];
  /** The field's type in the target's own names: the last level's type (its item type, nullable, with `batch`). */
  readonly type: GraphQLOutputType;
  readonly batch: CompiledBatch | undefined;
  readonly definition: RemoteRelationship;
}

export interface CompiledBatch {
  /** The last level's list argument that receives the join values. */
  readonly argument: string;
  /** The join field whose values the list holds. */
  readonly joinField: string;
  /** The answer items' field holding the join value; `undefined`: matched by position. */
  readonly matchField: string | undefined;
}

/** Why a relationship cannot be part of the schema. */
export interface RelationshipRefusal {
  readonly reason: string;
  /** `invalid-params`: the definition is malformed; `invalid-configuration`: it does not fit the remotes. */
  readonly code: 'invalid-params' | 'invalid-configuration';
}

/** What a relationship's target names: a loaded remote, or why there is none. */
export type TargetLookup = (name: string) => LoadedRemote | 'missing' | 'inconsistent';

class Refused extends Error {
  constructor(
    readonly reason: string,
    readonly code: RelationshipRefusal['code'] = 'invalid-configuration',
  ) {
    super(reason);
  }
}

function refuse(reason: string, code?: RelationshipRefusal['code']): never {
  throw new Refused(reason, code);
}

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `"a"`, `"a" or "b"`, `"a", "b", or "c"` (Hasura's `englishList "or"`). */
export function englishList(items: readonly string[]): string {
  const quoted = items.map((item) => `"${item}"`);
  if (quoted.length <= 1) return quoted[0] ?? 'none';
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, or ${quoted[quoted.length - 1]}`;
}

/** A field a relationship can join on: no arguments, a scalar or enum or a list of them. */
function isJoinable(field: { args: readonly GraphQLArgument[]; type: GraphQLOutputType }): boolean {
  return field.args.length === 0 && isLeafType(getNamedType(field.type));
}

/** The variable a string names (`"$userId"` → `userId`), `undefined` for any other value. */
export function variableOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith('$') ? value.slice(1) : undefined;
}

/** Every variable a value uses, at any depth. */
export function variablesIn(value: unknown, into: string[] = []): string[] {
  const variable = variableOf(value);
  if (variable !== undefined) into.push(variable);
  else if (Array.isArray(value)) for (const item of value) variablesIn(item, into);
  else if (isRecord(value)) for (const item of Object.values(value)) variablesIn(item, into);
  return into;
}

function listDepth(type: GraphQLType): number {
  let depth = 0;
  for (let current = type; isNonNullType(current) || isListType(current); current = current.ofType) {
    if (isListType(current)) depth++;
  }
  return depth;
}

/** The name a JSON value has in the messages (`expected type "Int" but got "String"`). */
function jsonTypeName(value: unknown): string {
  if (typeof value === 'string') return 'String';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 2 ** 31 - 1 ? 'Int' : 'Float';
  if (Array.isArray(value)) return 'List';
  return 'Object';
}

function expected(type: GraphQLType, got: string): never {
  refuse(`expected type "${getNamedType(type).name}" but got "${got}"`);
}

/**
 * Whether a join field of type `field` may be given where `position` is expected: the same named
 * type, or `ID` from `String` or `Int`; a nullable field into a non-null position; a list field
 * only into a list position of the same depth (a single value into a list is coerced, as GraphQL does).
 */
function checkJoinValue(field: GraphQLOutputType, position: GraphQLInputType): void {
  const fieldName = getNamedType(field).name;
  const positionName = getNamedType(position).name;
  const sameType = fieldName === positionName || (positionName === 'ID' && (fieldName === 'String' || fieldName === 'Int'));
  const fieldDepth = listDepth(field);
  if (!sameType || (fieldDepth > 0 && fieldDepth !== listDepth(position))) expected(position, fieldName);
}

class Checker {
  constructor(readonly joinFields: ReadonlyMap<string, JoinField>) {}

  /** Checks a value of the definition against the target's input type `type`. */
  value(value: unknown, type: GraphQLInputType): void {
    const variable = variableOf(value);
    if (variable !== undefined) {
      if (variable === '') refuse('Empty variable name', 'invalid-params');
      const field = this.joinFields.get(variable);
      if (!field) refuse(`variable "${variable}" is not found`);
      checkJoinValue(field.type, type);
      return;
    }
    if (value === null) {
      if (isNonNullType(type)) refuse('null is not allowed here');
      return;
    }
    const nullable = isNonNullType(type) ? type.ofType : type;
    if (isListType(nullable)) {
      if (Array.isArray(value)) for (const item of value) this.value(item, nullable.ofType);
      else this.value(value, nullable.ofType);
      return;
    }
    if (isInputObjectType(nullable)) {
      if (!isRecord(value)) expected(nullable, jsonTypeName(value));
      const fields = nullable.getFields();
      for (const [name, item] of Object.entries(value)) {
        const field = fields[name];
        if (!field) refuse(`argument with name "${name}" not found in remote schema`);
        this.value(item, field.type);
      }
      for (const field of Object.values(fields)) {
        if (isNonNullType(field.type) && field.defaultValue === undefined && !Object.hasOwn(value, field.name)) {
          refuse(`missing required field "${field.name}" of input type "${nullable.name}"`);
        }
      }
      return;
    }
    if (isEnumType(nullable)) {
      if (typeof value !== 'string' || nullable.getValue(value) === undefined) expected(nullable, jsonTypeName(value));
      return;
    }
    if (isScalarType(nullable)) {
      const got = jsonTypeName(value);
      const fits: Record<string, (g: string) => boolean> = {
        Int: (g) => g === 'Int',
        Float: (g) => g === 'Int' || g === 'Float',
        String: (g) => g === 'String',
        Boolean: (g) => g === 'Boolean',
        ID: (g) => g === 'String' || g === 'Int',
      };
      // A custom scalar takes whatever JSON the remote accepts for it.
      const check = fits[nullable.name];
      if (check && !check(got)) expected(nullable, got);
    }
  }

  /** The arguments of one level, checked; names not arguments of `field` are refused. */
  args(given: unknown, field: { args: readonly GraphQLArgument[] }): FixedArgument[] {
    if (!isRecord(given)) refuse('"arguments" must be an object', 'invalid-params');
    const fixed: FixedArgument[] = [];
    for (const [name, value] of Object.entries(given)) {
      const argument = field.args.find((arg) => arg.name === name);
      if (!argument) refuse(`argument with name "${name}" not found in remote schema`);
      this.value(value, argument.type);
      fixed.push({ name, type: argument.type, value, uses: [...new Set(variablesIn(value))] });
    }
    return fixed;
  }
}

/** The levels of `remote_field`, outermost first, each `[name, {arguments, field?}]`. */
function levelsOf(path: unknown): Array<[string, { arguments: unknown }]> {
  const levels: Array<[string, { arguments: unknown }]> = [];
  for (let current: unknown = path; current !== undefined && current !== null; ) {
    if (!isRecord(current)) refuse('"remote_field" must be an object', 'invalid-params');
    const entries = Object.entries(current);
    if (entries.length === 0) refuse('Expecting one single mapping, received none', 'invalid-params');
    if (entries.length > 1) refuse('Expecting one single mapping, received too many', 'invalid-params');
    const [name, call] = entries[0]!;
    if (!isRecord(call) || !isRecord(call['arguments'])) refuse(`"arguments" of "${name}" must be an object`, 'invalid-params');
    levels.push([name, call as { arguments: unknown }]);
    current = call['field'];
    // A hostile document could nest without end; no schema is that deep.
    if (levels.length > 64) refuse('"remote_field" is nested too deeply', 'invalid-params');
  }
  return levels;
}

function compile(relationship: RemoteRelationship, source: LoadedRemote, lookup: TargetLookup): CompiledRelationship {
  const { name, type_name: typeName } = relationship;
  if (typeof name !== 'string' || !GRAPHQL_NAME.test(name) || name.startsWith('__')) {
    refuse(`${JSON.stringify(name)} is not a valid GraphQL name`, 'invalid-params');
  }
  const definition = relationship.definition?.to_remote_schema;
  if (!isRecord(definition)) refuse('the definition has no "to_remote_schema"', 'invalid-params');
  const { remote_schema: targetName, lhs_fields: lhsFields, remote_field: remoteField, batch } = definition;
  if (typeof targetName !== 'string') refuse('"remote_schema" must be a string', 'invalid-params');
  if (!Array.isArray(lhsFields) || lhsFields.some((f) => typeof f !== 'string')) refuse('"lhs_fields" must be a list of field names', 'invalid-params');

  const type = source.own.getType(typeName);
  if (!type) refuse(`no type named "${typeName}" defined in remote schema "${source.name}"`);
  if (!isObjectType(type)) refuse('remote relationships on a remote schema can only be defined on object types');
  const roots = [source.own.getQueryType(), source.own.getMutationType(), source.own.getSubscriptionType()];
  if (roots.includes(type)) refuse(`remote relationships cannot be defined on the root type "${typeName}"`);
  const fields = type.getFields();
  if (Object.hasOwn(fields, name)) refuse(`field "${name}" already exists on type "${typeName}"`);
  const allowed = Object.values(fields).filter(isJoinable);
  const joinFields = new Map<string, JoinField>();
  for (const lhs of lhsFields as string[]) {
    const field = fields[lhs];
    if (!field || !isJoinable(field)) {
      const choice =
        allowed.length === 0
          ? `type "${typeName}" has no field to join on (a field without arguments whose type is a scalar, an enum, or a list of them)`
          : `the allowed fields are ${englishList(allowed.map((f) => f.name))}`;
      refuse(`field with name "${lhs}" is not provided by the lhs entity; ${choice}`);
    }
    joinFields.set(lhs, { name: lhs, type: field.type });
  }

  const target = lookup(targetName);
  if (target === 'missing') refuse(`remote schema with name "${targetName}" not found`);
  if (target === 'inconsistent') refuse(`remote schema "${targetName}" is inconsistent`);
  const checker = new Checker(joinFields);
  const path = levelsOf(remoteField as RemoteFieldPath);
  let parent: GraphQLNamedType | null | undefined = target.own.getQueryType();
  let parentName = parent?.name ?? 'Query';
  const levels: Level[] = [];
  let last: { args: readonly GraphQLArgument[]; type: GraphQLOutputType } | undefined;
  path.forEach(([fieldName, call], index) => {
    const field = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[fieldName] : undefined;
    if (!field) refuse(`remote field with name "${fieldName}" and type "${parentName}" not found`);
    const args = checker.args(call.arguments, field);
    const isLast = index === path.length - 1;
    if (!isLast) {
      for (const arg of field.args) {
        if (isNonNullType(arg.type) && arg.defaultValue === undefined && !args.some((a) => a.name === arg.name)) {
          refuse(`missing required argument "${arg.name}"`);
        }
      }
    }
    levels.push({ field: fieldName, args });
    last = field;
    parent = getNamedType(field.type);
    parentName = parent.name;
  });
  const lastLevel = levels[levels.length - 1]!;
  const lastField = last!;
  const clientArguments = lastField.args.filter((arg) => !lastLevel.args.some((fixed) => fixed.name === arg.name));
  let fieldType: GraphQLOutputType = lastField.type;
  let compiledBatch: CompiledBatch | undefined;
  if (batch !== undefined && batch !== null) {
    if (!isRecord(batch) || typeof batch['argument'] !== 'string') refuse('"batch" must be {"argument", "match_field"?}', 'invalid-params');
    const argumentName = batch['argument'];
    const matchField = batch['match_field'] ?? undefined;
    if (matchField !== undefined && typeof matchField !== 'string') refuse('"batch.match_field" must be a string', 'invalid-params');
    const argument = lastField.args.find((arg) => arg.name === argumentName);
    const argumentType = argument && (isNonNullType(argument.type) ? argument.type.ofType : argument.type);
    if (!argument || !argumentType || !isListType(argumentType)) {
      refuse(`batch argument "${argumentName}" is not a list argument of field "${lastLevel.field}"`);
    }
    const listType = isNonNullType(lastField.type) ? lastField.type.ofType : lastField.type;
    if (!isListType(listType)) refuse(`batch field "${lastLevel.field}" does not return a list`);
    const fixed = lastLevel.args.find((arg) => arg.name === argumentName);
    const joinField = variableOf(fixed?.value);
    if (joinField === undefined || joinField === '') {
      refuse(`batch argument "${argumentName}" must be given as "$<field>" in the arguments of "${lastLevel.field}"`);
    }
    checkJoinValue(joinFields.get(joinField)!.type, argumentType.ofType);
    if (listDepth(joinFields.get(joinField)!.type) > 0) refuse(`batch join field "${joinField}" must not be a list`);
    const item = getNamedType(listType);
    if (matchField !== undefined) {
      const match = isObjectType(item) || isInterfaceType(item) ? item.getFields()[matchField] : undefined;
      if (!match || !isJoinable(match)) refuse(`match field "${matchField}" is not a field of type "${item.name}"`);
    }
    // Each source object gets the one item matched to it, or null.
    const itemType = isNonNullType(listType.ofType) ? listType.ofType.ofType : listType.ofType;
    fieldType = itemType;
    compiledBatch = { argument: argumentName, joinField, matchField };
  }
  return {
    name,
    typeName,
    source,
    target,
    joinFields: [...joinFields.values()],
    levels,
    clientArguments,
    type: fieldType,
    batch: compiledBatch,
    definition: relationship,
  };
}

/**
 * Checks `relationship` of remote `source` against the source's own schema and its target's, by
 * meaning (names, types, arguments, the `"$x"` join values), and compiles it; or says why it
 * cannot be part of the schema, in Hasura's words where Hasura has some.
 */
export function compileRelationship(
  relationship: RemoteRelationship,
  source: LoadedRemote,
  lookup: TargetLookup,
): CompiledRelationship | RelationshipRefusal {
  try {
    return compile(relationship, source, lookup);
  } catch (error) {
    if (error instanceof Refused) return { reason: error.reason, code: error.code };
    throw error;
  }
}

/** `Inconsistent object: in remote relationship "<name>": <reason>`. */
export function relationshipMessage(name: string, reason: string): string {
  return `Inconsistent object: in remote relationship "${name}": ${reason}`;
}
