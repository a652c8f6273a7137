import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, startFixture, type Fixture } from './utils/fixture.js';

let fixture: Fixture;
beforeAll(async () => {
  fixture = await startFixture();
});
afterAll(async () => {
  await fixture.close();
});

const invalid = (path: string, error: string) => ({ status: 400, body: { error, path, code: 'invalid-params' } });

describe('add_remote_schema validation', () => {
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['a timeout of zero', { definition: { url: A, timeout_seconds: 0 } }, '$.args.definition.timeout_seconds', 'expected a positive number'],
    ['a negative timeout', { definition: { url: A, timeout_seconds: -1 } }, '$.args.definition.timeout_seconds', 'expected a positive number'],
    ['a timeout given as text', { definition: { url: A, timeout_seconds: '5' } }, '$.args.definition.timeout_seconds', 'expected a positive number'],
    [
      'a timeout setTimeout cannot honour',
      { definition: { url: A, timeout_seconds: 1e9 } },
      '$.args.definition.timeout_seconds',
      'expected a positive number of at most 2147483',
    ],
    ['an unknown definition key', { definition: { url: A, timeout: 5 } }, '$.args.definition.timeout', 'unknown field "timeout"'],
    ['an unknown args key', { definition: { url: A }, comments: 'x' }, '$.args.comments', 'unknown field "comments"'],
    ['an ftp URL', { definition: { url: 'ftp://a.test/graphql' } }, '$.args.definition.url', 'expected an http or https URL'],
    ['a URL that is not one', { definition: { url: 'not a url' } }, '$.args.definition.url', 'expected an http or https URL'],
    ['no URL', { definition: {} }, '$.args.definition', 'one of "url" and "url_from_env" is required'],
    [
      'both url and url_from_env',
      { definition: { url: A, url_from_env: 'REMOTE_URL' } },
      '$.args.definition',
      'only one of "url" and "url_from_env" can be given',
    ],
    ['a bad url_from_env', { definition: { url_from_env: 'not-a-name' } }, '$.args.definition.url_from_env', 'expected the name of an environment variable'],
    ['a definition that is a list', { definition: [] }, '$.args.definition', 'expected an object'],
    ['no definition', {}, '$.args', 'key "definition" not found'],
    ['forward_client_headers as text', { definition: { url: A, forward_client_headers: 'yes' } }, '$.args.definition.forward_client_headers', 'expected a boolean'],
    ['headers that are not a list', { definition: { url: A, headers: {} } }, '$.args.definition.headers', 'expected an array'],
    [
      'a header without a value',
      { definition: { url: A, headers: [{ name: 'x-a' }] } },
      '$.args.definition.headers[0]',
      'one of "value" and "value_from_env" is required',
    ],
    [
      'a header with both values',
      { definition: { url: A, headers: [{ name: 'x-a', value: 'v', value_from_env: 'V' }] } },
      '$.args.definition.headers[0]',
      'only one of "value" and "value_from_env" can be given',
    ],
    [
      'a header name with a space',
      { definition: { url: A, headers: [{ name: 'x a', value: 'v' }] } },
      '$.args.definition.headers[0].name',
      'expected an HTTP header name',
    ],
    [
      'a header value with a line break',
      { definition: { url: A, headers: [{ name: 'x-a', value: 'v\r\nx-b: w' }] } },
      '$.args.definition.headers[0].value',
      'must not contain line breaks or NUL characters',
    ],
    ['a comment that is a number', { definition: { url: A }, comment: 5 }, '$.args.comment', 'expected a string'],
    [
      'a namespace starting with __',
      { definition: { url: A, customization: { root_fields_namespace: '__ns' } } },
      '$.args.definition.customization.root_fields_namespace',
      'names starting with "__" are reserved for introspection',
    ],
    [
      'a namespace that is not a GraphQL name',
      { definition: { url: A, customization: { root_fields_namespace: 'a-b' } } },
      '$.args.definition.customization.root_fields_namespace',
      'expected a GraphQL name',
    ],
    [
      'an unknown customization key',
      { definition: { url: A, customization: { type_name: {} } } },
      '$.args.definition.customization.type_name',
      'unknown field "type_name"',
    ],
    [
      'a type mapping that is not distinct',
      { definition: { url: A, customization: { type_names: { mapping: { User: 'Person', Admin: 'Person' } } } } },
      '$.args.definition.customization.type_names.mapping.Admin',
      'mapping is not distinct: "User" and "Admin" are both mapped to "Person"',
    ],
    [
      'a type mapping to an invalid name',
      { definition: { url: A, customization: { type_names: { mapping: { User: 'Bad-Name' } } } } },
      '$.args.definition.customization.type_names.mapping.User',
      'expected a GraphQL name',
    ],
    [
      'a type mapping to a __ name',
      { definition: { url: A, customization: { type_names: { mapping: { User: '__User' } } } } },
      '$.args.definition.customization.type_names.mapping.User',
      'names starting with "__" are reserved for introspection',
    ],
    [
      'a type prefix starting with __',
      { definition: { url: A, customization: { type_names: { prefix: '__p' } } } },
      '$.args.definition.customization.type_names.prefix',
      'names starting with "__" are reserved for introspection',
    ],
    [
      'a type suffix with a dash',
      { definition: { url: A, customization: { type_names: { suffix: '-s' } } } },
      '$.args.definition.customization.type_names.suffix',
      'expected letters, digits or underscores',
    ],
    [
      'field names without parent_type',
      { definition: { url: A, customization: { field_names: [{ prefix: 'p_' }] } } },
      '$.args.definition.customization.field_names[0]',
      'key "parent_type" not found',
    ],
    [
      'field names for the same parent twice',
      { definition: { url: A, customization: { field_names: [{ parent_type: 'Query' }, { parent_type: 'Query', prefix: 'x' }] } } },
      '$.args.definition.customization.field_names[1].parent_type',
      'parent_type "Query" is given more than once',
    ],
    [
      'a field mapping that is not distinct',
      { definition: { url: A, customization: { field_names: [{ parent_type: 'Query', mapping: { a: 'x', b: 'x' } }] } } },
      '$.args.definition.customization.field_names[0].mapping.b',
      'mapping is not distinct: "a" and "b" are both mapped to "x"',
    ],
  ];

  it.each(cases)('refuses %s with invalid-params at the path of the field', async (_title, args, path, message) => {
    expect(await fixture.server.post({ type: 'add_remote_schema', args: { name: 'r', ...args } })).toEqual(invalid(path, message));
  });

  const names: Array<[string, unknown, string]> = [
    ['an empty name', '', 'expected a non-empty string'],
    ['a name that is not a string', 5, 'expected a non-empty string'],
    ['a name of 256 characters', 'n'.repeat(256), 'expected at most 255 characters'],
    ['a name with a newline', 'a\nb', 'must not contain control characters'],
    ['a name with a NUL', 'a\u0000b', 'must not contain control characters'],
  ];

  it.each(names)('refuses %s', async (_title, name, message) => {
    expect(await fixture.server.post({ type: 'add_remote_schema', args: { name, definition: { url: A } } })).toEqual(
      invalid('$.args.name', message),
    );
  });

  it('accepts a name of 255 characters with spaces and non-ASCII letters', async () => {
    const name = `remote ä ${'n'.repeat(246)}`;
    expect(name).toHaveLength(255);
    expect(await fixture.server.post({ type: 'add_remote_schema', args: { name, definition: { url: A } } })).toEqual({
      status: 200,
      body: { message: 'success' },
    });
    await fixture.server.post({ type: 'remove_remote_schema', args: { name } });
  });

  it('names keys that are not identifiers in bracket notation', async () => {
    expect(
      await fixture.server.post({ type: 'add_remote_schema', args: { name: 'r', definition: { url: A, 'time out': 1 } } }),
    ).toEqual(invalid('$.args.definition["time out"]', 'unknown field "time out"'));
  });
});

describe('replace_metadata document validation', () => {
  const replace = (args: unknown) => fixture.server.post({ type: 'replace_metadata', args });
  const remote = { name: 'r', definition: { url: A } };

  it.each([
    ['a key of another product', { version: 3, remote_schemas: [], sources: [] }, '$.args.sources', 'unknown field "sources"'],
    ['an unknown version', { version: 4, remote_schemas: [] }, '$.args.version', 'expected metadata version 2 or 3'],
    ['remote_schemas that are not a list', { version: 3, remote_schemas: {} }, '$.args.remote_schemas', 'expected an array'],
    ['an entry without a name', { remote_schemas: [{ definition: { url: A } }] }, '$.args.remote_schemas[0]', 'key "name" not found'],
    [
      'a bad definition deep inside',
      { remote_schemas: [remote, { name: 's', definition: { url: A, timeout_seconds: 'x' } }] },
      '$.args.remote_schemas[1].definition.timeout_seconds',
      'expected a positive number',
    ],
    [
      'a permission without a schema',
      { remote_schemas: [{ ...remote, permissions: [{ role: 'user', definition: {} }] }] },
      '$.args.remote_schemas[0].permissions[0].definition',
      'key "schema" not found',
    ],
    [
      'a permission with an empty role',
      { remote_schemas: [{ ...remote, permissions: [{ role: '', definition: { schema: 'type Query { a: String }' } }] }] },
      '$.args.remote_schemas[0].permissions[0].role',
      'expected a non-empty string',
    ],
    [
      'a wrapped document with a misspelt flag',
      { allow_inconsistent: true, metadata: { remote_schemas: [] } },
      '$.args.allow_inconsistent',
      'unknown field "allow_inconsistent"',
    ],
    ['a wrapped document that is not an object', { metadata: [] }, '$.args.metadata', 'expected an object'],
  ])('refuses %s with invalid-params at its path', async (_title, args, path, message) => {
    expect(await replace(args)).toEqual(invalid(path, message));
  });

  it('refuses two permissions for one role with already-exists', async () => {
    const permission = { role: 'user', definition: { schema: 'type Query { a: String }' } };
    expect(await replace({ remote_schemas: [{ ...remote, permissions: [permission, permission] }] })).toEqual({
      status: 400,
      body: {
        error: 'permission for role "user" on remote schema "r" already exists',
        path: '$.args.remote_schemas[0].permissions[1].role',
        code: 'already-exists',
      },
    });
  });

  it('accepts a version 2 document and exports it as version 3 with defaults', async () => {
    expect(await replace({ version: 2, remote_schemas: [{ ...remote, comment: null, definition: { url: A, headers: null } }] })).toEqual({
      status: 200,
      body: { message: 'success' },
    });
    expect((await fixture.server.post({ type: 'export_metadata', args: {} })).body).toEqual({
      version: 3,
      remote_schemas: [{ name: 'r', definition: { url: A, forward_client_headers: false, timeout_seconds: 60 } }],
    });
    await replace({ version: 3, remote_schemas: [] });
  });
});

describe("environment variables holding the server's own settings", () => {
  const secret = 'the-admin-secret-value-3f9a';
  const reserved = (name: string) =>
    `environment variable "${name}" cannot be used: variables starting with SVC_GRAPHQL_ hold the server's own settings, such as its admin secret`;
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env['SVC_GRAPHQL_ADMIN_SECRET'];
    process.env['SVC_GRAPHQL_ADMIN_SECRET'] = secret;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env['SVC_GRAPHQL_ADMIN_SECRET'];
    else process.env['SVC_GRAPHQL_ADMIN_SECRET'] = saved;
  });

  it('refuses url_from_env naming SVC_GRAPHQL_ADMIN_SECRET, without showing its value', async () => {
    const answer = await fixture.server.post({ type: 'add_remote_schema', args: { name: 'steal', definition: { url_from_env: 'SVC_GRAPHQL_ADMIN_SECRET' } } });
    expect(answer).toEqual(invalid('$.args.definition.url_from_env', reserved('SVC_GRAPHQL_ADMIN_SECRET')));
    expect(JSON.stringify(answer.body)).not.toContain(secret);
  });

  it('refuses value_from_env naming one, at the path of the header', async () => {
    const definition = { url: A, headers: [{ name: 'authorization', value_from_env: 'SVC_GRAPHQL_JWT_SECRET' }] };
    expect(await fixture.server.post({ type: 'add_remote_schema', args: { name: 'steal', definition } })).toEqual(
      invalid('$.args.definition.headers[0].value_from_env', reserved('SVC_GRAPHQL_JWT_SECRET')),
    );
  });

  it('refuses the name in any case: on Windows it reads the same variable', async () => {
    expect(await fixture.server.post({ type: 'add_remote_schema', args: { name: 'steal', definition: { url_from_env: 'svc_graphql_admin_secret' } } })).toEqual(
      invalid('$.args.definition.url_from_env', reserved('svc_graphql_admin_secret')),
    );
  });

  it('refuses one in a replace_metadata document, and in update_remote_schema', async () => {
    const definition = { url_from_env: 'SVC_GRAPHQL_DATABASE_URL' };
    expect(await fixture.server.post({ type: 'replace_metadata', args: { version: 3, remote_schemas: [{ name: 'r', definition }] } })).toEqual(
      invalid('$.args.remote_schemas[0].definition.url_from_env', reserved('SVC_GRAPHQL_DATABASE_URL')),
    );
    expect(await fixture.server.post({ type: 'update_remote_schema', args: { name: 'r', definition } })).toEqual(
      invalid('$.args.definition.url_from_env', reserved('SVC_GRAPHQL_DATABASE_URL')),
    );
  });

  it('accepts other variables, such as one merely containing the prefix', async () => {
    process.env['MY_SVC_GRAPHQL_REMOTE'] = A;
    try {
      expect(await fixture.server.post({ type: 'add_remote_schema', args: { name: 'fine', definition: { url_from_env: 'MY_SVC_GRAPHQL_REMOTE' } } })).toEqual({
        status: 200,
        body: { message: 'success' },
      });
      expect(await fixture.server.post({ type: 'remove_remote_schema', args: { name: 'fine' } })).toEqual({ status: 200, body: { message: 'success' } });
    } finally {
      delete process.env['MY_SVC_GRAPHQL_REMOTE'];
    }
  });
});
