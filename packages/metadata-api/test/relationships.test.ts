/**
 * Remote relationships through the metadata API with the real registry and the real orders, users
 * and organizations remotes: every answer of the three calls, what depends on what, inconsistent
 * objects, export and replace.
 */
import { createRemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import { startCommerceRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFileMetadataStore, createMetadataService } from '../src/index.js';
import { until } from './utils/instance.js';
import { silentLogger, startMetadataServer, temporaryDirectory } from './utils/metadata-server.js';

let orders: RunningRemote;
let users: RunningRemote;
let orgs: RunningRemote;
beforeAll(async () => {
  [orders, users, orgs] = await Promise.all([startCommerceRemote('orders'), startCommerceRemote('users'), startCommerceRemote('orgs')]);
});
afterAll(async () => {
  await Promise.all([orders.close(), users.close(), orgs.close()]);
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startApp(retry: false | { initialDelayMs: number; maxDelayMs: number } = false) {
  const directory = await temporaryDirectory();
  const registry = createRemoteSchemaRegistry({ logger: silentLogger, retry });
  const service = createMetadataService({ registry, store: createFileMetadataStore({ path: `${directory.path}/metadata.json` }), logger: silentLogger });
  await service.init();
  const server = await startMetadataServer({ service, logger: silentLogger });
  cleanups.push(async () => {
    await server.close();
    await service.close();
    await registry.dispose();
    await directory.remove();
  });
  return { registry, service, post: (body: unknown) => server.post(body) };
}

const success = { status: 200, body: { message: 'success' } };

const userRelationship = {
  to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { user: { arguments: { id: '$userId' } } } },
};

async function withRemotes(app: Awaited<ReturnType<typeof startApp>>) {
  for (const [name, remote] of [['orders', orders], ['users', users], ['orgs', orgs]] as const) {
    expect(await app.post({ type: 'add_remote_schema', args: { name, definition: { url: remote.url } } })).toEqual(success);
  }
}

function create(definition: unknown, extra: Record<string, unknown> = {}) {
  return { type: 'create_remote_schema_remote_relationship', args: { remote_schema: 'orders', type_name: 'Order', name: 'user', definition, ...extra } };
}

const reasonOf = (reason: string, name = 'user') => ({
  status: 400,
  body: { error: `Inconsistent object: in remote relationship "${name}": ${reason}`, path: '$.args', code: 'invalid-configuration' },
});

describe('create_remote_schema_remote_relationship', () => {
  it('adds the relationship; export shows it under its remote and type, only when there is one', async () => {
    const app = await startApp();
    await withRemotes(app);
    const before = await app.post({ type: 'export_metadata', args: {} });
    expect(before.body.remote_schemas[0]).not.toHaveProperty('remote_relationships');
    expect(await app.post(create(userRelationship))).toEqual(success);
    const exported = await app.post({ type: 'export_metadata', args: {} });
    expect(exported.body.remote_schemas[0].remote_relationships).toEqual([
      { type_name: 'Order', relationships: [{ name: 'user', definition: userRelationship }] },
    ]);
    expect(exported.body.remote_schemas[1]).not.toHaveProperty('remote_relationships');
    // The same name on another type is another relationship; `type` is a synonym of `type_name`.
    const onLine = { to_remote_schema: { remote_schema: 'users', lhs_fields: ['packerId'], remote_field: { user: { arguments: { id: '$packerId' } } } } };
    expect(await app.post({ type: 'create_remote_schema_remote_relationship', args: { remote_schema: 'orders', type: 'OrderLine', name: 'user', definition: onLine } })).toEqual(success);
    const again = await app.post({ type: 'export_metadata', args: {} });
    expect(again.body.remote_schemas[0].remote_relationships.map((group: { type_name: string }) => group.type_name)).toEqual(['Order', 'OrderLine']);
  });

  it('answers not-exists, already-exists and invalid-params as Hasura', async () => {
    const app = await startApp();
    await withRemotes(app);
    expect(await app.post(create(userRelationship, { remote_schema: 'nope' }))).toEqual({
      status: 400,
      body: { error: 'remote schema with name "nope" doesn\'t exist', path: '$.args', code: 'not-exists' },
    });
    expect(await app.post(create(userRelationship))).toEqual(success);
    expect(await app.post(create(userRelationship))).toEqual({
      status: 400,
      body: { error: 'remote relationship with name "user" already exists on type "Order" in remote schema "orders"', path: '$.args', code: 'already-exists' },
    });
    const shape = (remoteField: unknown) => create({ to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: remoteField } }, { name: 'x' });
    expect((await app.post(shape({}))).body).toEqual({
      error: 'Expecting one single mapping, received none',
      path: '$.args.definition.to_remote_schema.remote_field',
      code: 'invalid-params',
    });
    expect((await app.post(shape({ user: { arguments: {} }, users: { arguments: {} } }))).body.error).toBe('Expecting one single mapping, received too many');
    expect((await app.post(shape({ user: { arguments: { id: '$' } } }))).body).toEqual({
      error: 'Empty variable name',
      path: '$.args.definition.to_remote_schema.remote_field.user.arguments.id',
      code: 'invalid-params',
    });
    expect((await app.post(shape({ user: {} }))).body.error).toBe('key "arguments" not found');
    // A list where an object belongs, and bad names, are said as such.
    expect((await app.post(shape([{ user: { arguments: {} } }]))).body).toEqual({
      error: 'expected an object, got a list',
      path: '$.args.definition.to_remote_schema.remote_field',
      code: 'invalid-params',
    });
    expect((await app.post(shape({ user: { arguments: [] } }))).body.error).toBe('expected an object, got a list');
    expect((await app.post(create({ to_remote_schema: { remote_schema: 'users', lhs_fields: 'userId', remote_field: {} } }, { name: 'x' }))).body).toEqual({
      error: 'expected a list, got a string',
      path: '$.args.definition.to_remote_schema.lhs_fields',
      code: 'invalid-params',
    });
    expect((await app.post(create(userRelationship, { name: 'a'.repeat(256) }))).body).toEqual({
      error: 'expected at most 255 characters',
      path: '$.args.name',
      code: 'invalid-params',
    });
    expect((await app.post(create(userRelationship, { name: 'my user' }))).body).toEqual({
      error: '"my user" is not a valid GraphQL name (letters, digits and underscores, not starting with a digit)',
      path: '$.args.name',
      code: 'invalid-params',
    });
    expect(await app.post(create(userRelationship, { name: `u${'a'.repeat(254)}` }))).toEqual(success);
    expect((await app.post(create({ to_remote_schema: { remote_schema: 'users' } }, { name: 'x' }))).body.code).toBe('invalid-params');
    // Nothing of the refused calls was kept.
    const exported = await app.post({ type: 'export_metadata', args: {} });
    expect(exported.body.remote_schemas[0].remote_relationships[0].relationships).toHaveLength(2);
  });

  it('checks the definition against both remotes by meaning, in Hasura\'s words', async () => {
    const app = await startApp();
    await withRemotes(app);
    const to = (remoteField: unknown, lhs = ['userId'], extra: Record<string, unknown> = {}) => ({
      to_remote_schema: { remote_schema: 'users', lhs_fields: lhs, remote_field: remoteField, ...extra },
    });
    const cases: Array<[unknown, Record<string, unknown>, string]> = [
      [userRelationship, { type_name: 'Nope' }, 'no type named "Nope" defined in remote schema "orders"'],
      [userRelationship, { type_name: 'OrderStatus' }, 'remote relationships on a remote schema can only be defined on object types'],
      [
        to({ user: { arguments: { id: '$lines' } } }, ['lines']),
        {},
        'field with name "lines" is not provided by the lhs entity; the allowed fields are "id", "userId", "userNumber", "total", "status", "plan", or "tags"',
      ],
      [{ to_remote_schema: { ...userRelationship.to_remote_schema, remote_schema: 'nope' } }, {}, 'remote schema with name "nope" not found'],
      [to({ nope: { arguments: {} } }), {}, 'remote field with name "nope" and type "Query" not found'],
      [to({ user: { arguments: { id: '$userId', bogus: 1 } } }), {}, 'argument with name "bogus" not found in remote schema'],
      [to({ user: { arguments: { id: '$total' } } }), {}, 'variable "total" is not found'],
      [to({ user: { arguments: { id: '$total' } } }, ['total']), {}, 'expected type "ID" but got "Float"'],
      [to({ usersByPlan: { arguments: { plan: 'GOLD' } } }, []), {}, 'expected type "Plan" but got "String"'],
      [to({ userByNumber: { arguments: { number: '$tags' } } }, ['tags']), {}, 'expected type "Int" but got "String"'],
      [to({ user: { arguments: {}, field: { name: { arguments: {} } } } }, []), {}, 'missing required argument "id"'],
      [to({ user: { arguments: { id: '$userId' }, field: { nope: { arguments: {} } } } }), {}, 'remote field with name "nope" and type "User" not found'],
      [userRelationship, { name: 'total' }, 'field "total" already exists on type "Order"'],
      [to({ user: { arguments: { id: '$userId' } } }, ['userId'], { batch: { argument: 'id' } }), {}, 'batch argument "id" is not a list argument of field "user"'],
      [to({ usersByTags: { arguments: { tags: '$userId' } } }, ['userId'], { batch: { argument: 'tags', match_field: 'nope' } }), {}, 'expected type "String" but got "ID"'],
      [to({ usersByIds: { arguments: { ids: '$userId' } } }, ['userId'], { batch: { argument: 'ids', match_field: 'nope' } }), {}, 'match field "nope" is not a field of type "User"'],
    ];
    for (const [definition, extra, reason] of cases) {
      const name = typeof extra['name'] === 'string' ? extra['name'] : 'user';
      expect(await app.post(create(definition, extra)), reason).toEqual(reasonOf(reason, name));
    }
    // Valid: an ID from an Int, a nullable field into a non-null argument, enums, lists around join values.
    const valid = [
      to({ user: { arguments: { id: '$userNumber' } } }, ['userNumber']),
      to({ usersByPlan: { arguments: { plan: '$plan', limit: 3 } } }, ['plan']),
      to({ usersByPlan: { arguments: { plan: 'PRO' } } }, []),
      to({ users: { arguments: { filter: { ids: ['$userId'], plan: 'FREE' } } } }),
      to({ usersByTags: { arguments: { tags: '$tags' } } }, ['tags']),
      to({ usersByIds: { arguments: { ids: '$userId' } } }, ['userId'], { batch: { argument: 'ids', match_field: 'id' } }),
    ];
    for (const [i, definition] of valid.entries()) expect(await app.post(create(definition, { name: `valid${i}` }))).toEqual(success);
  });
});

describe('update and delete', () => {
  it('answer not-exists for a relationship that is not there, and change only what they name', async () => {
    const app = await startApp();
    await withRemotes(app);
    const notExists = { status: 400, body: { error: 'no relationship defined on remote schema orders with name user', path: '$.args', code: 'not-exists' } };
    expect(await app.post({ ...create(userRelationship), type: 'update_remote_schema_remote_relationship' })).toEqual(notExists);
    expect(await app.post({ type: 'delete_remote_schema_remote_relationship', args: { remote_schema: 'orders', type_name: 'Order', name: 'user' } })).toEqual(notExists);
    expect(await app.post(create(userRelationship))).toEqual(success);
    const byNumber = { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userNumber'], remote_field: { userByNumber: { arguments: { number: '$userNumber' } } } } };
    expect(await app.post({ ...create(byNumber), type: 'update_remote_schema_remote_relationship' })).toEqual(success);
    // An update that does not fit is refused and changes nothing.
    expect(await app.post({ ...create({ to_remote_schema: { ...byNumber.to_remote_schema, lhs_fields: ['nope'] } }), type: 'update_remote_schema_remote_relationship' })).toMatchObject({
      status: 400,
      body: { code: 'invalid-configuration' },
    });
    let exported = await app.post({ type: 'export_metadata', args: {} });
    expect(exported.body.remote_schemas[0].remote_relationships[0].relationships[0].definition).toEqual(byNumber);
    expect(await app.post({ type: 'delete_remote_schema_remote_relationship', args: { remote_schema: 'orders', type: 'Order', name: 'user' } })).toEqual(success);
    exported = await app.post({ type: 'export_metadata', args: {} });
    expect(exported.body.remote_schemas[0]).not.toHaveProperty('remote_relationships');
  });
});

describe('dependents', () => {
  it('remove_remote_schema of a target answers dependency-error unless cascade; the source takes its own along', async () => {
    const app = await startApp();
    await withRemotes(app);
    expect(await app.post(create(userRelationship))).toEqual(success);
    const orgRelationship = { to_remote_schema: { remote_schema: 'orgs', lhs_fields: ['orgId'], remote_field: { org: { arguments: { id: '$orgId' } } } } };
    expect(await app.post({ ...create(orgRelationship), args: { remote_schema: 'users', type_name: 'User', name: 'org', definition: orgRelationship } })).toEqual(success);
    expect(await app.post({ type: 'remove_remote_schema', args: { name: 'users' } })).toEqual({
      status: 400,
      body: {
        error: 'cannot drop due to the following dependent objects: remote_schema_remote_relationship user on type Order in remote schema orders',
        path: '$.args',
        code: 'dependency-error',
      },
    });
    expect(await app.post({ type: 'remove_remote_schema', args: { name: 'users', cascade: true } })).toEqual(success);
    const exported = await app.post({ type: 'export_metadata', args: {} });
    expect(exported.body.remote_schemas.map((entry: { name: string }) => entry.name)).toEqual(['orders', 'orgs']);
    expect(exported.body.remote_schemas[0]).not.toHaveProperty('remote_relationships');
    // Removing a source needs no cascade: its relationships live in its entry.
    expect(await app.post({ type: 'add_remote_schema', args: { name: 'users', definition: { url: users.url } } })).toEqual(success);
    expect(await app.post(create(userRelationship))).toEqual(success);
    expect(await app.post({ type: 'remove_remote_schema', args: { name: 'orders' } })).toEqual(success);
  });

  it('update_remote_schema reports the relationships that no longer fit, which get_inconsistent_metadata lists until fixed', async () => {
    const app = await startApp();
    await withRemotes(app);
    expect(await app.post(create(userRelationship))).toEqual(success);
    const updated = await app.post({ type: 'update_remote_schema', args: { name: 'users', definition: { url: orgs.url, customization: { root_fields_namespace: 'people' } } } });
    const inconsistent = {
      type: 'remote_schema_remote_relationship',
      name: 'remote_schema_remote_relationship user on type Order in remote schema orders',
      reason: 'Inconsistent object: in remote relationship "user": remote field with name "user" and type "Query" not found',
      definition: { remote_schema: 'orders', type_name: 'Order', name: 'user', definition: userRelationship },
    };
    expect(updated).toEqual({ status: 200, body: { message: 'success', inconsistent_objects: [inconsistent] } });
    expect((await app.post({ type: 'get_inconsistent_metadata', args: {} })).body).toEqual({ is_consistent: false, inconsistent_objects: [inconsistent] });
    expect(app.service.isConsistent()).toBe(false);
    expect(await app.post({ type: 'update_remote_schema', args: { name: 'users', definition: { url: users.url } } })).toEqual(success);
    expect((await app.post({ type: 'get_inconsistent_metadata', args: {} })).body).toEqual({ is_consistent: true, inconsistent_objects: [] });
  });

  it('a relationship whose target is down is inconsistent, and consistent again once the background retry brings the target back', async () => {
    const app = await startApp({ initialDelayMs: 50, maxDelayMs: 100 });
    const target = await startCommerceRemote('users');
    let targetUrl = target.url;
    try {
      expect(await app.post({ type: 'add_remote_schema', args: { name: 'orders', definition: { url: orders.url } } })).toEqual(success);
      expect(await app.post({ type: 'add_remote_schema', args: { name: 'users', definition: { url: targetUrl } } })).toEqual(success);
      expect(await app.post(create(userRelationship))).toEqual(success);
      await target.close();
      expect((await app.post({ type: 'reload_remote_schema', args: { name: 'users' } })).status).toBe(200);
      const report = (await app.post({ type: 'get_inconsistent_metadata', args: {} })).body;
      // In document order: the relationship lives in the entry of orders, before users.
      expect(report.inconsistent_objects.map((object: { name: string }) => object.name)).toEqual([
        'remote_schema_remote_relationship user on type Order in remote schema orders',
        'remote_schema users',
      ]);
      expect(report.inconsistent_objects[0].reason).toBe('Inconsistent object: in remote relationship "user": remote schema "users" is inconsistent');
      const port = Number(new URL(targetUrl).port);
      const back = await startCommerceRemote('users', { port });
      targetUrl = back.url;
      cleanups.push(() => back.close());
      await until(() => app.service.isConsistent(), 'the target back');
      expect(app.registry.problems()).toEqual([]);
    } finally {
      await target.close();
    }
  });

  it('a relationship whose source or target cannot be reached is reported or refused as not fitting, never a crash', async () => {
    const app = await startApp();
    const down = await startCommerceRemote('orders');
    const downUrl = down.url;
    await down.close();
    expect(await app.post({ type: 'add_remote_schema', args: { name: 'users', definition: { url: users.url } } })).toEqual(success);
    const document = {
      version: 3,
      remote_schemas: [
        { name: 'orders', definition: { url: downUrl }, remote_relationships: [{ type_name: 'Order', relationships: [{ name: 'user', definition: userRelationship }] }] },
        { name: 'users', definition: { url: users.url } },
      ],
    };
    const reported = await app.post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: true, metadata: document } });
    expect(reported.status).toBe(200);
    expect(reported.body.is_consistent).toBe(false);
    expect(reported.body.inconsistent_objects).toEqual([
      expect.objectContaining({ type: 'remote_schema', name: 'remote_schema orders' }),
      {
        type: 'remote_schema_remote_relationship',
        name: 'remote_schema_remote_relationship user on type Order in remote schema orders',
        reason: 'Inconsistent object: in remote relationship "user": remote schema "orders" is inconsistent',
        definition: { remote_schema: 'orders', type_name: 'Order', name: 'user', definition: userRelationship },
      },
    ]);
    // The rest is served: the users remote is consistent and in the schema.
    expect((await app.post({ type: 'get_inconsistent_metadata', args: {} })).body.inconsistent_objects).toHaveLength(2);
    // A new relationship on the unreachable source cannot be checked: refused as one that does not fit.
    expect(await app.post(create(userRelationship, { name: 'buyer' }))).toEqual(reasonOf('remote schema "orders" is inconsistent', 'buyer'));
    // An unreachable target likewise, and nothing is stored.
    expect(
      await app.post({
        type: 'create_remote_schema_remote_relationship',
        args: { remote_schema: 'users', type_name: 'User', name: 'orders', definition: { to_remote_schema: { remote_schema: 'orders', lhs_fields: ['id'], remote_field: { order: { arguments: { id: '$id' } } } } } },
      }),
    ).toEqual(reasonOf('remote schema "orders" is inconsistent', 'orders'));
    const exported = (await app.post({ type: 'export_metadata', args: {} })).body;
    expect(exported.remote_schemas[1]).toEqual({ name: 'users', definition: { url: users.url, forward_client_headers: false, timeout_seconds: 60 } });
  });

  it('drop_inconsistent_metadata drops relationships that do not fit', async () => {
    const app = await startApp();
    await withRemotes(app);
    const document = (await app.post({ type: 'export_metadata', args: {} })).body;
    document.remote_schemas[0].remote_relationships = [
      { type_name: 'Order', relationships: [{ name: 'user', definition: userRelationship }, { name: 'ghost', definition: { to_remote_schema: { ...userRelationship.to_remote_schema, remote_schema: 'ghosts' } } }] },
    ];
    expect(await app.post({ type: 'replace_metadata', args: document })).toEqual({
      status: 400,
      body: { error: 'cannot continue due to inconsistent metadata', path: '$.args', code: 'unexpected' },
    });
    const allowed = await app.post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: true, metadata: document } });
    expect(allowed.body).toEqual({
      is_consistent: false,
      inconsistent_objects: [
        expect.objectContaining({
          name: 'remote_schema_remote_relationship ghost on type Order in remote schema orders',
          reason: 'Inconsistent object: in remote relationship "ghost": remote schema with name "ghosts" not found',
        }),
      ],
    });
    expect(await app.post({ type: 'drop_inconsistent_metadata', args: {} })).toEqual(success);
    const exported = (await app.post({ type: 'export_metadata', args: {} })).body;
    expect(exported.remote_schemas[0].remote_relationships).toEqual([{ type_name: 'Order', relationships: [{ name: 'user', definition: userRelationship }] }]);
  });
});

describe('the document', () => {
  it('goes through export and replace unchanged, batch included, and bulk creates all or nothing', async () => {
    const app = await startApp();
    await withRemotes(app);
    const batched = {
      to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { usersByIds: { arguments: { ids: '$userId' } } }, batch: { argument: 'ids', match_field: 'id' } },
    };
    const bulk = await app.post({
      type: 'bulk',
      args: [create(userRelationship), create(batched, { name: 'buyer' }), create(userRelationship, { name: 'bad', type_name: 'Nope' })],
    });
    expect(bulk.status).toBe(400);
    expect(bulk.body.path).toBe('$.args[2].args');
    expect((await app.post({ type: 'export_metadata', args: {} })).body.remote_schemas[0]).not.toHaveProperty('remote_relationships');
    expect((await app.post({ type: 'bulk', args: [create(userRelationship), create(batched, { name: 'buyer' })] })).body).toEqual([
      { message: 'success' },
      { message: 'success' },
    ]);
    const exported = (await app.post({ type: 'export_metadata', args: {} })).body;
    expect(exported.remote_schemas[0].remote_relationships[0].relationships[1]).toEqual({ name: 'buyer', definition: batched });
    expect(await app.post({ type: 'replace_metadata', args: exported })).toEqual(success);
    expect((await app.post({ type: 'export_metadata', args: {} })).body).toEqual(exported);
    // A relationship given twice in one document is refused as already there.
    const twice = structuredClone(exported);
    twice.remote_schemas[0].remote_relationships[0].relationships.push({ name: 'user', definition: userRelationship });
    expect(await app.post({ type: 'replace_metadata', args: twice })).toMatchObject({
      status: 400,
      body: { code: 'already-exists', path: '$.args.remote_schemas[0].remote_relationships[0].relationships[2].name' },
    });
  });
});
