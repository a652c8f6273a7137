import { isDeepStrictEqual } from 'node:util';
import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  astFromValue,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  parse,
  print,
  valueFromAST,
  type ConstDirectiveNode,
  type ConstValueNode,
  type DefinitionNode,
  type DocumentNode,
  type EnumValueDefinitionNode,
  type FieldDefinitionNode,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
  type InputValueDefinitionNode,
  type NamedTypeNode,
  type TypeNode,
} from 'graphql';
import { BUILT_IN_SCALARS } from '../builtin-scalars.js';
import type { FieldGrant, InputValueGrant, Preset, RoleGrant, TypeGrant } from './grant.js';

export interface ValidateRoleSchemaOptions {
  /**
   * A `@preset` string value starting with this prefix (compared case-insensitively) names a
   * session variable, unless the directive says `static: true`.
   */
  sessionVariablePrefix: string;
}

export type RoleSchemaValidation = { ok: true; grant: RoleGrant } | { ok: false; message: string };

/**
 * Checks that a role's SDL is a subset of a remote's schema and turns it into the role's grant, in
 * the remote's own names.
 *
 * The comparison is by meaning: descriptions, directives other than `@preset`, the order of
 * definitions and the way a value is written do not matter. `@preset(value: …, static: Boolean)` is
 * understood on arguments and input fields without being declared.
 *
 * Root types: the role's roots are the types named by its `schema { … }` block (with any
 * `extend schema`). Without one, for each operation the remote has a root for, the role's root is
 * its type called `Query` / `Mutation` / `Subscription`, or else its type called like the remote's
 * root (`query_root`); for an operation the remote has no root for, a type with the default name is
 * an ordinary type. The role's root of an operation stands for the remote's root of that operation
 * whatever either is called, so `type Query` grants fields of a remote's `query_root` and the grant
 * names it `query_root`. A type named like one of the remote's roots can only be given as that
 * root. The role must have a query root.
 *
 * Every problem found is reported, in one message laid out as Hasura lays it out.
 */
export function validateRoleSchema(
  remote: GraphQLSchema,
  sdl: string,
  options: ValidateRoleSchemaOptions,
): RoleSchemaValidation {
  const prefix = options.sessionVariablePrefix;
  if (typeof prefix !== 'string' || prefix === '') {
    throw new TypeError('validateRoleSchema: "sessionVariablePrefix" must be a non-empty string');
  }
  const reasons = new Set<string>();
  const document = parseRoleSchema(sdl, reasons);
  const grant = document && new RoleSchemaChecker(remote, document, prefix.toLowerCase(), reasons).check();
  if (reasons.size === 0 && grant) return { ok: true, grant };
  return { ok: false, message: validationMessage([...reasons]) };
}

function validationMessage(reasons: readonly string[]): string {
  const head = 'validation for the given role-based schema failed';
  if (reasons.length === 1) return `${head} because ${reasons[0]}`;
  return `${head} for the following reasons:\n${reasons.map((reason) => ` • ${reason}\n`).join('')}`;
}

/** The document, or undefined with a reason; a document with nothing in it is an empty one. */
function parseRoleSchema(sdl: string, reasons: Set<string>): DocumentNode | undefined {
  try {
    return parse(sdl);
  } catch (error) {
    if (isBlank(sdl)) return { kind: Kind.DOCUMENT, definitions: [] };
    if (!(error instanceof GraphQLError)) throw error;
    const where = error.locations?.[0];
    const at = where ? ` (line ${where.line}, column ${where.column})` : '';
    reasons.add(`the schema cannot be parsed: ${error.message.replace(/\.$/, '')}${at}`);
    return undefined;
  }
}

function isBlank(sdl: string): boolean {
  try {
    return new Lexer(new Source(sdl)).advance().kind === TokenKind.EOF;
  } catch {
    return false;
  }
}

const OPERATIONS = ['query', 'mutation', 'subscription'] as const;
type Operation = (typeof OPERATIONS)[number];
const DEFAULT_ROOT_NAMES: Readonly<Record<Operation, string>> = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' };

type RoleTypeKind = TypeGrant['kind'];
const KIND_LABELS: Readonly<Record<RoleTypeKind, string>> = {
  object: 'Object',
  interface: 'Interface',
  union: 'Union',
  enum: 'Enum',
  input: 'Input object',
  scalar: 'Scalar',
};

/** One type of the role's SDL, its definition and extensions merged. */
interface RoleType {
  readonly name: string;
  readonly kind: RoleTypeKind;
  readonly directives: ConstDirectiveNode[];
  readonly fields: FieldDefinitionNode[];
  readonly interfaces: NamedTypeNode[];
  readonly members: NamedTypeNode[];
  readonly values: EnumValueDefinitionNode[];
  readonly inputFields: InputValueDefinitionNode[];
}

interface Definitions {
  readonly types: Map<string, RoleType>;
  /** Undefined when the SDL has neither a schema definition nor a schema extension. */
  readonly schemaRoots: Map<Operation, string> | undefined;
  readonly schemaDirectives: ConstDirectiveNode[];
}

/** Where an argument list or input field list belongs, for the reasons that name it. */
type InputValueOwner =
  | { readonly kind: 'field'; readonly field: string; readonly parentLabel: string; readonly parent: string }
  | { readonly kind: 'input'; readonly parent: string };

/** The part of `GraphQLArgument` and `GraphQLInputField` that is compared. */
interface UpstreamInputValue {
  readonly name: string;
  readonly type: GraphQLInputType;
  readonly defaultValue?: unknown;
}

class RoleSchemaChecker {
  private readonly toRemoteName = new Map<string, string>();
  private readonly usedBuiltInScalars = new Set<string>();
  private hasPresets = false;

  constructor(
    private readonly remote: GraphQLSchema,
    private readonly document: DocumentNode,
    private readonly prefix: string,
    private readonly reasons: Set<string>,
  ) {}

  check(): RoleGrant {
    const definitions = this.collect();
    const roots = this.resolveRoots(definitions);
    for (const directive of definitions.schemaDirectives) this.misplacedPreset(directive, 'the schema definition');

    const types = new Map<string, TypeGrant>();
    for (const type of definitions.types.values()) {
      // Two role types can only stand for one remote type through a root, which checkRootName refuses.
      this.checkRootName(type, roots);
      const grant = this.checkType(type);
      this.checkCoherence(type, definitions.types);
      const remoteName = this.remoteName(type.name);
      if (grant && !types.has(remoteName)) types.set(remoteName, grant);
    }
    for (const name of this.usedBuiltInScalars) if (!types.has(name)) types.set(name, { kind: 'scalar' });

    const grantRoots: Partial<Record<Operation, string>> = {};
    for (const operation of OPERATIONS) {
      const name = roots.get(operation);
      if (name !== undefined) grantRoots[operation] = this.remoteName(name);
    }
    return { types, roots: grantRoots, hasPresets: this.hasPresets };
  }

  // ---- the document --------------------------------------------------------------------------

  private collect(): Definitions {
    const types = new Map<string, RoleType>();
    const duplicates = new Set<string>();
    const extensions: DefinitionNode[] = [];
    let schemaRoots: Map<Operation, string> | undefined;
    const schemaDirectives: ConstDirectiveNode[] = [];
    let schemaDefinitions = 0;
    let executable = false;

    for (const definition of this.document.definitions) {
      switch (definition.kind) {
        case Kind.SCHEMA_DEFINITION:
        case Kind.SCHEMA_EXTENSION:
          if (definition.kind === Kind.SCHEMA_DEFINITION) schemaDefinitions++;
          schemaRoots ??= new Map();
          schemaDirectives.push(...(definition.directives ?? []));
          for (const { operation, type } of definition.operationTypes ?? []) {
            if (schemaRoots.has(operation)) {
              this.reasons.add(`the ${operation} root is given more than once in the schema definition`);
            }
            schemaRoots.set(operation, type.name.value);
          }
          break;
        case Kind.DIRECTIVE_DEFINITION:
          // Directives other than @preset are ignored, and so are their definitions.
          break;
        case Kind.OPERATION_DEFINITION:
        case Kind.FRAGMENT_DEFINITION:
          executable = true;
          break;
        default: {
          const kind = typeKindOf(definition);
          if (!kind) break;
          if (isExtension(definition)) {
            extensions.push(definition);
            break;
          }
          const name = definition.name.value;
          if (types.has(name)) duplicates.add(name);
          else types.set(name, emptyRoleType(name, kind));
          mergeInto(types.get(name), kind, definition);
        }
      }
    }
    for (const extension of extensions) {
      const kind = typeKindOf(extension);
      if (!kind || !('name' in extension) || !extension.name) continue;
      const name = extension.name.value;
      const base = types.get(name);
      if (!base) this.reasons.add(`cannot extend type "${name}" because it is not defined`);
      else if (base.kind !== kind) this.reasons.add(`cannot extend the ${KIND_LABELS[base.kind]} "${name}" as the ${KIND_LABELS[kind]}`);
      else mergeInto(base, kind, extension);
    }

    if (schemaDefinitions > 1) this.reasons.add('multiple schema definitions found');
    if (duplicates.size > 0) this.reasons.add(`duplicate type names found: ${englishList(duplicates)}`);
    if (executable) this.reasons.add('the schema contains an operation or a fragment, where only type definitions are expected');
    return { types, schemaRoots, schemaDirectives };
  }

  // ---- root types ----------------------------------------------------------------------------

  private resolveRoots(definitions: Definitions): Map<Operation, string> {
    const remoteRoots = remoteRootNames(this.remote);
    const roots = new Map<Operation, string>();
    for (const operation of OPERATIONS) {
      let name: string | undefined;
      if (definitions.schemaRoots) {
        name = definitions.schemaRoots.get(operation);
      } else {
        // Without a schema block, a remote with no root for an operation may well have an ordinary
        // type called like that root (a billing `Subscription`): the role's type is that one.
        const defaultName = DEFAULT_ROOT_NAMES[operation];
        const remoteName = remoteRoots.get(operation);
        if (remoteName === undefined) continue;
        if (definitions.types.has(defaultName)) name = defaultName;
        else if (definitions.types.has(remoteName)) name = remoteName;
      }
      if (name === undefined) continue;
      roots.set(operation, name);
      if (!definitions.types.has(name)) {
        this.reasons.add(`the ${operation} root "${name}" is not defined in the schema`);
      }
      const remoteName = remoteRoots.get(operation);
      if (remoteName === undefined) {
        this.reasons.add(`the upstream remote schema has no ${operation} root, but "${name}" is given as one`);
        continue;
      }
      const earlier = this.toRemoteName.get(name);
      if (earlier !== undefined && earlier !== remoteName) {
        this.reasons.add(`"${name}" is given as the root of more than one operation, but the upstream remote schema has different roots for them`);
        continue;
      }
      this.toRemoteName.set(name, remoteName);
    }
    if (!roots.has('query')) this.reasons.add('query root does not exist in the schema definition');
    return roots;
  }

  /** A remote root can only be granted as the role's root of that operation. */
  private checkRootName(type: RoleType, roots: Map<Operation, string>): void {
    const remoteName = this.remoteName(type.name);
    const operations = [...remoteRootNames(this.remote)].filter(([, rootName]) => rootName === remoteName).map(([operation]) => operation);
    const [operation] = operations;
    if (operation && !operations.some((candidate) => roots.get(candidate) === type.name)) {
      this.reasons.add(`"${type.name}" is the ${operation} root of the upstream remote schema, so it can only be given as the ${operation} root`);
    }
  }

  private remoteName(roleName: string): string {
    return this.toRemoteName.get(roleName) ?? roleName;
  }

  // ---- the role's SDL on its own -------------------------------------------------------------

  private checkCoherence(type: RoleType, types: Map<string, RoleType>): void {
    const where = `the "${KIND_LABELS[type.kind]}": "${type.name}"`;
    const reference = (node: TypeNode, place: string) => {
      const name = namedTypeOf(node);
      if (BUILT_IN_SCALARS.has(name)) this.usedBuiltInScalars.add(name);
      else if (!types.has(name)) this.reasons.add(`type "${name}" used by ${place} is not defined in the schema`);
    };
    for (const field of type.fields) {
      reference(field.type, `the field "${field.name.value}" of ${where}`);
      for (const arg of field.arguments ?? []) {
        reference(arg.type, `the argument "${arg.name.value}" of the field "${field.name.value}" of ${where}`);
      }
    }
    for (const field of type.inputFields) reference(field.type, `the field "${field.name.value}" of ${where}`);
    for (const member of type.members) reference(member, where);
    for (const iface of type.interfaces) reference(iface, where);

    // graphql-js would refuse to build the role's schema with an empty type.
    const parts = {
      object: ['fields', type.fields],
      interface: ['fields', type.fields],
      input: ['fields', type.inputFields],
      enum: ['values', type.values],
      union: ['member types', type.members],
      scalar: undefined,
    } as const;
    const part = parts[type.kind];
    if (part && part[1].length === 0) this.reasons.add(`${where} must define one or more ${part[0]}`);

    this.checkImplementations(type, types);
  }

  /** What GraphQL asks of a type that implements an interface, within the role's SDL. */
  private checkImplementations(type: RoleType, types: Map<string, RoleType>): void {
    const label = type.kind === 'object' ? 'object' : 'interface';
    const declared = new Set(type.interfaces.map((node) => node.name.value));
    for (const name of declared) {
      const iface = types.get(name);
      if (!iface || iface.kind !== 'interface') continue;
      for (const inherited of iface.interfaces) {
        const transitive = inherited.name.value;
        if (transitive !== type.name && !declared.has(transitive)) {
          this.reasons.add(`${label} "${type.name}" must also implement "${transitive}", which its interface "${name}" implements`);
        }
      }
      const fields = new Map(type.fields.map((field) => [field.name.value, field]));
      for (const expected of iface.fields) {
        const field = fields.get(expected.name.value);
        if (!field) {
          this.reasons.add(`${label} "${type.name}" does not have the field "${expected.name.value}" of its interface "${name}"`);
          continue;
        }
        const args = new Set((field.arguments ?? []).map((arg) => arg.name.value));
        for (const arg of expected.arguments ?? []) {
          if (!args.has(arg.name.value)) {
            this.reasons.add(
              `the field "${field.name.value}" of the ${label} "${type.name}" does not have the argument "${arg.name.value}" of its interface "${name}"`,
            );
          }
        }
      }
    }
  }

  // ---- the role's SDL against the remote -----------------------------------------------------

  private checkType(type: RoleType): TypeGrant | undefined {
    for (const directive of type.directives) this.misplacedPreset(directive, `the "${KIND_LABELS[type.kind]}": "${type.name}"`);
    if (type.kind === 'scalar' && BUILT_IN_SCALARS.has(type.name)) return undefined;

    const upstream = type.name.startsWith('__') ? undefined : this.remote.getType(this.remoteName(type.name));
    if (!upstream || kindOf(upstream) !== type.kind) {
      this.reasons.add(`"${KIND_LABELS[type.kind]}": "${type.name}" does not exist in the upstream remote schema`);
      this.checkPresetsOnly(type);
      return undefined;
    }
    const label = KIND_LABELS[type.kind];
    this.checkDuplicates(type);

    if ((isObjectType(upstream) || isInterfaceType(upstream)) && (type.kind === 'object' || type.kind === 'interface')) {
      const upstreamFields = upstream.getFields();
      const fields = new Map<string, FieldGrant>();
      for (const field of type.fields) {
        const name = field.name.value;
        const where = `the field "${name}" of the "${label}": "${type.name}"`;
        for (const directive of field.directives ?? []) this.misplacedPreset(directive, where);
        const owner: InputValueOwner = { kind: 'field', field: name, parentLabel: label, parent: type.name };
        const upstreamField = upstreamFields[name];
        if (!upstreamField) {
          this.reasons.add(`field "${name}" does not exist in the "${label}": "${type.name}"`);
          this.checkInputValues(owner, field.arguments ?? [], undefined);
          continue;
        }
        if (!this.sameTypeReference(field.type, upstreamField.type)) {
          this.reasons.add(
            `expected type of "${name}"("${label} field") to be ${String(upstreamField.type)} but received ${print(field.type)}`,
          );
        }
        fields.set(name, { args: this.checkInputValues(owner, field.arguments ?? [], upstreamField.args) });
      }
      const upstreamInterfaces = new Set(upstream.getInterfaces().map((iface) => iface.name));
      const interfaces = type.interfaces.map((node) => this.remoteName(node.name.value));
      const foreign = unique(interfaces.filter((name) => !upstreamInterfaces.has(name)));
      if (foreign.length > 0) {
        this.reasons.add(
          `${type.kind} "${type.name}" is trying to implement the following interfaces that do not exist in the corresponding upstream remote ${type.kind}: ${englishList(foreign)}`,
        );
      }
      return { kind: type.kind, fields, interfaces: unique(interfaces) };
    }

    if (isInputObjectType(upstream)) {
      const fields = this.checkInputValues({ kind: 'input', parent: type.name }, type.inputFields, Object.values(upstream.getFields()));
      return { kind: 'input', fields };
    }

    if (isEnumType(upstream)) {
      const values = new Set<string>();
      const foreign: string[] = [];
      for (const value of type.values) {
        for (const directive of value.directives ?? []) {
          this.misplacedPreset(directive, `the enum value "${value.name.value}" of the "Enum": "${type.name}"`);
        }
        if (upstream.getValue(value.name.value)) values.add(value.name.value);
        else foreign.push(value.name.value);
      }
      if (foreign.length > 0) {
        this.reasons.add(
          `enum "${type.name}" contains the following enum values that do not exist in the corresponding upstream remote enum: ${englishList(unique(foreign))}`,
        );
      }
      return { kind: 'enum', values };
    }

    if (isUnionType(upstream)) {
      const upstreamMembers = new Set(upstream.getTypes().map((member) => member.name));
      const members = unique(type.members.map((node) => this.remoteName(node.name.value)));
      const foreign = members.filter((name) => !upstreamMembers.has(name));
      if (foreign.length > 0) {
        this.reasons.add(
          `union "${type.name}" contains members which do not exist in the members of the remote schema union: ${englishList(foreign)}`,
        );
      }
      return { kind: 'union', members };
    }

    return { kind: 'scalar' };
  }

  private checkDuplicates(type: RoleType): void {
    const where = `the "${KIND_LABELS[type.kind]}": "${type.name}"`;
    const report = (what: string, names: readonly string[], place: string) => {
      const repeated = repeatedNames(names);
      if (repeated.length > 0) this.reasons.add(`duplicate ${what} ${englishList(repeated)} found in ${place}`);
    };
    report('fields', type.fields.map((field) => field.name.value), where);
    report('fields', type.inputFields.map((field) => field.name.value), where);
    report('enum values', type.values.map((value) => value.name.value), where);
    report('members', type.members.map((member) => member.name.value), where);
    report('interfaces', type.interfaces.map((iface) => iface.name.value), where);
    for (const field of type.fields) {
      report('arguments', (field.arguments ?? []).map((arg) => arg.name.value), `the field "${field.name.value}" of ${where}`);
    }
  }

  /** A type the remote does not have is not compared, but its presets are still looked at. */
  private checkPresetsOnly(type: RoleType): void {
    const label = KIND_LABELS[type.kind];
    for (const field of type.fields) {
      for (const directive of field.directives ?? []) {
        this.misplacedPreset(directive, `the field "${field.name.value}" of the "${label}": "${type.name}"`);
      }
      this.checkInputValues({ kind: 'field', field: field.name.value, parentLabel: label, parent: type.name }, field.arguments ?? [], undefined);
    }
    this.checkInputValues({ kind: 'input', parent: type.name }, type.inputFields, undefined);
    for (const value of type.values) {
      for (const directive of value.directives ?? []) {
        this.misplacedPreset(directive, `the enum value "${value.name.value}" of the "${label}": "${type.name}"`);
      }
    }
  }

  /**
   * Arguments of a field or fields of an input object: each listed one exists upstream with the
   * same type and an equal default (if one is written); every required upstream one is listed.
   * `upstream` is undefined when the owner itself does not exist upstream.
   */
  private checkInputValues(
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
        this.reasons.add(owner.kind === 'field'
          ? `argument "${name}" does not exist in the field "${owner.field}" of the "${owner.parentLabel}": "${owner.parent}"`
          : `field "${name}" does not exist in the "Input object": "${owner.parent}"`);
      } else if (upstreamValue && !this.sameTypeReference(value.type, upstreamValue.type)) {
        const label = owner.kind === 'field' ? 'argument' : 'Input object argument';
        this.reasons.add(`expected type of "${name}"("${label}") to be ${String(upstreamValue.type)} but received ${print(value.type)}`);
      } else if (upstreamValue) {
        target = upstreamValue.type;
        if (value.defaultValue) this.checkDefaultValue(owner, name, value.defaultValue, upstreamValue);
      }
      const preset = this.checkPreset(value.directives ?? [], place, target);
      grants.set(name, preset ? { preset } : {});
    }

    if (upstream) {
      const missing = upstream
        .filter((value) => isNonNullType(value.type) && value.defaultValue === undefined && !grants.has(value.name))
        .map((value) => value.name);
      if (missing.length > 0) {
        this.reasons.add(owner.kind === 'field'
          ? `field: "${owner.field}" expects the following non nullable arguments to be present: ${englishList(missing)}`
          : `input object: "${owner.parent}" expects the following non nullable fields to be present: ${englishList(missing)}`);
      }
    }
    return grants;
  }

  private checkDefaultValue(owner: InputValueOwner, name: string, written: ConstValueNode, upstream: UpstreamInputValue): void {
    const value = valueFromAST(written, upstream.type);
    if (value !== undefined && upstream.defaultValue !== undefined && sameValue(value, upstream.defaultValue)) return;
    const expected = upstream.defaultValue === undefined ? 'none' : printValue(upstream.defaultValue, upstream.type);
    const what = owner.kind === 'field'
      ? `argument: "${name}" of field "${owner.field}"`
      : `input value: "${name}" of input object "${owner.parent}"`;
    this.reasons.add(`expected default value of ${what} to be ${expected} but received ${print(written)}`);
  }

  /**
   * The preset of an argument or input field, if it has a well-formed one. `target` is the
   * remote's type for it, undefined when it does not match (the value is then not checked).
   */
  private checkPreset(directives: readonly ConstDirectiveNode[], place: string, target: GraphQLInputType | undefined): Preset | undefined {
    const presets = directives.filter((directive) => directive.name.value === 'preset');
    if (presets.length === 0) return undefined;
    if (presets.length > 1) {
      this.reasons.add(`found multiple preset directives at ${place}`);
      return undefined;
    }
    const args = presets[0]?.arguments ?? [];
    let value: ConstValueNode | undefined;
    let isStatic = false;
    let wellFormed = true;
    for (const arg of args) {
      const argName = arg.name.value;
      if (args.filter((other) => other.name.value === argName).length > 1) {
        this.reasons.add(`preset argument "${argName}" is given more than once at ${place}`);
        wellFormed = false;
      } else if (argName === 'value') {
        value = arg.value;
      } else if (argName === 'static') {
        if (arg.value.kind === Kind.BOOLEAN) isStatic = arg.value.value;
        else {
          this.reasons.add(`expected preset static value to be a Boolean value at ${place}`);
          wellFormed = false;
        }
      } else {
        this.reasons.add(`unknown preset argument "${argName}" at ${place}`);
        wellFormed = false;
      }
    }
    if (!value) {
      if (!args.some((arg) => arg.name.value === 'value')) this.reasons.add(`preset argument "value" not found at ${place}`);
      return undefined;
    }
    const fromSession = value.kind === Kind.STRING && !isStatic && value.value.toLowerCase().startsWith(this.prefix);
    if (!fromSession && target) {
      const problem = literalProblem(value, target);
      if (problem) {
        this.reasons.add(`preset value ${print(value)} at ${place} is invalid: ${problem}`);
        wellFormed = false;
      }
    }
    if (!wellFormed) return undefined;
    this.hasPresets = true;
    return { value, static: isStatic };
  }

  private misplacedPreset(directive: ConstDirectiveNode, place: string): void {
    if (directive.name.value !== 'preset') return;
    this.reasons.add(`Preset directives can be defined only on INPUT_FIELD_DEFINITION or ARGUMENT_DEFINITION, but one is on ${place}`);
  }

  /** Same list and non-null wrapping and the same named type (in the remote's names). */
  private sameTypeReference(node: TypeNode, type: GraphQLType): boolean {
    if (node.kind === Kind.NON_NULL_TYPE) return isNonNullType(type) && this.sameTypeReference(node.type, type.ofType);
    if (isNonNullType(type)) return false;
    if (node.kind === Kind.LIST_TYPE) return isListType(type) && this.sameTypeReference(node.type, type.ofType);
    if (isListType(type)) return false;
    return this.remoteName(node.name.value) === type.name;
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

function remoteRootNames(schema: GraphQLSchema): Map<Operation, string> {
  const roots = new Map<Operation, string>();
  const query = schema.getQueryType();
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  if (query) roots.set('query', query.name);
  if (mutation) roots.set('mutation', mutation.name);
  if (subscription) roots.set('subscription', subscription.name);
  return roots;
}

function typeKindOf(definition: DefinitionNode): RoleTypeKind | undefined {
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION:
      return 'object';
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION:
      return 'interface';
    case Kind.UNION_TYPE_DEFINITION:
    case Kind.UNION_TYPE_EXTENSION:
      return 'union';
    case Kind.ENUM_TYPE_DEFINITION:
    case Kind.ENUM_TYPE_EXTENSION:
      return 'enum';
    case Kind.INPUT_OBJECT_TYPE_DEFINITION:
    case Kind.INPUT_OBJECT_TYPE_EXTENSION:
      return 'input';
    case Kind.SCALAR_TYPE_DEFINITION:
    case Kind.SCALAR_TYPE_EXTENSION:
      return 'scalar';
    default:
      return undefined;
  }
}

function isExtension(definition: DefinitionNode): boolean {
  return definition.kind.endsWith('Extension');
}

function kindOf(type: GraphQLNamedType): RoleTypeKind {
  if (isObjectType(type)) return 'object';
  if (isInterfaceType(type)) return 'interface';
  if (isUnionType(type)) return 'union';
  if (isEnumType(type)) return 'enum';
  if (isInputObjectType(type)) return 'input';
  if (isScalarType(type)) return 'scalar';
  throw new TypeError(`unexpected GraphQL type ${String(type)}`);
}

function emptyRoleType(name: string, kind: RoleTypeKind): RoleType {
  return { name, kind, directives: [], fields: [], interfaces: [], members: [], values: [], inputFields: [] };
}

function mergeInto(type: RoleType | undefined, kind: RoleTypeKind, definition: DefinitionNode): void {
  if (!type || type.kind !== kind) return;
  const node = definition as Partial<{
    directives: readonly ConstDirectiveNode[];
    fields: readonly (FieldDefinitionNode | InputValueDefinitionNode)[];
    interfaces: readonly NamedTypeNode[];
    types: readonly NamedTypeNode[];
    values: readonly EnumValueDefinitionNode[];
  }>;
  type.directives.push(...(node.directives ?? []));
  if (kind === 'input') type.inputFields.push(...((node.fields ?? []) as readonly InputValueDefinitionNode[]));
  else type.fields.push(...((node.fields ?? []) as readonly FieldDefinitionNode[]));
  type.interfaces.push(...(node.interfaces ?? []));
  type.members.push(...(node.types ?? []));
  type.values.push(...(node.values ?? []));
}

function namedTypeOf(node: TypeNode): string {
  return node.kind === Kind.NAMED_TYPE ? node.name.value : namedTypeOf(node.type);
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

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

function repeatedNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of names) (seen.has(name) ? repeated : seen).add(name);
  return [...repeated];
}

/** `"a"`, `"a" and "b"`, `"a", "b", and "c"`. */
function englishList(names: Iterable<string>): string {
  const quoted = [...names].map((name) => `"${name}"`);
  if (quoted.length <= 2) return quoted.join(' and ');
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1) ?? ''}`;
}
