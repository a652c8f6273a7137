import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isAbstractType,
  isEnumType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';

/**
 * Random remote schemas with interfaces, unions and enums, a random part of each for one role, random
 * operations valid for that role, and a remote world of data answering them; plus the reference: the
 * same world as the role may see it (hidden runtime types and enum values absent), for graphql-js
 * to execute the operation over.
 */

type Wrap = 'T' | 'T!' | '[T]' | '[T!]' | '[T!]!';
const WRAPS: readonly Wrap[] = ['T', 'T!', '[T]', '[T!]', '[T!]!'];

interface FieldSpec {
  target: number;
  wrap: Wrap;
}

export interface Model {
  /** Number of values of each enum `E<k>` (values `E<k>_V<j>`). */
  enums: number[];
  /** Number of interfaces `I<k>`, each `{ id: ID! tag: E0 }`. */
  interfaces: number;
  /** Object types `T<k>`: `id: ID!`, `tag: E0`, and fields `t<k>f<j>`. */
  objects: Array<{ implements: boolean[]; fields: FieldSpec[] }>;
  /** Unions `U<k>`: indices of their members among the objects. */
  unions: number[][];
  /** Random root fields `q_r<j>`, besides one of each kind for every type. */
  query: FieldSpec[];
}

const fieldSpecArb = fc.record({ target: fc.nat(), wrap: fc.constantFrom(...WRAPS) });

export const modelArb: fc.Arbitrary<Model> = fc
  .record({
    enums: fc.array(fc.integer({ min: 2, max: 4 }), { minLength: 1, maxLength: 2 }),
    interfaces: fc.integer({ min: 1, max: 2 }),
    objects: fc.array(
      fc.record({ implements: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }), fields: fc.array(fieldSpecArb, { maxLength: 3 }) }),
      { minLength: 2, maxLength: 4 },
    ),
    unions: fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
    query: fc.array(fieldSpecArb, { maxLength: 3 }),
  })
  .map((model) => {
    // Every interface has a runtime type in the remote.
    const objects = model.objects.map((object) => ({ ...object, implements: [...object.implements] }));
    for (let k = 0; k < model.interfaces; k++) if (!objects.some((object) => object.implements[k])) objects[0]!.implements[k] = true;
    return { ...model, objects, unions: model.unions.map((members) => [...new Set(members.map((m) => m % objects.length))]) };
  });

const enumName = (k: number) => `E${k}`;
const interfaceName = (k: number) => `I${k}`;
const unionName = (k: number) => `U${k}`;
const objectName = (k: number) => `T${k}`;

/** Every output type a field may have, in a fixed order (field specs pick by index). */
function targets(model: Model): string[] {
  return [
    ...model.enums.map((_, k) => enumName(k)),
    ...Array.from({ length: model.interfaces }, (_, k) => interfaceName(k)),
    ...model.unions.map((_, k) => unionName(k)),
    ...model.objects.map((_, k) => objectName(k)),
    'String',
    'Int',
  ];
}

const wrapped = (wrap: Wrap, name: string) => wrap.replace('T', name);

interface QueryField {
  name: string;
  type: string;
  /** The named type. */
  target: string;
}

function queryFields(model: Model): QueryField[] {
  const fields: QueryField[] = [];
  const add = (name: string, wrap: Wrap, target: string) => fields.push({ name, type: wrapped(wrap, target), target });
  for (let k = 0; k < model.interfaces; k++) {
    add(`q_all_i${k}`, '[T!]!', interfaceName(k));
    add(`q_one_i${k}`, 'T', interfaceName(k));
    add(`q_req_i${k}`, 'T!', interfaceName(k));
  }
  model.unions.forEach((_, k) => {
    add(`q_all_u${k}`, '[T]', unionName(k));
    add(`q_req_u${k}`, 'T!', unionName(k));
  });
  model.enums.forEach((_, k) => {
    add(`q_all_e${k}`, '[T!]!', enumName(k));
    add(`q_req_e${k}`, 'T!', enumName(k));
    add(`q_one_e${k}`, 'T', enumName(k));
  });
  model.objects.forEach((_, k) => add(`q_t${k}`, 'T', objectName(k)));
  const all = targets(model);
  model.query.forEach((spec, j) => add(`q_r${j}`, spec.wrap, all[spec.target % all.length]!));
  return fields;
}

function objectFields(model: Model, k: number): QueryField[] {
  const all = targets(model);
  return model.objects[k]!.fields.map((spec, j) => {
    const target = all[spec.target % all.length]!;
    return { name: `t${k}f${j}`, type: wrapped(spec.wrap, target), target };
  });
}

/** The remote's SDL. */
export function remoteSdl(model: Model): string {
  const out: string[] = [];
  model.enums.forEach((count, k) => {
    out.push(`enum ${enumName(k)} { ${Array.from({ length: count }, (_, j) => `${enumName(k)}_V${j}`).join(' ')} }`);
  });
  for (let k = 0; k < model.interfaces; k++) out.push(`interface ${interfaceName(k)} { id: ID! tag: E0 }`);
  model.objects.forEach((object, k) => {
    const implemented = object.implements.slice(0, model.interfaces).flatMap((on, i) => (on ? [interfaceName(i)] : []));
    const fields = objectFields(model, k).map((f) => `${f.name}: ${f.type}`);
    out.push(`type ${objectName(k)}${implemented.length ? ` implements ${implemented.join(' & ')}` : ''} { id: ID! tag: E0 ${fields.join(' ')} }`);
  });
  model.unions.forEach((members, k) => out.push(`union ${unionName(k)} = ${members.map(objectName).join(' | ')}`));
  out.push(`type Query { ${queryFields(model).map((f) => `${f.name}: ${f.type}`).join(' ')} }`);
  return out.join('\n');
}

export interface RoleChoice {
  enumValues: boolean[][];
  interfaces: boolean[];
  objects: boolean[];
  implementsKeep: boolean[][];
  fields: boolean[][];
  unions: boolean[];
  unionMembers: boolean[][];
  query: boolean[];
}

const booleans = (length: number) => fc.array(fc.boolean(), { minLength: length, maxLength: length });

export function roleArb(model: Model): fc.Arbitrary<RoleChoice> {
  return fc.record({
    enumValues: fc.tuple(...model.enums.map(booleans)),
    interfaces: booleans(model.interfaces),
    objects: booleans(model.objects.length),
    implementsKeep: fc.tuple(...model.objects.map(() => booleans(2))),
    fields: fc.tuple(...model.objects.map((object) => booleans(object.fields.length))),
    unions: booleans(model.unions.length),
    unionMembers: fc.tuple(...model.unions.map((members) => booleans(members.length))),
    query: booleans(queryFields(model).length),
  });
}

/** The role's grant (SDL in the remote's names), and the names of the remote it leaves out. */
export function roleSdl(model: Model, role: RoleChoice): { sdl: string; hidden: string[] } {
  const hidden: string[] = [];
  const enumValues = model.enums.map((count, k) => {
    const kept = Array.from({ length: count }, (_, j) => j).filter((j) => role.enumValues[k]![j]);
    const values = kept.length > 0 ? kept : [0];
    for (let j = 0; j < count; j++) if (!values.includes(j)) hidden.push(`${enumName(k)}_V${j}`);
    return values.map((j) => `${enumName(k)}_V${j}`);
  });
  const objects = new Set(model.objects.flatMap((_, k) => (role.objects[k] ? [k] : [])));
  if (objects.size === 0) objects.add(0);
  const interfaces = new Set(Array.from({ length: model.interfaces }, (_, k) => k).filter((k) => role.interfaces[k]));
  const unions = new Map<number, number[]>();
  model.unions.forEach((members, k) => {
    const kept = members.filter((m, i) => objects.has(m) && role.unionMembers[k]![i]);
    if (role.unions[k] && kept.length > 0) unions.set(k, kept);
  });
  const kept = (target: string): boolean => {
    const kind = target[0];
    const index = Number(target.slice(1));
    if (target === 'String' || target === 'Int' || kind === 'E') return true;
    if (kind === 'I') return interfaces.has(index);
    if (kind === 'U') return unions.has(index);
    return objects.has(index);
  };
  const used = new Set<string>(['E0']);
  const out: string[] = [];
  for (let k = 0; k < model.interfaces; k++) if (interfaces.has(k)) out.push(`interface ${interfaceName(k)} { id: ID! tag: E0 }`);
  model.objects.forEach((object, k) => {
    if (!objects.has(k)) return;
    const implemented = object.implements
      .slice(0, model.interfaces)
      .flatMap((on, i) => (on && interfaces.has(i) && role.implementsKeep[k]![i] ? [interfaceName(i)] : []));
    const fields = objectFields(model, k).filter((f, j) => role.fields[k]![j] && kept(f.target));
    for (const f of fields) used.add(f.target);
    out.push(`type ${objectName(k)}${implemented.length ? ` implements ${implemented.join(' & ')}` : ''} { id: ID! tag: E0 ${fields.map((f) => `${f.name}: ${f.type}`).join(' ')} }`);
  });
  for (const [k, members] of unions) out.push(`union ${unionName(k)} = ${members.map(objectName).join(' | ')}`);
  const root = queryFields(model).filter((f, i) => (role.query[i] || f.name === 'q_all_e0') && kept(f.target));
  for (const f of root) used.add(f.target);
  out.push(`type Query { ${root.map((f) => `${f.name}: ${f.type}`).join(' ')} }`);
  model.enums.forEach((_, k) => {
    if (used.has(enumName(k))) out.unshift(`enum ${enumName(k)} { ${enumValues[k]!.join(' ')} }`);
  });
  for (let k = 0; k < model.interfaces; k++) if (!interfaces.has(k)) hidden.push(interfaceName(k));
  model.unions.forEach((_, k) => {
    if (!unions.has(k)) hidden.push(unionName(k));
  });
  model.objects.forEach((_, k) => {
    if (!objects.has(k)) hidden.push(objectName(k));
  });
  return { sdl: out.join('\n'), hidden };
}

/**
 * A query valid for `role` (in the remote's names), built from `choices`: up to three root fields,
 * selections three deep with aliases, `__typename` and inline fragments on the role's runtime types.
 * `typeName` renames type conditions (a customized remote's client writes its names).
 */
export function operationFor(role: GraphQLSchema, choices: readonly number[], typeName: (name: string) => string = (n) => n): string {
  let cursor = 0;
  let aliases = 0;
  const pick = (n: number) => (n <= 0 ? 0 : choices[cursor++ % choices.length]! % n);
  const field = (definition: GraphQLField<unknown, unknown>, depth: number): string => {
    const alias = pick(4) === 0 ? `k${aliases++}: ` : '';
    const named = getNamedType(definition.type);
    if (isLeafType(named)) return `${alias}${definition.name}`;
    return `${alias}${definition.name} { ${selectionSet(named as GraphQLCompositeType, depth + 1)} }`;
  };
  const fieldsOf = (type: GraphQLCompositeType, depth: number): string[] => {
    if (!isObjectType(type) && !isInterfaceType(type)) return [];
    const all = Object.values(type.getFields()).filter((f) => depth < 3 || isLeafType(getNamedType(f.type)));
    return Array.from({ length: pick(3) + 1 }, () => all[pick(all.length)]).flatMap((f) => (f ? [field(f, depth)] : []));
  };
  const selectionSet = (type: GraphQLCompositeType, depth: number): string => {
    const parts: string[] = [];
    if (pick(3) === 0) parts.push('__typename');
    if (isObjectType(type)) parts.push(...fieldsOf(type, depth));
    if (isInterfaceType(type) && pick(2) === 0) parts.push(...fieldsOf(type, depth));
    if (isAbstractType(type)) {
      const possible = role.getPossibleTypes(type);
      for (let i = pick(3); i > 0 && possible.length > 0; i--) {
        const member = possible[pick(possible.length)]!;
        parts.push(`... on ${typeName(member.name)} { ${selectionSet(member, depth)} }`);
      }
    }
    return parts.length > 0 ? parts.join(' ') : '__typename';
  };
  const root = role.getQueryType()!;
  const fields = Object.values(root.getFields());
  return Array.from({ length: pick(3) + 1 }, () => field(fields[pick(fields.length)]!, 0)).join(' ');
}

// ---- The world: what the remote answers, and what the role may see of it ----

interface WorldObject {
  __type: string;
  __key: string;
}

function hash(seed: number, key: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) >>> 0;
}

/** The value the remote answers at `key` for a place of `type` (its own schema's type). */
function valueAt(remote: GraphQLSchema, seed: number, type: GraphQLOutputType, key: string): unknown {
  if (isNonNullType(type)) return presentValue(remote, seed, type.ofType, key);
  return hash(seed, `${key}?`) % 6 === 0 ? null : presentValue(remote, seed, type, key);
}

function presentValue(remote: GraphQLSchema, seed: number, type: GraphQLOutputType, key: string): unknown {
  if (isListType(type)) {
    const length = hash(seed, `${key}#`) % 4;
    return Array.from({ length }, (_, i) => valueAt(remote, seed, type.ofType as GraphQLOutputType, `${key}[${i}]`));
  }
  if (isEnumType(type)) {
    const values = type.getValues();
    return values[hash(seed, `${key}!`) % values.length]!.value;
  }
  if (isObjectType(type)) return { __type: type.name, __key: key } satisfies WorldObject;
  if (isAbstractType(type)) {
    const possible = [...remote.getPossibleTypes(type)].sort((a, b) => a.name.localeCompare(b.name));
    return { __type: possible[hash(seed, `${key}@`) % possible.length]!.name, __key: key } satisfies WorldObject;
  }
  const named = getNamedType(type);
  if (named.name === 'Int') return hash(seed, key) % 1000;
  return `s${hash(seed, key)}`;
}

function parentOf(parent: unknown): WorldObject {
  return parent && typeof parent === 'object' && '__key' in parent ? (parent as WorldObject) : { __type: 'Query', __key: 'root' };
}

/** `remote` (built from its SDL) made executable over the world of `seed`. */
export function executableRemote(sdl: string, seed: number): GraphQLSchema {
  const schema = buildSchema(sdl);
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isAbstractType(type)) type.resolveType = (value) => (value as WorldObject).__type;
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      field.resolve = (parent) => valueAt(schema, seed, field.type, `${parentOf(parent).__key}.${field.name}`);
    }
  }
  return schema;
}

const HIDDEN = Symbol('hidden');

/**
 * The reference: resolvers over the role's schema that read the same world and treat what the role
 * may not see as absent (left out of lists, null elsewhere, which graphql-js turns into its non-null
 * error where the place is non-null).
 */
export function referenceResolvers(remote: GraphQLSchema, role: GraphQLSchema, seed: number) {
  const seen = (value: unknown, type: GraphQLOutputType): unknown => {
    if (value === null) return null;
    if (isNonNullType(type)) return seen(value, type.ofType);
    if (isListType(type)) {
      return (value as unknown[]).map((item) => seen(item, type.ofType as GraphQLOutputType)).filter((item) => item !== HIDDEN);
    }
    if (isEnumType(type)) return type.getValue(value as string) ? value : HIDDEN;
    if (isAbstractType(type)) return role.getPossibleTypes(type).some((t) => t.name === (value as WorldObject).__type) ? value : HIDDEN;
    return value;
  };
  const fieldResolver: GraphQLFieldResolver<unknown, unknown> = (parent, _args, _context, info) => {
    const { __type, __key } = parentOf(parent);
    const parentType = remote.getType(__type);
    if (!isObjectType(parentType)) throw new Error(`no object type ${__type} in the remote`);
    const remoteField = parentType.getFields()[info.fieldName]!;
    const value = seen(valueAt(remote, seed, remoteField.type, `${__key}.${info.fieldName}`), info.returnType);
    return value === HIDDEN ? null : value;
  };
  return { fieldResolver, typeResolver: (value: unknown) => (value as WorldObject).__type };
}
