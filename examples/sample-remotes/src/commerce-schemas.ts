import { GraphQLError, type GraphQLSchema } from 'graphql';
import { createSchema } from 'graphql-yoga';

/**
 * Three small services whose data refer to each other, for remote relationships: orders (each
 * with the id of its user), users (each with the id of their organization), organizations.
 * The data are fixed, so tests and benchmarks know every answer:
 *
 * - users `1`..`200`: `name` `User <n>`, `email` `user<n>@example.com`, `plan` FREE, PRO or
 *   ENTERPRISE by `n % 3`, `number` `n`, `orgId` `<n % 10 + 1>` (none for multiples of 7),
 *   `tags` `["t<n % 4>"]`; user `13`'s `email` is a field error (`email of user 13 is hidden`),
 *   and asking for user `666` is an error (`user 666 is suspended`).
 * - orders `1`..`1000`: `userId` `<(n - 1) % 40 + 1>` (none for multiples of 97), `userNumber`
 *   the same as a number, `total` `n * 1.5`, `status` by `n % 3`, `plan` the user's plan.
 * - organizations `1`..`10`: `name` `Org <n>`.
 */

export const PLANS = ['FREE', 'PRO', 'ENTERPRISE'] as const;

export interface UserRecord {
  id: string;
  number: number;
  name: string;
  email: string;
  plan: (typeof PLANS)[number];
  orgId: string | null;
  tags: string[];
}

export function userRecord(n: number): UserRecord | undefined {
  if (!Number.isInteger(n) || n < 1 || n > 200) return undefined;
  return {
    id: String(n),
    number: n,
    name: `User ${n}`,
    email: `user${n}@example.com`,
    plan: PLANS[n % 3]!,
    orgId: n % 7 === 0 ? null : String((n % 10) + 1),
    tags: [`t${n % 4}`],
  };
}

export interface OrderRecord {
  id: string;
  userId: string | null;
  userNumber: number | null;
  total: number;
  status: 'NEW' | 'PAID' | 'SHIPPED';
  plan: (typeof PLANS)[number];
}

const STATUSES = ['NEW', 'PAID', 'SHIPPED'] as const;

export function orderRecord(n: number): OrderRecord | undefined {
  if (!Number.isInteger(n) || n < 1 || n > 1000) return undefined;
  const user = (n - 1) % 40 + 1;
  return {
    id: String(n),
    userId: n % 97 === 0 ? null : String(user),
    userNumber: n % 97 === 0 ? null : user,
    total: n * 1.5,
    status: STATUSES[n % 3]!,
    plan: PLANS[user % 3]!,
  };
}

function userById(id: unknown): UserRecord | null {
  if (id === '666' || id === 666) throw new GraphQLError('user 666 is suspended', { extensions: { code: 'SUSPENDED' } });
  return userRecord(Number(id)) ?? null;
}

export const usersTypeDefs = /* GraphQL */ `
  enum Plan {
    FREE
    PRO
    ENTERPRISE
  }
  type User {
    id: ID!
    number: Int!
    name: String!
    email: String!
    plan: Plan!
    orgId: ID
    tags: [String!]!
  }
  input UserFilter {
    ids: [ID!]
    plan: Plan
  }
  type Query {
    user(id: ID!): User
    userByNumber(number: Int!): User
    "Users in the order of the ids, null for an id without a user."
    usersByIds(ids: [ID!]!): [User]!
    usersByPlan(plan: Plan!, limit: Int = 5): [User!]!
    usersByTags(tags: [String!]!): [User!]!
    users(filter: UserFilter, limit: Int = 10): [User!]!
  }
`;

/** The users service. */
export function createUsersSchema(): GraphQLSchema {
  return createSchema({
    typeDefs: usersTypeDefs,
    resolvers: {
      User: {
        email: (user: UserRecord) => {
          if (user.id === '13') throw new GraphQLError('email of user 13 is hidden', { extensions: { code: 'HIDDEN' } });
          return user.email;
        },
      },
      Query: {
        user: (_: unknown, { id }: { id: string }) => userById(id),
        userByNumber: (_: unknown, { number }: { number: number }) => userById(number),
        usersByIds: (_: unknown, { ids }: { ids: string[] }) => ids.map((id) => userRecord(Number(id)) ?? null),
        usersByPlan: (_: unknown, { plan, limit }: { plan: string; limit: number }) =>
          allUsers().filter((user) => user.plan === plan).slice(0, Math.max(0, limit)),
        usersByTags: (_: unknown, { tags }: { tags: string[] }) => allUsers().filter((user) => user.tags.some((tag) => tags.includes(tag))).slice(0, 5),
        users: (_: unknown, { filter, limit }: { filter?: { ids?: string[]; plan?: string }; limit: number }) =>
          allUsers()
            .filter((user) => (filter?.ids ? filter.ids.includes(user.id) : true) && (filter?.plan ? user.plan === filter.plan : true))
            .slice(0, Math.max(0, limit)),
      },
    },
  });
}

function allUsers(): UserRecord[] {
  return Array.from({ length: 200 }, (_, i) => userRecord(i + 1)!);
}

export const ordersTypeDefs = /* GraphQL */ `
  enum Plan {
    FREE
    PRO
    ENTERPRISE
  }
  enum OrderStatus {
    NEW
    PAID
    SHIPPED
  }
  type Order {
    id: ID!
    userId: ID
    userNumber: Int
    total: Float!
    status: OrderStatus!
    "The plan of the order's user."
    plan: Plan!
    tags: [String!]!
    lines: [OrderLine!]!
  }
  type OrderLine {
    sku: String!
    quantity: Int!
    "The user who packed this line."
    packerId: ID!
  }
  type Query {
    order(id: ID!): Order
    "Orders from offset + 1 on."
    orders(first: Int = 20, offset: Int = 0, status: OrderStatus): [Order!]!
    "Orders by page: a list of lists."
    orderPages(pages: Int = 2, size: Int = 3): [[Order!]!]!
  }
  type Mutation {
    placeOrder(userId: ID, total: Float!): Order!
  }
  type Subscription {
    "Orders 1, 2, … one every intervalMs."
    orderPlaced(count: Int = 3, intervalMs: Int = 10): Order!
  }
`;

function withLines(order: OrderRecord) {
  const n = Number(order.id);
  return {
    ...order,
    tags: [`t${n % 4}`],
    lines: [
      { sku: `sku-${n}-a`, quantity: 1, packerId: String((n % 5) + 1) },
      { sku: `sku-${n}-b`, quantity: 2, packerId: String((n % 5) + 2) },
    ],
  };
}

/** The orders service: `placeOrder` gives new orders ids from 1001 on. */
export function createOrdersSchema(): GraphQLSchema {
  let placed = 1000;
  return createSchema({
    typeDefs: ordersTypeDefs,
    resolvers: {
      Query: {
        order: (_: unknown, { id }: { id: string }) => {
          const order = orderRecord(Number(id));
          return order ? withLines(order) : null;
        },
        orders: (_: unknown, { first, offset, status }: { first: number; offset: number; status?: string }) => {
          const out = [];
          for (let n = offset + 1; n <= 1000 && out.length < Math.max(0, first); n++) {
            const order = orderRecord(n)!;
            if (!status || order.status === status) out.push(withLines(order));
          }
          return out;
        },
        orderPages: (_: unknown, { pages, size }: { pages: number; size: number }) =>
          Array.from({ length: Math.min(Math.max(0, pages), 20) }, (_, page) =>
            Array.from({ length: Math.min(Math.max(0, size), 50) }, (_, i) => withLines(orderRecord(page * size + i + 1)!)),
          ),
      },
      Mutation: {
        placeOrder: (_: unknown, { userId, total }: { userId?: string | null; total: number }) => {
          placed++;
          const user = userId ? userRecord(Number(userId)) : undefined;
          return withLines({
            id: String(placed),
            userId: userId ?? null,
            userNumber: user?.number ?? null,
            total,
            status: 'NEW',
            plan: user?.plan ?? 'FREE',
          });
        },
      },
      Subscription: {
        orderPlaced: {
          subscribe: async function* (_: unknown, { count, intervalMs }: { count: number; intervalMs: number }) {
            for (let n = 1; n <= Math.min(count, 1000); n++) {
              await new Promise((resolve) => setTimeout(resolve, Math.max(0, intervalMs)));
              yield { orderPlaced: withLines(orderRecord(n)!) };
            }
          },
        },
      },
    },
  });
}

export const orgsTypeDefs = /* GraphQL */ `
  type Org {
    id: ID!
    name: String!
    country: String!
  }
  type Query {
    org(id: ID!): Org
    orgs(ids: [ID!]!): [Org]!
  }
`;

function orgRecord(id: unknown) {
  const n = Number(id);
  return Number.isInteger(n) && n >= 1 && n <= 10 ? { id: String(n), name: `Org ${n}`, country: n % 2 === 0 ? 'FR' : 'DE' } : null;
}

/** The organizations service. */
export function createOrgsSchema(): GraphQLSchema {
  return createSchema({
    typeDefs: orgsTypeDefs,
    resolvers: {
      Query: {
        org: (_: unknown, { id }: { id: string }) => orgRecord(id),
        orgs: (_: unknown, { ids }: { ids: string[] }) => ids.map(orgRecord),
      },
    },
  });
}
