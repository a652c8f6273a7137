import {
  Kind,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  isUnionType,
  parse,
  parseConstValue,
  print,
  type ConstDirectiveNode,
  type ConstValueNode,
  type DefinitionNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type InputValueDefinitionNode,
} from 'graphql';

/**
 * A role's permission on one remote schema, as the console edits it: which types, fields,
 * arguments, input fields, enum values and union members of the remote the role may use, in the
 * remote's own names, and the presets of arguments and input fields. It is printed as the SDL with
 * `@preset` that `add_remote_schema_permissions` takes ({@link toSdl}), and read back from it
 * ({@link fromSdl}).
 */
export interface RoleSelection {
  readonly types: Map<string, TypeSelection>;
}

export type TypeSelection =
  | { kind: 'object' | 'interface'; fields: Map<string, FieldSelection>; interfaces: Set<string> }
  | { kind: 'input'; fields: Map<string, InputValueSelection> }
  | { kind: 'enum'; values: Set<string> }
  | { kind: 'union'; members: Set<string> }
  | { kind: 'scalar' };

export interface FieldSelection {
  args: Map<string, InputValueSelection>;
}

/** An argument or input field the role's SDL lists; with a preset it is hidden from the role. */
export interface InputValueSelection {
  preset?: Preset;
}

/**
 * `@preset`: the value of a session variable (`x-svc-user-id`), or a literal written in GraphQL
 * (`OPEN`, `10`, `"text"`, `{limit: 5}`). `static` is kept only where the SDL said `static: true`
 * without needing to (a literal string that names a session variable always gets it).
 */
export type Preset = { kind: 'session'; variable: string } | { kind: 'literal'; value: string; static?: true };

export type Operation = 'query' | 'mutation' | 'subscription';
export const OPERATIONS: readonly Operation[] = ['query', 'mutation', 'subscription'];
const DEFAULT_ROOT_NAMES: Readonly<Record<Operation, string>> = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' };

/** The session variable prefix the server reads `@preset` values with (compared case-insensitively). */
export const SESSION_VARIABLE_PREFIX = 'x-svc-';

export function emptySelection(): RoleSelection {
  return { types: new Map() };
}

/** The remote's root types, by operation. */
export function remoteRoots(remote: GraphQLSchema): Partial<Record<Operation, GraphQLObjectType>> {
  const roots: Partial<Record<Operation, GraphQLObjectType>> = {};
  const query = remote.getQueryType();
  const mutation = remote.getMutationType();
  const subscription = remote.getSubscriptionType();
  if (query) roots.query = query;
  if (mutation) roots.mutation = mutation;
  if (subscription) roots.subscription = subscription;
  return roots;
}

/** The types a permission can name: the remote's own, without built-in scalars and `__` types; roots first. */
export function permissionTypes(remote: GraphQLSchema): GraphQLNamedType[] {
  const roots = Object.values(remoteRoots(remote));
  const others = Object.values(remote.getTypeMap()).filter(
    (type) => !type.name.startsWith('__') && !isSpecifiedScalarType(type) && !roots.includes(type as GraphQLObjectType),
  );
  return [...roots, ...others];
}

export function isSessionVariable(value: string): boolean {
  return value.toLowerCase().startsWith(SESSION_VARIABLE_PREFIX);
}

function isPrefixedString(node: ConstValueNode): boolean {
  return node.kind === Kind.STRING && isSessionVariable(node.value);
}

function printString(value: string): string {
  return print({ kind: Kind.STRING, value });
}

/** The `@preset(…)` directive of a preset, as SDL. */
export function presetDirective(preset: Preset): string {
  if (preset.kind === 'session') return `@preset(value: ${printString(preset.variable)})`;
  const node = parseConstValue(preset.value);
  const isStatic = preset.static === true || isPrefixedString(node);
  return `@preset(value: ${print(node)}${isStatic ? ', static: true' : ''})`;
}

// ---------------------------------------------------------------------------------------------
// SDL → selection

/** What {@link fromSdl} found: the selection, and what of the SDL it could not place in the remote. */
export interface ParsedPermission {
  selection: RoleSelection;
  /** Parts of the SDL the remote does not have, or that cannot be read; empty for a permission that fits. */
  problems: string[];
}

interface RoleTypeDefinition {
  kind: TypeSelection['kind'];
  fields: InputFieldsOrFields[];
  interfaces: string[];
  members: string[];
  values: string[];
}

type InputFieldsOrFields =
  | { kind: 'field'; name: string; args: readonly InputValueDefinitionNode[] }
  | { kind: 'input'; node: InputValueDefinitionNode };

const DEFINITION_KINDS: Partial<Record<Kind, TypeSelection['kind']>> = {
  [Kind.OBJECT_TYPE_DEFINITION]: 'object',
  [Kind.OBJECT_TYPE_EXTENSION]: 'object',
  [Kind.INTERFACE_TYPE_DEFINITION]: 'interface',
  [Kind.INTERFACE_TYPE_EXTENSION]: 'interface',
  [Kind.INPUT_OBJECT_TYPE_DEFINITION]: 'input',
  [Kind.INPUT_OBJECT_TYPE_EXTENSION]: 'input',
  [Kind.ENUM_TYPE_DEFINITION]: 'enum',
  [Kind.ENUM_TYPE_EXTENSION]: 'enum',
  [Kind.UNION_TYPE_DEFINITION]: 'union',
  [Kind.UNION_TYPE_EXTENSION]: 'union',
  [Kind.SCALAR_TYPE_DEFINITION]: 'scalar',
  [Kind.SCALAR_TYPE_EXTENSION]: 'scalar',
};

/**
 * Reads a permission's SDL against the remote's schema, the way the server reads it: `schema {}`
 * names the roots, else the role's `Query` / `Mutation` / `Subscription` (or a type called like the
 * remote's root) stand for the remote's roots; definitions and extensions of a type are merged;
 * descriptions, default values and directives other than `@preset` do not count.
 */
export function fromSdl(sdl: string, remote: GraphQLSchema): ParsedPermission {
  const selection = emptySelection();
  const problems: string[] = [];
  let definitions: readonly DefinitionNode[];
  try {
    definitions = sdl.trim() === '' ? [] : parse(sdl).definitions;
  } catch (error) {
    problems.push(`the SDL cannot be parsed: ${(error as Error).message}`);
    return { selection, problems };
  }

  const roleTypes = new Map<string, RoleTypeDefinition>();
  let schemaRoots: Map<Operation, string> | undefined;
  for (const definition of definitions) {
    // The server reads `@preset` without a declaration and ignores other directives.
    if (definition.kind === Kind.DIRECTIVE_DEFINITION) continue;
    if (definition.kind === Kind.SCHEMA_DEFINITION || definition.kind === Kind.SCHEMA_EXTENSION) {
      schemaRoots ??= new Map();
      for (const operationType of definition.operationTypes ?? []) {
        schemaRoots.set(operationType.operation as Operation, operationType.type.name.value);
      }
      continue;
    }
    const kind = DEFINITION_KINDS[definition.kind];
    if (kind === undefined || !('name' in definition) || definition.name === undefined) {
      problems.push(`a ${definition.kind} cannot be part of a permission`);
      continue;
    }
    const name = definition.name.value;
    let type = roleTypes.get(name);
    if (type === undefined) {
      type = { kind, fields: [], interfaces: [], members: [], values: [] };
      roleTypes.set(name, type);
    } else if (type.kind !== kind) {
      problems.push(`"${name}" is defined as two kinds of type`);
      continue;
    }
    if ('fields' in definition && definition.fields) {
      for (const field of definition.fields) {
        if (field.kind === Kind.FIELD_DEFINITION) type.fields.push({ kind: 'field', name: field.name.value, args: field.arguments ?? [] });
        else type.fields.push({ kind: 'input', node: field });
      }
    }
    if ('interfaces' in definition && definition.interfaces) type.interfaces.push(...definition.interfaces.map((i) => i.name.value));
    if ('types' in definition && definition.types) type.members.push(...definition.types.map((t) => t.name.value));
    if ('values' in definition && definition.values) type.values.push(...definition.values.map((v) => v.name.value));
  }

  // The role's name of each root → the remote's root.
  const roots = remoteRoots(remote);
  const rootOfRoleType = new Map<string, string>();
  for (const operation of OPERATIONS) {
    const remoteRoot = roots[operation];
    const roleName = schemaRoots
      ? schemaRoots.get(operation)
      : remoteRoot && (roleTypes.has(DEFAULT_ROOT_NAMES[operation]) ? DEFAULT_ROOT_NAMES[operation] : roleTypes.has(remoteRoot.name) ? remoteRoot.name : undefined);
    if (roleName === undefined) continue;
    if (!remoteRoot) {
      problems.push(`the remote has no ${operation} root, but "${roleName}" is given as one`);
      continue;
    }
    rootOfRoleType.set(roleName, remoteRoot.name);
  }
  const remoteRootNames = new Set(Object.values(roots).map((root) => root.name));

  for (const [roleName, definition] of roleTypes) {
    const name = rootOfRoleType.get(roleName) ?? roleName;
    if (!rootOfRoleType.has(roleName) && remoteRootNames.has(roleName)) {
      problems.push(`"${roleName}" is a root of the remote and can only be given as that root`);
      continue;
    }
    const remoteType = remote.getType(name);
    if (!remoteType || name.startsWith('__')) {
      problems.push(`type "${roleName}" does not exist in the remote`);
      continue;
    }
    if (kindOf(remoteType) !== definition.kind) {
      problems.push(`"${roleName}" is a ${kindOf(remoteType)} type in the remote, not a ${definition.kind} type`);
      continue;
    }
    if (isSpecifiedScalarType(remoteType)) continue;
    selection.types.set(name, readType(remoteType, definition, problems));
  }
  return { selection, problems };
}

function kindOf(type: GraphQLNamedType): TypeSelection['kind'] {
  if (isObjectType(type)) return 'object';
  if (isInterfaceType(type)) return 'interface';
  if (isInputObjectType(type)) return 'input';
  if (isEnumType(type)) return 'enum';
  if (isUnionType(type)) return 'union';
  return 'scalar';
}

function readType(remoteType: GraphQLNamedType, definition: RoleTypeDefinition, problems: string[]): TypeSelection {
  const name = remoteType.name;
  if (isObjectType(remoteType) || isInterfaceType(remoteType)) {
    const upstream = remoteType.getFields();
    const fields = new Map<string, FieldSelection>();
    for (const field of definition.fields) {
      if (field.kind !== 'field') continue;
      const remoteField = upstream[field.name];
      if (!remoteField) {
        problems.push(`field "${field.name}" does not exist in the type "${name}"`);
        continue;
      }
      fields.set(field.name, { args: readInputValues(field.args, remoteField.args, `the field "${name}.${field.name}"`, problems) });
    }
    const upstreamInterfaces = new Set(remoteType.getInterfaces().map((i) => i.name));
    const interfaces = new Set<string>();
    for (const iface of definition.interfaces) {
      if (upstreamInterfaces.has(iface)) interfaces.add(iface);
      else problems.push(`"${name}" does not implement "${iface}" in the remote`);
    }
    return { kind: isObjectType(remoteType) ? 'object' : 'interface', fields, interfaces };
  }
  if (isInputObjectType(remoteType)) {
    const nodes = definition.fields.flatMap((field) => (field.kind === 'input' ? [field.node] : []));
    return { kind: 'input', fields: readInputValues(nodes, Object.values(remoteType.getFields()), `the input type "${name}"`, problems) };
  }
  if (isEnumType(remoteType)) {
    const values = new Set<string>();
    for (const value of definition.values) {
      if (remoteType.getValue(value)) values.add(value);
      else problems.push(`enum value "${value}" does not exist in the enum "${name}"`);
    }
    return { kind: 'enum', values };
  }
  if (isUnionType(remoteType)) {
    const upstream = new Set(remoteType.getTypes().map((t) => t.name));
    const members = new Set<string>();
    for (const member of definition.members) {
      if (upstream.has(member)) members.add(member);
      else problems.push(`"${member}" is not a member of the union "${name}" in the remote`);
    }
    return { kind: 'union', members };
  }
  return { kind: 'scalar' };
}

function readInputValues(
  nodes: readonly InputValueDefinitionNode[],
  upstream: readonly (GraphQLArgument | GraphQLInputField)[],
  where: string,
  problems: string[],
): Map<string, InputValueSelection> {
  const values = new Map<string, InputValueSelection>();
  for (const node of nodes) {
    const name = node.name.value;
    if (!upstream.some((value) => value.name === name)) {
      problems.push(`"${name}" does not exist in ${where}`);
      continue;
    }
    const presets = (node.directives ?? []).filter((directive) => directive.name.value === 'preset');
    const preset = presets.length === 1 ? readPreset(presets[0] as ConstDirectiveNode) : undefined;
    if (presets.length > 1) problems.push(`"${name}" of ${where} has more than one @preset`);
    values.set(name, preset ? { preset } : {});
  }
  return values;
}

function readPreset(directive: ConstDirectiveNode): Preset | undefined {
  const value = directive.arguments?.find((arg) => arg.name.value === 'value')?.value;
  if (value === undefined) return undefined;
  const staticArg = directive.arguments?.find((arg) => arg.name.value === 'static')?.value;
  const isStatic = staticArg?.kind === Kind.BOOLEAN && staticArg.value;
  if (isPrefixedString(value) && !isStatic) return { kind: 'session', variable: (value as { value: string }).value };
  // `static: true` on a value that needs none is kept, so that the SDL reads back as written.
  return isStatic && !isPrefixedString(value) ? { kind: 'literal', value: print(value), static: true } : { kind: 'literal', value: print(value) };
}

// ---------------------------------------------------------------------------------------------
// selection → SDL

/**
 * The permission's SDL: the selected types with the remote's own types on every field, argument
 * and input field, `@preset` where set, roots first and the rest in the remote's order. Default
 * values are left out (the server keeps the remote's). A `schema {}` block is written when a root
 * of the remote has another name than `Query`, `Mutation` or `Subscription`.
 */
export function toSdl(selection: RoleSelection, remote: GraphQLSchema): string {
  const blocks: string[] = [];
  const roots = remoteRoots(remote);
  const selectedRoots = OPERATIONS.flatMap((operation) => {
    const root = roots[operation];
    return root && selection.types.has(root.name) ? [[operation, root.name] as const] : [];
  });
  if (selectedRoots.some(([operation, name]) => name !== DEFAULT_ROOT_NAMES[operation])) {
    blocks.push(`schema {\n${selectedRoots.map(([operation, name]) => `  ${operation}: ${name}\n`).join('')}}`);
  }
  for (const type of permissionTypes(remote)) {
    const selected = selection.types.get(type.name);
    if (selected === undefined) continue;
    const block = printType(type, selected, selection);
    if (block !== undefined) blocks.push(block);
  }
  return blocks.length === 0 ? '' : `${blocks.join('\n\n')}\n`;
}

function printType(type: GraphQLNamedType, selected: TypeSelection, selection: RoleSelection): string | undefined {
  if ((isObjectType(type) || isInterfaceType(type)) && (selected.kind === 'object' || selected.kind === 'interface')) {
    const implemented = type
      .getInterfaces()
      .map((i) => i.name)
      .filter((name) => selected.interfaces.has(name) && selection.types.has(name));
    const head = `${selected.kind === 'object' ? 'type' : 'interface'} ${type.name}${implemented.length > 0 ? ` implements ${implemented.join(' & ')}` : ''}`;
    const lines = Object.values(type.getFields()).flatMap((field) => {
      const chosen = selected.fields.get(field.name);
      return chosen ? [`  ${field.name}${printArguments(field, chosen)}: ${String(field.type)}`] : [];
    });
    return block(head, lines);
  }
  if (isInputObjectType(type) && selected.kind === 'input') {
    const lines = Object.values(type.getFields()).flatMap((field) => {
      const chosen = selected.fields.get(field.name);
      return chosen ? [`  ${printInputValue(field, chosen)}`] : [];
    });
    return block(`input ${type.name}`, lines);
  }
  if (isEnumType(type) && selected.kind === 'enum') {
    const values = type.getValues().filter((value) => selected.values.has(value.name));
    return block(`enum ${type.name}`, values.map((value) => `  ${value.name}`));
  }
  if (isUnionType(type) && selected.kind === 'union') {
    const members = type
      .getTypes()
      .map((member) => member.name)
      .filter((name) => selected.members.has(name) && selection.types.has(name));
    return `union ${type.name}${members.length > 0 ? ` = ${members.join(' | ')}` : ''}`;
  }
  if (isScalarType(type) && selected.kind === 'scalar') return `scalar ${type.name}`;
  return undefined;
}

/** A type with nothing selected is written without braces (`{}` does not parse); the server then says what it lacks. */
function block(head: string, lines: readonly string[]): string {
  return lines.length === 0 ? head : `${head} {\n${lines.join('\n')}\n}`;
}

function printArguments(field: GraphQLField<unknown, unknown>, chosen: FieldSelection): string {
  const args = field.args.flatMap((arg) => {
    const value = chosen.args.get(arg.name);
    return value ? [printInputValue(arg, value)] : [];
  });
  return args.length === 0 ? '' : `(${args.join(', ')})`;
}

function printInputValue(value: GraphQLArgument | GraphQLInputField, chosen: InputValueSelection): string {
  return `${value.name}: ${String(value.type)}${chosen.preset ? ` ${presetDirective(chosen.preset)}` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Editing: each change keeps what the server asks of a permission where it can (a field's type,
// its required arguments and their input types are selected with it; an interface's fields are
// given to the types that implement it).

/** Where a preset goes: an argument of a field, or a field of an input type. */
