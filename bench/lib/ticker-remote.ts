// The schema of a remote whose subscription `tick` sends one event per interval to each
// subscriber, naming the user of its connection (the `x-svc-user-id` of `connection_init`) and
// the time it was sent, for bench subscriptions (served by remote-server.ts, kind `ticker`).
import type { GraphQLSchema } from 'graphql';
import { createSchema } from 'graphql-yoga';

/** Milliseconds since the epoch, sub-millisecond: comparable across the processes of one machine. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The remote's schema, and how many events it has sent so far. */
export function tickerSchema(): { schema: GraphQLSchema; sent(): number } {
  let sent = 0;
  const schema = createSchema<{ receivedHeaders: Record<string, string> }>({
    typeDefs: /* GraphQL */ `
      type Query {
        ok: Boolean!
      }
      type Tick {
        user: String!
        seq: Int!
        sentAt: Float!
      }
      type Subscription {
        "One event every intervalMs, the first after a random part of it; each keeps its phase."
        tick(intervalMs: Int! = 1000): Tick!
      }
    `,
    resolvers: {
      Query: { ok: () => true },
      Subscription: {
        tick: {
          subscribe: async function* (_: unknown, { intervalMs }: { intervalMs: number }, context: { receivedHeaders: Record<string, string> }) {
            const user = context.receivedHeaders['x-svc-user-id'] ?? '';
            // Each subscriber keeps the phase it drew: event `seq` is due at first + seq * intervalMs.
            // (Sleeping intervalMs after each event instead would carry every delay into the
            // following seconds: after a pause of this process, the subscribers it held back would
            // go on ticking together, a burst every second that no one sent on purpose.)
            const first = now() + Math.random() * intervalMs;
            for (let seq = 0; ; seq++) {
              await sleep(first + seq * intervalMs - now());
              sent++;
              yield { tick: { user, seq, sentAt: now() } };
            }
          },
        },
      },
    },
  });
  return { schema, sent: () => sent };
}
