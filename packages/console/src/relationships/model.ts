import { getNamedType, isEnumType, isListType, isNonNullType, isObjectType, isScalarType, type GraphQLField, type GraphQLObjectType, type GraphQLSchema, type GraphQLType } from 'graphql';
import type { MetadataDocument } from '../metadata/types.js';

/**
 * A remote relationship as the console edits it: a field added to an object type of one remote (the
 * source) whose value comes from a root query field of a remote (the target), the arguments taken
 * from the source object's fields (`"$x"`) or fixed (literals). Every name is the remote's own,
 * before customization.
 */

export interface RemoteFieldLevel {
  arguments: Record<string, unknown>;
  field?: Record<string, RemoteFieldLevel>;
}

export interface RelationshipDefinition {
  to_remote_schema: {
    remote_schema: string;
    lhs_fields: string[];
    remote_field: Record<string, RemoteFieldLevel>;
    batch?: { argument: string; match_field?: string };
  };
}

export interface RelationshipRow {
  remote: string;
  type: string;
  name: string;
  definition: RelationshipDefinition;
}

interface ExportedGroup {
  type_name?: string;
  relationships?: Array<{ name?: string; definition?: RelationshipDefinition }>;
}

/** Every relationship of the document, remote by remote, as exported. */
export function relationshipsOf(document: MetadataDocument | undefined): RelationshipRow[] {
  const rows: RelationshipRow[] = [];
  for (const remote of document?.remote_schemas ?? []) {
    for (const group of (remote.remote_relationships ?? []) as ExportedGroup[]) {
      for (const relationship of group.relationships ?? []) {
        if (relationship.name && relationship.definition) rows.push({ remote: remote.name, type: group.type_name ?? '', name: relationship.name, definition: relationship.definition });
      }
    }
  }
  return rows;
}

/** How one argument of a level gets its value: not given, a literal (JSON, or plain text for a string), or a source field. */
export type ArgumentMapping = { kind: 'none' } | { kind: 'literal'; text: string } | { kind: 'field'; field: string };

export interface LevelForm {
  field: string;
  arguments: Record<string, ArgumentMapping>;
}

export interface RelationshipForm {
  name: string;
  source: string;
  type: string;
  lhsFields: string[];
  target: string;
  levels: LevelForm[];
  batch: boolean;
  batchArgument: string;
  batchMatchField: string;
}

export function emptyRelationshipForm(source = ''): RelationshipForm {
  return { name: '', source, type: '', lhsFields: [], target: '', levels: [{ field: '', arguments: {} }], batch: false, batchArgument: '', batchMatchField: '' };
}

/** The fields of a type that can be join fields: no arguments, a scalar, an enum, or a list of them. */
export function joinFieldsOf(type: GraphQLObjectType | undefined): string[] {
  if (!type) return [];
  return Object.values(type.getFields())
    .filter((field) => field.args.length === 0 && (isScalarType(getNamedType(field.type)) || isEnumType(getNamedType(field.type))))
    .map((field) => field.name);
}

export function objectTypesOf(schema: GraphQLSchema | undefined): string[] {
  if (!schema) return [];
  return Object.values(schema.getTypeMap())
    .filter((type) => isObjectType(type) && !type.name.startsWith('__'))
    .map((type) => type.name)
    .sort();
}

/** The field each level names in the target's schema (undefined from the first one it does not find). */
export function levelFields(schema: GraphQLSchema | undefined, levels: readonly LevelForm[]): Array<GraphQLField<unknown, unknown> | undefined> {
  const found: Array<GraphQLField<unknown, unknown> | undefined> = [];
  let parent: GraphQLObjectType | undefined | null = schema?.getQueryType();
  for (const level of levels) {
    const field = parent && level.field ? parent.getFields()[level.field] : undefined;
    found.push(field);
    const named = field ? getNamedType(field.type) : undefined;
    parent = named && isObjectType(named) ? named : undefined;
  }
  return found;
}

/** The fields a level may pick: the root query fields first, then the fields of the level above's object type. */
export function levelChoices(schema: GraphQLSchema | undefined, levels: readonly LevelForm[], index: number): string[] {
  if (!schema) return [];
  const parent = index === 0 ? schema.getQueryType() : (() => {
    const field = levelFields(schema, levels)[index - 1];
    const named = field ? getNamedType(field.type) : undefined;
    return named && isObjectType(named) ? named : undefined;
  })();
  return parent ? Object.keys(parent.getFields()) : [];
}

/** The list arguments of a field: what `batch` may name. */
export function listArgumentsOf(field: GraphQLField<unknown, unknown> | undefined): string[] {
  return (field?.args ?? []).filter((arg) => isListType(isNonNullType(arg.type) ? arg.type.ofType : arg.type)).map((arg) => arg.name);
}

/** The fields of a list field's element type: what `batch.match_field` may name. */
export function elementFieldsOf(field: GraphQLField<unknown, unknown> | undefined): string[] {
  if (!field) return [];
  const named = getNamedType(field.type as GraphQLType);
  return isObjectType(named) ? joinFieldsOf(named) : [];
}

function literalOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function mappingOf(value: unknown): ArgumentMapping {
  if (typeof value === 'string' && value.startsWith('$') && value.length > 1) return { kind: 'field', field: value.slice(1) };
  // A string is shown as plain text unless that text would read back as something else (`"5"`, `"true"`).
  const plain = typeof value === 'string' && literalOf(value) === value;
  return { kind: 'literal', text: plain ? value : JSON.stringify(value) };
}

/** What the form lacks before it can be sent, each naming the part at fault (the server checks the rest). */
export function formProblems(form: RelationshipForm): Partial<Record<'name' | 'source' | 'type' | 'lhsFields' | 'target' | 'levels' | 'batch', string>> {
  const problems: Partial<Record<'name' | 'source' | 'type' | 'lhsFields' | 'target' | 'levels' | 'batch', string>> = {};
  if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(form.name)) problems.name = 'the name must be a GraphQL name (letters, digits and _, not starting with a digit)';
  if (!form.source) problems.source = 'choose the source remote schema';
  if (!form.type) problems.type = 'choose the type the field is added to';
  if (form.lhsFields.length === 0) problems.lhsFields = 'choose at least one join field';
  if (!form.target) problems.target = 'choose the target remote schema';
  if (form.levels.some((level) => !level.field)) problems.levels = 'choose a field at every level of the path';
  else {
    // An argument from a join field that is no longer ticked (the join fields changed after it was set).
    const stale = form.levels
      .flatMap((level) => Object.entries(level.arguments))
      .find(([, mapping]) => mapping.kind === 'field' && !form.lhsFields.includes(mapping.field));
    if (stale) problems.levels = `argument "${stale[0]}" takes a join field that is not ticked: choose one of the join fields`;
  }
  if (form.batch && !form.batchArgument) problems.batch = 'choose the list argument the join values go to';
  return problems;
}

/** The definition `create_remote_schema_remote_relationship` takes. */
export function definitionOf(form: RelationshipForm): RelationshipDefinition {
  let remoteField: Record<string, RemoteFieldLevel> | undefined;
  for (const level of [...form.levels].reverse()) {
    const args: Record<string, unknown> = {};
    for (const [name, mapping] of Object.entries(level.arguments)) {
      if (mapping.kind === 'literal') args[name] = literalOf(mapping.text);
      else if (mapping.kind === 'field') args[name] = `$${mapping.field}`;
    }
    remoteField = { [level.field]: { arguments: args, ...(remoteField && { field: remoteField }) } };
  }
  return {
    to_remote_schema: {
      remote_schema: form.target,
      lhs_fields: form.lhsFields,
      remote_field: remoteField ?? {},
      ...(form.batch && { batch: { argument: form.batchArgument, ...(form.batchMatchField && { match_field: form.batchMatchField }) } }),
    },
  };
}

/** The form of a stored relationship. */
export function formOfRow(row: RelationshipRow): RelationshipForm {
  const { to_remote_schema: to } = row.definition;
  const levels: LevelForm[] = [];
  let current: Record<string, RemoteFieldLevel> | undefined = to.remote_field;
  while (current && Object.keys(current).length > 0) {
    const [field, level]: [string, RemoteFieldLevel] = Object.entries(current)[0]!;
    levels.push({ field, arguments: Object.fromEntries(Object.entries(level.arguments ?? {}).map(([name, value]) => [name, mappingOf(value)])) });
    current = level.field;
  }
  return {
    name: row.name,
    source: row.remote,
    type: row.type,
    lhsFields: [...to.lhs_fields],
    target: to.remote_schema,
    levels: levels.length > 0 ? levels : [{ field: '', arguments: {} }],
    batch: to.batch !== undefined,
    batchArgument: to.batch?.argument ?? '',
    batchMatchField: to.batch?.match_field ?? '',
  };
}

/** Which part of the form a server message is about, to show it there. */
export function placeOfMessage(message: string): 'name' | 'type' | 'lhsFields' | 'target' | 'levels' | 'batch' | undefined {
  if (/already exists/.test(message)) return 'name';
  if (/no type named|only be defined on object types/.test(message)) return 'type';
  if (/lhs entity|variable "/.test(message)) return 'lhsFields';
  if (/remote schema with name "[^"]*" not found/.test(message)) return 'target';
  if (/batch|match_field|list argument/.test(message)) return 'batch';
  if (/remote field|argument|expected type|mapping|Empty variable/.test(message)) return 'levels';
  return undefined;
}
