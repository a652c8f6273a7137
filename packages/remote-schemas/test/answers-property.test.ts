import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema, execute, parse, validate, type ExecutionResult } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';
import { executableRemote, modelArb, operationFor, referenceResolvers, remoteSdl, roleArb, roleSdl } from './utils/narrow-world.js';

/**
 * Property: for a random remote schema with interfaces, unions and enums, a random part of it
 * granted to a role, random operations valid for that role and a random world of answers from a
 * real remote, the gateway's answer never holds a type, enum value or field outside the role's
 * schema, and is what graphql-js answers executing the operation on the role's schema over the
 * world with what the role may not see left out. With and without customization (type name
 * prefix and a namespace: compiled plans instead of the fast path).
 *
 * `ANSWERS_PROPERTY_RUNS` sets the number of schemas tried (default 15, each with up to four
 * operations); `ANSWERS_PROPERTY_SEED` and `ANSWERS_PROPERTY_PATH` replay a counterexample.
 */

const RUNS = Math.max(1, Number(process.env['ANSWERS_PROPERTY_RUNS'] ?? 15));
const replay = {
  ...(process.env['ANSWERS_PROPERTY_SEED'] !== undefined && { seed: Number(process.env['ANSWERS_PROPERTY_SEED']) }),
  ...(process.env['ANSWERS_PROPERTY_PATH'] !== undefined && { path: process.env['ANSWERS_PROPERTY_PATH'] }),
};
const OUTSIDE = "the remote answered a value outside this role's schema";
const PREFIX = 'P_';

interface Body {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; path?: Array<string | number> }>;
}

/** The customized answer in the remote's own names: the namespace unwrapped, type names without the prefix. */
function ownNames(body: Body, customized: boolean): { data: unknown; errors: Body['errors'] } {
  if (!customized) return { data: body.data, errors: body.errors };
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, key === '__typename' && typeof item === 'string' ? item.replace(PREFIX, '') : strip(item)]),
    );
  };
  const ns = body.data?.['ns'];
  return {
    data: ns === null || ns === undefined ? null : strip(ns),
    errors: body.errors?.map((error) => ({ ...error, ...(error.path ? { path: error.path.slice(1) } : {}) })),
  };
}

const errorPaths = (errors: ReadonlyArray<{ path?: ReadonlyArray<string | number> | undefined }> | undefined) =>
  (errors ?? []).map((error) => JSON.stringify(error.path ?? null)).sort();

describe('what a role is answered, for random schemas, grants, operations and answers', () => {
  let worldServer: Server;
  let world: YogaServerInstance<Record<string, unknown>, Record<string, unknown>> | undefined;
  let worldUrl: string;
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;
  const stats = { operations: 0, withErrors: 0, withHidden: 0 };

  beforeAll(async () => {
    // One real remote on 127.0.0.1 whose schema and data each case replaces.
    worldServer = createServer((req, res) => {
      if (world) void world(req, res);
      else res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => worldServer.listen(0, '127.0.0.1', resolve));
    worldUrl = `http://127.0.0.1:${(worldServer.address() as AddressInfo).port}/graphql`;
    registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false, enableRemoteSchemaPermissions: true, getSession: testGetSession });
    gateway = await startGateway(registry);
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
    worldServer.closeAllConnections();
    await new Promise<void>((resolve) => worldServer.close(() => resolve()));
  });

  it(
    'never holds what the role does not see, and agrees with graphql-js on the role\'s schema',
    async () => {
      const caseArb = modelArb.chain((model) =>
        fc.record({
          model: fc.constant(model),
          role: roleArb(model),
          customized: fc.boolean(),
          seed: fc.nat(),
          operations: fc.array(fc.array(fc.nat({ max: 1000 }), { minLength: 40, maxLength: 40 }), { minLength: 1, maxLength: 4 }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(caseArb, async ({ model, role, customized, seed, operations }) => {
          const sdl = remoteSdl(model);
          const remote = executableRemote(sdl, seed);
          world = createYoga({ schema: remote, graphqlEndpoint: '/graphql', logging: false, landingPage: false });
          const grant = roleSdl(model, role);
          const plan = await registry.plan(
            [
              {
                name: 'world',
                definition: {
                  url: worldUrl,
                  ...(customized ? { customization: { root_fields_namespace: 'ns', type_names: { prefix: PREFIX } } } : {}),
                },
                permissions: [{ role: 'narrow', schema: grant.sdl }],
              },
            ],
            { reload: 'all' },
          );
          expect(plan.problems, `remote:\n${sdl}\n\ngrant:\n${grant.sdl}`).toEqual([]);
          registry.commit(plan);
          const roleSchema = buildSchema(grant.sdl);
          const { fieldResolver, typeResolver } = referenceResolvers(remote, roleSchema, seed);
          const hiddenNames = [...grant.hidden, ...grant.hidden.map((name) => `${PREFIX}${name}`), 'svc_typename'];
          for (const choices of operations) {
            const selections = operationFor(roleSchema, choices);
            const document = parse(`{ ${selections} }`);
            expect(validate(roleSchema, document), selections).toEqual([]);
            const clientSelections = customized ? operationFor(roleSchema, choices, (name) => `${PREFIX}${name}`) : selections;
            const query = customized ? `{ ns { ${clientSelections} } }` : `{ ${clientSelections} }`;
            const response = await gateway.post({ query }, { 'x-test-session': JSON.stringify({ role: 'narrow' }) });
            const expected = execute({ schema: roleSchema, document, fieldResolver, typeResolver }) as ExecutionResult;
            const context = `remote:\n${sdl}\n\ngrant:\n${grant.sdl}\n\nquery: ${query}\nanswer: ${JSON.stringify(response.body)}\nexpected: ${JSON.stringify(expected)}`;
            expect(response.status, context).toBe(200);
            const text = JSON.stringify(response.body);
            for (const name of hiddenNames) expect(text, context).not.toContain(`"${name}"`);
            const actual = ownNames(response.body as Body, customized);
            expect(actual.data, context).toEqual(expected.data);
            expect(errorPaths(actual.errors), context).toEqual(errorPaths(expected.errors));
            expect(new Set((actual.errors ?? []).map((error) => error.message)), context).toEqual(
              new Set((actual.errors ?? []).length > 0 ? [OUTSIDE] : []),
            );
            stats.operations++;
            if (expected.errors?.length) stats.withErrors++;
            if (JSON.stringify(expected) !== JSON.stringify(execute({ schema: remote, document }))) stats.withHidden++;
          }
        }),
        { numRuns: RUNS, ...replay },
      );
      // The generator must reach the cases the property is about.
      expect(stats.withHidden).toBeGreaterThan(0);
    },
    60_000 + RUNS * 1_000,
  );
});
