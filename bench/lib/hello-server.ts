// Server module for `pnpm bench auth`: Yoga `{ hello }` on its own, or the same app with
// useJwtSession. Runs in a child process (see child.ts).
import { createSchema, createYoga } from 'graphql-yoga';
// By path: bench/ is not a workspace package, so the package name does not resolve from here.
import { useJwtSession } from '../../packages/jwt-session/src/index.js';
import type { StartedServer } from './child-protocol.js';
import { listen } from './http.js';

export interface HelloServerOptions {
  /** The JWT configuration (`{type, key}`); absent = bare Yoga. */
  readonly jwt?: { readonly type: string; readonly key: string };
}

interface HelloContext {
  session?: { role: string };
}

/** The app itself, also driven in-process (without HTTP) by the auth benchmark. */
export function createHelloYoga(options: HelloServerOptions) {
  return createYoga({
    schema: createSchema({
      typeDefs: 'type Query { hello: String! }',
      // The role in the answer proves that the plugin authenticated the request it answered.
      resolvers: { Query: { hello: (_root: unknown, _args: unknown, context: HelloContext) => (context.session ? `hello ${context.session.role}` : 'world') } },
    }),
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    plugins: options.jwt ? [useJwtSession({ jwt: options.jwt, adminSecret: 'bench-admin-secret' })] : [],
  });
}

export async function start(raw: unknown): Promise<StartedServer> {
  return listen(createHelloYoga(raw as HelloServerOptions));
}
