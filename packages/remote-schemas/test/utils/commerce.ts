import { startCommerceRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import type { RemoteRelationship, RemoteSchemaEntry } from '../../src/index.js';

/** The orders, users and organizations sample remotes, started together. */
export interface Commerce {
  orders: RunningRemote;
  users: RunningRemote;
  orgs: RunningRemote;
  /** Empties the request logs of the three. */
  reset(): void;
  /** HTTP requests each received since the last reset: `[orders, users, orgs]`. */
  counts(): [number, number, number];
  close(): Promise<void>;
}

export async function startCommerce(): Promise<Commerce> {
  const [orders, users, orgs] = await Promise.all([startCommerceRemote('orders'), startCommerceRemote('users'), startCommerceRemote('orgs')]);
  return {
    orders,
    users,
    orgs,
    reset() {
      orders.received.length = 0;
      users.received.length = 0;
      orgs.received.length = 0;
    },
    counts: () => [orders.received.length, users.received.length, orgs.received.length],
    close: async () => {
      await Promise.all([orders.close(), users.close(), orgs.close()]);
    },
  };
}

/** A relationship to `remote` through `remote_field`, joined on `lhs`. */
export function relationship(
  typeName: string,
  name: string,
  remote: string,
  lhs: string[],
  remoteField: Record<string, unknown>,
  batch?: { argument: string; match_field?: string },
): RemoteRelationship {
  return {
    type_name: typeName,
    name,
    definition: { to_remote_schema: { remote_schema: remote, lhs_fields: lhs, remote_field: remoteField as never, ...(batch ? { batch } : {}) } },
  };
}

/** `Order.user` (users' `user(id: $userId)`) and `User.org` (orgs' `org(id: $orgId)`). */
export function commerceEntries(commerce: Commerce, extra: { orders?: Partial<RemoteSchemaEntry>; users?: Partial<RemoteSchemaEntry>; orgs?: Partial<RemoteSchemaEntry> } = {}): RemoteSchemaEntry[] {
  return [
    {
      name: 'orders',
      definition: { url: commerce.orders.url },
      relationships: [relationship('Order', 'user', 'users', ['userId'], { user: { arguments: { id: '$userId' } } })],
      ...extra.orders,
    },
    {
      name: 'users',
      definition: { url: commerce.users.url },
      relationships: [relationship('User', 'org', 'orgs', ['orgId'], { org: { arguments: { id: '$orgId' } } })],
      ...extra.users,
    },
    { name: 'orgs', definition: { url: commerce.orgs.url }, ...extra.orgs },
  ];
}
