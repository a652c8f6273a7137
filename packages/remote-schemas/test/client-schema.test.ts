import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildClientSchema, buildSchema, introspectionFromSchema, printSchema, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { createGeneratedSchema, createSampleSchema } from '@svc-graphql/sample-remotes';
import { buildClientSchemaInSteps } from '../src/client-schema.js';
import { runInSlices } from '../src/slices.js';

// A schema with every kind of definition the introspection query can describe.
const RICH = buildSchema(/* GraphQL */ `
  "The schema's own description"
  schema {
    query: Root
    mutation: Change
    subscription: Feed
  }
  "A custom scalar"
  scalar Instant @specifiedBy(url: "https://example.com/instant")
  scalar JSON
  directive @cached(seconds: Int = 60, scopes: [Scope!] = [PUBLIC]) repeatable on FIELD_DEFINITION | OBJECT
  directive @tag(name: String!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
  enum Scope {
    PUBLIC
    "only for staff"
    PRIVATE @deprecated(reason: "use STAFF")
    STAFF
  }
  interface Node {
    id: ID!
  }
  interface Named implements Node {
    id: ID!
    name(upper: Boolean = false, locale: String @deprecated): String
  }
  "A user"
  type User implements Named & Node {
    id: ID!
    name(upper: Boolean = false, locale: String @deprecated): String
    friends(first: Int = 10, after: String, filter: UserFilter = { scope: PUBLIC, tags: ["a", "b"] }): [User!]!
    born: Instant
    extra: JSON @deprecated(reason: "gone soon")
    matrix: [[Int]]
  }
  type Group implements Node {
    id: ID!
    members: [User]
  }
  union Member = User | Group
  input UserFilter {
    scope: Scope = PUBLIC
    tags: [String!]
    nested: UserFilter
    old: Int @deprecated(reason: "unused")
  }
  input OneKey @oneOf {
    id: ID
    name: String
  }
  type Root {
    node(id: ID!): Node
    member(key: OneKey!): Member
    users(filter: UserFilter): [User!]
  }
  type Change {
    rename(id: ID!, name: String!): User
  }
  type Feed {
    joined: User
  }
`);

function introspectionOf(schema: GraphQLSchema): IntrospectionQuery {
  return introspectionFromSchema(schema, { specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true });
}

async function ours(introspection: IntrospectionQuery): Promise<GraphQLSchema> {
  return runInSlices(buildClientSchemaInSteps(introspection), 0);
}

/** What graphql-js makes of `introspection`: its schema's own introspection, or its error message. */
function outcome(build: () => GraphQLSchema): { schema: IntrospectionQuery; sdl: string } | { error: string } {
  try {
    const schema = build();
    return { schema: introspectionOf(schema), sdl: printSchema(schema) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

describe('buildClientSchemaInSteps', () => {
  it.each([
    ['every kind of definition', RICH],
    ['the sample remote', createSampleSchema('sample')],
    ['a generated remote of 300 types', createGeneratedSchema({ types: 300 })],
  ])('builds %s exactly as graphql-js buildClientSchema does', async (_name, schema) => {
    const introspection = introspectionOf(schema);
    const built = await ours(introspection);
    const expected = buildClientSchema(introspection);
    expect(printSchema(built)).toBe(printSchema(expected));
    expect(introspectionOf(built)).toEqual(introspectionOf(expected));
    expect(built.getDirective('cached')?.isRepeatable ?? false).toBe(expected.getDirective('cached')?.isRepeatable ?? false);
  });

  it('uses graphql-js instances for the standard scalars and introspection types', async () => {
    const built = await ours(introspectionOf(RICH));
    const expected = buildClientSchema(introspectionOf(RICH));
    for (const name of ['String', 'Int', 'Boolean', 'ID', '__Type', '__Schema']) {
      expect(built.getType(name)).toBe(expected.getType(name));
    }
  });

  it('pauses between types: a 2,000-type schema is built in many steps', async () => {
    const steps = buildClientSchemaInSteps(introspectionOf(createGeneratedSchema({ types: 2000 })));
    let pauses = 0;
    let step = steps.next();
    while (!step.done) {
      pauses++;
      step = steps.next();
    }
    expect(pauses).toBeGreaterThan(2000);
    expect(Object.keys(step.value.getTypeMap()).length).toBeGreaterThan(2000);
  });

  it('refuses a type reference without a name, as graphql-js does, even where a type is named "null" or "false"', async () => {
    const base = introspectionOf(buildSchema('type Query { a: null b: Int } type null { x: Int } type false { y: Int }'));
    for (const name of [null, false, '']) {
      const fieldRef = structuredClone(base) as unknown as { __schema: { types: Array<{ name: string; fields: Array<{ name: string; type: unknown }> | null }> } };
      const query = fieldRef.__schema.types.find((type) => type.name === 'Query');
      const field = query?.fields?.find((f) => f.name === 'b');
      if (field) field.type = { kind: 'OBJECT', name, ofType: null };
      const rootRef = structuredClone(base) as unknown as { __schema: { queryType: unknown } };
      rootRef.__schema.queryType = { name };
      for (const damaged of [fieldRef, rootRef] as unknown as IntrospectionQuery[]) {
        const expected = outcome(() => buildClientSchema(damaged));
        expect(expected).toHaveProperty('error');
        await expect(ours(damaged)).rejects.toThrow((expected as { error: string }).error);
      }
    }
  });

  it('agrees with graphql-js on damaged introspection results: the same schema or the same error', async () => {
    const base = introspectionOf(RICH);
    // A damage: a path into the result and what to put there (or remove).
    const paths: (string | number)[][] = [];
    const walk = (value: unknown, path: (string | number)[]) => {
      if (path.length > 0) paths.push(path);
      if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...path, i]));
      else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
    };
    walk(base, []);
    const replacement = fc.oneof(
      fc.constant<unknown>(undefined),
      fc.constant(null),
      fc.constant(''),
      fc.constant('User'),
      fc.constant('Nope'),
      fc.constantFrom('OBJECT', 'INTERFACE', 'UNION', 'ENUM', 'INPUT_OBJECT', 'SCALAR', 'LIST', 'NON_NULL'),
      fc.constant([]),
      fc.constant({}),
      fc.integer(),
      fc.constant('"x"'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...paths), replacement), { minLength: 1, maxLength: 3 }), async (damages) => {
        const damaged = structuredClone(base) as unknown as Record<string | number, unknown>;
        for (const [path, value] of damages) {
          let target: Record<string | number, unknown> | undefined = damaged;
          for (const key of path.slice(0, -1)) {
            const next: unknown = target?.[key];
            target = next !== null && typeof next === 'object' ? (next as Record<string | number, unknown>) : undefined;
          }
          const last = path[path.length - 1] as string | number;
          if (target === undefined) continue;
          if (value === undefined) delete target[last];
          else target[last] = value;
        }
        const introspection = damaged as unknown as IntrospectionQuery;
        const expected = outcome(() => buildClientSchema(introspection));
        let actual: ReturnType<typeof outcome>;
        try {
          const schema = await ours(introspection);
          actual = outcome(() => schema);
        } catch (error) {
          actual = { error: error instanceof Error ? error.message : String(error) };
        }
        expect(actual).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
