/**
 * Random relationship definitions and random selections, answered by the gateway and compared
 * with a reference answer computed here by calling the remotes directly, one call per row (as a
 * naive join would): they must agree on the data and on the errors (paths and messages).
 * `SVC_FUZZ_RUNS` runs more cases than the few CI runs.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaRegistry } from '../src/index.js';
import { relationship, startCommerce, type Commerce } from './utils/commerce.js';
import { memoryLogger } from './utils/fixtures.js';
import { startGateway, type Gateway } from './utils/gateway.js';

const RUNS = Number(process.env['SVC_FUZZ_RUNS'] ?? 15);

let commerce: Commerce;
let registry: RemoteSchemaRegistry;
let gateway: Gateway;

beforeAll(async () => {
  commerce = await startCommerce();
  registry = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
  gateway = await startGateway(registry);
});

afterAll(async () => {
  await gateway.close();
  await registry.dispose();
  await commerce.close();
});

/** How the target field of `Order.rel` is reached, and how the reference asks for one row. */
interface Template {
  lhs: string[];
  remoteField: Record<string, unknown>;
  batch?: { argument: string; match_field?: string };
  /** The relationship field's type is a list of users (otherwise one user). */
  list: boolean;
  /** The field is non-null. */
  nonNull: boolean;
  /** The client may pass `limit`. */
  limit: boolean;
  /** The reference's call for one order (own names), `$v` the join value; `undefined` when the join value is null. */
  reference(order: Row, limit: number | undefined): { field: string; variables: Record<string, unknown>; unwrapFirst?: boolean } | undefined;
}

type Row = Record<string, unknown>;

const TEMPLATES: Template[] = [
  {
    lhs: ['userId'],
    remoteField: { user: { arguments: { id: '$userId' } } },
    list: false,
    nonNull: false,
    limit: false,
    reference: (o) => (o['userId'] == null ? undefined : { field: 'user(id: $v)', variables: { v: o['userId'] } }),
  },
  {
    lhs: ['userNumber'],
    remoteField: { userByNumber: { arguments: { number: '$userNumber' } } },
    list: false,
    nonNull: false,
    limit: false,
    reference: (o) => (o['userNumber'] == null ? undefined : { field: 'userByNumber(number: $v)', variables: { v: o['userNumber'] } }),
  },
  ...[{ argument: 'ids', match_field: 'id' }, { argument: 'ids' }].map(
    (batch): Template => ({
      lhs: ['userId'],
      remoteField: { usersByIds: { arguments: { ids: '$userId' } } },
      batch,
      list: false,
      nonNull: false,
      limit: false,
      reference: (o) => (o['userId'] == null ? undefined : { field: 'usersByIds(ids: [$v])', variables: { v: o['userId'] }, unwrapFirst: true }),
    }),
  ),
  {
    lhs: ['plan'],
    remoteField: { usersByPlan: { arguments: { plan: '$plan' } } },
    list: true,
    nonNull: true,
    limit: true,
    reference: (o, limit) => ({ field: `usersByPlan(plan: $v${limit === undefined ? '' : `, limit: ${limit}`})`, variables: { v: o['plan'] } }),
  },
  {
    lhs: ['userId'],
    remoteField: { users: { arguments: { filter: { ids: ['$userId'], plan: 'PRO' }, limit: 3 } } },
    list: true,
    nonNull: true,
    limit: false,
    reference: (o) => (o['userId'] == null ? undefined : { field: 'users(filter: {ids: [$v], plan: PRO}, limit: 3)', variables: { v: o['userId'] } }),
  },
  {
    lhs: [],
    remoteField: { usersByPlan: { arguments: { plan: 'ENTERPRISE' } } },
    list: true,
    nonNull: true,
    limit: true,
    reference: (_, limit) => ({ field: `usersByPlan(plan: ENTERPRISE${limit === undefined ? '' : `, limit: ${limit}`})`, variables: {} }),
  },
];

type Customization = 'none' | 'prefix' | 'fields' | 'namespace';
const USER_FIELDS = ['id', 'name', 'email', 'plan', 'orgId', '__typename'] as const;

interface Scenario {
  template: number;
  customization: Customization;
  nested: boolean;
  orders: number[];
  orderFields: string[];
  aliases: string[];
  limit: number | undefined;
  userFields: Array<(typeof USER_FIELDS)[number]>;
  org: boolean;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  template: fc.nat({ max: TEMPLATES.length - 1 }),
  customization: fc.constantFrom<Customization>('none', 'prefix', 'fields', 'namespace'),
  nested: fc.boolean(),
  // Orders 13, 53 and 93 belong to user 13 (whose email is an error); order 97 has no user.
  orders: fc.array(fc.oneof(fc.constantFrom(13, 53, 93, 97, 1, 41), fc.integer({ min: 1, max: 120 })), { minLength: 1, maxLength: 6 }),
  orderFields: fc.subarray(['id', 'userId', 'total']),
  aliases: fc.subarray(['rel', 'again'], { minLength: 1 }),
  limit: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  userFields: fc.subarray([...USER_FIELDS], { minLength: 1 }),
  org: fc.boolean(),
});

/** A user field's public name under the customization. */
function publicField(field: string, customization: Customization): string {
  if (customization !== 'fields') return field;
  return ({ name: 'fullName', email: 'mail' } as Record<string, string>)[field] ?? field;
}

function customizationOf(customization: Customization): RemoteSchemaCustomization | undefined {
  switch (customization) {
    case 'prefix':
      return { type_names: { prefix: 'P_' } };
    case 'fields':
      return { field_names: [{ parent_type: 'User', mapping: { name: 'fullName', email: 'mail' } }] };
    case 'namespace':
      return { root_fields_namespace: 'people', type_names: { prefix: 'P_' } };
    default:
      return undefined;
  }
}

async function direct(url: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: Array<{ message: string; path?: Array<string | number> }> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return response.json() as never;
}

/** What the gateway must answer, computed from direct calls, one per row. */
async function reference(s: Scenario): Promise<{ data: Record<string, unknown>; errors: string[] }> {
  const template = TEMPLATES[s.template]!;
  const errors: string[] = [];
  const data: Record<string, unknown> = {};
  const withOrg = s.nested && s.org;
  const userSelection = [
    ...s.userFields.map((field) => (field === '__typename' ? '__typename' : `${publicField(field, s.customization)}: ${field}`)),
    ...(withOrg ? ['zzOrgId: orgId'] : []),
  ].join(' ');
  const rename = (user: Row) => {
    if (typeof user['__typename'] === 'string' && s.customization !== 'none' && s.customization !== 'fields') user['__typename'] = `P_${user['__typename']}`;
  };
  for (const [i, id] of s.orders.entries()) {
    const key = `o${i}`;
    const order = (await direct(commerce.orders.url, `{ order(id: "${id}") { id userId userNumber plan total } }`)).data.order as Row | null;
    if (!order) {
      data[key] = null;
      continue;
    }
    const out: Row = {};
    for (const field of s.orderFields) out[field] = order[field];
    let nulled = false;
    for (const alias of s.aliases) {
      const call = template.reference(order, template.limit ? s.limit : undefined);
      let value: unknown = null;
      let reported = false;
      if (call) {
        const definitions = 'v' in call.variables ? `($v: ${variableType(template)})` : '';
        const answer = await direct(commerce.users.url, `query ${definitions} { r: ${call.field} { ${userSelection} } }`, call.variables);
        value = answer.data?.r ?? null;
        if (call.unwrapFirst) value = Array.isArray(value) ? (value[0] ?? null) : null;
        for (const error of answer.errors ?? []) {
          reported = true;
          const rest = (error.path ?? []).slice(call.unwrapFirst ? 2 : 1).map((segment) => (typeof segment === 'string' ? publicField(segment, s.customization) : segment));
          errors.push(`${[key, alias, ...rest].join('.')}|${error.message}`);
        }
      }
      const users = value === null ? [] : Array.isArray(value) ? (value as Row[]) : [value as Row];
      for (const user of users) {
        rename(user);
        if (!withOrg) continue;
        const orgId = user['zzOrgId'];
        delete user['zzOrgId'];
        const org = orgId == null ? null : ((await direct(commerce.orgs.url, `{ org(id: "${String(orgId)}") { name __typename } }`)).data.org as Row | null);
        user['org'] = org;
      }
      if (value === null && template.nonNull) {
        if (!reported) errors.push(`${[key, alias].join('.')}|Cannot return null for non-nullable field Order.rel.`);
        nulled = true;
      }
      out[alias] = value;
    }
    data[key] = nulled ? null : out;
  }
  return { data, errors: errors.sort() };
}

function variableType(template: Template): string {
  if (template.lhs[0] === 'userNumber') return 'Int!';
  if (template.lhs[0] === 'plan') return 'Plan!';
  return 'ID!';
}

function query(s: Scenario): string {
  const template = TEMPLATES[s.template]!;
  const userSelection = [
    ...s.userFields.map((field) => publicField(field, s.customization)),
    ...(s.nested && s.org ? ['org { name __typename }'] : []),
  ].join(' ');
  const args = template.limit && s.limit !== undefined ? `(limit: ${s.limit})` : '';
  const rels = s.aliases.map((alias) => `${alias}: rel${args} { ${userSelection} }`).join(' ');
  return `{ ${s.orders.map((id, i) => `o${i}: order(id: "${id}") { ${s.orderFields.join(' ')} ${rels} }`).join(' ')} }`;
}

describe('remote relationships against a reference join', () => {
  it(`agree on data and error paths (${RUNS} random definitions and selections)`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const template = TEMPLATES[s.template]!;
        const customization = customizationOf(s.customization);
        const plan = await registry.plan([
          {
            name: 'orders',
            definition: { url: commerce.orders.url },
            relationships: [relationship('Order', 'rel', 'users', template.lhs, template.remoteField, template.batch)],
          },
          {
            name: 'users',
            definition: { url: commerce.users.url, ...(customization ? { customization } : {}) },
            ...(s.nested ? { relationships: [relationship('User', 'org', 'orgs', ['orgId'], { org: { arguments: { id: '$orgId' } } })] } : {}),
          },
          { name: 'orgs', definition: { url: commerce.orgs.url } },
        ]);
        expect(plan.problems).toEqual([]);
        registry.commit(plan);
        commerce.reset();
        const text = query(s);
        const response = await gateway.post({ query: text });
        const counts = commerce.counts();
        const expected = await reference(s);
        expect(response.body.data, text).toEqual(expected.data);
        const errors = ((response.body.errors ?? []) as Array<{ message: string; path: Array<string | number> }>).map(
          (error) => `${error.path.join('.')}|${error.message}`,
        );
        expect(errors.sort(), text).toEqual(expected.errors);
        // One request for the orders; at most one more per target remote and level (and per field whose failure nulls the target's answer).
        expect(counts[0]).toBe(1);
        expect(counts[2]).toBeLessThanOrEqual(1);
      }),
      { numRuns: RUNS },
    );
  }, 20_000 + RUNS * 2_000);
});
