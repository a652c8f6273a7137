import {
  Kind,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  isUnionType,
  parse,
  parseConstValue,
  print,
  valueFromAST,
  type ConstDirectiveNode,
  type ConstValueNode,
  type DefinitionNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLInputType,
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

function isSessionVariable(value: string): boolean {
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
export type InputValuePath = { type: string; field: string; arg?: string };

function clone(selection: RoleSelection): RoleSelection {
  return structuredClone(selection);
}

function isRequired(value: GraphQLArgument | GraphQLInputField): boolean {
  return isNonNullType(value.type) && value.defaultValue === undefined;
}

/** Whether an argument or input field must be listed whenever its field or type is (non-null, no default). */
export function isRequiredInputValue(value: GraphQLArgument | GraphQLInputField): boolean {
  return isRequired(value);
}

/**
 * Adds a type the selection refers to. `whole` selects everything in it (a type the user ticks);
 * otherwise an object or interface comes with no field (the user picks them), an enum with all its
 * values, an input type with all its fields, a union with the members already selected.
 */
function include(selection: RoleSelection, remote: GraphQLSchema, name: string, whole: boolean): void {
  if (selection.types.has(name)) return;
  const type = remote.getType(name);
  if (!type || isSpecifiedScalarType(type) || name.startsWith('__')) return;
  if (isObjectType(type) || isInterfaceType(type)) {
    const interfaces = new Set(type.getInterfaces().map((i) => i.name).filter((i) => selection.types.has(i)));
    const fields = new Map<string, FieldSelection>();
    selection.types.set(name, { kind: isObjectType(type) ? 'object' : 'interface', fields, interfaces });
    if (isInterfaceType(type)) {
      for (const implementation of remote.getPossibleTypes(type)) {
        const selected = selection.types.get(implementation.name);
        if (selected?.kind === 'object' || selected?.kind === 'interface') selected.interfaces.add(name);
      }
      for (const other of Object.values(remote.getTypeMap())) {
        if (isInterfaceType(other) && other.getInterfaces().includes(type)) {
          const selected = selection.types.get(other.name);
          if (selected?.kind === 'interface') selected.interfaces.add(name);
        }
      }
    }
    // A union the role has gets the object types the role is given.
    if (isObjectType(type)) {
      for (const [unionName, union] of selection.types) {
        if (union.kind !== 'union') continue;
        const upstream = remote.getType(unionName);
        if (isUnionType(upstream) && upstream.getTypes().includes(type)) union.members.add(name);
      }
    }
    if (whole) for (const field of Object.values(type.getFields())) addField(selection, remote, type.name, field.name);
    // An implementation must have its interfaces' fields.
    for (const iface of type.getInterfaces()) {
      const selectedInterface = selection.types.get(iface.name);
      if (selectedInterface?.kind !== 'interface') continue;
      for (const [fieldName, field] of selectedInterface.fields) {
        if (!fields.has(fieldName)) addField(selection, remote, name, fieldName, [...field.args.keys()]);
      }
    }
  } else if (isInputObjectType(type)) {
    const fields = new Map<string, InputValueSelection>();
    selection.types.set(name, { kind: 'input', fields });
    for (const field of Object.values(type.getFields())) {
      fields.set(field.name, {});
      include(selection, remote, getNamedType(field.type).name, false);
    }
  } else if (isEnumType(type)) {
    selection.types.set(name, { kind: 'enum', values: new Set(type.getValues().map((v) => v.name)) });
  } else if (isUnionType(type)) {
    const members = new Set(type.getTypes().map((t) => t.name).filter((member) => whole || selection.types.has(member)));
    selection.types.set(name, { kind: 'union', members });
    for (const member of members) include(selection, remote, member, false);
  } else {
    selection.types.set(name, { kind: 'scalar' });
  }
}

/** Adds a field with its arguments (all of them, or `only` and the required ones), and the types they use. */
function addField(selection: RoleSelection, remote: GraphQLSchema, typeName: string, fieldName: string, only?: readonly string[]): void {
  include(selection, remote, typeName, false);
  const type = remote.getType(typeName);
  const selected = selection.types.get(typeName);
  if (!(isObjectType(type) || isInterfaceType(type)) || !(selected?.kind === 'object' || selected?.kind === 'interface')) return;
  const field = type.getFields()[fieldName];
  if (!field) return;
  let chosen = selected.fields.get(fieldName);
  if (!chosen) {
    chosen = { args: new Map() };
    selected.fields.set(fieldName, chosen);
  }
  for (const arg of field.args) {
    if (only !== undefined && !only.includes(arg.name) && !isRequired(arg)) continue;
    if (!chosen.args.has(arg.name)) chosen.args.set(arg.name, {});
    include(selection, remote, getNamedType(arg.type).name, false);
  }
  include(selection, remote, getNamedType(field.type).name, false);
  if (selected.kind === 'interface') {
    for (const [otherName, other] of selection.types) {
      if ((other.kind === 'object' || other.kind === 'interface') && other.interfaces.has(typeName) && !other.fields.has(fieldName)) {
        addField(selection, remote, otherName, fieldName, [...chosen.args.keys()]);
      }
    }
  }
}

/** Ticks or unticks a whole type (ticking selects every field, value, member or input field). */
export function withType(selection: RoleSelection, remote: GraphQLSchema, typeName: string, on: boolean): RoleSelection {
  const next = clone(selection);
  if (on) include(next, remote, typeName, true);
  else next.types.delete(typeName);
  return next;
}

/** Selects everything in a type that is already selected (or the type with everything). */
export function withWholeType(selection: RoleSelection, remote: GraphQLSchema, typeName: string): RoleSelection {
  const next = clone(selection);
  next.types.delete(typeName);
  include(next, remote, typeName, true);
  const before = selection.types.get(typeName);
  const after = next.types.get(typeName);
  // Presets already set stay.
  if (before && after && (before.kind === 'object' || before.kind === 'interface') && (after.kind === 'object' || after.kind === 'interface')) {
    for (const [name, field] of before.fields) {
      const target = after.fields.get(name);
      if (!target) continue;
      for (const [arg, value] of field.args) if (value.preset) target.args.set(arg, { preset: value.preset });
    }
  }
  if (before?.kind === 'input' && after?.kind === 'input') {
    for (const [name, value] of before.fields) if (value.preset) after.fields.set(name, { preset: value.preset });
  }
  return next;
}

export function withField(selection: RoleSelection, remote: GraphQLSchema, typeName: string, fieldName: string, on: boolean): RoleSelection {
  const next = clone(selection);
  if (on) {
    addField(next, remote, typeName, fieldName);
  } else {
    const selected = next.types.get(typeName);
    if (selected?.kind === 'object' || selected?.kind === 'interface' || selected?.kind === 'input') selected.fields.delete(fieldName);
  }
  return next;
}

export function withArgument(
  selection: RoleSelection,
  remote: GraphQLSchema,
  typeName: string,
  fieldName: string,
  argName: string,
  on: boolean,
): RoleSelection {
  const type = remote.getType(typeName);
  const arg = isObjectType(type) || isInterfaceType(type) ? type.getFields()[fieldName]?.args.find((a) => a.name === argName) : undefined;
  if (!arg || (!on && isRequired(arg))) return selection;
  const next = clone(selection);
  if (on) addField(next, remote, typeName, fieldName, []);
  const selected = next.types.get(typeName);
  if (!(selected?.kind === 'object' || selected?.kind === 'interface')) return next;
  const field = selected.fields.get(fieldName);
  if (!field) return next;
  if (on) {
    if (!field.args.has(argName)) field.args.set(argName, {});
    include(next, remote, getNamedType(arg.type).name, false);
    if (selected.kind === 'interface') {
      for (const other of next.types.values()) {
        if ((other.kind === 'object' || other.kind === 'interface') && other.interfaces.has(typeName)) {
          const otherField = other.fields.get(fieldName);
          if (otherField && !otherField.args.has(argName)) otherField.args.set(argName, {});
        }
      }
    }
  } else {
    field.args.delete(argName);
  }
  return next;
}

/** Ticks a field of an input type (with the types it uses) or unticks it. */
export function withInputField(selection: RoleSelection, remote: GraphQLSchema, typeName: string, fieldName: string, on: boolean): RoleSelection {
  const type = remote.getType(typeName);
  const field = isInputObjectType(type) ? type.getFields()[fieldName] : undefined;
  if (!field || (!on && isRequired(field))) return selection;
  const next = clone(selection);
  include(next, remote, typeName, false);
  const selected = next.types.get(typeName);
  if (selected?.kind !== 'input') return next;
  if (on) {
    if (!selected.fields.has(fieldName)) selected.fields.set(fieldName, {});
    include(next, remote, getNamedType(field.type).name, false);
  } else {
    selected.fields.delete(fieldName);
  }
  return next;
}

export function withEnumValue(selection: RoleSelection, remote: GraphQLSchema, typeName: string, value: string, on: boolean): RoleSelection {
  const next = clone(selection);
  if (on) include(next, remote, typeName, false);
  const selected = next.types.get(typeName);
  if (selected?.kind !== 'enum') return next;
  if (on) selected.values.add(value);
  else selected.values.delete(value);
  return next;
}

export function withUnionMember(selection: RoleSelection, remote: GraphQLSchema, typeName: string, member: string, on: boolean): RoleSelection {
  const next = clone(selection);
  if (on) include(next, remote, typeName, false);
  const selected = next.types.get(typeName);
  if (selected?.kind !== 'union') return next;
  if (on) {
    selected.members.add(member);
    include(next, remote, member, false);
  } else {
    selected.members.delete(member);
  }
  return next;
}

/** Whether `typeName` declares that it implements `iface` in the permission (both must be selected to be written). */
export function withInterface(selection: RoleSelection, remote: GraphQLSchema, typeName: string, iface: string, on: boolean): RoleSelection {
  const next = clone(selection);
  const selected = next.types.get(typeName);
  if (!(selected?.kind === 'object' || selected?.kind === 'interface')) return next;
  if (on) {
    selected.interfaces.add(iface);
    include(next, remote, iface, false);
    const selectedInterface = next.types.get(iface);
    if (selectedInterface?.kind === 'interface') {
      for (const [fieldName, field] of selectedInterface.fields) {
        if (!selected.fields.has(fieldName)) addField(next, remote, typeName, fieldName, [...field.args.keys()]);
      }
    }
  } else {
    selected.interfaces.delete(iface);
  }
  return next;
}

/** Sets (or with `undefined` removes) the preset of an argument or input field, selecting it if needed. */
export function withPreset(selection: RoleSelection, remote: GraphQLSchema, path: InputValuePath, preset: Preset | undefined): RoleSelection {
  let next = path.arg === undefined ? withInputField(selection, remote, path.type, path.field, true) : withArgument(selection, remote, path.type, path.field, path.arg, true);
  if (next === selection) next = clone(selection);
  const target = inputValueOf(next, path);
  if (!target) return next;
  if (preset) target.preset = preset;
  else delete target.preset;
  return next;
}

/** The selected argument or input field at `path`, if it is selected. */
export function inputValueOf(selection: RoleSelection, path: InputValuePath): InputValueSelection | undefined {
  const selected = selection.types.get(path.type);
  if (path.arg === undefined) return selected?.kind === 'input' ? selected.fields.get(path.field) : undefined;
  return selected?.kind === 'object' || selected?.kind === 'interface' ? selected.fields.get(path.field)?.args.get(path.arg) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Reading a selection

export type Coverage = 'full' | 'partial' | 'none';

/** How much of a remote type the selection grants: all of it, part of it, or nothing. */
export function coverage(selection: RoleSelection, type: GraphQLNamedType): Coverage {
  const selected = selection.types.get(type.name);
  if (!selected) return 'none';
  if ((isObjectType(type) || isInterfaceType(type)) && (selected.kind === 'object' || selected.kind === 'interface')) {
    const fields = Object.values(type.getFields());
    const all = fields.every((field) => {
      const chosen = selected.fields.get(field.name);
      return chosen !== undefined && field.args.every((arg) => chosen.args.has(arg.name) && !chosen.args.get(arg.name)?.preset);
    });
    return all ? 'full' : selected.fields.size === 0 ? 'none' : 'partial';
  }
  if (isInputObjectType(type) && selected.kind === 'input') {
    const all = Object.values(type.getFields()).every((field) => selected.fields.has(field.name) && !selected.fields.get(field.name)?.preset);
    return all ? 'full' : 'partial';
  }
  if (isEnumType(type) && selected.kind === 'enum') return type.getValues().every((v) => selected.values.has(v.name)) ? 'full' : 'partial';
  if (isUnionType(type) && selected.kind === 'union') return type.getTypes().every((t) => selected.members.has(t.name)) ? 'full' : 'partial';
  return 'full';
}

/** Node keys of the tree: `Type`, `Type.field`, `Type.field(arg)`; `''` is the permission as a whole. */
export function nodeKey(type?: string, field?: string, arg?: string): string {
  if (type === undefined) return '';
  if (field === undefined) return type;
  return arg === undefined ? `${type}.${field}` : `${type}.${field}(${arg})`;
}

/** Why a preset's literal is not a value of the argument's or input field's type, if it is not. */
export function literalProblem(text: string, type: GraphQLInputType): string | undefined {
  let node: ConstValueNode;
  try {
    node = parseConstValue(text);
  } catch (error) {
    return `not a GraphQL value: ${(error as Error).message.replace(/^Syntax Error: /, '')}`;
  }
  if (node.kind === Kind.NULL) return isNonNullType(type) ? `null is not a value of ${String(type)}` : undefined;
  return valueFromAST(node, type) === undefined ? `not a value of ${String(type)}` : undefined;
}

/**
 * What the server will refuse in this selection, found before saving, by tree node: a type used
 * but not selected, a type with nothing selected, a required argument or input field left out, an
 * interface's field missing in a type that implements it, a literal preset of the wrong type, no
 * query root. The server's own validation is still the judge; this only points at the spot.
 */
export function selectionProblems(selection: RoleSelection, remote: GraphQLSchema): Map<string, string[]> {
  const problems = new Map<string, string[]>();
  const add = (key: string, message: string) => {
    const list = problems.get(key) ?? [];
    list.push(message);
    problems.set(key, list);
  };
  const usable = (name: string) => {
    const type = remote.getType(name);
    return (type !== undefined && type !== null && isSpecifiedScalarType(type)) || selection.types.has(name);
  };
  const checkInputValue = (value: GraphQLArgument | GraphQLInputField, chosen: InputValueSelection, key: string) => {
    const named = getNamedType(value.type).name;
    if (!usable(named)) add(key, `uses the type "${named}", which is not selected`);
    if (chosen.preset?.kind === 'literal') {
      const problem = literalProblem(chosen.preset.value, value.type);
      if (problem) add(key, `the preset is ${problem}`);
    }
    if (chosen.preset?.kind === 'session' && !isSessionVariable(chosen.preset.variable)) {
      add(key, `a session variable's name starts with "${SESSION_VARIABLE_PREFIX}"`);
    }
  };
  if (selection.types.size > 0 && !(remote.getQueryType() && selection.types.has(remote.getQueryType()?.name ?? ''))) {
    add('', 'a permission needs its query root: select at least one query field');
  }
  for (const [name, selected] of selection.types) {
    const type = remote.getType(name);
    if (!type) continue;
    if ((isObjectType(type) || isInterfaceType(type)) && (selected.kind === 'object' || selected.kind === 'interface')) {
      if (selected.fields.size === 0) add(name, 'select at least one field');
      for (const [fieldName, chosen] of selected.fields) {
        const field = type.getFields()[fieldName];
        if (!field) continue;
        const fieldType = getNamedType(field.type).name;
        if (!usable(fieldType)) add(nodeKey(name, fieldName), `its type "${fieldType}" is not selected`);
        for (const arg of field.args) {
          const chosenArg = chosen.args.get(arg.name);
          if (!chosenArg) {
            if (isRequired(arg)) add(nodeKey(name, fieldName, arg.name), 'a required argument must be kept (give it a preset to hide it)');
            continue;
          }
          checkInputValue(arg, chosenArg, nodeKey(name, fieldName, arg.name));
        }
      }
      for (const iface of selected.interfaces) {
        const selectedInterface = selection.types.get(iface);
        if (selectedInterface?.kind !== 'interface') continue;
        for (const [fieldName, interfaceField] of selectedInterface.fields) {
          const own = selected.fields.get(fieldName);
          if (!own) {
            add(name, `must have the field "${fieldName}" of its interface "${iface}"`);
            continue;
          }
          for (const arg of interfaceField.args.keys()) {
            if (!own.args.has(arg)) add(nodeKey(name, fieldName), `must have the argument "${arg}" of its interface "${iface}"`);
          }
        }
        for (const inherited of selectedInterface.interfaces) {
          if (selection.types.has(inherited) && !selected.interfaces.has(inherited)) {
            add(name, `must also implement "${inherited}", which its interface "${iface}" implements`);
          }
        }
      }
    } else if (isInputObjectType(type) && selected.kind === 'input') {
      if (selected.fields.size === 0) add(name, 'select at least one field');
      for (const field of Object.values(type.getFields())) {
        const chosen = selected.fields.get(field.name);
        if (!chosen) {
          if (isRequired(field)) add(nodeKey(name, field.name), 'a required field must be kept (give it a preset to hide it)');
          continue;
        }
        checkInputValue(field, chosen, nodeKey(name, field.name));
      }
    } else if (isEnumType(type) && selected.kind === 'enum') {
      if (selected.values.size === 0) add(name, 'select at least one value');
    } else if (isUnionType(type) && selected.kind === 'union') {
      const members = [...selected.members].filter((member) => selection.types.has(member));
      if (members.length === 0) add(name, 'select at least one member type');
    }
  }
  return problems;
}
