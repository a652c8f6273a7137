import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, Repeater, type Plugin } from 'graphql-yoga';
import { useJwtSession, type JwtSessionOptions, type Session, type SessionResolver } from '../../src/index.js';

export const silentLogger = { debug() {}, info() {}, warn() {}, error() {} };

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface TestApp {
  readonly url: string;
  readonly server: Server;
  /** POSTs `{ session }` with these headers. */
  query(headers?: Record<string, string>, query?: string): Promise<Answer>;
  /** `ticks` subscriptions whose source is still running (not yet returned or finished). */
  readonly liveTicks: number;
  close(): Promise<void>;
}

function testSchema(live: { ticks: number }) {
  return createSchema<{ session?: Session }>({
    typeDefs: /* GraphQL */ `
      type Query {
        session: String
        hello: String
      }
      type Subscription {
        "1, 2, 3… every 100 ms; \`count\` of them, or until the subscription is ended."
        ticks(count: Int): Int
      }
    `,
    resolvers: {
      Query: {
        session: (_root, _args, context) => JSON.stringify(context.session ?? null),
        hello: () => 'world',
      },
      Subscription: {
        ticks: {
          subscribe: (_root, args: { count?: number | null }) =>
            new Repeater<number>(async (push, stop) => {
              live.ticks += 1;
              let n = 0;
              const interval = setInterval(() => {
                n += 1;
                void push(n);
                if (n === args.count) stop();
              }, 100);
              await stop;
              clearInterval(interval);
              live.ticks -= 1;
            }),
          resolve: (value: number) => value,
        },
      },
    },
  });
}

/** A real Yoga app with `useJwtSession` on 127.0.0.1, port 0. Headers up to 64 KiB are accepted. */
export async function startApp(
  options: JwtSessionOptions | { resolver: SessionResolver },
  extraPlugins: Plugin[] = [],
): Promise<TestApp> {
  const plugin = useJwtSession('resolver' in options ? options : { logger: silentLogger, ...options });
  const live = { ticks: 0 };
  const yoga = createYoga({ schema: testSchema(live), logging: false, plugins: [...extraPlugins, plugin] });
  const server = createServer({ maxHeaderSize: 64 * 1024 }, yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/graphql`;
  return {
    url,
    server,
    get liveTicks() {
      return live.ticks;
    },
    async query(headers = {}, query = '{ session }') {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, body, text };
    },
    async close() {
      await yoga.dispose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The session a successful `{ session }` answer carries. */
export function sessionOf(answer: Answer): Record<string, unknown> {
  const data = (answer.body as { data?: { session?: string } } | undefined)?.data;
  if (answer.status !== 200 || typeof data?.session !== 'string') {
    throw new Error(`expected a session, got ${answer.status} ${answer.text}`);
  }
  return JSON.parse(data.session) as Record<string, unknown>;
}

/** The exact error body a refused request gets. */
export function errorBody(code: string, message: string): unknown {
  return { errors: [{ message, extensions: { code, path: '$' } }] };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
