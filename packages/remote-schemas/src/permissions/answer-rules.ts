import { isAbstractType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { BUILT_IN_SCALARS } from '../builtin-scalars.js';
import type { RoleGrant } from './grant.js';

/**
 * Where a role's answers from one remote can hold something outside the role's schema: the types
 * whose remote side is wider than the role's. In the remote's own names (answers are checked before
 * they are renamed for the client).
 */
export interface AnswerRules {
  /** Enum types of which the role sees fewer values than the remote has: the values it sees. */
  readonly enums: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Interfaces and unions of which the remote has runtime types the role does not see as theirs:
   * the object types the role sees as theirs.
   */
  readonly abstracts: ReadonlyMap<string, ReadonlySet<string>>;
  /** Whether any answer can need a check: `false` (a role granted whole types) skips everything. */
  readonly narrowed: boolean;
}

const rules = new WeakMap<RoleGrant, AnswerRules>();

/**
 * The answer rules of `grant` on `remote` (the remote's own schema the grant was checked against),
 * computed once per grant: linear in the size of the grant.
 */
export function answerRulesOf(grant: RoleGrant, remote: GraphQLSchema): AnswerRules {
  let found = rules.get(grant);
  if (!found) {
    found = computeRules(grant, remote);
    rules.set(grant, found);
  }
  return found;
}

function computeRules(grant: RoleGrant, remote: GraphQLSchema): AnswerRules {
  const enums = new Map<string, ReadonlySet<string>>();
  const abstracts = new Map<string, ReadonlySet<string>>();
  // The object types the role sees implementing each interface (a grant may leave an `implements` out).
  const implementations = new Map<string, Set<string>>();
  for (const [name, typeGrant] of grant.types) {
    if (typeGrant.kind !== 'object') continue;
    for (const implemented of typeGrant.interfaces) {
      let set = implementations.get(implemented);
      if (!set) implementations.set(implemented, (set = new Set()));
      set.add(name);
    }
  }
  for (const [name, typeGrant] of grant.types) {
    const type = remote.getType(name);
    if (!type) continue;
    if (typeGrant.kind === 'enum' && isEnumType(type)) {
      if (type.getValues().some((value) => !typeGrant.values.has(value.name))) enums.set(name, typeGrant.values);
    } else if ((typeGrant.kind === 'union' || typeGrant.kind === 'interface') && isAbstractType(type)) {
      const seen = typeGrant.kind === 'union' ? new Set(typeGrant.members) : (implementations.get(name) ?? new Set<string>());
      if (remote.getPossibleTypes(type).some((member) => !seen.has(member.name))) abstracts.set(name, seen);
    }
  }
  return { enums, abstracts, narrowed: enums.size > 0 || abstracts.size > 0 };
}

const hiddenNames = new WeakMap<RoleGrant, ReadonlySet<string>>();

/**
 * The names of `remote` (types, fields, arguments, input fields, enum values) that appear nowhere
 * in what `grant` shows the role: an error a remote answers that quotes one would tell the role of
 * something outside its schema. A preset argument or input field is hidden too. Computed once per
 * grant, when an error first needs it.
 */
export function hiddenNamesOf(grant: RoleGrant, remote: GraphQLSchema): ReadonlySet<string> {
  let found = hiddenNames.get(grant);
  if (!found) {
    found = computeHiddenNames(grant, remote);
    hiddenNames.set(grant, found);
  }
  return found;
}

function computeHiddenNames(grant: RoleGrant, remote: GraphQLSchema): ReadonlySet<string> {
  const visible = new Set<string>(BUILT_IN_SCALARS);
  for (const [name, typeGrant] of grant.types) {
    visible.add(name);
    if (typeGrant.kind === 'object' || typeGrant.kind === 'interface') {
      for (const [field, fieldGrant] of typeGrant.fields) {
        visible.add(field);
        for (const [arg, argGrant] of fieldGrant.args) if (!argGrant.preset) visible.add(arg);
      }
    } else if (typeGrant.kind === 'input') {
      for (const [field, fieldGrant] of typeGrant.fields) if (!fieldGrant.preset) visible.add(field);
    } else if (typeGrant.kind === 'enum') {
      for (const value of typeGrant.values) visible.add(value);
    }
  }
  const hidden = new Set<string>();
  const note = (name: string) => {
    if (!visible.has(name)) hidden.add(name);
  };
  for (const [name, type] of Object.entries(remote.getTypeMap())) {
    if (name.startsWith('__')) continue;
    note(name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        note(field.name);
        for (const arg of field.args) note(arg.name);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.keys(type.getFields())) note(field);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) note(value.name);
    }
  }
  return hidden;
}
