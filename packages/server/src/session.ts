import type { Plugin } from 'graphql-yoga';
import { createSessionResolver, parseJwtConfig, parseJwtConfigs, type JwtConfig, type JwtSessionPlugin, type SessionResolver } from '@svc-graphql/jwt-session';
import type { ForwardedSession } from '@svc-graphql/remote-schemas';
import { errorMessage, ServerOptionError } from './errors.js';
import type { Logger } from './observability/logger.js';
import type { ServerMetrics } from './observability/metrics.js';
import type { RequestRecords } from './request-record.js';
import type { ResolvedSettings } from './settings.js';

/**
 * The session resolver of the server (admin secret, JWT configurations, unauthorized role), shared
 * by the direct lane, `useJwtSession`, the metadata API and graphql-ws, so that keys and the token
 * cache are one. A configuration it refuses is a {@link ServerOptionError} naming `jwtSecret` or
 * `jwtSecrets`.
 */
export function createServerSessionResolver(settings: ResolvedSettings, logger: Logger, metrics: ServerMetrics | undefined): SessionResolver {
  const jwt = jwtOption(settings);
  try {
    return createSessionResolver({
      ...(jwt !== undefined && { jwt }),
      ...(settings.adminSecret !== undefined && { adminSecret: settings.adminSecret }),
      // Without an admin secret every request is admin: the unauthorized role would never apply.
      ...(settings.unauthorizedRole !== undefined && settings.adminSecret !== undefined && { unauthorizedRole: settings.unauthorizedRole }),
      ...(metrics && {
        hooks: {
          onJwtVerification: (result: string) => metrics.countJwtVerification(result),
          onJwksFetch: (outcome: 'ok' | 'error') => metrics.countJwksFetch(outcome),
        },
      }),
      logger,
    });
  } catch (error) {
    const option = errorMessage(error).startsWith('jwt-session: "unauthorizedRole"') ? 'unauthorizedRole' : settings.jwtSecrets === undefined ? 'jwtSecret' : 'jwtSecrets';
    throw new ServerOptionError(option, 'ERR_INVALID_OPTION', errorMessage(error), { cause: error });
  }
}

/**
 * The JWT configuration of the session: `jwtSecret` alone as one configuration, or `jwtSecrets` as
 * one per issuer with `jwtSecret`, when given too, first. Errors name the setting at fault.
 */
function jwtOption(settings: ResolvedSettings): JwtConfig | readonly JwtConfig[] | undefined {
  let single: JwtConfig | undefined;
  if (settings.jwtSecret !== undefined) {
    try {
      single = parseJwtConfig(settings.jwtSecret);
    } catch (error) {
      throw new ServerOptionError('jwtSecret', 'ERR_INVALID_OPTION', errorMessage(error), { cause: error });
    }
  }
  if (settings.jwtSecrets === undefined) return single;
  try {
    const list = parseJwtConfigs(settings.jwtSecrets);
    return single === undefined ? list : parseJwtConfigs([single, ...list]);
  } catch (error) {
    throw new ServerOptionError('jwtSecrets', 'ERR_INVALID_OPTION', errorMessage(error), { cause: error });
  }
}

/**
 * Puts on each HTTP request's record the session `jwt` resolved for it (listed right after `jwt`):
 * from there the registry picks the role's schema before the context is built, and the http-log
 * entry shows the role.
 */
export function useSessionRecord(records: RequestRecords, jwt: JwtSessionPlugin): Plugin {
  return {
    onRequest({ request, serverContext }) {
      const record = records.of(serverContext);
      if (record !== undefined && record.session === undefined) record.session = jwt.sessionOf(request);
    },
  };
}

/** The session of a GraphQL context, as remote-schemas forwards it: from the request's record. */
export function sessionOfRecord(records: RequestRecords): (context: unknown) => ForwardedSession | undefined {
  return (context) => {
    const session = records.of(context)?.session;
    return session && { role: session.role, variables: session.variables, isAdmin: session.isAdmin };
  };
}
