import type { Plugin } from 'graphql-yoga';
import type { ResolvedSettings } from '../settings.js';
import { sessionOfGet, type SessionRouteOptions } from './session-route.js';

/** Where an admin reads how this server is set up (what the metadata does not say). */
export const CONFIG_PATH = '/v1alpha1/config';

/** The answer of `GET /v1alpha1/config`: the server's own switches, no secret and no URL. */
export interface ConfigAnswer {
  version: string;
  is_admin_secret_set: boolean;
  is_remote_schema_permissions_enabled: boolean;
  /** Whether the allow list of the metadata is enforced for every role but admin. */
  is_allow_list_enabled: boolean;
  /** `redis`: rate limits are counted by every instance together; `local`: each instance counts alone. */
  rate_limit_store: 'redis' | 'local';
  is_console_enabled: boolean;
}

export interface ConfigRouteOptions extends SessionRouteOptions {
  version: string;
  /** The server's resolved settings. */
  settings: ResolvedSettings;
}

function json(fetchAPI: { Response: typeof Response }, status: number, body: unknown): Response {
  return new fetchAPI.Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
}

/** The answer, from the settings as resolved. */
export function configOf(
  settings: Pick<ResolvedSettings, 'adminSecret' | 'enableRemoteSchemaPermissions' | 'enableAllowlist' | 'rateLimitRedisUrl' | 'enableConsole'>,
  version: string,
): ConfigAnswer {
  return {
    version,
    is_admin_secret_set: settings.adminSecret !== undefined,
    is_remote_schema_permissions_enabled: settings.enableRemoteSchemaPermissions,
    is_allow_list_enabled: settings.enableAllowlist,
    rate_limit_store: settings.rateLimitRedisUrl !== undefined && settings.rateLimitRedisUrl !== '' ? 'redis' : 'local',
    is_console_enabled: settings.enableConsole,
  };
}

/**
 * `GET /v1alpha1/config`, admin only (the admin secret, or a token whose role is admin): whether
 * the allow list is enforced, where rate limits are counted, and the other switches the console
 * shows. Anyone else gets the metadata API's refusal, `403 access-denied`.
 */
export function useConfigRoute(options: ConfigRouteOptions): Plugin {
  return {
    async onRequest({ request, url, fetchAPI, endResponse }) {
      if (url.pathname !== CONFIG_PATH) return;
      const resolved = await sessionOfGet(request, fetchAPI.Response, options, CONFIG_PATH);
      if ('answer' in resolved) {
        endResponse(resolved.answer);
        return;
      }
      const { session } = resolved;
      if (!session.isAdmin) {
        endResponse(json(fetchAPI, 403, { error: 'restricted access : admin only', path: '$', code: 'access-denied' }));
        return;
      }
      endResponse(request.method === 'HEAD' ? new fetchAPI.Response(null, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } }) : json(fetchAPI, 200, configOf(options.settings, options.version)));
    },
  };
}
