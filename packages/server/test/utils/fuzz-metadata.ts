import fc from 'fast-check';
import { sampleTypeDefs } from '@svc-graphql/sample-remotes';
import { partialRecord, sometimes } from './fuzz-common.js';
import { lockdownArgs } from './fuzz-lockdown.js';
import { SAMPLE, USER_ROLE } from './fuzz-server.js';
import { OPERATION_TYPES } from '../../../metadata-api/src/request.js';

/**
 * Metadata API requests: the real operation names with arguments close to right, plus any JSON.
 * URLs stay on 127.0.0.1 (the sample remote, or a port where nothing listens) and timeouts stay
 * short, so that no operation waits on the network; environment variables are only the few named
 * here, so that none points somewhere unexpected.
 */

export interface MetadataUrls {
  /** The sample remote. */
  live: string;
  /** Nothing listens there. */
  dead: string;
}

const anyJson = fc.jsonValue({ maxDepth: 2 });

const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(SAMPLE, SAMPLE, 'fuzz_a', 'fuzz_b') },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a\u0000b', 'line\nbreak', 'x'.repeat(256), 'ü', '__proto__', 'constructor') },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: anyJson },
);

const role = fc.oneof(fc.constantFrom(USER_ROLE, 'admin', 'editor', '', 'x'.repeat(300)), fc.string({ maxLength: 8 }), anyJson);

const graphqlName = fc.oneof(
  fc.constantFrom('Foo', 'fuzz_', '_x', '__bad', '1x', '', 'User', 'Query', 'String', 'a b'),
  fc.string({ maxLength: 6 }),
);
const nameMapping = fc.dictionary(graphqlName, graphqlName, { maxKeys: 3 });

const nameCustomization = partialRecord({
  parent_type: [graphqlName, 90],
  prefix: [graphqlName, 40],
  suffix: [graphqlName, 30],
  mapping: [nameMapping, 30],
});

const customization = partialRecord({
  root_fields_namespace: [graphqlName, 50],
  type_names: [partialRecord({ prefix: [graphqlName, 50], suffix: [graphqlName, 30], mapping: [nameMapping, 30] }), 40],
  field_names: [fc.array(nameCustomization, { maxLength: 2 }), 25],
});

const envName = fc.constantFrom('PATH', 'HOME', 'SVC_GRAPHQL_ADMIN_SECRET', 'SVC_GRAPHQL_JWT_SECRET', 'FUZZ_SURELY_UNSET', '', '1=2');

function definition(urls: MetadataUrls) {
  const url = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(urls.live, urls.live, urls.dead) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `${urls.live}?a=b`,
        urls.live.replace('http://', 'http://user:secret@'),
        urls.live.replace('/graphql', '/nope'),
        urls.live.replace('http://', 'ws://'),
        'ftp://127.0.0.1/graphql',
        'http://',
        'not a url',
        '',
        'file:///etc/passwd',
        'http://127.0.0.1:0/graphql',
      ),
    },
    { weight: 1, arbitrary: anyJson },
  );
  const header = fc.oneof(
    fc.record({
      name: fc.oneof(fc.constantFrom('x-fuzz', 'Authorization', 'x-svc-role', 'Host', 'bad name', ''), anyJson),
      value: fc.oneof(fc.string({ maxLength: 10 }), anyJson),
    }),
    fc.record({ name: fc.constantFrom('x-fuzz', 'x-env'), value_from_env: envName }),
    anyJson,
  );
  return fc.oneof(
    {
      weight: 8,
      arbitrary: partialRecord({
        url: [url, 90],
        url_from_env: [envName, 8],
        headers: [fc.oneof(fc.array(header, { maxLength: 3 }), anyJson), 20],
        forward_client_headers: [fc.oneof(fc.boolean(), anyJson), 20],
        timeout_seconds: [
          fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constantFrom(0, -1, 0.5, 1e308, Number.MAX_SAFE_INTEGER), anyJson),
          30,
        ],
        customization: [fc.oneof({ weight: 3, arbitrary: customization }, { weight: 1, arbitrary: anyJson }), 35],
        extra_key: [anyJson, 3],
      }),
    },
    { weight: 1, arbitrary: anyJson },
  );
}

const permissionSchema = fc.oneof(
  { weight: 3, arbitrary: fc.constant(sampleTypeDefs) },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(fc.nat(), fc.nat({ max: 60 })), { minLength: 1, maxLength: 3 })
      .map((cuts) =>
        cuts.reduce((text, [at, length]) => {
          const i = at % (text.length || 1);
          return text.slice(0, i) + text.slice(i + length);
        }, sampleTypeDefs),
      ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'type Query { hello(name: String @preset(value: "x")): String! }',
      'type Query { hello(name: String @preset(value: "x-svc-user-id")): String! }',
      'type Query { hello: Int }',
      'type Query { nope: String }',
      'schema { query: Query } type Query { hello(name: String): String! }',
      'type Query { user(id: ID! @preset(value: {a: 1})): User } type User { id: ID! }',
      'directive @preset(value: String) on ARGUMENT_DEFINITION',
      '',
      '{ hello }',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: anyJson },
);

const relationshipType = fc.oneof(fc.constantFrom('User', 'Post', 'Message', 'Query', 'Role', 'Nope'), anyJson);
const relationshipName = fc.oneof(fc.constantFrom('author', 'self', 'posts', 'name', '__x', ''), anyJson);
const argumentValue = fc.oneof(
  fc.constantFrom('$id', '$name', '$role', '$', '$1x', 'x', 1, 'ADMIN', ['$id'], { a: '$id' }, null),
  anyJson,
);
/** A relationship from the sample remote to itself, its parts right or wrong. */
const relationshipDefinition = fc.record({
  to_remote_schema: partialRecord({
    remote_schema: [fc.oneof(fc.constantFrom(SAMPLE, 'fuzz_a'), anyJson), 95],
    lhs_fields: [fc.oneof(fc.array(fc.constantFrom('id', 'name', 'role', 'posts', 'nope'), { maxLength: 2 }), anyJson), 90],
    remote_field: [
      fc.oneof(
        fc.record({ user: fc.record({ arguments: fc.dictionary(fc.constantFrom('id', 'role', 'nope'), argumentValue, { maxKeys: 2 }) }) }),
        fc.record({ users: fc.record({ arguments: fc.dictionary(fc.constantFrom('role'), argumentValue, { maxKeys: 1 }) }) }),
        fc.constantFrom({}, { a: { arguments: {} }, b: { arguments: {} } }, { hello: {} }),
        anyJson,
      ),
      90,
    ],
    batch: [fc.oneof(fc.record({ argument: fc.constantFrom('id', 'role') }), anyJson), 10],
  }),
});

function argsFor(type: (typeof OPERATION_TYPES)[number], urls: MetadataUrls, document: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  switch (type) {
    case 'add_remote_schema':
    case 'update_remote_schema':
      return fc
        .tuple(name, definition(urls), partialRecord({ comment: [fc.oneof(fc.string({ maxLength: 10 }), anyJson), 20] }))
        .map(([n, d, rest]) => ({ name: n, definition: d, ...rest }));
    case 'remove_remote_schema':
      return fc.tuple(name, partialRecord({ cascade: [fc.oneof(fc.boolean(), anyJson), 30] })).map(([n, rest]) => ({ name: n, ...rest }));
    case 'reload_remote_schema':
    case 'introspect_remote_schema':
      return fc.record({ name });
    case 'add_remote_schema_permissions':
      return fc
        .tuple(
          name,
          role,
          fc.oneof({ weight: 4, arbitrary: fc.record({ schema: permissionSchema }) }, { weight: 1, arbitrary: anyJson }),
          partialRecord({ comment: [anyJson, 20] }),
        )
        .map(([n, r, d, rest]) => ({ remote_schema: n, role: r, definition: d, ...rest }));
    case 'drop_remote_schema_permissions':
      return fc.record({ remote_schema: name, role });
    case 'create_remote_schema_remote_relationship':
    case 'update_remote_schema_remote_relationship':
      return fc
        .tuple(name, relationshipType, relationshipName, fc.oneof({ weight: 4, arbitrary: relationshipDefinition }, { weight: 1, arbitrary: anyJson }))
        .map(([n, t, r, d]) => ({ remote_schema: n, type_name: t, name: r, definition: d }));
    case 'delete_remote_schema_remote_relationship':
      return fc.tuple(name, relationshipType, relationshipName).map(([n, t, r]) => ({ remote_schema: n, type_name: t, name: r }));
    case 'export_metadata':
    case 'get_inconsistent_metadata':
    case 'drop_inconsistent_metadata':
      return fc.oneof(fc.constant({}), anyJson);
    case 'replace_metadata':
      return fc.oneof(
        document,
        fc
          .tuple(
            document,
            partialRecord({ allow_inconsistent_metadata: [fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: anyJson }), 80] }),
          )
          .map(([metadata, rest]) => ({ metadata, ...rest })),
      );
    case 'reload_metadata':
      return partialRecord({ reload_remote_schemas: [fc.oneof(fc.boolean(), fc.array(name, { maxLength: 3 }), anyJson), 60] });
    case 'bulk':
      return fc.constant([]);
    default:
      return lockdownArgs(type, name, role, anyJson);
  }
}

/** A metadata document: the shape `export_metadata` answers, its members right or wrong. */
function metadataDocument(urls: MetadataUrls): fc.Arbitrary<unknown> {
  const permission = fc
    .tuple(role, fc.record({ schema: permissionSchema }), partialRecord({ comment: [anyJson, 20] }))
    .map(([r, d, rest]) => ({ role: r, definition: d, ...rest }));
  const remote = fc
    .tuple(
      name,
      definition(urls),
      partialRecord({
        comment: [fc.string({ maxLength: 8 }), 20],
        permissions: [fc.oneof(fc.array(permission, { maxLength: 2 }), anyJson), 15],
      }),
    )
    .map(([n, d, rest]) => ({ name: n, definition: d, ...rest }));
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.oneof({ weight: 9, arbitrary: fc.constant<unknown>(3) }, { weight: 1, arbitrary: anyJson }),
          fc.oneof({ weight: 9, arbitrary: fc.array(remote, { maxLength: 3 }) }, { weight: 1, arbitrary: anyJson }),
          partialRecord({ sources: [anyJson, 5] }),
        )
        .map(([version, remoteSchemas, rest]) => ({ version, remote_schemas: remoteSchemas, ...rest })),
    },
    { weight: 1, arbitrary: anyJson },
  );
}

/** One operation `{type, args, resource_version?, version?}`; `bulk` holds a few of these. */
function operation(urls: MetadataUrls, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const document = metadataDocument(urls);
  return fc
    .constantFrom(...OPERATION_TYPES)
    .chain((type) => {
      const args =
        type === 'bulk'
          ? depth > 0
            ? fc.oneof(fc.array(operation(urls, depth - 1), { maxLength: 3 }), anyJson)
            : fc.constant([])
          : fc.oneof({ weight: 6, arbitrary: argsFor(type, urls, document) }, { weight: 1, arbitrary: anyJson });
      return fc
        .tuple(
          sometimes(args, 97),
          partialRecord({
            resource_version: [fc.oneof(fc.nat({ max: 5 }), fc.constantFrom(-1, 1.5, 2 ** 60, '1'), anyJson), 10],
            version: [fc.oneof(fc.constantFrom(1, 2, 2, 3), anyJson), 10],
          }),
        )
        .map(([a, rest]): Record<string, unknown> => ({ type, ...(a !== undefined && { args: a }), ...rest }));
    })
    .chain((body) =>
      sometimes(fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { minKeys: 1, maxKeys: 2 }), 5).map((extra) =>
        extra === undefined ? body : { ...extra, ...body },
      ),
    );
}

/** The body of a `/v1/metadata` request: mostly an operation as JSON, then any JSON, text or bytes. */
export function metadataBody(urls: MetadataUrls): fc.Arbitrary<string | Uint8Array<ArrayBuffer>> {
  return fc.oneof(
    { weight: 12, arbitrary: operation(urls, 1).map((body) => JSON.stringify(body)) },
    {
      weight: 1,
      arbitrary: fc
        .record({ type: fc.oneof(fc.string({ maxLength: 20 }), anyJson), args: anyJson }, { requiredKeys: [] })
        .map((body) => JSON.stringify(body)),
    },
    { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }).map((bytes) => new Uint8Array(bytes)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{', 'null', '{"type":"export_metadata","args":{}}x', '\uFEFF{"type":"export_metadata","args":{}}'),
    },
  );
}
