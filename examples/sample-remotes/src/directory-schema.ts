import { createSchema } from 'graphql-yoga';
import { GraphQLError, type GraphQLSchema } from 'graphql';

/**
 * A remote whose answers mix types and enum values that narrow roles are not granted: an interface
 * and a union with three members each, enums of which a role may see part, in single values,
 * lists and non-null places, and subscriptions that go on until they are stopped.
 */
export const directoryTypeDefs = /* GraphQL */ `
  interface Node {
    id: ID!
  }
  enum Role {
    ADMIN
    EDITOR
    VIEWER
  }
  enum Visibility {
    PUBLIC
    PRIVATE
  }
  type User implements Node {
    id: ID!
    name: String!
    role: Role!
    "Every role the user has had, oldest first."
    roles: [Role!]!
    "The nodes this user follows: users, posts and secrets."
    follows: [Node!]!
    "The user's newest node, whatever its type."
    latest: Node
  }
  type Post implements Node {
    id: ID!
    title: String!
    visibility: Visibility!
  }
  type Secret implements Node {
    id: ID!
    code: String!
  }
  union SearchResult = User | Post | Secret
  type Query {
    node(id: ID!): Node
    requiredNode(id: ID!): Node!
    nodes: [Node!]!
    search(term: String): [SearchResult!]!
    user(id: ID!): User
    users: [User!]!
    roles: [Role!]!
    requiredRole(userId: ID!): Role!
    "Answers after the given number of milliseconds."
    slow(ms: Int!): String
    "Always fails, with an error that names the node's type and its owner's role."
    audit(id: ID!): String
  }
  type Subscription {
    "The nodes, one per event, in the order u1, p1, u2, s1, u3, again and again."
    nodeAdded(intervalMs: Int): Node
    "The roles of users 1, 2 and 3 in turn, again and again."
    roleChanged(intervalMs: Int): Role!
    "Users 1, 2 and 3 in turn (those of the given roles only, when given), again and again."
    userUpdated(intervalMs: Int, roles: [Role!]): User!
  }
`;

interface UserRow {
  id: string;
  name: string;
  role: 'ADMIN' | 'EDITOR' | 'VIEWER';
  roles: Array<'ADMIN' | 'EDITOR' | 'VIEWER'>;
  follows: string[];
  latest: string | null;
}
interface PostRow {
  id: string;
  title: string;
  visibility: 'PUBLIC' | 'PRIVATE';
}
interface SecretRow {
  id: string;
  code: string;
}
type Row = (UserRow & { kind: 'User' }) | (PostRow & { kind: 'Post' }) | (SecretRow & { kind: 'Secret' });

const rows: Row[] = [
  { kind: 'User', id: 'u1', name: 'Ada', role: 'ADMIN', roles: ['VIEWER', 'EDITOR', 'ADMIN'], follows: ['u2', 's1', 'p1', 'u3'], latest: 's1' },
  { kind: 'User', id: 'u2', name: 'Grace', role: 'EDITOR', roles: ['VIEWER', 'EDITOR'], follows: ['p1', 'u1'], latest: 'p1' },
  { kind: 'User', id: 'u3', name: 'Linus', role: 'VIEWER', roles: ['VIEWER'], follows: [], latest: 'u2' },
  { kind: 'Post', id: 'p1', title: 'Hello world', visibility: 'PUBLIC' },
  { kind: 'Post', id: 'p2', title: 'Compilers', visibility: 'PRIVATE' },
  { kind: 'Secret', id: 's1', code: 'swordfish' },
];
const byId = new Map(rows.map((row) => [row.id, row]));
const users = rows.filter((row): row is UserRow & { kind: 'User' } => row.kind === 'User');
const NODE_ORDER = ['u1', 'p1', 'u2', 's1', 'u3'];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Emits `values[0]` at once, then `values[1]`, … and from the start again, every `intervalMs`,
 * until stopped. A plain iterator rather than a generator: one stopped while it waits lets its
 * timer go at once (a generator would wait out the interval).
 */
function cycle<T>(values: readonly T[], intervalMs: number | null | undefined): AsyncIterableIterator<T> {
  let index = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const done: IteratorResult<T> = { done: true, value: undefined };
  return {
    async next() {
      if (stopped) return done;
      if (index > 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, intervalMs ?? 10);
        });
        if (stopped) return done;
      }
      const value = values[index % values.length]!;
      index++;
      return { done: false, value };
    },
    async return() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      return done;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export function createDirectorySchema(): GraphQLSchema {
  return createSchema({
    typeDefs: directoryTypeDefs,
    resolvers: {
      Node: { __resolveType: (row: Row) => row.kind },
      SearchResult: { __resolveType: (row: Row) => row.kind },
      User: {
        follows: (user: UserRow) => user.follows.map((id) => byId.get(id)),
        latest: (user: UserRow) => (user.latest === null ? null : byId.get(user.latest)),
      },
      Query: {
        node: (_: unknown, args: { id: string }) => byId.get(args.id) ?? null,
        requiredNode: (_: unknown, args: { id: string }) => byId.get(args.id),
        nodes: () => NODE_ORDER.map((id) => byId.get(id)),
        search: (_: unknown, args: { term?: string | null }) => {
          const term = (args.term ?? '').toLowerCase();
          return rows.filter((row) => JSON.stringify(row).toLowerCase().includes(term));
        },
        user: (_: unknown, args: { id: string }) => users.find((user) => user.id === args.id) ?? null,
        users: () => users,
        roles: () => ['ADMIN', 'EDITOR', 'VIEWER'],
        requiredRole: (_: unknown, args: { userId: string }) => users.find((user) => user.id === args.userId)?.role,
        audit: (_: unknown, args: { id: string }) => {
          const row = byId.get(args.id);
          throw new GraphQLError(`${row?.kind ?? 'Node'} ${args.id} belongs to ADMIN`, {
            extensions: { code: 'FORBIDDEN', kind: row?.kind ?? null, owner: { role: 'ADMIN' } },
          });
        },
        slow: async (_: unknown, args: { ms: number }) => {
          await sleep(args.ms);
          return `slept ${args.ms} ms`;
        },
      },
      Subscription: {
        nodeAdded: {
          subscribe: (_: unknown, args: { intervalMs?: number | null }) => cycle(NODE_ORDER.map((id) => byId.get(id)), args.intervalMs),
          resolve: (row: Row) => row,
        },
        roleChanged: {
          subscribe: (_: unknown, args: { intervalMs?: number | null }) => cycle(users.map((user) => user.role), args.intervalMs),
          resolve: (role: string) => role,
        },
        userUpdated: {
          subscribe: (_: unknown, args: { intervalMs?: number | null; roles?: string[] | null }) =>
            cycle(args.roles ? users.filter((user) => args.roles!.includes(user.role)) : users, args.intervalMs),
          resolve: (user: UserRow) => user,
        },
      },
    },
  });
}
