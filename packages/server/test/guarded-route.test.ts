import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { expect, it } from 'vitest';
import { guardedRoute } from '../src/http/guarded-route.js';

/** A route of ours that throws (a bug), served over real HTTP as the server serves its routes. */
it('answers a route that throws with a masked 500 and logs the error, never the stack', async () => {
  const route: Plugin = {
    onRequest({ url }) {
      if (url.pathname === '/v1/broken') throw new RangeError('Invalid time value');
    },
  };
  const logged: unknown[][] = [];
  for (const guarded of [false, true]) {
    const yoga = createYoga({
      schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }),
      logging: false,
      plugins: [guarded ? guardedRoute(route, { error: (...args: unknown[]) => logged.push(args) }) : route],
    });
    const server = createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/broken`);
      const body = await response.text();
      expect(response.status).toBe(500);
      if (!guarded) {
        // What the framework answers by itself: the stack, with our file paths.
        expect(body).toContain('RangeError: Invalid time value');
        continue;
      }
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(JSON.parse(body)).toEqual({ errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected', path: '$' } }] });
      expect(body).not.toMatch(/RangeError|Invalid time|\.ts/);
      expect(logged).toHaveLength(1);
      expect(logged[0]?.[0]).toBe('answering GET /v1/broken failed:');
      expect(String(logged[0]?.[1])).toContain('Invalid time value');
      // Other requests pass through untouched.
      const ok = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql?query=%7Bok%7D`);
      expect(await ok.json()).toEqual({ data: { ok: null } });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
});
