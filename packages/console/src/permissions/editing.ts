import {
  Kind,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isSpecifiedScalarType,
  isUnionType,
  parseConstValue,
  valueFromAST,
  type ConstValueNode,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { type FieldSelection, type InputValueSelection, type Preset, type RoleSelection, SESSION_VARIABLE_PREFIX, isSessionVariable } from './model.js';

/** Changes to a role's selection (each answers a new one, with what the change needs included) and its checks. */
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
