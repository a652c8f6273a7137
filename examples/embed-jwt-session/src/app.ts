import {
  REQUIRES_SCOPES_DIRECTIVE_SDL,
  DIRECTIVE_SDL as AUTHENTICATED_DIRECTIVE_SDL,
  useGenericAuth,
} from '@envelop/generic-auth';
import { useJwtSession, type JwtSessionOptions, type JwtSessionPlugin, type Session } from '@svc-graphql/jwt-session';
import {
  createRemoteSchemaRegistry,
  useRemoteSchemas,
  type RemoteSchemaProblem,
  type RemoteSchemaRegistry,
} from '@svc-graphql/remote-schemas';
import { createSchema, createYoga, type YogaServerInstance } from 'graphql-yoga';

/** The role given to requests without a token; generic-auth sees them as "no user". */
export const ANONYMOUS_ROLE = 'anonymous';

/** The name the remote is stitched in under (it appears in problems and logs). */
export const REMOTE_NAME = 'sample';

/**
 * What the `user` role may use of the remote (the sample remote of examples/sample-remotes), in
 * the remote's own names: its own user only (the `id` argument is taken from the token's
 * `x-svc-user-id` and hidden from the role), and `hello`. Every other role but admin sees nothing
 * of the remote.
 */
export const USER_GRANT = /* GraphQL */ `
  type User {
    id: ID!
    name: String!
  }
  type Query {
    hello(name: String): String!
    user(id: ID! @preset(value: "x-svc-user-id")): User
  }
`;

interface Context {
  session: Session;
}

const typeDefs = /* GraphQL */ `
  ${AUTHENTICATED_DIRECTIVE_SDL}
  ${REQUIRES_SCOPES_DIRECTIVE_SDL}

  type Query {
    "Anyone, token or not."
    greeting: String!
    "Any holder of a valid token."
    me: Me! @authenticated
    "Only tokens acting as the editor or admin role (pick it with the x-svc-role header)."
    drafts: [String!]! @requiresScopes(scopes: [["editor"], ["admin"]])
  }

  type Me {
    role: String!
    userId: String
  }
`;

const localSchema = createSchema<Context>({
  typeDefs,
  resolvers: {
    Query: {
      greeting: (_root, _args, { session }) => `hello, ${session.role}`,
      me: (_root, _args, { session }) => ({ role: session.role, userId: session.variables['x-svc-user-id'] ?? null }),
      drafts: () => ['a draft'],
    },
  },
});

export interface AppOptions extends Omit<JwtSessionOptions, 'jwt' | 'unauthorizedRole'> {
  /** The GraphQL endpoint of the remote to stitch next to the local schema, e.g. the sample remote's. */
  remoteUrl: string;
}

export interface App {
  readonly yoga: YogaServerInstance<Record<string, unknown>, Context>;
  /** Why the remote, or the `user` role's permission on it, is not served (empty when all is well). */
  readonly problems: readonly RemoteSchemaProblem[];
  /** Stops Yoga's plugins and the registry (its sockets to the remote and its retry timers). */
  dispose(): Promise<void>;
}

/**
 * Builds a Yoga app that authenticates with `useJwtSession`, serves a local schema next to a
 * role-limited remote, and authorizes the local fields with `@envelop/generic-auth`:
 *
 * - the session is generic-auth's "user" and its role is its one scope, so `@authenticated` means
 *   "holds a valid token" and `@requiresScopes(scopes: [["editor"]])` "acts as `editor`";
 * - with remote schema permissions on, the `user` role is served {@link USER_GRANT} of the remote,
 *   with the `id` of `user` preset from its token, other roles none of it, admin all of it.
 *
 * @param jwt the JWT configuration (object or JSON text), e.g. `{ type: 'HS256', key }`.
 */
export async function createApp(jwt: NonNullable<JwtSessionOptions['jwt']>, options: AppOptions): Promise<App> {
  const { remoteUrl, ...sessionOptions } = options;
  // Made with Yoga below; it resolves each request's session in its onRequest.
  let jwtSession: JwtSessionPlugin | undefined;
  const registry: RemoteSchemaRegistry = createRemoteSchemaRegistry({
    localSchema,
    ...(options.logger !== undefined && { logger: options.logger }),
    enableRemoteSchemaPermissions: true,
    // The schema of a request is chosen before its context is built, so the session is taken from
    // the plugin, which resolved it in its onRequest.
    getSession: (context) => {
      const { request, session } = (context ?? {}) as { request?: Request; session?: Session };
      return session ?? (request === undefined ? undefined : jwtSession?.sessionOf(request));
    },
  });
  try {
    const plan = await registry.plan([
      { name: REMOTE_NAME, definition: { url: remoteUrl }, permissions: [{ role: 'user', schema: USER_GRANT }] },
    ]);
    registry.commit(plan);
    // Requests without a token get the anonymous role instead of a 401, so public fields work.
    jwtSession = useJwtSession({ ...sessionOptions, jwt, unauthorizedRole: ANONYMOUS_ROLE });
    const yoga = createYoga<Record<string, unknown>, Context>({
      plugins: [
        jwtSession,
        // No `schema` above: this plugin serves the local schema with the remote, per role.
        useRemoteSchemas(registry),
        useGenericAuth<Session, Context>({
          mode: 'protect-granular',
          resolveUserFn: ({ session }) => (session.role === ANONYMOUS_ROLE ? null : session),
          // generic-auth also asks for the scopes of "no user" (null), which has none.
          extractScopes: (session: Session | null) => (session === null ? [] : [session.role]),
        }),
      ],
    });
    return {
      yoga,
      problems: plan.problems,
      async dispose() {
        await yoga.dispose();
        await registry.dispose();
      },
    };
  } catch (error) {
    await registry.dispose();
    throw error;
  }
}
