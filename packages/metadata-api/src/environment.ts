/**
 * Environment variables named by remote schema definitions (`url_from_env`, `value_from_env`).
 * Their values are kept out of every answer and log line: a URL or a header read from the
 * environment is usually there because it carries a credential.
 */
import type { RemoteSchemaDefinition } from './registry.js';

/** The server's own settings (its admin secret, JWT key, database URL) are read from these. */
export const RESERVED_ENV_PREFIX = 'SVC_GRAPHQL_';

/**
 * Why a definition may not read `name`, or `undefined` when it may. A remote schema reading
 * `SVC_GRAPHQL_ADMIN_SECRET` would send the admin secret to whoever runs that remote.
 */
export function reservedVariableReason(name: string): string | undefined {
  // Compared without regard to case: on Windows `svc_graphql_admin_secret` is the same variable.
  if (!name.toUpperCase().startsWith(RESERVED_ENV_PREFIX)) return undefined;
  return (
    `environment variable "${name}" cannot be used: variables starting with ${RESERVED_ENV_PREFIX} ` +
    "hold the server's own settings, such as its admin secret"
  );
}

/** What to hide for each variable a definition reads: its value, and for a URL the forms it may be quoted in. */
function secretsOf(definition: RemoteSchemaDefinition, env: NodeJS.ProcessEnv): Array<[secret: string, name: string]> {
  const secrets: Array<[string, string]> = [];
  const variable = definition.url_from_env;
  const url = variable === undefined ? undefined : env[variable];
  if (variable !== undefined && url !== undefined && url !== '') {
    secrets.push([url, variable]);
    try {
      const parsed = new URL(url);
      // Normalized (`http://host` becomes `http://host/`), and without credentials or query, as
      // an error about a remote may quote it.
      secrets.push([parsed.href, variable]);
      if (parsed.origin !== 'null') secrets.push([`${parsed.origin}${parsed.pathname}`, variable]);
    } catch {
      // Not a URL: only its literal value can be quoted.
    }
  }
  for (const header of definition.headers ?? []) {
    if (!('value_from_env' in header)) continue;
    const value = env[header.value_from_env];
    if (value !== undefined && value !== '') secrets.push([value, header.value_from_env]);
  }
  return secrets;
}

/**
 * `message` with the value of every environment variable `definition` reads replaced by
 * `{{NAME}}`. Messages from the registry and from remotes may quote a URL or a header; the
 * metadata API passes them on only through here.
 */
export function redactEnvironment(
  message: string,
  definition: RemoteSchemaDefinition | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (definition === undefined) return message;
  const secrets = secretsOf(definition, env);
  if (secrets.length === 0) return message;
  const names = new Map(secrets);
  // One pass, longest first: a URL's normalized form contains its literal value, and a short value
  // must not be found again inside a `{{NAME}}` already put in.
  const pattern = new RegExp(
    [...names.keys()]
      .sort((a, b) => b.length - a.length)
      .map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'g',
  );
  return message.replace(pattern, (secret) => `{{${names.get(secret) ?? ''}}}`);
}
