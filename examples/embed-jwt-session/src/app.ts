import {
  REQUIRES_SCOPES_DIRECTIVE_SDL,
  DIRECTIVE_SDL as AUTHENTICATED_DIRECTIVE_SDL,
  useGenericAuth,
} from '@envelop/generic-auth';
import { useJwtSession, type JwtSessionOptions, type Session } from '@svc-graphql/jwt-session';
import { createSchema, createYoga } from 'graphql-yoga';

/** The role given to requests without a token; generic-auth sees them as "no user". */
export const ANONYMOUS_ROLE = 'anonymous';

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

/**
 * Builds a Yoga app that authenticates with `useJwtSession` and authorizes with
 * `@envelop/generic-auth`: the session is the "user", its role is its one scope.
 *
 * @param jwt the JWT configuration (object or JSON text), e.g. `{ type: 'HS256', key }`.
 */
export function createApp(
  jwt: NonNullable<JwtSessionOptions['jwt']>,
  options: Omit<JwtSessionOptions, 'jwt' | 'unauthorizedRole'> = {},
) {
  return createYoga({
    schema: createSchema<Context>({
      typeDefs,
      resolvers: {
        Query: {
          greeting: (_root, _args, { session }) => `hello, ${session.role}`,
          me: (_root, _args, { session }) => ({ role: session.role, userId: session.variables['x-svc-user-id'] ?? null }),
          drafts: () => ['a draft'],
        },
      },
    }),
    plugins: [
      // Requests without a token get the anonymous role instead of a 401, so public fields work.
      useJwtSession({ ...options, jwt, unauthorizedRole: ANONYMOUS_ROLE }),
      useGenericAuth<Session, Context>({
        mode: 'protect-granular',
        resolveUserFn: ({ session }) => (session.role === ANONYMOUS_ROLE ? null : session),
        // generic-auth also asks for the scopes of "no user" (null), which has none.
        extractScopes: (session: Session | null) => (session === null ? [] : [session.role]),
      }),
    ],
  });
}
