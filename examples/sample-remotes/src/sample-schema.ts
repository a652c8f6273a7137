import { createSchema, createPubSub } from 'graphql-yoga';
import { GraphQLError, type GraphQLSchema } from 'graphql';

/** What every resolver of the sample remote can read from its context. */
export interface SampleContext {
  /** The request headers as received (HTTP) or from `connection_init` `payload.headers` (WebSocket). */
  receivedHeaders: Record<string, string>;
}

export const sampleTypeDefs = /* GraphQL */ `
  interface Node {
    id: ID!
  }
  enum Role {
    ADMIN
    EDITOR
    VIEWER
  }
  type User implements Node {
    id: ID!
    name: String!
    role: Role!
    posts: [Post!]!
  }
  type Post implements Node {
    id: ID!
    title: String!
    author: User!
  }
  union SearchResult = User | Post
  input MessageInput {
    text: String!
    author: String
  }
  type Message {
    id: ID!
    text: String!
    author: String
  }
  type Query {
    hello(name: String): String!
    remoteName: String!
    user(id: ID!): User
    users(role: Role): [User!]!
    node(id: ID!): Node
    search(term: String!): [SearchResult!]!
    messages: [Message!]!
    "Always fails with a field error."
    boom: String
    "Answers after the given number of milliseconds."
    slow(ms: Int!): String
    "The headers this request arrived with, as a JSON object (names lower-cased)."
    echoHeaders: String
  }
  type Mutation {
    addMessage(input: MessageInput!): Message!
  }
  type Subscription {
    countdown(from: Int!, intervalMs: Int): Int!
    messageAdded: Message!
    "Emits the headers of the subscription's connection once, as JSON."
    echoHeaders: String
  }
`;

interface UserRow {
  id: string;
  name: string;
  role: 'ADMIN' | 'EDITOR' | 'VIEWER';
}
interface PostRow {
  id: string;
  title: string;
  authorId: string;
}
interface MessageRow {
  id: string;
  text: string;
  author: string | null;
}

const users: UserRow[] = [
  { id: '1', name: 'Ada', role: 'ADMIN' },
  { id: '2', name: 'Grace', role: 'EDITOR' },
  { id: '3', name: 'Linus', role: 'VIEWER' },
];
const posts: PostRow[] = [
  { id: 'p1', title: 'Hello world', authorId: '1' },
  { id: 'p2', title: 'Compilers', authorId: '2' },
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Builds the sample schema; each call has its own message list and pub/sub. */
export function createSampleSchema(name: string): GraphQLSchema {
  const messages: MessageRow[] = [];
  const pubSub = createPubSub<{ messageAdded: [MessageRow] }>();
  return createSchema<SampleContext>({
    typeDefs: sampleTypeDefs,
    resolvers: {
      Node: {
        __resolveType: (obj: UserRow | PostRow) => ('title' in obj ? 'Post' : 'User'),
      },
      SearchResult: {
        __resolveType: (obj: UserRow | PostRow) => ('title' in obj ? 'Post' : 'User'),
      },
      User: {
        posts: (user: UserRow) => posts.filter((p) => p.authorId === user.id),
      },
      Post: {
        author: (post: PostRow) => users.find((u) => u.id === post.authorId),
      },
      Query: {
        hello: (_: unknown, args: { name?: string | null }) => `Hello, ${args.name ?? 'world'}!`,
        remoteName: () => name,
        user: (_: unknown, args: { id: string }) => users.find((u) => u.id === args.id) ?? null,
        users: (_: unknown, args: { role?: string | null }) =>
          args.role ? users.filter((u) => u.role === args.role) : users,
        node: (_: unknown, args: { id: string }) =>
          users.find((u) => u.id === args.id) ?? posts.find((p) => p.id === args.id) ?? null,
        search: (_: unknown, args: { term: string }) => {
          const term = args.term.toLowerCase();
          return [
            ...users.filter((u) => u.name.toLowerCase().includes(term)),
            ...posts.filter((p) => p.title.toLowerCase().includes(term)),
          ];
        },
        messages: () => messages,
        boom: () => {
          throw new GraphQLError('boom: this field always fails', { extensions: { code: 'BOOM' } });
        },
        slow: async (_: unknown, args: { ms: number }) => {
          await sleep(args.ms);
          return `slept ${args.ms} ms`;
        },
        echoHeaders: (_: unknown, __: unknown, ctx: SampleContext) => JSON.stringify(ctx.receivedHeaders),
      },
      Mutation: {
        addMessage: (_: unknown, args: { input: { text: string; author?: string | null } }) => {
          const message: MessageRow = {
            id: String(messages.length + 1),
            text: args.input.text,
            author: args.input.author ?? null,
          };
          messages.push(message);
          pubSub.publish('messageAdded', message);
          return message;
        },
      },
      Subscription: {
        countdown: {
          subscribe: async function* (_: unknown, args: { from: number; intervalMs?: number | null }) {
            for (let i = args.from; i >= 0; i--) {
              yield { countdown: i };
              if (i > 0) await sleep(args.intervalMs ?? 10);
            }
          },
        },
        messageAdded: {
          subscribe: () => pubSub.subscribe('messageAdded'),
          resolve: (message: MessageRow) => message,
        },
        echoHeaders: {
          subscribe: async function* (_: unknown, __: unknown, ctx: SampleContext) {
            yield { echoHeaders: JSON.stringify(ctx.receivedHeaders) };
          },
        },
      },
    },
  });
}
