import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useJwtSession } from '@svc-graphql/jwt-session';
import { createAdminErrorMasking } from '../src/http/admin-errors.js';

/**
 * The server's masking rule on a Yoga app whose resolvers throw: admin sees the original message,
 * every other role Yoga's masked one. (The reference server has no local resolvers of its own.)
 */

const ADMIN_SECRET = 'admin-errors-test-secret';
let server: Server;
let url: string;

beforeAll(async () => {
  const masking = createAdminErrorMasking();
  const yoga = createYoga({
    logging: false,
    schema: createSchema({
      typeDefs: 'type Query { broken: String, fine: String } type Subscription { ticks: Int }',
      resolvers: {
        Query: {
          broken: () => {
            throw new Error('connection to 10.0.0.5:5432 refused');
          },
          fine: () => 'ok',
        },
        Subscription: {
          ticks: {
            async *subscribe() {
              yield { ticks: 1 };
              throw new Error('stream source went away');
            },
          },
        },
      },
    }),
    maskedErrors: masking.maskedErrors,
    plugins: [useJwtSession({ adminSecret: ADMIN_SECRET, unauthorizedRole: 'anonymous', logger: { debug() {}, info() {}, warn() {}, error() {} } }), masking.plugin],
  });
  server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function query(headers: Record<string, string>) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: '{ broken fine }' }),
  });
}

async function sse(headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query: 'subscription { ticks }' }),
  });
  return response.text();
}

describe('error masking', () => {
  it('shows the admin the original message, without a stack', async () => {
    const response = await query({ 'x-svc-admin-secret': ADMIN_SECRET });
    const body = (await response.json()) as { data: unknown; errors: Array<Record<string, unknown>> };
    expect(body.data).toEqual({ broken: null, fine: 'ok' });
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({ message: 'connection to 10.0.0.5:5432 refused', path: ['broken'] });
    expect(JSON.stringify(body)).not.toContain('stack');
  });

  it('masks the same error for any other role', async () => {
    const response = await query({});
    const body = (await response.json()) as { errors: Array<Record<string, unknown>> };
    expect(body.errors[0]).toMatchObject({ message: 'Unexpected error.', path: ['broken'] });
    expect(JSON.stringify(body)).not.toContain('10.0.0.5');
  });

  it('applies to subscription events as well', async () => {
    expect(await sse({ 'x-svc-admin-secret': ADMIN_SECRET })).toContain('stream source went away');
    const masked = await sse({});
    expect(masked).toContain('Unexpected error.');
    expect(masked).not.toContain('stream source went away');
  });
});
