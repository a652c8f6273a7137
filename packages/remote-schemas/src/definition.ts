import { RemoteSchemaError } from './errors.js';
import { redactUrl } from './redact.js';
import type { RemoteSchemaCustomization, RemoteSchemaDefinition } from './types.js';

/** A definition with its environment references read and defaults filled in. */
export interface ResolvedDefinition {
  url: string;
  /** The environment variable the URL was read from (`url_from_env`): errors name it, never its value. */
  urlEnv?: string;
  /** `{name, value}` in configuration order; names as configured; environment values as read at load. */
  headers: Array<[string, string]>;
  /** The environment variable of each header with `value_from_env`, by index in `headers`. */
  headerEnv: Array<string | undefined>;
  forwardClientHeaders: boolean;
  timeoutMs: number;
  customization: RemoteSchemaCustomization | undefined;
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

function invalid(message: string, field?: ReadonlyArray<string | number>): RemoteSchemaError {
  return field === undefined ? new RemoteSchemaError('invalid-params', message) : new RemoteSchemaError('invalid-params', message, { field });
}

/**
 * Reads `url_from_env` and `value_from_env` now (a missing variable is `invalid-params`). Header
 * values from the environment are read again at every call (see `configuredHeaders`); the URL
 * takes effect at the next (re)load, since it decides which schema is introspected.
 */
export function resolveDefinition(definition: RemoteSchemaDefinition, env = process.env): ResolvedDefinition {
  let url = definition.url;
  const variable = url === undefined ? definition.url_from_env : undefined;
  if (variable !== undefined) {
    url = env[variable];
    if (url === undefined || url === '') {
      throw invalid(`environment variable "${variable}" not set`, ['url_from_env']);
    }
  }
  if (url === undefined) throw invalid('either "url" or "url_from_env" is required');
  // A value read from the environment may be a secret put in the wrong variable: name the
  // variable, never show the value.
  const notHttpUrl = variable === undefined ? undefined : `environment variable "${variable}" does not hold a valid http(s) URL`;
  const urlField = [variable === undefined ? 'url' : 'url_from_env'];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    // Node's URL error keeps the input: no cause for a value from the environment.
    if (notHttpUrl !== undefined) throw invalid(notHttpUrl, urlField);
    throw new RemoteSchemaError('invalid-params', `not a valid URL: "${url}"`, { cause, field: urlField });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid(notHttpUrl ?? `the URL of a remote schema must be http(s), but got "${redactUrl(url)}"`, urlField);
  }
  const headers: Array<[string, string]> = [];
  const headerEnv: Array<string | undefined> = [];
  for (const [index, header] of (definition.headers ?? []).entries()) {
    headerEnv.push('value_from_env' in header ? header.value_from_env : undefined);
    if ('value' in header) {
      if (!isHeaderValue(header.value)) throw invalid(`the value of header "${header.name}" is not a valid header value`, ['headers', index, 'value']);
      headers.push([header.name, header.value]);
    } else {
      const value = env[header.value_from_env];
      if (value === undefined) throw invalid(`environment variable "${header.value_from_env}" not set`, ['headers', index, 'value_from_env']);
      // Caught here, not by the HTTP client, whose error may quote the value.
      if (!isHeaderValue(value)) {
        throw invalid(`environment variable "${header.value_from_env}" does not hold a valid header value`, ['headers', index, 'value_from_env']);
      }
      headers.push([header.name, value]);
    }
  }
  const timeoutSeconds = definition.timeout_seconds ?? 60;
  if (!(timeoutSeconds > 0) || !Number.isFinite(timeoutSeconds)) {
    throw invalid(`"timeout_seconds" must be a positive number, but got ${String(timeoutSeconds)}`, ['timeout_seconds']);
  }
  validateCustomization(definition.customization);
  return {
    url,
    ...(variable !== undefined && { urlEnv: variable }),
    headers,
    headerEnv,
    forwardClientHeaders: definition.forward_client_headers ?? false,
    timeoutMs: timeoutSeconds * 1000,
    customization: isCustomized(definition.customization) ? definition.customization : undefined,
  };
}

/** True when the customization changes anything (an empty object does not). */
export function isCustomized(customization: RemoteSchemaCustomization | undefined): boolean {
  if (!customization) return false;
  const { root_fields_namespace: namespace, type_names: types, field_names: fields } = customization;
  if (namespace !== undefined && namespace !== '') return true;
  if (types && (types.prefix || types.suffix || Object.keys(types.mapping ?? {}).length > 0)) return true;
  return (fields ?? []).some((f) => f.prefix || f.suffix || Object.keys(f.mapping ?? {}).length > 0);
}

function checkName(what: string, name: string): void {
  if (name.startsWith('__')) throw invalid(`${what} "${name}" starts with "__", which is reserved for GraphQL introspection`);
  if (!NAME.test(name)) throw invalid(`${what} "${name}" is not a valid GraphQL name`);
}

function checkAffixes(what: string, prefix: string | undefined, suffix: string | undefined): void {
  if (prefix) checkName(`${what} prefix`, prefix);
  if (suffix && !/^[_0-9A-Za-z]+$/.test(suffix)) {
    throw invalid(`${what} suffix "${suffix}" is not valid in a GraphQL name`);
  }
}

function checkMapping(what: string, mapping: Record<string, string> | undefined): void {
  if (!mapping) return;
  const seen = new Map<string, string>();
  const duplicates = new Set<string>();
  for (const [from, to] of Object.entries(mapping)) {
    if (typeof to !== 'string') throw invalid(`${what} mapping of "${from}" must be a string`);
    checkName(`${what} mapping of "${from}" to`, to);
    if (seen.has(to)) duplicates.add(to);
    seen.set(to, from);
  }
  if (duplicates.size > 0) {
    throw invalid(`${what} mappings are not distinct; the following names appear more than once: ${[...duplicates].map((d) => `"${d}"`).join(', ')}`);
  }
}

/** Customization that is wrong whatever the remote's schema: `invalid-params`. */
export function validateCustomization(customization: RemoteSchemaCustomization | undefined): void {
  if (!customization) return;
  if (customization.root_fields_namespace !== undefined && customization.root_fields_namespace !== '') {
    checkName('root fields namespace', customization.root_fields_namespace);
  }
  const types = customization.type_names;
  if (types) {
    checkAffixes('type name', types.prefix, types.suffix);
    checkMapping('type name', types.mapping);
  }
  const parents = new Set<string>();
  for (const fields of customization.field_names ?? []) {
    if (parents.has(fields.parent_type)) {
      throw invalid(`field name customization for parent type "${fields.parent_type}" is given more than once`);
    }
    parents.add(fields.parent_type);
    checkAffixes(`field name (parent type "${fields.parent_type}")`, fields.prefix, fields.suffix);
    checkMapping(`field name (parent type "${fields.parent_type}")`, fields.mapping);
  }
}

/** What `node:http` and `fetch` accept in a header value (no CR, LF, NUL or other controls). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function isHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}

/**
 * The configured headers as of now: `value_from_env` read at call time, else as read at load (also
 * when the variable now holds something that is not a valid header value).
 */
export function configuredHeaders(definition: ResolvedDefinition, env = process.env): Array<[string, string]> {
  return definition.headers.map(([name, value], index) => {
    const variable = definition.headerEnv[index];
    if (variable === undefined) return [name, value];
    const current = env[variable];
    return [name, current !== undefined && isHeaderValue(current) ? current : value];
  });
}
