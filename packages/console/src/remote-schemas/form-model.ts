import type { RemoteSchemaDefinition, RemoteSchemaMetadata } from '../metadata/types.js';

/** One `from → to` row of a name mapping. */
export interface MappingRow {
  from: string;
  to: string;
}

export interface HeaderRow {
  name: string;
  /** `value`: the text sent; `env`: the name of an environment variable of the server holding it. */
  source: 'value' | 'env';
  value: string;
}

export interface FieldNamesRow {
  parentType: string;
  prefix: string;
  suffix: string;
  mapping: MappingRow[];
}

/** The add/modify form of a remote schema: every field of the definition, as text the user edits. */
export interface RemoteSchemaForm {
  name: string;
  comment: string;
  urlSource: 'url' | 'env';
  url: string;
  urlFromEnv: string;
  headers: HeaderRow[];
  forwardClientHeaders: boolean;
  /** Empty: the server's default (60 seconds). */
  timeoutSeconds: string;
  rootFieldsNamespace: string;
  typePrefix: string;
  typeSuffix: string;
  typeMapping: MappingRow[];
  fieldNames: FieldNamesRow[];
}

export function emptyForm(): RemoteSchemaForm {
  return {
    name: '',
    comment: '',
    urlSource: 'url',
    url: '',
    urlFromEnv: '',
    headers: [],
    forwardClientHeaders: false,
    timeoutSeconds: '',
    rootFieldsNamespace: '',
    typePrefix: '',
    typeSuffix: '',
    typeMapping: [],
    fieldNames: [],
  };
}

function rows(mapping: Record<string, string> | undefined): MappingRow[] {
  return Object.entries(mapping ?? {}).map(([from, to]) => ({ from, to }));
}

/** The form showing an existing remote schema. */
export function formOf(remote: RemoteSchemaMetadata): RemoteSchemaForm {
  const { definition } = remote;
  const customization = definition.customization ?? {};
  return {
    name: remote.name,
    comment: remote.comment ?? '',
    urlSource: definition.url_from_env !== undefined ? 'env' : 'url',
    url: definition.url ?? '',
    urlFromEnv: definition.url_from_env ?? '',
    headers: (definition.headers ?? []).map((header) =>
      header.value_from_env !== undefined
        ? { name: header.name, source: 'env' as const, value: header.value_from_env }
        : { name: header.name, source: 'value' as const, value: header.value ?? '' },
    ),
    forwardClientHeaders: definition.forward_client_headers ?? false,
    timeoutSeconds: definition.timeout_seconds === undefined ? '' : String(definition.timeout_seconds),
    rootFieldsNamespace: customization.root_fields_namespace ?? '',
    typePrefix: customization.type_names?.prefix ?? '',
    typeSuffix: customization.type_names?.suffix ?? '',
    typeMapping: rows(customization.type_names?.mapping),
    fieldNames: (customization.field_names ?? []).map((rule) => ({
      parentType: rule.parent_type,
      prefix: rule.prefix ?? '',
      suffix: rule.suffix ?? '',
      mapping: rows(rule.mapping),
    })),
  };
}

function mapping(list: readonly MappingRow[]): Record<string, string> | undefined {
  const kept = list.filter((row) => row.from.trim() !== '' || row.to.trim() !== '');
  return kept.length === 0 ? undefined : Object.fromEntries(kept.map((row) => [row.from.trim(), row.to.trim()]));
}

/**
 * The definition the form describes, as the metadata API takes it: empty optional fields left out
 * (the server applies its defaults), text trimmed where spaces cannot mean anything (names, URLs),
 * header values sent as typed. The server judges the rest; its message names the field at fault.
 */
export function definitionOf(form: RemoteSchemaForm): RemoteSchemaDefinition {
  const definition: RemoteSchemaDefinition = form.urlSource === 'env' ? { url_from_env: form.urlFromEnv.trim() } : { url: form.url.trim() };
  const headers = form.headers.filter((header) => header.name.trim() !== '' || header.value !== '');
  if (headers.length > 0) {
    definition.headers = headers.map((header) =>
      header.source === 'env' ? { name: header.name.trim(), value_from_env: header.value.trim() } : { name: header.name.trim(), value: header.value },
    );
  }
  if (form.forwardClientHeaders) definition.forward_client_headers = true;
  if (form.timeoutSeconds.trim() !== '') {
    const seconds = Number(form.timeoutSeconds.trim());
    // Not a number: sent as typed, and the server says what it expects.
    definition.timeout_seconds = Number.isFinite(seconds) ? seconds : (form.timeoutSeconds.trim() as unknown as number);
  }
  const customization: NonNullable<RemoteSchemaDefinition['customization']> = {};
  if (form.rootFieldsNamespace.trim() !== '') customization.root_fields_namespace = form.rootFieldsNamespace.trim();
  const typeMapping = mapping(form.typeMapping);
  if (form.typePrefix.trim() !== '' || form.typeSuffix.trim() !== '' || typeMapping) {
    customization.type_names = {
      ...(form.typePrefix.trim() !== '' && { prefix: form.typePrefix.trim() }),
      ...(form.typeSuffix.trim() !== '' && { suffix: form.typeSuffix.trim() }),
      ...(typeMapping && { mapping: typeMapping }),
    };
  }
  const fieldNames = form.fieldNames
    .filter((rule) => rule.parentType.trim() !== '' || rule.prefix.trim() !== '' || rule.suffix.trim() !== '' || mapping(rule.mapping))
    .map((rule) => {
      const fieldMapping = mapping(rule.mapping);
      return {
        parent_type: rule.parentType.trim(),
        ...(rule.prefix.trim() !== '' && { prefix: rule.prefix.trim() }),
        ...(rule.suffix.trim() !== '' && { suffix: rule.suffix.trim() }),
        ...(fieldMapping && { mapping: fieldMapping }),
      };
    });
  if (fieldNames.length > 0) customization.field_names = fieldNames;
  if (Object.keys(customization).length > 0) definition.customization = customization;
  return definition;
}

/** The arguments of `add_remote_schema` / `update_remote_schema` for the form. */
export function requestArgsOf(form: RemoteSchemaForm): { name: string; definition: RemoteSchemaDefinition; comment?: string } {
  return { name: form.name.trim(), definition: definitionOf(form), ...(form.comment.trim() !== '' && { comment: form.comment }) };
}

/**
 * The form field a server error's path names (`$.args.definition.headers[1].value` → `headers.1`),
 * so that the message is shown next to it; `undefined` when it names none of them.
 */
export function formFieldOf(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const rest = path.replace(/^\$\.args\.?/, '');
  const rules: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]> = [
    [/^name$/, () => 'name'],
    [/^comment$/, () => 'comment'],
    [/^definition\.url$/, () => 'url'],
    [/^definition\.url_from_env$/, () => 'urlFromEnv'],
    [/^definition\.headers\[(\d+)\]/, (m) => `headers.${m[1]}`],
    [/^definition\.headers$/, () => 'headers'],
    [/^definition\.forward_client_headers$/, () => 'forwardClientHeaders'],
    [/^definition\.timeout_seconds$/, () => 'timeoutSeconds'],
    [/^definition\.customization\.root_fields_namespace$/, () => 'rootFieldsNamespace'],
    [/^definition\.customization\.type_names\.prefix$/, () => 'typePrefix'],
    [/^definition\.customization\.type_names\.suffix$/, () => 'typeSuffix'],
    [/^definition\.customization\.type_names/, () => 'typeMapping'],
    [/^definition\.customization\.field_names\[(\d+)\]/, (m) => `fieldNames.${m[1]}`],
    [/^definition\.customization\.field_names$/, () => 'fieldNames'],
    [/^definition\.customization$/, () => 'customization'],
    [/^definition$/, () => 'url'],
  ];
  for (const [pattern, field] of rules) {
    const match = pattern.exec(rest);
    if (match) return field(match);
  }
  return undefined;
}
