import { isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { builtInScalarMapping } from '../builtin-scalars.js';
import type { LoadedRemote } from '../loaded-remote.js';
import { fieldRenamer, rootsOf, typeRenamer } from '../remote-schema.js';

/** A remote's customization read backwards: from the names clients see to the remote's own. */
export interface Renaming {
  /** Public type name -> the remote's own name, for the names that differ (built-in scalars mapped elsewhere included). */
  readonly typeToOwn: ReadonlyMap<string, string>;
  /** The remote's own object type name -> public name, for `__typename` answers; only names that differ. */
  readonly typeToPublic: ReadonlyMap<string, string>;
  /** Public object type name -> (public field name -> the remote's own field name); only fields that differ. */
  readonly fieldsToOwn: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** `root_fields_namespace`, when set. */
  readonly namespace: string | undefined;
}

const renamings = new WeakMap<GraphQLSchema, Renaming>();

/**
 * The renaming of `remote`, computed once per loaded remote (its `base` schema is shared by the
 * parts cut from it for roles). Follows `publicRemoteSchema`: field names are renamed on object
 * and interface types, keyed by the original type name, then types are renamed (roots, built-in
 * scalars and `__` names never by prefix or suffix), then root fields are nested under the
 * namespace type `<namespace>_query` / `<namespace>_mutation` / `<namespace>_subscription`.
 */
export function renamingOf(remote: LoadedRemote): Renaming {
  let renaming = renamings.get(remote.base);
  if (!renaming) {
    renaming = build(remote);
    renamings.set(remote.base, renaming);
  }
  return renaming;
}

function build(remote: LoadedRemote): Renaming {
  const customization = remote.client.definition.customization;
  const base = remote.base;
  const namespace = customization?.root_fields_namespace || undefined;
  const scalars = builtInScalarMapping(customization?.type_names?.mapping);
  const scalarToOwn = new Map([...scalars].map(([own, renamed]) => [renamed, own]));
  const rename = typeRenamer(base, customization, new Set(scalars.values()));
  const typeToOwn = new Map<string, string>();
  const typeToPublic = new Map<string, string>();
  for (const [name, type] of Object.entries(base.getTypeMap())) {
    if (name.startsWith('__')) continue;
    const publicName = rename(name);
    const own = scalarToOwn.get(name) ?? name;
    if (publicName !== own) typeToOwn.set(publicName, own);
    if (isObjectType(type) && publicName !== name) typeToPublic.set(name, publicName);
  }
  const roots = rootsOf(base);
  const fieldsToOwn = new Map<string, Map<string, string>>();
  for (const rule of customization?.field_names ?? []) {
    const type = base.getType(rule.parent_type);
    // An interface's fields are renamed alike on the types implementing it (checked at add).
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    // A root type's fields are those of its namespace type, when there is one.
    const operation = namespace ? (['query', 'mutation', 'subscription'] as const).find((op) => roots[op] === type) : undefined;
    const parent = operation ? `${namespace}_${operation}` : rename(type.name);
    const renameField = fieldRenamer(rule);
    const fields = new Map<string, string>();
    for (const name of Object.keys(type.getFields())) {
      const publicName = renameField(name);
      if (publicName !== name) fields.set(publicName, name);
    }
    if (fields.size > 0) fieldsToOwn.set(parent, fields);
  }
  return { typeToOwn, typeToPublic, fieldsToOwn, namespace };
}
