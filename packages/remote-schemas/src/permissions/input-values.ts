import { isDeepStrictEqual } from 'node:util';
import {
  Kind,
  astFromValue,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  print,
  valueFromAST,
  type ConstDirectiveNode,
  type ConstValueNode,
  type GraphQLInputType,
  type GraphQLType,
  type InputValueDefinitionNode,
  type TypeNode,
} from 'graphql';
import { englishList } from './english.js';
import type { InputValueGrant, Preset } from './grant.js';

/**
 * The arguments and input fields of a role's SDL against the remote's: each exists with the same
 * type and an equal default, the required ones are there, and `@preset` is well formed with a value
 * of the right type (one naming a session variable is coerced at run time, not here).
 */

/** Where an argument list or input field list belongs, for the reasons that name it. */
export type InputValueOwner =
  | { readonly kind: 'field'; readonly field: string; readonly parentLabel: string; readonly parent: string }
  | { readonly kind: 'input'; readonly parent: string };

/** The part of `GraphQLArgument` and `GraphQLInputField` that is compared. */
export interface UpstreamInputValue {
  readonly name: string;
  readonly type: GraphQLInputType;
  readonly defaultValue?: unknown;
}

/** What the checker of a role's SDL lends this one. */
export interface InputValueContext {
  /** Where problems go, each a reason of the validation message. */
  readonly reasons: Set<string>;
  /** The session variable prefix, lower-cased. */
  readonly prefix: string;
  /** Same list and non-null wrapping and the same named type (in the remote's names). */
  sameTypeReference(node: TypeNode, type: GraphQLType): boolean;
}

export class InputValueChecker {
  readonly #context: InputValueContext;
  #hasPresets = false;

  constructor(context: InputValueContext) {
    this.#context = context;
  }

  /** Whether a well-formed preset was met. */
  get hasPresets(): boolean {
    return this.#hasPresets;
  }

  /**
   * Arguments of a field or fields of an input object: each listed one exists upstream with the
   * same type and an equal default (if one is written); every required upstream one is listed.
   * `upstream` is undefined when the owner itself does not exist upstream.
   */
  check(
    owner: InputValueOwner,
    provided: readonly InputValueDefinitionNode[],
    upstream: readonly UpstreamInputValue[] | undefined,
  ): Map<string, InputValueGrant> {
    const grants = new Map<string, InputValueGrant>();
    const byName = new Map(upstream?.map((value) => [value.name, value] as const));
    for (const value of provided) {
      const name = value.name.value;
      const place = owner.kind === 'field'
        ? `the argument "${name}" of the field "${owner.field}" of the "${owner.parentLabel}": "${owner.parent}"`
        : `the field "${name}" of the "Input object": "${owner.parent}"`;
      let target: GraphQLInputType | undefined;
      const upstreamValue = byName.get(name);
      if (upstream && !upstreamValue) {
        this.#context.reasons.add(owner.kind === 'field'
          ? `argument "${name}" does not exist in the field "${owner.field}" of the "${owner.parentLabel}": "${owner.parent}"`
          : `field "${name}" does not exist in the "Input object": "${owner.parent}"`);
      } else if (upstreamValue && !this.#context.sameTypeReference(value.type, upstreamValue.type)) {
        const label = owner.kind === 'field' ? 'argument' : 'Input object argument';
        this.#context.reasons.add(`expected type of "${name}"("${label}") to be ${String(upstreamValue.type)} but received ${print(value.type)}`);
      } else if (upstreamValue) {
        target = upstreamValue.type;
        if (value.defaultValue) this.#checkDefaultValue(owner, name, value.defaultValue, upstreamValue);
      }
      const preset = this.#checkPreset(value.directives ?? [], place, target);
      grants.set(name, preset ? { preset } : {});
    }

    if (upstream) {
      const missing = upstream
        .filter((value) => isNonNullType(value.type) && value.defaultValue === undefined && !grants.has(value.name))
        .map((value) => value.name);
      if (missing.length > 0) {
        this.#context.reasons.add(owner.kind === 'field'
          ? `field: "${owner.field}" expects the following non nullable arguments to be present: ${englishList(missing)}`
          : `input object: "${owner.parent}" expects the following non nullable fields to be present: ${englishList(missing)}`);
      }
    }
    return grants;
  }

  #checkDefaultValue(owner: InputValueOwner, name: string, written: ConstValueNode, upstream: UpstreamInputValue): void {
    const value = valueFromAST(written, upstream.type);
    if (value !== undefined && upstream.defaultValue !== undefined && sameValue(value, upstream.defaultValue)) return;
    const expected = upstream.defaultValue === undefined ? 'none' : printValue(upstream.defaultValue, upstream.type);
    const what = owner.kind === 'field'
      ? `argument: "${name}" of field "${owner.field}"`
      : `input value: "${name}" of input object "${owner.parent}"`;
    this.#context.reasons.add(`expected default value of ${what} to be ${expected} but received ${print(written)}`);
  }

  /**
   * The preset of an argument or input field, if it has a well-formed one. `target` is the
   * remote's type for it, undefined when it does not match (the value is then not checked).
   */
  #checkPreset(directives: readonly ConstDirectiveNode[], place: string, target: GraphQLInputType | undefined): Preset | undefined {
    const presets = directives.filter((directive) => directive.name.value === 'preset');
    if (presets.length === 0) return undefined;
    if (presets.length > 1) {
      this.#context.reasons.add(`found multiple preset directives at ${place}`);
      return undefined;
    }
    const args = presets[0]?.arguments ?? [];
    let value: ConstValueNode | undefined;
    let isStatic = false;
    let wellFormed = true;
    for (const arg of args) {
      const argName = arg.name.value;
      if (args.filter((other) => other.name.value === argName).length > 1) {
        this.#context.reasons.add(`preset argument "${argName}" is given more than once at ${place}`);
        wellFormed = false;
      } else if (argName === 'value') {
        value = arg.value;
      } else if (argName === 'static') {
        if (arg.value.kind === Kind.BOOLEAN) isStatic = arg.value.value;
        else {
          this.#context.reasons.add(`expected preset static value to be a Boolean value at ${place}`);
          wellFormed = false;
        }
      } else {
        this.#context.reasons.add(`unknown preset argument "${argName}" at ${place}`);
        wellFormed = false;
      }
    }
    if (!value) {
      if (!args.some((arg) => arg.name.value === 'value')) this.#context.reasons.add(`preset argument "value" not found at ${place}`);
      return undefined;
    }
    const fromSession = value.kind === Kind.STRING && !isStatic && value.value.toLowerCase().startsWith(this.#context.prefix);
    if (!fromSession && target) {
      const problem = literalProblem(value, target);
      if (problem) {
        this.#context.reasons.add(`preset value ${print(value)} at ${place} is invalid: ${problem}`);
        wellFormed = false;
      }
    }
    if (!wellFormed) return undefined;
    this.#hasPresets = true;
    return { value, static: isStatic };
  }
}

/** Why a literal is not a value of `type`, in graphql-js's coercion terms; undefined if it is one. */
function literalProblem(node: ConstValueNode, type: GraphQLInputType): string | undefined {
  if (isNonNullType(type)) {
    if (node.kind === Kind.NULL) return `null is not a value of the non-null type ${String(type)}`;
    return literalProblem(node, type.ofType);
  }
  if (node.kind === Kind.NULL) return undefined;
  if (isListType(type)) {
    // A single value stands for a list of one, as in a query.
    if (node.kind !== Kind.LIST) return literalProblem(node, type.ofType);
    for (const item of node.values) {
      const problem = literalProblem(item, type.ofType);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isInputObjectType(type)) {
    if (node.kind !== Kind.OBJECT) return `expected an input object value of the type "${type.name}"`;
    const fields = type.getFields();
    const given = new Set<string>();
    for (const field of node.fields) {
      const name = field.name.value;
      if (given.has(name)) return `"${name}" is given more than once for the input object "${type.name}"`;
      given.add(name);
      const definition = fields[name];
      if (!definition) return `"${name}" does not exist in the input object "${type.name}"`;
      const problem = literalProblem(field.value, definition.type);
      if (problem) return problem;
    }
    const missing = Object.values(fields)
      .filter((field) => isNonNullType(field.type) && field.defaultValue === undefined && !given.has(field.name))
      .map((field) => field.name);
    if (missing.length > 0) return `the input object "${type.name}" requires ${englishList(missing)}`;
    return undefined;
  }
  if (isEnumType(type)) {
    if (node.kind !== Kind.ENUM) return `expected a value of the enum "${type.name}"`;
    return type.getValue(node.value) ? undefined : `"${node.value}" not found in the enum: "${type.name}"`;
  }
  try {
    return type.parseLiteral(node, undefined) === undefined ? `expected a value of the scalar "${type.name}"` : undefined;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/\.$/, '') : `expected a value of the scalar "${type.name}"`;
  }
}

/** Values as graphql-js coerces them: input objects and custom scalars compare by content. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameValue(a[key], b[key]));
  }
  return isDeepStrictEqual(a, b);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
}

function printValue(value: unknown, type: GraphQLInputType): string {
  try {
    const node = astFromValue(value, type);
    if (node) return print(node);
  } catch {
    // graphql-js cannot print an object or a list held by a custom scalar; written out below.
  }
  return untypedLiteral(value);
}

function untypedLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(untypedLiteral).join(', ')}]`;
  if (isRecord(value)) return `{${Object.entries(value).map(([key, item]) => `${key}: ${untypedLiteral(item)}`).join(', ')}}`;
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
