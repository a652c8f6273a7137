import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { A, B, CLASH, DOWN, rootFields, startFixture, type Fixture } from './utils/fixture.js';

let fixture: Fixture;
const post = (body: unknown, headers?: Record<string, string>) => fixture.server.post(body, headers);
const add = (name: string, definition: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  post({ type: 'add_remote_schema', args: { name, definition, ...extra } });
const exportMetadata = async () => (await post({ type: 'export_metadata', args: {} })).body;
const success = { status: 200, body: { message: 'success' } };

beforeEach(async () => {
  fixture = await startFixture();
});
afterEach(async () => {
  await fixture.close();
});

describe('add_remote_schema', () => {
  it('answers success, stitches the remote and exports it with its defaults', async () => {
    expect(await add('a', { url: A })).toEqual(success);
    expect(rootFields(fixture.registry)).toEqual(['a']);
    expect(await exportMetadata()).toEqual({
      version: 3,
      remote_schemas: [{ name: 'a', definition: { url: A, forward_client_headers: false, timeout_seconds: 60 } }],
    });
  });

  it('exports headers, customization and comment only when they were set', async () => {
    const definition = {
      url: B,
      headers: [{ name: 'x-api-key', value: 'k' }, { name: 'x-from-env', value_from_env: 'API_KEY' }],
      forward_client_headers: true,
      timeout_seconds: 5,
      customization: { root_fields_namespace: 'bee', type_names: { prefix: 'B_', mapping: { User: 'BeeUser' } } },
    };
    expect(await add('b', definition, { comment: 'the b remote' })).toEqual(success);
    expect(await add('a', { url: A, headers: [] })).toEqual(success);
    expect(await exportMetadata()).toEqual({
      version: 3,
      remote_schemas: [
        { name: 'b', definition, comment: 'the b remote' },
        { name: 'a', definition: { url: A, forward_client_headers: false, timeout_seconds: 60 } },
      ],
    });
  });

  it('refuses a name that is taken with already-exists', async () => {
    await add('a', { url: A });
    expect(await add('a', { url: B })).toEqual({
      status: 400,
      body: { error: 'remote schema with name "a" already exists', path: '$.args', code: 'already-exists' },
    });
  });

  it('refuses a remote that cannot be reached with remote-schema-error', async () => {
    expect(await add('down', { url: DOWN })).toEqual({
      status: 400,
      body: { error: `HTTP exception occurred while sending the request to "${DOWN}"`, path: '$.args', code: 'remote-schema-error' },
    });
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('refuses a root field clash with invalid-configuration', async () => {
    await add('a', { url: A });
    expect(await add('clash', { url: CLASH })).toEqual({
      status: 400,
      body: { error: "Inconsistent object: Duplicate remote field 'a'", path: '$.args', code: 'invalid-configuration' },
    });
    expect(rootFields(fixture.registry)).toEqual(['a']);
  });

  it('accepts the clashing remote once it is nested under a namespace', async () => {
    await add('a', { url: A });
    expect(await add('clash', { url: CLASH, customization: { root_fields_namespace: 'other' } })).toEqual(success);
    expect(rootFields(fixture.registry)).toEqual(['a', 'other']);
  });
});

describe('update_remote_schema', () => {
  it('answers not-exists for an unknown remote', async () => {
    expect(await post({ type: 'update_remote_schema', args: { name: 'nope', definition: { url: A } } })).toEqual({
      status: 400,
      body: { error: 'remote schema with name "nope" doesn\'t exist', path: '$.args', code: 'not-exists' },
    });
  });

  it('updates a definition without a URL change and keeps the remote stitched', async () => {
    await add('a', { url: A }, { comment: 'old' });
    expect(
      await post({ type: 'update_remote_schema', args: { name: 'a', definition: { url: A, timeout_seconds: 7 }, comment: 'new' } }),
    ).toEqual(success);
    expect(rootFields(fixture.registry)).toEqual(['a']);
    expect(await exportMetadata()).toEqual({
      version: 3,
      remote_schemas: [{ name: 'a', definition: { url: A, forward_client_headers: false, timeout_seconds: 7 }, comment: 'new' }],
    });
  });

  it('re-introspects on a URL change: the new remote replaces the old one in the schema', async () => {
    await add('a', { url: A });
    expect(await post({ type: 'update_remote_schema', args: { name: 'a', definition: { url: B } } })).toEqual(success);
    expect(rootFields(fixture.registry)).toEqual(['b']);
  });

  it('refuses a definition that clashes with a remote after it, as add does, and keeps the old one', async () => {
    // Remotes are stitched in document order: the clash is found at "a", which comes later.
    await add('b', { url: B });
    await add('a', { url: A });
    const before = await exportMetadata();
    expect(await post({ type: 'update_remote_schema', args: { name: 'b', definition: { url: CLASH } } })).toEqual({
      status: 400,
      body: { error: "Inconsistent object: Duplicate remote field 'a'", path: '$.args', code: 'invalid-configuration' },
    });
    expect(await exportMetadata()).toEqual(before);
    expect(rootFields(fixture.registry)).toEqual(['b', 'a']);
    expect((await post({ type: 'get_inconsistent_metadata', args: {} })).body).toEqual({ is_consistent: true, inconsistent_objects: [] });
  });

  it('refuses a URL that cannot be reached and keeps the old definition', async () => {
    await add('a', { url: A });
    expect((await post({ type: 'update_remote_schema', args: { name: 'a', definition: { url: DOWN } } })).body).toEqual({
      error: `HTTP exception occurred while sending the request to "${DOWN}"`,
      path: '$.args',
      code: 'remote-schema-error',
    });
    expect(rootFields(fixture.registry)).toEqual(['a']);
    expect((await exportMetadata()).remote_schemas[0].definition.url).toBe(A);
  });

  it('keeps the permissions of the remote', async () => {
    const permissions = [{ role: 'user', definition: { schema: 'type Query { a: String }' } }];
    await post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'a', definition: { url: A }, permissions }] } });
    expect(await post({ type: 'update_remote_schema', args: { name: 'a', definition: { url: A, timeout_seconds: 9 } } })).toEqual(success);
    expect((await exportMetadata()).remote_schemas[0].permissions).toEqual(permissions);
  });
});

describe('remove_remote_schema', () => {
  it('answers not-exists for an unknown remote', async () => {
    expect(await post({ type: 'remove_remote_schema', args: { name: 'nope' } })).toEqual({
      status: 400,
      body: { error: 'no such remote schema', path: '$.args', code: 'not-exists' },
    });
  });

  it('removes a remote without dependents and unstitches it', async () => {
    await add('a', { url: A });
    expect(await post({ type: 'remove_remote_schema', args: { name: 'a' } })).toEqual(success);
    expect(rootFields(fixture.registry)).toEqual(['no_queries_available']);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('refuses to drop a remote with permissions unless cascade is true, listing them sorted', async () => {
    const permissions = [
      { role: 'user', definition: { schema: 'type Query { a: String }' } },
      { role: 'editor', definition: { schema: 'type Query { a: String }' } },
    ];
    await post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'a', definition: { url: A }, permissions }] } });
    expect(await post({ type: 'remove_remote_schema', args: { name: 'a' } })).toEqual({
      status: 400,
      body: {
        error:
          'cannot drop due to the following dependent objects: remote_schema_permission editor on remote_schema a, remote_schema_permission user on remote_schema a',
        path: '$.args',
        code: 'dependency-error',
      },
    });
    expect(await post({ type: 'remove_remote_schema', args: { name: 'a', cascade: false } })).toMatchObject({ status: 400 });
    expect((await exportMetadata()).remote_schemas).toHaveLength(1);
    expect(await post({ type: 'remove_remote_schema', args: { name: 'a', cascade: true } })).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });
});

describe('reload_remote_schema', () => {
  it('answers not-exists for an unknown remote', async () => {
    expect(await post({ type: 'reload_remote_schema', args: { name: 'nope' } })).toEqual({
      status: 400,
      body: { error: 'remote schema with name "nope" does not exist', path: '$.args', code: 'not-exists' },
    });
  });

  it('introspects the remote again and picks up its new schema', async () => {
    await add('a', { url: A });
    fixture.registry.remotes.set(A, 'type Query { a: String a2: String }');
    expect(await post({ type: 'reload_remote_schema', args: { name: 'a' } })).toEqual(success);
    expect(fixture.registry.reloads.at(-1)).toEqual(['a']);
    expect(rootFields(fixture.registry)).toEqual(['a', 'a2']);
  });

  it('succeeds when the remote is down and reports it as inconsistent', async () => {
    await add('a', { url: A });
    fixture.registry.remotes.delete(A);
    expect(await post({ type: 'reload_remote_schema', args: { name: 'a' } })).toEqual(success);
    expect(fixture.service.isConsistent()).toBe(false);
  });
});

describe('introspect_remote_schema', () => {
  it("answers the remote's introspection result", async () => {
    await add('a', { url: A });
    const { status, body } = await post({ type: 'introspect_remote_schema', args: { name: 'a' } });
    expect(status).toBe(200);
    expect(body.data.__schema.queryType).toMatchObject({ name: 'Query' });
  });

  it('answers not-exists for an unknown remote', async () => {
    expect(await post({ type: 'introspect_remote_schema', args: { name: 'nope' } })).toEqual({
      status: 400,
      body: { error: 'remote schema with name "nope" does not exist', path: '$.args', code: 'not-exists' },
    });
  });
});

/**
 * The metadata side of remote schema permissions, over the fake registry: which permissions it is
 * given, and what the API answers for what it reports (`permissionProblems`). Validation itself, with
 * the real registry and real remotes, is in permissions.test.ts.
 */
describe('remote schema permissions', () => {
  const schema = 'type Query { a: String }';
  const grant = (role = 'user', extra: Record<string, unknown> = {}) => ({
    type: 'add_remote_schema_permissions',
    args: { remote_schema: 'a', role, definition: { schema }, ...extra },
  });
  const drop = (role = 'user', remote = 'a') => ({ type: 'drop_remote_schema_permissions', args: { remote_schema: remote, role } });
  const entryOf = (document: { remote_schemas: Array<{ name: string }> }, name: string): any =>
    document.remote_schemas.find((entry) => entry.name === name);
  /** The permissions the registry was given for remote `a` in its last plan. */
  const plannedPermissions = () => fixture.registry.planned.at(-1)?.find((entry) => entry.name === 'a')?.permissions;
  const restart = async (remoteSchemaPermissions: boolean) => {
    await fixture.close();
    fixture = await startFixture({ remoteSchemaPermissions });
  };
  const inconsistentUser = (message: string) => ({
    type: 'remote_schema_permission',
    name: 'remote_schema_permission user on remote_schema a',
    reason: `Inconsistent object: ${message}`,
    definition: { role: 'user', definition: { schema } },
  });
  const invalid = 'validation for the given role-based schema failed because field "b" does not exist in the "Object": "Query"';

  describe('while disabled', () => {
    it('refuses add_remote_schema_permissions with constraint-violation and stores nothing', async () => {
      await add('a', { url: A });
      expect(await post(grant())).toEqual({
        status: 400,
        body: {
          error: 'remote schema permissions can only be added when remote schema permissions are enabled',
          path: '$.args',
          code: 'constraint-violation',
        },
      });
      expect(entryOf(await exportMetadata(), 'a').permissions).toBeUndefined();
    });

    it('keeps and exports permissions given by replace_metadata without validating them or handing them to the registry', async () => {
      fixture.registry.permissionProblems.set('a/user', invalid);
      const permissions = [{ role: 'user', definition: { schema }, comment: 'kept' }];
      const document = { version: 3, remote_schemas: [{ name: 'a', definition: { url: A }, permissions }] };
      expect(await post({ type: 'replace_metadata', args: document })).toEqual(success);
      expect(plannedPermissions()).toBeUndefined();
      expect(entryOf(await exportMetadata(), 'a').permissions).toEqual(permissions);
      expect(await post({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
        status: 200,
        body: { is_consistent: true, inconsistent_objects: [] },
      });
    });

    it('drops a stored permission', async () => {
      const permissions = [{ role: 'user', definition: { schema } }];
      await post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'a', definition: { url: A }, permissions }] } });
      expect(await post(drop())).toEqual(success);
      expect(entryOf(await exportMetadata(), 'a')).not.toHaveProperty('permissions');
    });
  });

  describe('while enabled', () => {
    beforeEach(async () => {
      await restart(true);
      await add('a', { url: A });
    });

    it('adds a permission, hands it to the registry and exports it as given, comment included', async () => {
      expect(await post(grant('user', { comment: 'read only' }))).toEqual(success);
      expect(plannedPermissions()).toEqual([{ role: 'user', schema }]);
      expect(entryOf(await exportMetadata(), 'a').permissions).toEqual([{ role: 'user', definition: { schema }, comment: 'read only' }]);
      expect(fixture.service.resourceVersion()).toBe(2);
    });

    it('keeps the order in which permissions were added', async () => {
      await post(grant('user'));
      await post(grant('editor'));
      expect(entryOf(await exportMetadata(), 'a').permissions.map((permission: { role: string }) => permission.role)).toEqual(['user', 'editor']);
    });

    it('refuses a permission for admin with constraint-violation', async () => {
      expect(await post(grant('admin'))).toEqual({
        status: 400,
        body: { error: 'cannot define permission for admin role', path: '$.args', code: 'constraint-violation' },
      });
    });

    it('answers not-exists for an unknown remote, to add and to drop', async () => {
      const answer = {
        status: 400,
        body: { error: 'remote schema "nope" doesn\'t exist', path: '$.args', code: 'not-exists' },
      };
      expect(await post({ ...grant(), args: { ...grant().args, remote_schema: 'nope' } })).toEqual(answer);
      expect(await post(drop('user', 'nope'))).toEqual(answer);
    });

    it('refuses a second permission for the same role with already-exists', async () => {
      await post(grant());
      expect(await post(grant())).toEqual({
        status: 400,
        body: { error: 'permissions for role: "user" for remote schema:"a" already exists', path: '$.args', code: 'already-exists' },
      });
    });

    it("refuses a permission the registry finds invalid with validation-failed, the registry's message as is, and stores nothing", async () => {
      fixture.registry.permissionProblems.set('a/user', invalid);
      const commits = fixture.registry.commits;
      expect(await post(grant())).toEqual({ status: 400, body: { error: invalid, path: '$.args', code: 'validation-failed' } });
      expect(entryOf(await exportMetadata(), 'a').permissions).toBeUndefined();
      expect(fixture.service.resourceVersion()).toBe(1);
      expect(fixture.registry.commits).toBe(commits);
    });

    it("refuses a permission on a remote that cannot be loaded with the remote's own error", async () => {
      fixture.registry.remotes.delete(A);
      await post({ type: 'reload_remote_schema', args: { name: 'a' } });
      expect(await post(grant())).toEqual({
        status: 400,
        body: { error: `HTTP exception occurred while sending the request to "${A}"`, path: '$.args', code: 'remote-schema-error' },
      });
      expect(entryOf(await exportMetadata(), 'a').permissions).toBeUndefined();
    });

    it.each([
      ['no remote_schema', { role: 'user', definition: { schema } }, '$.args', 'key "remote_schema" not found'],
      ['an empty role', { remote_schema: 'a', role: '', definition: { schema } }, '$.args.role', 'expected a non-empty string'],
      ['a role that is no string', { remote_schema: 'a', role: 7, definition: { schema } }, '$.args.role', 'expected a non-empty string'],
      ['no definition', { remote_schema: 'a', role: 'user' }, '$.args', 'key "definition" not found'],
      ['a definition without schema', { remote_schema: 'a', role: 'user', definition: {} }, '$.args.definition', 'key "schema" not found'],
      ['a schema that is no string', { remote_schema: 'a', role: 'user', definition: { schema: 1 } }, '$.args.definition.schema', 'expected a string'],
      ['an unknown key in definition', { remote_schema: 'a', role: 'user', definition: { schema, sdl: schema } }, '$.args.definition.sdl', 'unknown field "sdl"'],
      ['a comment that is no string', { remote_schema: 'a', role: 'user', definition: { schema }, comment: 1 }, '$.args.comment', 'expected a string'],
      ['an unknown key', { remote_schema: 'a', role: 'user', definition: { schema }, roles: ['user'] }, '$.args.roles', 'unknown field "roles"'],
    ])('refuses add_remote_schema_permissions with %s at its path', async (_what, args, path, error) => {
      expect(await post({ type: 'add_remote_schema_permissions', args })).toEqual({ status: 400, body: { error, path, code: 'invalid-params' } });
    });

    it.each([
      ['no role', { remote_schema: 'a' }, '$.args', 'key "role" not found'],
      ['an empty remote_schema', { remote_schema: '', role: 'user' }, '$.args.remote_schema', 'expected a non-empty string'],
      ['an unknown key', { remote_schema: 'a', role: 'user', cascade: true }, '$.args.cascade', 'unknown field "cascade"'],
    ])('refuses drop_remote_schema_permissions with %s at its path', async (_what, args, path, error) => {
      expect(await post({ type: 'drop_remote_schema_permissions', args })).toEqual({ status: 400, body: { error, path, code: 'invalid-params' } });
    });

    it('drops a permission: the registry no longer gets it and the export shows no permissions key', async () => {
      await post(grant('user'));
      await post(grant('editor'));
      expect(await post(drop('user'))).toEqual(success);
      expect(plannedPermissions()).toEqual([{ role: 'editor', schema }]);
      expect(await post(drop('editor'))).toEqual(success);
      expect(plannedPermissions()).toBeUndefined();
      expect(entryOf(await exportMetadata(), 'a')).not.toHaveProperty('permissions');
    });

    it("answers not-exists in Hasura's words when there is no permission to drop", async () => {
      expect(await post(drop('user'))).toEqual({
        status: 400,
        body: { error: 'permissions for role: "user" for remote schema:"a" doesn\'t exist', path: '$.args', code: 'not-exists' },
      });
    });

    it('reports permissions that no longer fit after update_remote_schema, and none once they fit again', async () => {
      await post(grant());
      fixture.registry.permissionProblems.set('a/user', invalid);
      const update = { type: 'update_remote_schema', args: { name: 'a', definition: { url: A, timeout_seconds: 5 } } };
      expect(await post(update)).toEqual({ status: 200, body: { message: 'success', inconsistent_objects: [inconsistentUser(invalid)] } });
      expect(fixture.service.inconsistentObjects()).toEqual([inconsistentUser(invalid)]);
      expect(fixture.service.isConsistent()).toBe(false);
      expect(entryOf(await exportMetadata(), 'a').permissions).toEqual([{ role: 'user', definition: { schema } }]);

      fixture.registry.permissionProblems.delete('a/user');
      expect(await post(update)).toEqual(success);
      expect(fixture.service.isConsistent()).toBe(true);
    });

    it('reports the permissions of a remote that went down as inconsistent too', async () => {
      await post(grant());
      fixture.registry.remotes.delete(A);
      const { body } = await post({ type: 'reload_metadata', args: {} });
      expect(body.inconsistent_objects.map((object: { name: string; reason: string }) => [object.name, object.reason])).toEqual([
        ['remote_schema a', `Inconsistent object: HTTP exception occurred while sending the request to "${A}"`],
        ['remote_schema_permission user on remote_schema a', 'Inconsistent object: remote schema "a" is inconsistent'],
      ]);
    });

    it('refuses a replace_metadata document with an invalid permission, and reports it when inconsistency is allowed', async () => {
      fixture.registry.permissionProblems.set('a/user', invalid);
      const metadata = { version: 3, remote_schemas: [{ name: 'a', definition: { url: A }, permissions: [{ role: 'user', definition: { schema } }] }] };
      expect(await post({ type: 'replace_metadata', args: metadata })).toEqual({
        status: 400,
        body: { error: 'cannot continue due to inconsistent metadata', path: '$.args', code: 'unexpected' },
      });
      expect(entryOf(await exportMetadata(), 'a').permissions).toBeUndefined();
      expect(await post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: true, metadata } })).toEqual({
        status: 200,
        body: { is_consistent: false, inconsistent_objects: [inconsistentUser(invalid)] },
      });
      expect(await post({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
        status: 200,
        body: { is_consistent: false, inconsistent_objects: [inconsistentUser(invalid)] },
      });
    });

    it('drops inconsistent permissions with drop_inconsistent_metadata and keeps their remote and the other permissions', async () => {
      await post(grant('user'));
      await post(grant('editor'));
      fixture.registry.permissionProblems.set('a/user', invalid);
      await post({ type: 'reload_metadata', args: {} });
      expect(fixture.service.isConsistent()).toBe(false);
      expect(await post({ type: 'drop_inconsistent_metadata', args: {} })).toEqual(success);
      expect(fixture.service.isConsistent()).toBe(true);
      expect(entryOf(await exportMetadata(), 'a').permissions).toEqual([{ role: 'editor', definition: { schema } }]);
    });

    it('adds a remote and a permission on it in one bulk; a refused permission rolls the whole bulk back', async () => {
      const bPermission = (role: string) => ({
        type: 'add_remote_schema_permissions',
        args: { remote_schema: 'b', role, definition: { schema: 'type Query { b: String }' } },
      });
      fixture.registry.permissionProblems.set('b/editor', invalid);
      const refused = await post({
        type: 'bulk',
        args: [{ type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } }, bPermission('user'), bPermission('editor')],
      });
      expect(refused).toEqual({ status: 400, body: { error: invalid, path: '$.args[2].args', code: 'validation-failed' } });
      expect(entryOf(await exportMetadata(), 'b')).toBeUndefined();

      expect(
        await post({ type: 'bulk', args: [{ type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } }, bPermission('user')] }),
      ).toEqual({ status: 200, body: [{ message: 'success' }, { message: 'success' }] });
      expect(entryOf(await exportMetadata(), 'b').permissions).toEqual([{ role: 'user', definition: { schema: 'type Query { b: String }' } }]);
      expect(fixture.service.resourceVersion()).toBe(2);
    });
  });
});

describe('export_metadata', () => {
  it('answers the empty document before anything was added', async () => {
    expect(await post({ type: 'export_metadata', args: {} })).toEqual({ status: 200, body: { version: 3, remote_schemas: [] } });
  });

  it('answers {resource_version, metadata} with version 2', async () => {
    await add('a', { url: A });
    await add('b', { url: B });
    expect(await post({ type: 'export_metadata', version: 2, args: {} })).toEqual({
      status: 200,
      body: {
        resource_version: 2,
        metadata: {
          version: 3,
          remote_schemas: [
            { name: 'a', definition: { url: A, forward_client_headers: false, timeout_seconds: 60 } },
            { name: 'b', definition: { url: B, forward_client_headers: false, timeout_seconds: 60 } },
          ],
        },
      },
    });
  });
});

describe('replace_metadata', () => {
  const document = {
    version: 3,
    remote_schemas: [{ name: 'b', definition: { url: B, timeout_seconds: 3 }, comment: 'c' }],
  };
  const exported = {
    version: 3,
    remote_schemas: [{ name: 'b', definition: { url: B, forward_client_headers: false, timeout_seconds: 3 }, comment: 'c' }],
  };
  const inconsistentB = {
    type: 'remote_schema',
    name: 'remote_schema down',
    reason: `Inconsistent object: HTTP exception occurred while sending the request to "${DOWN}"`,
    definition: { name: 'down', definition: { url: DOWN, forward_client_headers: false, timeout_seconds: 60 } },
  };

  it('replaces the whole document given as it is', async () => {
    await add('a', { url: A });
    expect(await post({ type: 'replace_metadata', args: document })).toEqual(success);
    expect(await exportMetadata()).toEqual(exported);
    expect(rootFields(fixture.registry)).toEqual(['b']);
  });

  it('refuses an inconsistent document with unexpected and replaces nothing', async () => {
    await add('a', { url: A });
    const bad = { version: 3, remote_schemas: [{ name: 'down', definition: { url: DOWN } }] };
    const refused = {
      status: 400,
      body: { error: 'cannot continue due to inconsistent metadata', path: '$.args', code: 'unexpected' },
    };
    expect(await post({ type: 'replace_metadata', args: bad })).toEqual(refused);
    expect(await post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: false, metadata: bad } })).toEqual(refused);
    expect((await exportMetadata()).remote_schemas.map((entry: { name: string }) => entry.name)).toEqual(['a']);
    expect(rootFields(fixture.registry)).toEqual(['a']);
  });

  it('answers a consistency report in the {allow_inconsistent_metadata, metadata} shape', async () => {
    expect(await post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: false, metadata: document } })).toEqual({
      status: 200,
      body: { is_consistent: true, inconsistent_objects: [] },
    });
    expect(await exportMetadata()).toEqual(exported);
  });

  it('keeps an inconsistent document when allowed, and reports it', async () => {
    const metadata = { version: 3, remote_schemas: [{ name: 'a', definition: { url: A } }, { name: 'down', definition: { url: DOWN } }] };
    expect(await post({ type: 'replace_metadata', args: { allow_inconsistent_metadata: true, metadata } })).toEqual({
      status: 200,
      body: { is_consistent: false, inconsistent_objects: [inconsistentB] },
    });
    expect(rootFields(fixture.registry)).toEqual(['a']);
    expect(fixture.service.isConsistent()).toBe(false);
  });

  it('refuses a document with two remotes of the same name', async () => {
    const metadata = { version: 3, remote_schemas: [{ name: 'a', definition: { url: A } }, { name: 'a', definition: { url: B } }] };
    expect(await post({ type: 'replace_metadata', args: metadata })).toEqual({
      status: 400,
      body: { error: 'remote schema with name "a" already exists', path: '$.args.remote_schemas[1].name', code: 'already-exists' },
    });
  });
});

describe('reload_metadata, get_inconsistent_metadata and drop_inconsistent_metadata', () => {
  const inconsistentA = {
    type: 'remote_schema',
    name: 'remote_schema a',
    reason: `Inconsistent object: HTTP exception occurred while sending the request to "${A}"`,
    definition: { name: 'a', definition: { url: A, forward_client_headers: false, timeout_seconds: 60 } },
  };

  it('reloads every remote and reports consistency', async () => {
    await add('a', { url: A });
    expect(await post({ type: 'reload_metadata', args: {} })).toEqual({
      status: 200,
      body: { message: 'success', is_consistent: true },
    });
    expect(fixture.registry.reloads.at(-1)).toBe('all');
    expect(await post({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
      status: 200,
      body: { is_consistent: true, inconsistent_objects: [] },
    });
  });

  it('reports a remote that went down, then drops it on drop_inconsistent_metadata', async () => {
    await add('a', { url: A });
    await add('b', { url: B });
    fixture.registry.remotes.delete(A);
    expect(await post({ type: 'reload_metadata', args: { reload_remote_schemas: ['a'] } })).toEqual({
      status: 200,
      body: { message: 'success', is_consistent: false, inconsistent_objects: [inconsistentA] },
    });
    expect(fixture.registry.reloads.at(-1)).toEqual(['a']);
    expect(await post({ type: 'get_inconsistent_metadata', args: {} })).toEqual({
      status: 200,
      body: { is_consistent: false, inconsistent_objects: [inconsistentA] },
    });
    expect(fixture.service.inconsistentObjects()).toEqual([inconsistentA]);
    expect(await post({ type: 'drop_inconsistent_metadata', args: {} })).toEqual(success);
    expect((await exportMetadata()).remote_schemas.map((entry: { name: string }) => entry.name)).toEqual(['b']);
    expect(fixture.service.isConsistent()).toBe(true);
  });

  it('does not reload the remotes with reload_remote_schemas false', async () => {
    await add('a', { url: A });
    expect((await post({ type: 'reload_metadata', args: { reload_remote_schemas: false } })).status).toBe(200);
    expect(fixture.registry.reloads.at(-1)).toEqual([]);
  });
});

describe('bulk', () => {
  it('answers the list of results', async () => {
    expect(
      await post({
        type: 'bulk',
        args: [
          { type: 'add_remote_schema', args: { name: 'a', definition: { url: A } } },
          { type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } },
          { type: 'get_inconsistent_metadata', args: {} },
        ],
      }),
    ).toEqual({
      status: 200,
      body: [{ message: 'success' }, { message: 'success' }, { is_consistent: true, inconsistent_objects: [] }],
    });
    expect(rootFields(fixture.registry)).toEqual(['a', 'b']);
    expect((await post({ type: 'export_metadata', version: 2, args: {} })).body.resource_version).toBe(1);
  });

  it('is all or nothing and answers the first failure at $.args[i].args', async () => {
    await add('a', { url: A });
    const before = await exportMetadata();
    const commits = fixture.registry.commits;
    expect(
      await post({
        type: 'bulk',
        args: [
          { type: 'add_remote_schema', args: { name: 'b', definition: { url: B } } },
          { type: 'add_remote_schema', args: { name: 'c', definition: { url: B, timeout_seconds: 0 } } },
          { type: 'remove_remote_schema', args: { name: 'nope' } },
        ],
      }),
    ).toEqual({
      status: 400,
      body: { error: 'expected a positive number', path: '$.args[1].args.definition.timeout_seconds', code: 'invalid-params' },
    });
    expect(await exportMetadata()).toEqual(before);
    expect(fixture.registry.commits).toBe(commits);
    expect(rootFields(fixture.registry)).toEqual(['a']);
  });

  it('reports a refused operation at $.args[i].args', async () => {
    expect(
      await post({
        type: 'bulk',
        args: [
          { type: 'add_remote_schema', args: { name: 'a', definition: { url: A } } },
          { type: 'add_remote_schema', args: { name: 'a', definition: { url: B } } },
        ],
      }),
    ).toEqual({
      status: 400,
      body: { error: 'remote schema with name "a" already exists', path: '$.args[1].args', code: 'already-exists' },
    });
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('reports an unknown operation inside bulk as parse-failed at its type', async () => {
    expect(await post({ type: 'bulk', args: [{ type: 'export_metadata', args: {} }, { type: 'nope', args: {} }] })).toEqual({
      status: 400,
      body: { error: 'unknown metadata operation "nope"', path: '$.args[1].type', code: 'parse-failed' },
    });
  });
});

describe('resource_version', () => {
  it('answers 409 conflict for another version and changes nothing', async () => {
    await add('a', { url: A });
    expect(await post({ type: 'add_remote_schema', resource_version: 0, args: { name: 'b', definition: { url: B } } })).toEqual({
      status: 409,
      body: {
        error: 'metadata resource version referenced (0) did not match current version (1)',
        path: '$',
        code: 'conflict',
      },
    });
    expect((await exportMetadata()).remote_schemas).toHaveLength(1);
    expect(rootFields(fixture.registry)).toEqual(['a']);
  });

  it('accepts the current version and increments it', async () => {
    await add('a', { url: A });
    expect(await post({ type: 'add_remote_schema', resource_version: 1, args: { name: 'b', definition: { url: B } } })).toEqual(success);
    expect((await post({ type: 'export_metadata', version: 2, args: {} })).body.resource_version).toBe(2);
  });

  it('does not increment for operations that change nothing', async () => {
    await add('a', { url: A });
    await post({ type: 'reload_remote_schema', args: { name: 'a' } });
    await post({ type: 'reload_metadata', args: {} });
    await post({ type: 'drop_inconsistent_metadata', args: {} });
    expect((await post({ type: 'export_metadata', version: 2, args: {} })).body.resource_version).toBe(1);
  });
});
