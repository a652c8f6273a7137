import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { startDirectoryRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaEntry, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, testGetSession, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';
import { openSse } from './utils/sse.js';
import { VIEWER_GRANT } from './fixtures/directory-grants.js';

/**
 * A role's open subscriptions follow its permission: after every change (added, replaced, dropped,
 * made inconsistent, the remote updated or removed) each is validated again against the role's new
 * schema, and one that no longer validates ends at once with a last error, then completes.
 */

const NO_LONGER = {
  errors: [{ message: 'the subscription is no longer permitted for this role', extensions: { code: 'access-denied', path: '$' } }],
};
const OUTSIDE = "the remote answered a value outside this role's schema";

let remote: RunningRemote;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;
const clients: Client[] = [];

beforeAll(async () => {
  remote = await startDirectoryRemote();
});
afterAll(() => remote.close());

beforeEach(async () => {
  registry = createRemoteSchemaRegistry({ logger: memoryLogger(), retry: false, enableRemoteSchemaPermissions: true, getSession: testGetSession });
  await commit([{ role: 'viewer', schema: VIEWER_GRANT }]);
  gateway = await startGateway(registry);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.dispose()));
  await gateway.close();
  await registry.dispose();
});

async function commit(permissions: NonNullable<RemoteSchemaEntry['permissions']> | null, definition: RemoteSchemaEntry['definition'] = { url: remote.url }) {
  const entries: RemoteSchemaEntry[] = permissions === null ? [] : [{ name: 'directory', definition, permissions }];
  const plan = await registry.plan(entries);
  registry.commit(plan);
  return plan.problems;
}

/** A subscription of `role` over graphql-ws, read one result at a time (`undefined`: it completed). */
function wsSubscription(role: string, query: string, isAdmin = false, variables?: Record<string, unknown>) {
  const client = gateway.wsClient({ session: { role, variables: {}, ...(isAdmin ? { isAdmin } : {}) } });
  clients.push(client);
  const iterator = client.iterate({ query, ...(variables ? { variables } : {}) });
  return async () => {
    const step = await iterator.next();
    return step.done ? undefined : step.value;
  };
}

/** A subscription of `role` over SSE, read the same way. */
async function sseSubscription(role: string, query: string) {
  const stream = await openSse(gateway.url, { query }, { 'x-test-session': JSON.stringify({ role, variables: {} }) });
  expect(stream.status).toBe(200);
  return async () => {
    const event = await stream.next();
    return !event || event.event === 'complete' ? undefined : event.data;
  };
}

/** Reads results until the subscription completes (at most `limit`). */
async function rest(next: () => Promise<unknown>, limit = 50): Promise<unknown[]> {
  const results: unknown[] = [];
  for (let i = 0; i < limit; i++) {
    const result = await next();
    if (result === undefined) return results;
    results.push(result);
  }
  throw new Error(`the subscription did not complete after ${limit} results: ${JSON.stringify(results.slice(-3))}`);
}

/**
 * A subscription whose next event is ten minutes away: it is waiting for the remote when the change
 * comes, and must end at once, with the error as its only result after the first.
 */
const NODES = 'subscription { nodeAdded(intervalMs: 600000) { id } }';
const FAST_NODES = 'subscription { nodeAdded(intervalMs: 5) { id } }';

describe('a role\'s open subscription', () => {
  it('ends with the error, then completes, when its permission is dropped: graphql-ws and SSE', async () => {
    const overWs = wsSubscription('viewer', NODES);
    // Another document: identical subscriptions would share one upstream subscription, whose first
    // event may have gone by when the second joins.
    const overSse = await sseSubscription('viewer', `subscription Nodes ${NODES.slice('subscription '.length)}`);
    expect(await overWs()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    expect(await overSse()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    await commit([]);
    expect(await rest(overWs)).toEqual([NO_LONGER]);
    expect(await rest(overSse)).toEqual([NO_LONGER]);
    // A new one is refused at once: the role's schema has no subscription type any more.
    const again = wsSubscription('viewer', NODES);
    expect(await again()).toEqual({ errors: [expect.objectContaining({ message: 'Schema is not configured to execute subscription operation.' })] });
  });

  it('ends when its remote is removed, or its permission made inconsistent', async () => {
    const removed = wsSubscription('viewer', NODES);
    expect(await removed()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    await commit(null);
    expect(await rest(removed)).toEqual([NO_LONGER]);

    await commit([{ role: 'viewer', schema: VIEWER_GRANT }]);
    const inconsistent = wsSubscription('viewer', NODES);
    expect(await inconsistent()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    const problems = await commit([{ role: 'viewer', schema: 'type Subscription { nodeAdded: Nope }' }]);
    expect(problems).toEqual([expect.objectContaining({ role: 'viewer', code: 'validation-failed' })]);
    expect(await rest(inconsistent)).toEqual([NO_LONGER]);
  });

  it('ends when a replaced permission no longer has what it selects (or its variables), and goes on when it still has', async () => {
    const narrowed = VIEWER_GRANT.replace('latest: Node', '').replace(/enum Role \{[^}]*\}/, 'enum Role { EDITOR }');
    const selectsLatest = wsSubscription('viewer', 'subscription { userUpdated(intervalMs: 600000) { id latest { id } } }');
    const selectsId = wsSubscription('viewer', 'subscription { userUpdated(intervalMs: 5) { id } }');
    const variables = wsSubscription('viewer', 'subscription($r: [Role!]) { userUpdated(intervalMs: 600000, roles: $r) { id } }', false, {
      r: ['VIEWER'],
    });
    expect(await selectsLatest()).toEqual({ data: { userUpdated: { id: 'u1', latest: null } } });
    expect(await selectsId()).toEqual({ data: { userUpdated: { id: 'u1' } } });
    expect(await variables()).toEqual({ data: { userUpdated: { id: 'u3' } } });
    await commit([{ role: 'viewer', schema: narrowed }]);
    expect(await rest(selectsLatest)).toEqual([NO_LONGER]);
    // Its document is still valid, its variables no longer are: VIEWER is gone from Role.
    expect(await rest(variables)).toEqual([NO_LONGER]);
    // Still valid: it goes on, on the new schema.
    const after = [await selectsId(), await selectsId(), await selectsId(), await selectsId()];
    expect(after.map((result) => (result as { data: { userUpdated: { id: string } } }).data.userUpdated.id)).toContain('u3');
  });

  it('applies a narrowed grant to the events that follow', async () => {
    const roles = wsSubscription('viewer', 'subscription { roleChanged(intervalMs: 20) }');
    const first = [await roles(), await roles(), await roles()];
    expect(first).toEqual([
      { data: null, errors: [expect.objectContaining({ message: OUTSIDE })] },
      { data: { roleChanged: 'EDITOR' } },
      { data: { roleChanged: 'VIEWER' } },
    ]);
    await commit([{ role: 'viewer', schema: VIEWER_GRANT.replace(/enum Role \{[^}]*\}/, 'enum Role { VIEWER }') }]);
    // Events sent before the change may still be on their way; after them, EDITOR is outside too.
    const later: unknown[] = [];
    for (let i = 0; i < 40; i++) later.push(await roles());
    const lastEditor = later.findLastIndex((result) => JSON.stringify(result).includes('EDITOR'));
    const after = later.slice(lastEditor + 1);
    expect(after.length).toBeGreaterThanOrEqual(6);
    expect(after).toContainEqual({ data: { roleChanged: 'VIEWER' } });
    expect(after.filter((result) => JSON.stringify(result).includes(OUTSIDE))).toHaveLength(
      after.filter((result) => !JSON.stringify(result).includes('VIEWER')).length,
    );
    expect(after.filter((result) => JSON.stringify(result).includes(OUTSIDE)).length).toBeGreaterThanOrEqual(4);
  });

  it('goes on when its remote is updated and the permission still fits, and when another role changes', async () => {
    const nodes = wsSubscription('viewer', FAST_NODES);
    expect(await nodes()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    await commit([{ role: 'viewer', schema: VIEWER_GRANT }], { url: remote.url, timeout_seconds: 30 });
    await commit([
      { role: 'viewer', schema: VIEWER_GRANT },
      { role: 'other', schema: 'type Query { roles: [Role!]! } enum Role { VIEWER }' },
    ]);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(((await nodes()) as { data: { nodeAdded: { id: string } | null } }).data.nodeAdded?.id ?? null);
    expect(ids).toContain('u3');
  });

  it('of admin is not validated again: it ends only when the remote goes', async () => {
    const admin = wsSubscription('admin', FAST_NODES, true);
    expect(await admin()).toEqual({ data: { nodeAdded: { id: 'u1' } } });
    await commit([]);
    expect(await admin()).toEqual({ data: { nodeAdded: { id: 'p1' } } });
  });
});
