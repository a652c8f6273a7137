/**
 * Remote schema permissions through the metadata API with the real registry (permissions enabled)
 * and real remote servers: what is validated, stored, exported and reported, and what a role is
 * then served.
 */
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import { startSampleRemote, startSchemaServer, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createSchema } from 'graphql-yoga';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createFileMetadataStore,
  createMetadataService,
  createPostgresMetadataStore,
  type MetadataService,
  type MetadataStore,
} from '../src/index.js';
import { databaseUrl, freshSchema, until } from './utils/instance.js';
import { silentLogger, startMetadataServer, temporaryDirectory, type RunningMetadataServer } from './utils/metadata-server.js';

interface App {
  registry: RemoteSchemaRegistry;
  service: MetadataService;
  server: RunningMetadataServer;
  post(body: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A registry and a metadata service with permissions enabled (or not), over `store` (a fresh file by default). */
async function startApp(options: { permissions?: boolean; store?: MetadataStore } = {}): Promise<App> {
  const permissions = options.permissions ?? true;
  let store = options.store;
  if (store === undefined) {
    const directory = await temporaryDirectory();
    cleanups.push(() => directory.remove());
    store = createFileMetadataStore({ path: `${directory.path}/metadata.json` });
  }
  const registry = createRemoteSchemaRegistry({ logger: silentLogger, retry: false, enableRemoteSchemaPermissions: permissions });
  const service = createMetadataService({ registry, store, logger: silentLogger, remoteSchemaPermissions: permissions });
  await service.init();
  const server = await startMetadataServer({ service, logger: silentLogger });
  let closed = false;
  const app: App = {
    registry,
    service,
    server,
    post: (body) => server.post(body),
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await service.close();
      await registry.dispose();
    },
  };
  cleanups.push(() => app.close());
  return app;
}

/** The sample remote, and the same remote after a release that dropped `remoteName`. */
let sample: RunningRemote;
let released: RunningRemote;
beforeAll(async () => {
  sample = await startSampleRemote({ name: 'one' });
  released = await startSchemaServer(
    createSchema({
      typeDefs: 'type Query { hello(name: String): String! }',
      resolvers: { Query: { hello: (_: unknown, args: { name?: string | null }) => `Hello, ${args.name ?? 'world'}!` } },
    }),
  );
});
afterAll(async () => {
  await Promise.all([sample.close(), released.close()]);
});

const success = { status: 200, body: { message: 'success' } };
const addRemote = (app: App, name = 'one', url = sample.url) => app.post({ type: 'add_remote_schema', args: { name, definition: { url } } });
const grant = (schema: string, role = 'user', extra: Record<string, unknown> = {}) => ({
  type: 'add_remote_schema_permissions',
  args: { remote_schema: 'one', role, definition: { schema }, ...extra },
});
const exported = async (app: App) => (await app.post({ type: 'export_metadata', args: {} })).body;
/** The root query fields a role is served. */
const fieldsOf = (app: App, role: string) => Object.keys(app.registry.schemaFor({ role }).getQueryType()?.getFields() ?? {});

/** A grant as people write them: a `schema {}` block, comments, descriptions, their own layout. */
const GRANT = `schema {
  query: Query
}

# What a signed-in user may read.
type Query {
  "Greets."
  hello(name: String): String!

  remoteName: String!   # which remote answered
}
`;
const REMOTE_NAME_ONLY = 'type Query { remoteName: String! }';
const NO_SUCH_FIELD =
  'validation for the given role-based schema failed because field "created_at" does not exist in the "Object": "Message"';

describe('remote schema permissions with the real registry', () => {
  it('adds a grant: the role is served what it grants, admin everything', async () => {
    const app = await startApp();
    await addRemote(app);
    expect(await app.post(grant(REMOTE_NAME_ONLY))).toEqual(success);
    expect(fieldsOf(app, 'user')).toContain('remoteName');
    expect(fieldsOf(app, 'user')).not.toContain('hello');
    expect(Object.keys(app.registry.schemaFor({ role: 'admin', isAdmin: true }).getQueryType()?.getFields() ?? {})).toContain('hello');
    expect(app.service.isConsistent()).toBe(true);
  });

  it('refuses a grant that does not fit the remote with validation-failed, in the validation\'s own words, and stores nothing', async () => {
    const app = await startApp();
    await addRemote(app);
    const schema = 'type Message { id: ID! created_at: String }\ntype Query { messages: [Message!]! }';
    expect(await app.post(grant(schema))).toEqual({ status: 400, body: { error: NO_SUCH_FIELD, path: '$.args', code: 'validation-failed' } });
    expect((await exported(app)).remote_schemas[0]).not.toHaveProperty('permissions');
    expect(app.service.resourceVersion()).toBe(1);
  });

  it('refuses admin, an unknown remote and a second grant for one role', async () => {
    const app = await startApp();
    await addRemote(app);
    expect(await app.post(grant(REMOTE_NAME_ONLY, 'admin'))).toEqual({
      status: 400,
      body: { error: 'cannot define permission for admin role', path: '$.args', code: 'constraint-violation' },
    });
    expect(await app.post({ ...grant(REMOTE_NAME_ONLY), args: { ...grant(REMOTE_NAME_ONLY).args, remote_schema: 'two' } })).toEqual({
      status: 400,
      body: { error: 'remote schema "two" doesn\'t exist', path: '$.args', code: 'not-exists' },
    });
    expect(await app.post(grant(REMOTE_NAME_ONLY))).toEqual(success);
    expect(await app.post(grant(GRANT))).toEqual({
      status: 400,
      body: { error: 'permissions for role: "user" for remote schema:"one" already exists', path: '$.args', code: 'already-exists' },
    });
  });

  it('drops a grant: the role no longer sees the remote; dropping it again answers not-exists', async () => {
    const app = await startApp();
    await addRemote(app);
    await app.post(grant(REMOTE_NAME_ONLY));
    const drop = { type: 'drop_remote_schema_permissions', args: { remote_schema: 'one', role: 'user' } };
    expect(await app.post(drop)).toEqual(success);
    expect(fieldsOf(app, 'user')).not.toContain('remoteName');
    expect((await exported(app)).remote_schemas[0]).not.toHaveProperty('permissions');
    expect(await app.post(drop)).toEqual({
      status: 400,
      body: { error: 'permissions for role: "user" for remote schema:"one" doesn\'t exist', path: '$.args', code: 'not-exists' },
    });
  });

  it('refuses to remove a remote with grants (dependency-error, sorted) unless cascade is true, which drops them too', async () => {
    const app = await startApp();
    await addRemote(app);
    await app.post(grant(REMOTE_NAME_ONLY, 'viewer'));
    await app.post(grant(REMOTE_NAME_ONLY, 'editor'));
    expect(await app.post({ type: 'remove_remote_schema', args: { name: 'one' } })).toEqual({
      status: 400,
      body: {
        error:
          'cannot drop due to the following dependent objects: remote_schema_permission editor on remote_schema one, remote_schema_permission viewer on remote_schema one',
        path: '$.args',
        code: 'dependency-error',
      },
    });
    expect(fieldsOf(app, 'editor')).toContain('remoteName');
    expect(await app.post({ type: 'remove_remote_schema', args: { name: 'one', cascade: true } })).toEqual(success);
    expect(await exported(app)).toEqual({ version: 3, remote_schemas: [] });
    expect(fieldsOf(app, 'editor')).not.toContain('remoteName');
    // Added again, the remote has no grants left over.
    await addRemote(app);
    expect(fieldsOf(app, 'editor')).not.toContain('remoteName');
  });

  it('reports a grant broken by update_remote_schema in inconsistent_objects and leaves it out; an update that fixes it restores it', async () => {
    const app = await startApp();
    await addRemote(app);
    await app.post(grant(REMOTE_NAME_ONLY));
    const broken = {
      type: 'remote_schema_permission',
      name: 'remote_schema_permission user on remote_schema one',
      reason: 'Inconsistent object: validation for the given role-based schema failed because field "remoteName" does not exist in the "Object": "Query"',
      definition: { role: 'user', definition: { schema: REMOTE_NAME_ONLY } },
    };

    expect(await app.post({ type: 'update_remote_schema', args: { name: 'one', definition: { url: released.url } } })).toEqual({
      status: 200,
      body: { message: 'success', inconsistent_objects: [broken] },
    });
    expect(await app.post({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
      status: 200,
      body: { is_consistent: false, inconsistent_objects: [broken] },
    });
    expect(app.service.isConsistent()).toBe(false);
    expect(app.service.inconsistentObjects()).toEqual([broken]);
    // Kept in the document, but the role sees nothing of the remote, not even what still exists.
    expect((await exported(app)).remote_schemas[0].permissions).toEqual([{ role: 'user', definition: { schema: REMOTE_NAME_ONLY } }]);
    expect(fieldsOf(app, 'user')).not.toContain('hello');

    expect(await app.post({ type: 'update_remote_schema', args: { name: 'one', definition: { url: sample.url } } })).toEqual(success);
    expect(app.service.isConsistent()).toBe(true);
    expect(fieldsOf(app, 'user')).toContain('remoteName');
  });

  it('round-trips grants through replace_metadata and export_metadata byte for byte, schema {} block and comments included', async () => {
    const app = await startApp();
    const document = {
      version: 3,
      remote_schemas: [
        {
          name: 'one',
          definition: { url: sample.url, forward_client_headers: false, timeout_seconds: 60 },
          comment: 'the sample remote',
          permissions: [
            { role: 'user', definition: { schema: GRANT }, comment: 'read only' },
            { role: 'viewer', definition: { schema: `\t${REMOTE_NAME_ONLY}\r\n` } },
          ],
        },
      ],
    };
    expect(await app.post({ type: 'replace_metadata', args: document })).toEqual(success);
    const out = await exported(app);
    expect(JSON.stringify(out)).toBe(JSON.stringify(document));
    expect(fieldsOf(app, 'user')).toEqual(expect.arrayContaining(['hello', 'remoteName']));

    // What was exported goes back in unchanged.
    expect(await app.post({ type: 'replace_metadata', args: out })).toEqual(success);
    expect(JSON.stringify(await exported(app))).toBe(JSON.stringify(document));
  });

  it('refuses a replace_metadata document with a permission for admin, as add_remote_schema_permissions does', async () => {
    const app = await startApp();
    const remote = (role: string) => ({ name: 'one', definition: { url: sample.url }, permissions: [{ role: 'user', definition: { schema: REMOTE_NAME_ONLY } }, { role, definition: { schema: REMOTE_NAME_ONLY } }] });
    expect(await app.post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [remote('admin')] } })).toEqual({
      status: 400,
      body: { error: 'cannot define permission for admin role', path: '$.args.remote_schemas[0].permissions[1].role', code: 'constraint-violation' },
    });
    expect(await app.post({ type: 'replace_metadata', args: { metadata: { version: 3, remote_schemas: [remote('admin')] } } })).toEqual({
      status: 400,
      body: { error: 'cannot define permission for admin role', path: '$.args.metadata.remote_schemas[0].permissions[1].role', code: 'constraint-violation' },
    });
    expect(await exported(app)).toEqual({ version: 3, remote_schemas: [] });
    expect(await app.post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [remote('editor')] } })).toEqual(success);
  });

  it('refuses a replace_metadata document with a grant that does not fit, and reports it when inconsistency is allowed', async () => {
    const app = await startApp();
    const schema = 'type Message { id: ID! created_at: String }\ntype Query { messages: [Message!]! }';
    const metadata = {
      version: 3,
      remote_schemas: [
        {
          name: 'one',
          definition: { url: sample.url },
          permissions: [
            { role: 'user', definition: { schema: REMOTE_NAME_ONLY } },
            { role: 'author', definition: { schema }, comment: 'needs created_at' },
          ],
        },
      ],
    };
    expect(await app.post({ type: 'replace_metadata', args: metadata })).toEqual({
      status: 400,
      body: { error: 'cannot continue due to inconsistent metadata', path: '$.args', code: 'unexpected' },
    });
    expect(await exported(app)).toEqual({ version: 3, remote_schemas: [] });

    const author = {
      type: 'remote_schema_permission',
      name: 'remote_schema_permission author on remote_schema one',
      reason: `Inconsistent object: ${NO_SUCH_FIELD}`,
      definition: { role: 'author', definition: { schema }, comment: 'needs created_at' },
    };
    expect(await app.post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: true, metadata } })).toEqual({
      status: 200,
      body: { is_consistent: false, inconsistent_objects: [author] },
    });
    expect(fieldsOf(app, 'user')).toContain('remoteName');
    expect(fieldsOf(app, 'author')).not.toContain('remoteName');

    expect(await app.post({ type: 'drop_inconsistent_metadata', args: {} })).toEqual(success);
    expect(app.service.isConsistent()).toBe(true);
    expect((await exported(app)).remote_schemas[0].permissions).toEqual([{ role: 'user', definition: { schema: REMOTE_NAME_ONLY } }]);
  });

  it('adds a remote and its grants in one bulk, all or nothing', async () => {
    const app = await startApp();
    const bad = 'type Message { id: ID! created_at: String }\ntype Query { messages: [Message!]! }';
    const refused = await app.post({
      type: 'bulk',
      args: [
        { type: 'add_remote_schema', args: { name: 'one', definition: { url: sample.url } } },
        grant(REMOTE_NAME_ONLY, 'user'),
        grant(bad, 'author'),
      ],
    });
    expect(refused).toEqual({ status: 400, body: { error: NO_SUCH_FIELD, path: '$.args[2].args', code: 'validation-failed' } });
    expect(await exported(app)).toEqual({ version: 3, remote_schemas: [] });
    expect(fieldsOf(app, 'user')).not.toContain('remoteName');

    expect(
      await app.post({
        type: 'bulk',
        args: [{ type: 'add_remote_schema', args: { name: 'one', definition: { url: sample.url } } }, grant(REMOTE_NAME_ONLY, 'user')],
      }),
    ).toEqual({ status: 200, body: [{ message: 'success' }, { message: 'success' }] });
    expect(fieldsOf(app, 'user')).toContain('remoteName');
    expect(app.service.resourceVersion()).toBe(1);
  });

  describe('while disabled', () => {
    it('refuses add_remote_schema_permissions with constraint-violation', async () => {
      const app = await startApp({ permissions: false });
      await addRemote(app);
      expect(await app.post(grant(REMOTE_NAME_ONLY))).toEqual({
        status: 400,
        body: {
          error: 'remote schema permissions can only be added when remote schema permissions are enabled',
          path: '$.args',
          code: 'constraint-violation',
        },
      });
    });

    it('stores and exports grants given by replace_metadata without validating or enforcing them', async () => {
      const app = await startApp({ permissions: false });
      const schema = 'type Message { id: ID! created_at: String }\ntype Query { messages: [Message!]! }';
      const document = {
        version: 3,
        remote_schemas: [
          {
            name: 'one',
            definition: { url: sample.url, forward_client_headers: false, timeout_seconds: 60 },
            permissions: [{ role: 'user', definition: { schema } }],
          },
        ],
      };
      expect(await app.post({ type: 'replace_metadata', args: document })).toEqual(success);
      expect(await exported(app)).toEqual(document);
      expect(app.service.isConsistent()).toBe(true);
      expect(fieldsOf(app, 'user')).toEqual(expect.arrayContaining(['hello', 'remoteName']));
    });
  });

  describe.skipIf(databaseUrl === undefined)('in PostgreSQL', () => {
    it('keeps grants across a restart, byte for byte, and enforces them again', async () => {
      const schema = freshSchema();
      cleanups.push(() => schema.drop());
      const open = () => createPostgresMetadataStore({ connectionString: databaseUrl ?? '', schema: schema.name });
      const first = await startApp({ store: open() });
      await addRemote(first);
      expect(await first.post(grant(GRANT, 'user', { comment: 'read only' }))).toEqual(success);
      const before = await exported(first);
      await first.close();

      const second = await startApp({ store: open() });
      expect(JSON.stringify(await exported(second))).toBe(JSON.stringify(before));
      expect(before.remote_schemas[0].permissions).toEqual([{ role: 'user', definition: { schema: GRANT }, comment: 'read only' }]);
      expect(second.service.isConsistent()).toBe(true);
      expect(fieldsOf(second, 'user')).toEqual(expect.arrayContaining(['hello', 'remoteName']));
      expect(fieldsOf(second, 'user')).not.toContain('user');
    });

    it("serves another instance's grant once it has adopted that instance's change", async () => {
      const schema = freshSchema();
      cleanups.push(() => schema.drop());
      const open = () => createPostgresMetadataStore({ connectionString: databaseUrl ?? '', schema: schema.name });
      const first = await startApp({ store: open() });
      const second = await startApp({ store: open() });
      await addRemote(first);
      expect(await first.post(grant(REMOTE_NAME_ONLY))).toEqual(success);
      await until(() => second.service.resourceVersion() === 2, 'the second instance to adopt the grant');
      expect(fieldsOf(second, 'user')).toEqual(['remoteName']);
      expect(second.service.isConsistent()).toBe(true);
    });
  });
});
