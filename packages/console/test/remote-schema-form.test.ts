import { buildClientSchema, type IntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry } from '../../remote-schemas/src/index.js';
import { startSampleRemote, type RunningRemote } from '../../../examples/sample-remotes/src/index.js';
import { requestHeaders, shownHeaders } from '../src/explorer/request-headers.js';
import { documentOfFile } from '../src/metadata/metadata-page.js';
import type { RemoteSchemaMetadata } from '../src/metadata/types.js';
import { customizedSdl, servedRootFields } from '../src/remote-schemas/customized-sdl.js';
import { dependentsOf } from '../src/remote-schemas/remove.js';
import { definitionOf, emptyForm, formFieldOf, formOf, requestArgsOf } from '../src/remote-schemas/form-model.js';

describe('the remote schema form', () => {
  const everything: RemoteSchemaMetadata = {
    name: 'accounts',
    comment: 'customer accounts',
    definition: {
      url_from_env: 'ACCOUNTS_URL',
      headers: [
        { name: 'X-Client', value: ' storefront ' },
        { name: 'Authorization', value_from_env: 'ACCOUNTS_TOKEN' },
      ],
      forward_client_headers: true,
      timeout_seconds: 20,
      customization: {
        root_fields_namespace: 'accounts',
        type_names: { prefix: 'A_', suffix: '_t', mapping: { User: 'Account' } },
        field_names: [
          { parent_type: 'Query', prefix: 'acc_', mapping: { hello: 'greet' } },
          { parent_type: 'User', suffix: '_x' },
        ],
      },
    },
  };

  it('shows every field of a definition and gives the same definition back', () => {
    const form = formOf(everything);
    expect(form).toMatchObject({ urlSource: 'env', urlFromEnv: 'ACCOUNTS_URL', forwardClientHeaders: true, timeoutSeconds: '20', typeMapping: [{ from: 'User', to: 'Account' }] });
    expect(requestArgsOf(form)).toEqual({ name: 'accounts', comment: 'customer accounts', definition: everything.definition });
  });

  it('leaves out what is empty, so the server applies its defaults, and trims names', () => {
    const form = { ...emptyForm(), name: ' sample ', url: ' http://127.0.0.1:4001/graphql ', headers: [{ name: '', source: 'value' as const, value: '' }], typeMapping: [{ from: '', to: '' }] };
    expect(requestArgsOf(form)).toEqual({ name: 'sample', definition: { url: 'http://127.0.0.1:4001/graphql' } });
    // A timeout that is not a number goes as typed: the server's message says what it expects.
    expect(definitionOf({ ...form, timeoutSeconds: 'soon' }).timeout_seconds).toBe('soon');
  });

  it('places a server error next to the field its path names', () => {
    expect(formFieldOf('$.args.definition.url')).toBe('url');
    expect(formFieldOf('$.args.definition.headers[1].value_from_env')).toBe('headers.1');
    expect(formFieldOf('$.args.definition.customization.type_names.mapping')).toBe('typeMapping');
    expect(formFieldOf('$.args.definition.customization.field_names[0].mapping')).toBe('fieldNames.0');
    expect(formFieldOf('$.args.name')).toBe('name');
    expect(formFieldOf('$.args')).toBeUndefined();
    expect(formFieldOf(undefined)).toBeUndefined();
  });
});

describe('the dependents of a remote schema', () => {
  it('are its permissions and the relationships of other remotes that join to it, named as the server names them', () => {
    const document = {
      version: 3,
      remote_schemas: [
        { name: 'users', definition: { url: 'http://users' }, permissions: [{ role: 'user', definition: { schema: 'type Query { me: String }' } }] },
        {
          name: 'orders',
          definition: { url: 'http://orders' },
          remote_relationships: [
            { type_name: 'Order', relationships: [{ name: 'user', definition: { to_remote_schema: { remote_schema: 'users', lhs_fields: ['userId'], remote_field: { user: { arguments: { id: '$userId' } } } } } }] },
          ],
        },
      ],
    };
    expect(dependentsOf(document, 'users')).toEqual([
      'remote_schema_permission user on remote_schema users',
      'remote_schema_remote_relationship user on type Order in remote schema orders',
    ]);
    // Its own relationships go with it: they are not dependents.
    expect(dependentsOf(document, 'orders')).toEqual([]);
  });
});

describe('the API page\'s request headers', () => {
  it('sends the admin secret and the role picked, or a token, and the user\'s rows last', () => {
    const rows = [
      { enabled: true, name: 'x-svc-user-id', value: '2' },
      { enabled: false, name: 'x-svc-org', value: 'off' },
      { enabled: true, name: '', value: 'nameless' },
    ];
    expect(requestHeaders({ mode: 'admin', role: ' user ' }, 'secret', rows)).toEqual({ 'X-Svc-Admin-Secret': 'secret', 'X-Svc-Role': 'user', 'x-svc-user-id': '2' });
    expect(requestHeaders({ mode: 'admin', role: '' }, undefined, [])).toEqual({});
    expect(requestHeaders({ mode: 'token', token: 'Bearer abc.def.ghi ' }, 'secret', [])).toEqual({ Authorization: 'Bearer abc.def.ghi' });
    expect(requestHeaders({ mode: 'admin', role: 'user' }, 'secret', [{ enabled: true, name: 'x-svc-role', value: 'editor' }])).toEqual({ 'X-Svc-Admin-Secret': 'secret', 'x-svc-role': 'editor' });
    expect(shownHeaders({ 'X-Svc-Admin-Secret': 'secret', 'x-svc-role': 'user' })).toEqual([
      ['X-Svc-Admin-Secret', '••••••••'],
      ['x-svc-role', 'user'],
    ]);
  });
});

describe('a metadata file to import', () => {
  it('is the document, or an export with its resource version around it', () => {
    expect(documentOfFile('{"version":3,"remote_schemas":[]}')).toEqual({ version: 3, remote_schemas: [] });
    expect(documentOfFile('{"resource_version":4,"metadata":{"version":3,"remote_schemas":[]}}')).toEqual({ version: 3, remote_schemas: [] });
    expect(() => documentOfFile('[1]')).toThrow('the file does not hold a JSON object');
    expect(() => documentOfFile('{')).toThrow();
  });
});

describe('a remote\'s schema as served', () => {
  let remote: RunningRemote;
  let registry: RemoteSchemaRegistry;
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'plain' });
    registry = createRemoteSchemaRegistry({ logger: quiet });
    const plan = await registry.plan([
      { name: 'plain', definition: { url: remote.url } },
      {
        name: 'custom',
        definition: {
          url: remote.url,
          customization: {
            root_fields_namespace: 'custom',
            type_names: { prefix: 'C_', mapping: { User: 'Person' } },
            field_names: [
              { parent_type: 'Query', mapping: { hello: 'greet' } },
              { parent_type: 'Subscription', prefix: 'on_' },
              { parent_type: 'Message', suffix: '_s' },
            ],
          },
        },
      },
    ]);
    expect(plan.problems).toEqual([]);
    registry.commit(plan);
  });

  afterAll(async () => {
    await registry?.dispose();
    await remote?.close();
  });

  it('is the part of the live schema its root fields reach, with the names customization gave', async () => {
    const own = buildClientSchema((await registry.introspect('custom')).data as unknown as IntrospectionQuery);
    const customization = { root_fields_namespace: 'custom', type_names: { prefix: 'C_', mapping: { User: 'Person' } }, field_names: [{ parent_type: 'Query', mapping: { hello: 'greet' } }, { parent_type: 'Subscription', prefix: 'on_' }, { parent_type: 'Message', suffix: '_s' }] };
    expect(servedRootFields(own, customization)).toEqual({
      query: ['custom'],
      mutation: ['custom'],
      subscription: ['custom'],
    });
    const sdl = customizedSdl(registry.schema, own, customization);
    expect(sdl).toContain('type Query {\n  custom: custom_query\n}');
    expect(sdl).toContain('type custom_query {\n  greet(name: String): String!');
    expect(sdl).toContain('type Person implements C_Node {\n  id: ID!');
    expect(sdl).toContain('type C_Message {\n  id_s: ID!');
    expect(sdl).toContain('type Subscription {\n  custom: custom_subscription\n}');
    expect(sdl).toContain('type custom_subscription {\n  on_countdown(from: Int!, intervalMs: Int): Int!');
    // Nothing of the other remote: its root fields and its types.
    expect(sdl).not.toMatch(/type User\b|type Node\b/);

    const plain = customizedSdl(registry.schema, buildClientSchema((await registry.introspect('plain')).data as unknown as IntrospectionQuery), undefined);
    expect(plain).toContain('type Query {\n  hello(name: String): String!');
    expect(plain).toContain('type User implements Node {');
    expect(plain).not.toMatch(/\bcustom|Person|C_/);
  });
});
