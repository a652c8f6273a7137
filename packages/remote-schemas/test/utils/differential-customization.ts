import fc from 'fast-check';
import type { FieldNamesCustomization, RemoteSchemaCustomization, TypeNamesCustomization } from '../../src/index.js';

/**
 * Random customizations of the sample remote, and the names a client sees under one, written from
 * the README's rules (not from `src`) so that the differential test has its own oracle.
 */

/** The sample remote's own types a type name customization may rename (root types are left alone). */
const REMOTE_TYPES = ['User', 'Post', 'Node', 'SearchResult', 'Role', 'Message', 'MessageInput'] as const;
const BUILT_IN_SCALARS: ReadonlySet<string> = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);
const ROOT_TYPES: ReadonlySet<string> = new Set(['Query', 'Mutation', 'Subscription']);

/** Fields of the object types whose fields may be renamed (interfaces and unions have none of their own). */
const OBJECT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Query: ['hello', 'remoteName', 'user', 'users', 'node', 'search', 'messages', 'boom', 'slow', 'echoHeaders'],
  Mutation: ['addMessage'],
  User: ['id', 'name', 'role', 'posts'],
  Post: ['id', 'title', 'author'],
  Message: ['id', 'text', 'author'],
};

function sometimes<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
}

/**
 * Mostly a name of its own for each key, sometimes a name that is taken (another type, a built-in
 * scalar, a root type, the target of another key): the registry must refuse those, and the
 * property skips them.
 */
function typeTarget(name: string): fc.Arbitrary<string> {
  const own: Record<string, string[]> = {
    User: ['Person', 'Account'],
    Post: ['Article', 'Entry'],
    Node: ['Entity', 'Identified'],
    SearchResult: ['Hit', 'Found'],
    Role: ['Rank', 'Kind'],
    Message: ['Note', 'Msg'],
    MessageInput: ['NoteInput', 'MsgIn'],
    String: ['Text', 'Str'],
    ID: ['Key', 'Ident'],
    Int: ['Count', 'Integer'],
    Boolean: ['Flag', 'Bool'],
  };
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...(own[name] ?? [`${name}X`])) },
    { weight: 1, arbitrary: fc.constantFrom('User', 'Post', 'String', 'Query', 'S_Post', 'Post_t', 'Thing', 'ns_query') },
  );
}

const typeNames: fc.Arbitrary<TypeNamesCustomization> = fc
  .record(
    {
      prefix: fc.constantFrom('S_', 'Remote', 'x', 'My_'),
      suffix: fc.constantFrom('_t', 'Type', '2', '_'),
      mapping: fc
        .subarray([...REMOTE_TYPES, 'String', 'ID', 'Int', 'Boolean'], { minLength: 1, maxLength: 4 })
        .chain((keys) => fc.tuple(...keys.map((key) => typeTarget(key).map((target) => [key, target] as const))))
        .map((entries) => Object.fromEntries(entries)),
    },
    { requiredKeys: [] },
  )
  .filter((t) => Object.keys(t).length > 0);

function fieldTarget(parent: string, field: string): fc.Arbitrary<string> {
  const siblings = OBJECT_FIELDS[parent] ?? [];
  return fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(`${field}_r`, `the_${field}`, `${field}2`) },
    // Another field's name: a swap (refused unless that field is renamed too) or a clash.
    { weight: 2, arbitrary: fc.constantFrom(...siblings) },
    { weight: 1, arbitrary: fc.constant(field) },
  );
}

function fieldNames(parent: string): fc.Arbitrary<FieldNamesCustomization> {
  const fields = OBJECT_FIELDS[parent] ?? [];
  return fc
    .record(
      {
        prefix: fc.constantFrom('f_', 'my_', 'x'),
        suffix: fc.constantFrom('_f', 'X', '1'),
        mapping: fc
          .subarray([...fields], { minLength: 1, maxLength: Math.min(3, fields.length) })
          .chain((keys) => fc.tuple(...keys.map((key) => fieldTarget(parent, key).map((target) => [key, target] as const))))
          .map((entries) => Object.fromEntries(entries)),
        // Node.id cannot be renamed (interfaces keep their fields), so a User or Post rule with an
        // affix keeps `id` by mapping it to itself, most of the time.
        keepId: fc.boolean(),
      },
      { requiredKeys: ['keepId'] },
    )
    .map(({ keepId, ...rule }) => {
      const out: FieldNamesCustomization = { parent_type: parent, ...rule };
      if (keepId && (parent === 'User' || parent === 'Post') && (rule.prefix || rule.suffix)) {
        out.mapping = { ...rule.mapping, id: 'id' };
      }
      return out;
    });
}

const fieldNameRules: fc.Arbitrary<FieldNamesCustomization[]> = fc
  .subarray(Object.keys(OBJECT_FIELDS), { minLength: 1, maxLength: 3 })
  .chain((parents) => fc.tuple(...parents.map(fieldNames)));

/**
 * A customization of the sample remote: a namespace in 40 % of the runs, type names and field
 * names in 60 % each, nothing at all (the fast path) in about one run in ten. Interface and union
 * rules in `field_names`, and mappings of root types, are left out: what they should mean is not
 * written down anywhere.
 */
export const customizationArb: fc.Arbitrary<RemoteSchemaCustomization> = fc
  .tuple(sometimes(fc.constantFrom('ns', 'sample', 'remote_1'), 40), sometimes(typeNames, 60), sometimes(fieldNameRules, 60))
  .map(([namespace, types, fields]) => ({
    ...(namespace !== undefined && { root_fields_namespace: namespace }),
    ...(types !== undefined && { type_names: types }),
    ...(fields !== undefined && { field_names: fields }),
  }));

/** What a customization exercises, for `DIFF_STATS`. */
export function featuresOfCustomization(customization: RemoteSchemaCustomization): string[] {
  const found: string[] = [];
  if (customization.root_fields_namespace) found.push('namespace');
  const types = customization.type_names;
  if (types?.prefix) found.push('type prefix');
  if (types?.suffix) found.push('type suffix');
  for (const from of Object.keys(types?.mapping ?? {})) {
    found.push(BUILT_IN_SCALARS.has(from) ? 'type mapping of a built-in scalar' : 'type mapping');
  }
  for (const rule of customization.field_names ?? []) found.push(`field names of ${rule.parent_type}`);
  return [...new Set(found)].map((f) => `customization: ${f}`);
}

export type OperationKind = 'query' | 'mutation';

/** The names a client sees under one customization. */
export interface Naming {
  readonly namespace: string | undefined;
  /** A non-root type's name (built-in scalars included). */
  type(name: string): string;
  /** The name of the type that holds a remote's root fields: ours, or the namespace field's type. */
  root(kind: OperationKind): string;
  /** A field's name, by the original name of the type it is selected on. */
  field(parent: string, field: string): string;
  /** A `__typename` value of the remote, as the client should see it. */
  typename(value: string): string;
}

function affix(prefix: string | undefined, name: string, suffix: string | undefined): string {
  return `${prefix ?? ''}${name}${suffix ?? ''}`;
}

function mapped(mapping: Record<string, string> | undefined, name: string): string | undefined {
  return mapping && Object.hasOwn(mapping, name) ? mapping[name] : undefined;
}

export function namingOf(customization: RemoteSchemaCustomization): Naming {
  const namespace = customization.root_fields_namespace || undefined;
  const types = customization.type_names;
  const rules = new Map((customization.field_names ?? []).map((rule) => [rule.parent_type, rule]));
  const root = (kind: OperationKind) => (namespace ? `${namespace}_${kind}` : kind === 'query' ? 'Query' : 'Mutation');
  const type = (name: string): string => {
    const target = mapped(types?.mapping, name);
    if (target !== undefined) return target;
    if (BUILT_IN_SCALARS.has(name) || ROOT_TYPES.has(name) || name.startsWith('__')) return name;
    return affix(types?.prefix, name, types?.suffix);
  };
  return {
    namespace,
    type,
    root,
    field(parent, field) {
      const rule = rules.get(parent);
      if (!rule || field.startsWith('__') || !Object.hasOwn(OBJECT_FIELDS, parent)) return field;
      return mapped(rule.mapping, field) ?? affix(rule.prefix, field, rule.suffix);
    },
    typename(value) {
      if (value === 'Query') return root('query');
      if (value === 'Mutation') return root('mutation');
      return type(value);
    },
  };
}
