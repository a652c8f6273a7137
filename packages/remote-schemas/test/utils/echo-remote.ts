import { createSchema } from 'graphql-yoga';
import type { GraphQLSchema } from 'graphql';

export const echoTypeDefs = /* GraphQL */ `
  scalar JSON
  enum Color {
    RED
    GREEN
    BLUE
  }
  input Range {
    low: Int!
    high: Int!
  }
  input Filter {
    owner: ID!
    color: Color
    range: Range
    name: String
  }
  input Tenant {
    id: Int!
  }
  type Item {
    id: ID!
    label: String!
    secret: String
  }
  type Query {
    "Answers its arguments as JSON, as received."
    echo(userId: Int, note: String): String!
    colors(color: Color!, note: String): String!
    list(ids: [Int!]!, note: String): String!
    json(meta: JSON, note: String): String!
    fixed(tag: String!, limit: Int!, note: String): String!
    search(filter: Filter, note: String): String!
    searchMany(filters: [Filter!]!): String!
    scoped(tenant: Tenant!, note: String): String!
    ranged(range: Range = { low: 1, high: 2 }): String!
    items: [Item!]!
    secret: String
  }
  type Mutation {
    save(filter: Filter!): String!
  }
  type Subscription {
    "Emits its arguments as JSON once."
    ticks(userId: Int, filter: Filter): String!
  }
`;

const echo = (_: unknown, args: Record<string, unknown>) => JSON.stringify(args);

/**
 * A remote whose fields answer the arguments they received, as JSON: what presets add can be read
 * from the answer as well as from the request the remote received.
 */
export function createEchoSchema(): GraphQLSchema {
  return createSchema({
    typeDefs: echoTypeDefs,
    resolvers: {
      Query: {
        echo,
        colors: echo,
        list: echo,
        json: echo,
        fixed: echo,
        search: echo,
        searchMany: echo,
        scoped: echo,
        ranged: echo,
        items: () => [{ id: '1', label: 'one', secret: 's1' }],
        secret: () => 'top secret',
      },
      Mutation: { save: echo },
      Subscription: {
        ticks: {
          subscribe: async function* (_: unknown, args: Record<string, unknown>) {
            yield { ticks: JSON.stringify(args) };
          },
        },
      },
    },
  });
}

/** What role `user` may use of the echo remote: presets of every kind. */
export const echoUserPermission = /* GraphQL */ `
  scalar JSON
  enum Color {
    RED
    GREEN
  }
  input Range {
    low: Int! @preset(value: 0)
    high: Int!
  }
  input Filter {
    owner: ID! @preset(value: "x-svc-user-id")
    color: Color
    range: Range
    name: String
  }
  input Tenant {
    id: Int! @preset(value: "X-SVC-Tenant-Id")
  }
  type Item {
    id: ID!
    label: String!
  }
  type Query {
    echo(userId: Int @preset(value: "x-svc-user-id"), note: String): String!
    colors(color: Color! @preset(value: "x-svc-color"), note: String): String!
    list(ids: [Int!]! @preset(value: "x-svc-ids"), note: String): String!
    json(meta: JSON @preset(value: "x-svc-meta"), note: String): String!
    fixed(tag: String! @preset(value: "x-svc-not-a-variable", static: true), limit: Int! @preset(value: 5), note: String): String!
    search(filter: Filter, note: String): String!
    searchMany(filters: [Filter!]!): String!
    scoped(tenant: Tenant!, note: String): String!
    ranged(range: Range = { low: 1, high: 2 }): String!
    items: [Item!]!
  }
  type Mutation {
    save(filter: Filter!): String!
  }
  type Subscription {
    ticks(userId: Int @preset(value: "x-svc-user-id"), filter: Filter): String!
  }
`;
