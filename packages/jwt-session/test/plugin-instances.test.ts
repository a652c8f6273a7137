import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { SessionError, useJwtSession, type Session } from '../src/index.js';
import { silentLogger } from './utils/server.js';

/*
 * The sessions a `useJwtSession` plugin resolves are its own: another plugin, in the same app or
 * another one, from this copy of the package or another, never reads or takes them.
 */

const schema = () =>
  createSchema<{ session?: Session }>({
    typeDefs: 'type Query { session: String }',
    resolvers: { Query: { session: (_root, _args, context) => JSON.stringify(context.session ?? null) } },
  });

/** A GET request for `{ session }`: it can be handled by several apps (no body to consume). */
function sessionRequest(headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/graphql?query=%7Bsession%7D', { headers: { accept: 'application/json', ...headers } });
}

async function sessionIn(response: Response): Promise<unknown> {
  expect(response.status).toBe(200);
  const body = (await response.json()) as { data: { session: string } };
  return JSON.parse(body.data.session);
}

describe('two useJwtSession plugins in one process', () => {
  it('in two apps: each knows only the sessions it resolved itself', async () => {
    const first = useJwtSession({ adminSecret: 'first-secret', unauthorizedRole: 'first-guest', logger: silentLogger });
    const second = useJwtSession({ adminSecret: 'second-secret', unauthorizedRole: 'second-guest', logger: silentLogger });
    const firstApp = createYoga({ schema: schema(), logging: false, plugins: [first] });
    const secondApp = createYoga({ schema: schema(), logging: false, plugins: [second] });
    try {
      const request = sessionRequest({ 'x-svc-admin-secret': 'first-secret' });
      expect(await sessionIn(await firstApp.fetch(request))).toEqual({ role: 'admin', isAdmin: true, variables: { 'x-svc-role': 'admin' } });
      expect(first.sessionOf(request)).toMatchObject({ role: 'admin' });
      expect(second.sessionOf(request)).toBeUndefined();

      // The same request object through the second app: resolved there by its own rules.
      expect(await sessionIn(await secondApp.fetch(request))).toMatchObject({ role: 'second-guest', isAdmin: false });
      expect(second.sessionOf(request)).toMatchObject({ role: 'second-guest' });
      expect(first.sessionOf(request)).toMatchObject({ role: 'admin' });
    } finally {
      await firstApp.dispose();
      await secondApp.dispose();
    }
  });

  it('in one app: each resolves the request by its own configuration and keeps its own answer', async () => {
    const first = useJwtSession({ adminSecret: 'first-secret', unauthorizedRole: 'first-guest', logger: silentLogger });
    const second = useJwtSession({ adminSecret: 'second-secret', unauthorizedRole: 'second-guest', logger: silentLogger });
    const app = createYoga({ schema: schema(), logging: false, plugins: [first, second] });
    try {
      const request = sessionRequest();
      await sessionIn(await app.fetch(request));
      expect(first.sessionOf(request)).toMatchObject({ role: 'first-guest' });
      expect(second.sessionOf(request)).toMatchObject({ role: 'second-guest' });
    } finally {
      await app.dispose();
    }
  });

  it('hands a session over only to the plugin given it', async () => {
    const handedOver: Session = { role: 'handed', isAdmin: false, variables: { 'x-svc-role': 'handed' } };
    const taking = useJwtSession({ adminSecret: 'secret', logger: silentLogger, resolvedSession: () => handedOver });
    const other = useJwtSession({ adminSecret: 'secret', logger: silentLogger });
    const takingApp = createYoga({ schema: schema(), logging: false, plugins: [taking] });
    const otherApp = createYoga({ schema: schema(), logging: false, plugins: [other] });
    try {
      const request = sessionRequest();
      expect(await sessionIn(await takingApp.fetch(request))).toEqual(handedOver);
      const refused = await otherApp.fetch(sessionRequest());
      expect(refused.status).toBe(401);
      expect(other.sessionOf(request)).toBeUndefined();
    } finally {
      await takingApp.dispose();
      await otherApp.dispose();
    }
  });

  it('answers a refusal handed over as it answers its own', async () => {
    const refusal = new SessionError('access-denied', 401, 'invalid x-svc-admin-secret');
    const plugin = useJwtSession({ adminSecret: 'secret', logger: silentLogger, resolvedSession: () => refusal });
    const app = createYoga({ schema: schema(), logging: false, plugins: [plugin] });
    try {
      const request = sessionRequest({ 'x-svc-admin-secret': 'secret' });
      const response = await app.fetch(request);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ errors: [{ message: 'invalid x-svc-admin-secret', extensions: { code: 'access-denied', path: '$' } }] });
      expect(plugin.sessionOf(request)).toBeUndefined();
    } finally {
      await app.dispose();
    }
  });

  it('from two copies of the package: the host reads the session from the plugin it was given, whichever copy made it', async () => {
    // A second instance of the plugin's module, as when an app and a library each bring a copy.
    const specifier = '../src/plugin.js?second-copy';
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('../src/plugin.js');
    expect(copy.useJwtSession).not.toBe(useJwtSession);
    const plugin = copy.useJwtSession({ adminSecret: 'secret', logger: silentLogger });
    const app = createYoga({ schema: schema(), logging: false, plugins: [plugin] });
    try {
      const request = sessionRequest({ 'x-svc-admin-secret': 'secret', 'x-svc-role': 'editor' });
      expect(await sessionIn(await app.fetch(request))).toMatchObject({ role: 'editor' });
      expect(plugin.sessionOf(request)).toMatchObject({ role: 'editor', isAdmin: false });
    } finally {
      await app.dispose();
    }
  });
});
