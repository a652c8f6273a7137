import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixture, type Fixture } from './utils/fixture.js';

let fixture: Fixture;
const call = (type: string, args?: unknown) => fixture.server.post(args === undefined ? { type } : { type, args });
const exportMetadata = async () => (await call('export_metadata', {})).body as Record<string, unknown>;
const success = { status: 200, body: { message: 'success' } };
const refused = (error: string, path: string, code = 'invalid-params') => ({ status: 400, body: { error, path, code } });

beforeEach(async () => {
  fixture = await startFixture();
});
afterEach(async () => {
  await fixture.close();
});

/** Hasura's own example of `set_api_limits`, session variables renamed. */
const HASURA_EXAMPLE = {
  disabled: false,
  depth_limit: { global: 5, per_role: { myrole: 3 } },
  node_limit: { global: 5, per_role: { myrole: 3 } },
  time_limit: { global: 5, per_role: { myrole: 3 } },
  batch_limit: { global: 5, per_role: { myrole: 3 } },
  rate_limit: {
    global: { unique_params: 'IP', max_reqs_per_min: 100 },
    per_role: { myrole: { unique_params: ['x-svc-id', 'x-svc-team-id'], max_reqs_per_min: 10 } },
  },
};

describe('set_api_limits and remove_api_limits', () => {
  it("take Hasura's arguments and export them as set", async () => {
    expect(await call('set_api_limits', HASURA_EXAMPLE)).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [], api_limits: HASURA_EXAMPLE });
  });

  it('replace the whole setting, and remove it from the export', async () => {
    await call('set_api_limits', HASURA_EXAMPLE);
    expect(await call('set_api_limits', { node_limit: { per_role: { user: 50 } } })).toEqual(success);
    expect((await exportMetadata())['api_limits']).toEqual({ node_limit: { per_role: { user: 50 } } });
    expect(await call('remove_api_limits')).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
    expect(await call('remove_api_limits', {})).toEqual(success);
  });

  it('leave the setting out when nothing is limited', async () => {
    expect(await call('set_api_limits', { disabled: false, depth_limit: null })).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('read "ip" in any case as IP', async () => {
    await call('set_api_limits', { rate_limit: { global: { max_reqs_per_min: 5, unique_params: 'ip' } } });
    expect((await exportMetadata())['api_limits']).toEqual({ rate_limit: { global: { max_reqs_per_min: 5, unique_params: 'IP' } } });
  });

  it.each([
    [{ depth_limit: 5 }, 'expected an object', '$.args.depth_limit'],
    [{ depth_limit: { global: 0 } }, 'expected a positive integer of at most 1000000000', '$.args.depth_limit.global'],
    [{ node_limit: { global: 2.5 } }, 'expected a positive integer of at most 1000000000', '$.args.node_limit.global'],
    [{ time_limit: { global: 1.5 } }, 'expected a positive integer (seconds) of at most 2147483', '$.args.time_limit.global'],
    [{ batch_limit: { per_role: { user: '3' } } }, 'expected a positive integer of at most 1000000000', '$.args.batch_limit.per_role.user'],
    [{ batch_limit: { per_role: { admin: 3 } } }, 'the admin role is never limited', '$.args.batch_limit.per_role.admin'],
    [{ batch_limit: { per_role: { '': 3 } } }, 'expected a non-empty string', '$.args.batch_limit.per_role[""]'],
    [{ depth_limit: { global: 3, roles: {} } }, 'unknown field "roles"', '$.args.depth_limit.roles'],
    [{ rate_limit: { global: { unique_params: 'IP' } } }, 'key "max_reqs_per_min" not found', '$.args.rate_limit.global'],
    [{ rate_limit: { global: { max_reqs_per_min: 0 } } }, 'expected a positive integer of at most 1000000', '$.args.rate_limit.global.max_reqs_per_min'],
    [
      { rate_limit: { global: { max_reqs_per_min: 1, unique_params: 'ID' } } },
      'expected "IP" or a list of session variable names (x-svc-…)',
      '$.args.rate_limit.global.unique_params',
    ],
    [
      { rate_limit: { per_role: { user: { max_reqs_per_min: 1, unique_params: ['user-id'] } } } },
      '"user-id" is not a session variable name (x-svc-…)',
      '$.args.rate_limit.per_role.user.unique_params[0]',
    ],
    [
      { rate_limit: { global: { max_reqs_per_min: 1, unique_params: ['X-Svc-Role'] } } },
      'x-svc-role cannot be a unique parameter: requests are always counted per role',
      '$.args.rate_limit.global.unique_params[0]',
    ],
    [
      { rate_limit: { global: { max_reqs_per_min: 1, unique_params: ['x-svc-user-id', 'X-SVC-USER-ID'] } } },
      '"X-SVC-USER-ID" is listed more than once (names are matched case-insensitively)',
      '$.args.rate_limit.global.unique_params[1]',
    ],
    [{ rate_limit: { global: { max_reqs_per_min: 1, per_minute: 2 } } }, 'unknown field "per_minute"', '$.args.rate_limit.global.per_minute'],
    [{ disabled: 'no' }, 'expected a boolean', '$.args.disabled'],
    [{ depth: { global: 1 } }, 'unknown field "depth"', '$.args.depth'],
  ])('refuse %j naming the field and the problem', async (args, error, path) => {
    expect(await call('set_api_limits', args)).toEqual(refused(error, path));
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('keep a role named __proto__ as a role', async () => {
    const args = JSON.parse('{"depth_limit":{"per_role":{"__proto__":2}}}') as unknown;
    expect(await call('set_api_limits', args)).toEqual(success);
    expect(JSON.stringify((await exportMetadata())['api_limits'])).toBe('{"depth_limit":{"per_role":{"__proto__":2}}}');
  });
});

describe('set_graphql_schema_introspection_options', () => {
  it('sets the roles, exports them, and leaves the setting out when none is listed', async () => {
    expect(await call('set_graphql_schema_introspection_options', { disabled_for_roles: ['guest', 'public'] })).toEqual(success);
    expect((await exportMetadata())['graphql_schema_introspection']).toEqual({ disabled_for_roles: ['guest', 'public'] });
    expect(await call('set_graphql_schema_introspection_options', { disabled_for_roles: [] })).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('names the problem of malformed arguments', async () => {
    expect(await call('set_graphql_schema_introspection_options', {})).toEqual(refused('key "disabled_for_roles" not found', '$.args'));
    expect(await call('set_graphql_schema_introspection_options', { disabled_for_roles: 'guest' })).toEqual(
      refused('expected an array', '$.args.disabled_for_roles'),
    );
    expect(await call('set_graphql_schema_introspection_options', { disabled_for_roles: ['a', 'a'] })).toEqual(
      refused('role "a" is listed more than once', '$.args.disabled_for_roles[1]'),
    );
  });
});

describe('in a whole document', () => {
  it('round-trip through export_metadata and replace_metadata, in export order', async () => {
    await call('set_graphql_schema_introspection_options', { disabled_for_roles: ['guest'] });
    await call('set_api_limits', HASURA_EXAMPLE);
    await call('create_query_collection', { name: 'app', definition: { queries: [{ name: 'q', query: '{ a }' }] } });
    await call('add_collection_to_allowlist', { collection: 'app' });
    const exported = await exportMetadata();
    expect(Object.keys(exported)).toEqual(['version', 'remote_schemas', 'query_collections', 'allowlist', 'api_limits', 'graphql_schema_introspection']);
    await call('replace_metadata', { version: 3, remote_schemas: [] });
    expect(await call('replace_metadata', { allow_inconsistent_metadata: false, metadata: exported })).toEqual({
      status: 200,
      body: { is_consistent: true, inconsistent_objects: [] },
    });
    expect(await exportMetadata()).toEqual(exported);
  });

  it('takes the settings of a Hasura export as written (empty per_role, disabled false, empty role list)', async () => {
    const document = {
      version: 3,
      remote_schemas: [],
      api_limits: { disabled: false, depth_limit: { global: 10, per_role: {} }, rate_limit: { global: { max_reqs_per_min: 600, unique_params: 'IP' }, per_role: {} } },
      graphql_schema_introspection: { disabled_for_roles: [] },
    };
    expect(await call('replace_metadata', document)).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [], api_limits: document.api_limits });
  });

  it('refuses invalid settings with the path into the document', async () => {
    expect(await call('replace_metadata', { version: 3, remote_schemas: [], api_limits: { node_limit: { global: -1 } } })).toEqual(
      refused('expected a positive integer of at most 1000000000', '$.args.api_limits.node_limit.global'),
    );
  });
});
