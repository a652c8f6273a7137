import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QUERY_COLLECTION_BOUNDS } from '../src/index.js';
import { A, startFixture, type Fixture } from './utils/fixture.js';

let fixture: Fixture;
const post = (body: unknown) => fixture.server.post(body);
const call = (type: string, args: unknown) => post({ type, args });
const exportMetadata = async () => (await call('export_metadata', {})).body as Record<string, unknown>;
const success = { status: 200, body: { message: 'success' } };
const refused = (code: string, error: string, path: string, status = 400) => ({ status, body: { error, path, code } });

const Q1 = { name: 'q1', query: 'query Q1 { a }' };
const Q2 = { name: 'q2', query: '# a comment\nquery Q2($id: ID!) { user(id: $id) { ...F } }\nfragment F on User { id __typename }' };

const create = (name: string, queries: unknown[] = [Q1], extra: Record<string, unknown> = {}) =>
  call('create_query_collection', { name, definition: { queries }, ...extra });

beforeEach(async () => {
  fixture = await startFixture();
});
afterEach(async () => {
  await fixture.close();
});

describe('create_query_collection', () => {
  it('stores the collection with its queries as written and exports it after remote_schemas', async () => {
    expect(await create('app', [Q1, Q2], { comment: 'the app' })).toEqual(success);
    expect(await exportMetadata()).toEqual({
      version: 3,
      remote_schemas: [],
      query_collections: [{ name: 'app', definition: { queries: [Q1, Q2] }, comment: 'the app' }],
    });
    // The key order of the stored file is the export's.
    const stored = JSON.parse(await readFile(fixture.file, 'utf8')) as { metadata: Record<string, unknown> };
    expect(Object.keys(stored.metadata)).toEqual(['version', 'remote_schemas', 'query_collections']);
  });

  it('takes queries on fields no remote serves: they are parsed, not checked against the schema', async () => {
    expect(await create('later', [{ name: 'x', query: '{ not_yet_there(arg: 1) { id } }' }])).toEqual(success);
  });

  it('refuses a name that is taken with already-exists', async () => {
    await create('app');
    expect(await create('app')).toEqual(refused('already-exists', 'query collection with name "app" already exists', '$.args.name'));
  });

  it('refuses a query that is not a GraphQL document with parse-failed, naming the query', async () => {
    const response = await create('app', [Q1, { name: 'broken', query: 'query { a ' }]);
    expect(response).toEqual(
      refused('parse-failed', 'query "broken" is not a valid GraphQL document: Syntax Error: Expected Name, found <EOF>.', '$.args.definition.queries[1].query'),
    );
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('refuses type definitions, documents without an operation and hostile nesting with parse-failed', async () => {
    expect(await create('c', [{ name: 'sdl', query: 'type Query { a: Int }' }])).toEqual(
      refused('parse-failed', 'query "sdl" must hold only operations and fragments, not a ObjectTypeDefinition', '$.args.definition.queries[0].query'),
    );
    expect(await create('c', [{ name: 'frag', query: 'fragment F on Query { a }' }])).toEqual(
      refused('parse-failed', 'query "frag" holds no operation', '$.args.definition.queries[0].query'),
    );
    const deep = `${'{ a '.repeat(20_000)}${'}'.repeat(20_000)}`;
    const response = await create('c', [{ name: 'deep', query: deep }]);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'parse-failed', path: '$.args.definition.queries[0].query' });
  });

  it('refuses two queries of one name with already-exists', async () => {
    expect(await create('app', [Q1, { ...Q2, name: 'q1' }])).toEqual(
      refused('already-exists', 'query with name "q1" already exists in collection "app"', '$.args.definition.queries[1].name'),
    );
  });

  it('names the field and the problem for every malformed argument', async () => {
    expect(await call('create_query_collection', { name: 'x' })).toEqual(refused('invalid-params', 'key "definition" not found', '$.args'));
    expect(await call('create_query_collection', { name: '', definition: { queries: [] } })).toEqual(
      refused('invalid-params', 'expected a non-empty string', '$.args.name'),
    );
    expect(await call('create_query_collection', { name: 'x', definition: { queries: {} } })).toEqual(
      refused('invalid-params', 'expected an array', '$.args.definition.queries'),
    );
    expect(await call('create_query_collection', { name: 'x', definition: { queries: [{ name: 'q' }] } })).toEqual(
      refused('invalid-params', 'key "query" not found', '$.args.definition.queries[0]'),
    );
    expect(await call('create_query_collection', { name: 'x', definition: { queries: [{ name: 'q', query: 1 }] } })).toEqual(
      refused('invalid-params', 'expected a string', '$.args.definition.queries[0].query'),
    );
    expect(await call('create_query_collection', { name: 'x', definition: { queries: [], extra: 1 } })).toEqual(
      refused('invalid-params', 'unknown field "extra"', '$.args.definition.extra'),
    );
    expect(await call('create_query_collection', { name: 'x', definition: { queries: [] }, comment: 5 })).toEqual(
      refused('invalid-params', 'expected a string', '$.args.comment'),
    );
  });

  it('bounds the length of a query and the number of queries of a collection', async () => {
    const { maxQueryLength, maxQueriesPerCollection } = QUERY_COLLECTION_BOUNDS;
    const long = `{ a${' '.repeat(maxQueryLength)}}`;
    expect(await create('c', [{ name: 'long', query: long }])).toEqual(
      refused('invalid-params', `query "long" is longer than ${String(maxQueryLength)} characters`, '$.args.definition.queries[0].query'),
    );
    const many = Array.from({ length: maxQueriesPerCollection + 1 }, (_, index) => ({ name: `q${String(index)}`, query: '{a}' }));
    expect(await create('c', many)).toEqual(
      refused('invalid-params', `a query collection holds at most ${String(maxQueriesPerCollection)} queries`, '$.args.definition.queries'),
    );
  });
});

describe('add_query_to_collection and drop_query_from_collection', () => {
  it('add a query at the end and drop it by name', async () => {
    await create('app');
    expect(await call('add_query_to_collection', { collection_name: 'app', query_name: 'q2', query: Q2.query })).toEqual(success);
    expect((await exportMetadata())['query_collections']).toEqual([{ name: 'app', definition: { queries: [Q1, Q2] } }]);
    expect(await call('drop_query_from_collection', { collection_name: 'app', query_name: 'q1' })).toEqual(success);
    expect((await exportMetadata())['query_collections']).toEqual([{ name: 'app', definition: { queries: [Q2] } }]);
  });

  it('answer not-exists, already-exists and parse-failed', async () => {
    await create('app');
    expect(await call('add_query_to_collection', { collection_name: 'nope', query_name: 'q', query: '{a}' })).toEqual(
      refused('not-exists', 'query collection with name "nope" does not exist', '$.args.collection_name'),
    );
    expect(await call('add_query_to_collection', { collection_name: 'app', query_name: 'q1', query: '{a}' })).toEqual(
      refused('already-exists', 'query with name "q1" already exists in collection "app"', '$.args.query_name'),
    );
    expect(await call('add_query_to_collection', { collection_name: 'app', query_name: 'bad', query: '{' })).toEqual(
      refused('parse-failed', 'query "bad" is not a valid GraphQL document: Syntax Error: Expected Name, found <EOF>.', '$.args.query'),
    );
    expect(await call('drop_query_from_collection', { collection_name: 'app', query_name: 'nope' })).toEqual(
      refused('not-exists', 'query with name "nope" not found in collection "app"', '$.args.query_name'),
    );
    expect(await call('drop_query_from_collection', { collection_name: 'nope', query_name: 'q1' })).toEqual(
      refused('not-exists', 'query collection with name "nope" does not exist', '$.args.collection_name'),
    );
  });
});

describe('the allow list', () => {
  it('exports an entry of the default scope as {collection}, a role scope with its roles', async () => {
    await create('everyone');
    await create('editors');
    expect(await call('add_collection_to_allowlist', { collection: 'everyone' })).toEqual(success);
    expect(await call('add_collection_to_allowlist', { collection: 'editors', scope: { global: false, roles: ['editor', 'user'] } })).toEqual(success);
    expect((await exportMetadata())['allowlist']).toEqual([
      { collection: 'everyone' },
      { collection: 'editors', scope: { global: false, roles: ['editor', 'user'] } },
    ]);
  });

  it('takes the same collection with the same scope again, and refuses it with another scope', async () => {
    await create('app');
    await call('add_collection_to_allowlist', { collection: 'app', scope: { global: true } });
    const version = fixture.service.resourceVersion();
    expect(await call('add_collection_to_allowlist', { collection: 'app' })).toEqual(success);
    expect(fixture.service.resourceVersion()).toBe(version);
    expect(await call('add_collection_to_allowlist', { collection: 'app', scope: { global: false, roles: ['user'] } })).toEqual(
      refused(
        'already-exists',
        'collection "app" already exists in the allowlist with another scope; to change its scope, use update_scope_of_collection_in_allowlist',
        '$.args.collection',
      ),
    );
  });

  it('changes a scope with update_scope_of_collection_in_allowlist and drops an entry', async () => {
    await create('app');
    await call('add_collection_to_allowlist', { collection: 'app' });
    expect(await call('update_scope_of_collection_in_allowlist', { collection: 'app', scope: { global: false, roles: ['user'] } })).toEqual(success);
    expect((await exportMetadata())['allowlist']).toEqual([{ collection: 'app', scope: { global: false, roles: ['user'] } }]);
    expect(await call('drop_collection_from_allowlist', { collection: 'app' })).toEqual(success);
    expect(await exportMetadata()).not.toHaveProperty('allowlist');
  });

  it('answers not-exists for an unknown collection or one not in the allow list', async () => {
    await create('app');
    expect(await call('add_collection_to_allowlist', { collection: 'nope' })).toEqual(
      refused('not-exists', 'query collection with name "nope" does not exist', '$.args.collection'),
    );
    expect(await call('drop_collection_from_allowlist', { collection: 'app' })).toEqual(
      refused('not-exists', 'collection "app" doesn\'t exist in the allowlist', '$.args.collection'),
    );
    expect(await call('update_scope_of_collection_in_allowlist', { collection: 'app', scope: { global: true } })).toEqual(
      refused('not-exists', 'collection "app" doesn\'t exist in the allowlist', '$.args.collection'),
    );
    expect(await call('update_scope_of_collection_in_allowlist', { collection: 'nope', scope: { global: true } })).toEqual(
      refused('not-exists', 'query collection with name "nope" does not exist', '$.args.collection'),
    );
  });

  it('names the problem of a malformed scope', async () => {
    await create('app');
    const add = (scope: unknown) => call('add_collection_to_allowlist', { collection: 'app', scope });
    expect(await add({ global: true, roles: ['user'] })).toEqual(refused('invalid-params', 'roles are not allowed when global is true', '$.args.scope.roles'));
    expect(await add({ global: false })).toEqual(refused('invalid-params', 'key "roles" not found', '$.args.scope'));
    expect(await add({ global: false, roles: [] })).toEqual(refused('invalid-params', 'expected at least one role when global is false', '$.args.scope.roles'));
    expect(await add({ global: false, roles: ['a', 'a'] })).toEqual(refused('invalid-params', 'role "a" is listed more than once', '$.args.scope.roles[1]'));
    expect(await add({ roles: ['a'] })).toEqual(refused('invalid-params', 'key "global" not found', '$.args.scope'));
    expect(await add({ global: 'yes' })).toEqual(refused('invalid-params', 'expected a boolean', '$.args.scope.global'));
    expect(await call('update_scope_of_collection_in_allowlist', { collection: 'app' })).toEqual(refused('invalid-params', 'key "scope" not found', '$.args'));
  });
});

describe('drop_query_collection', () => {
  it('drops a collection that is not in the allow list', async () => {
    await create('app');
    expect(await call('drop_query_collection', { collection: 'app', cascade: false })).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('refuses a collection in the allow list without cascade (absent means false), and drops both with it', async () => {
    await create('app');
    await call('add_collection_to_allowlist', { collection: 'app' });
    const message =
      'query collection with name "app" is present in the allowlist; cannot proceed to drop. please use cascade to confirm you wish to drop it from the allowlist as well';
    expect(await call('drop_query_collection', { collection: 'app' })).toEqual(refused('dependency-error', message, '$.args.collection'));
    expect(await call('drop_query_collection', { collection: 'app', cascade: false })).toEqual(refused('dependency-error', message, '$.args.collection'));
    expect(await call('drop_query_collection', { collection: 'app', cascade: true })).toEqual(success);
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('answers not-exists for an unknown collection', async () => {
    expect(await call('drop_query_collection', { collection: 'nope', cascade: true })).toEqual(
      refused('not-exists', 'query collection with name "nope" does not exist', '$.args.collection'),
    );
  });
});

describe('rename_query_collection', () => {
  it('renames a collection and its allow-list entry', async () => {
    await create('old');
    await create('other');
    await call('add_collection_to_allowlist', { collection: 'old' });
    expect(await call('rename_query_collection', { name: 'old', new_name: 'new' })).toEqual(success);
    expect(await call('rename_query_collection', { name: 'new', new_name: 'other' })).toEqual(
      refused('already-exists', 'query collection with name "other" already exists', '$.args.new_name'),
    );
    const exported = await exportMetadata();
    expect(exported['query_collections']).toEqual([
      { name: 'new', definition: { queries: [Q1] } },
      { name: 'other', definition: { queries: [Q1] } },
    ]);
    expect(exported['allowlist']).toEqual([{ collection: 'new' }]);
  });
});

describe('with the rest of the metadata', () => {
  it('round-trips through export_metadata and replace_metadata unchanged', async () => {
    await call('add_remote_schema', { name: 'a', definition: { url: A } });
    await create('app', [Q1, Q2], { comment: 'c' });
    await create('editors', [Q1]);
    await call('add_collection_to_allowlist', { collection: 'app' });
    await call('add_collection_to_allowlist', { collection: 'editors', scope: { global: false, roles: ['editor'] } });
    const exported = await exportMetadata();
    await call('replace_metadata', { version: 3, remote_schemas: [] });
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
    expect(await call('replace_metadata', exported)).toEqual(success);
    expect(await exportMetadata()).toEqual(exported);
  });

  it('refuses a document whose allow list names a collection it does not hold, or names one twice', async () => {
    const collections = [{ name: 'app', definition: { queries: [Q1] } }];
    expect(await call('replace_metadata', { version: 3, remote_schemas: [], allowlist: [{ collection: 'nope' }] })).toEqual(
      refused('not-exists', 'query collection with name "nope" does not exist', '$.args.allowlist[0].collection'),
    );
    expect(
      await call('replace_metadata', { version: 3, remote_schemas: [], query_collections: collections, allowlist: [{ collection: 'app' }, { collection: 'app' }] }),
    ).toEqual(refused('already-exists', 'collection "app" already exists in the allowlist', '$.args.allowlist[1].collection'));
    expect(await call('replace_metadata', { version: 3, remote_schemas: [], query_collections: [...collections, ...collections] })).toEqual(
      refused('already-exists', 'query collection with name "app" already exists', '$.args.query_collections[1].name'),
    );
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
  });

  it('applies a bulk all or nothing, its failure pointing into the bulk', async () => {
    const response = await call('bulk', [
      { type: 'create_query_collection', args: { name: 'app', definition: { queries: [Q1] } } },
      { type: 'add_collection_to_allowlist', args: { collection: 'app' } },
      { type: 'drop_query_collection', args: { collection: 'app' } },
    ]);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'dependency-error', path: '$.args[2].args.collection' });
    expect(await exportMetadata()).toEqual({ version: 3, remote_schemas: [] });
    expect(
      await call('bulk', [
        { type: 'create_query_collection', args: { name: 'app', definition: { queries: [Q1] } } },
        { type: 'add_collection_to_allowlist', args: { collection: 'app' } },
      ]),
    ).toEqual({ status: 200, body: [{ message: 'success' }, { message: 'success' }] });
    expect((await exportMetadata())['allowlist']).toEqual([{ collection: 'app' }]);
  });

  it('leaves the live document as it was when a bulk that changed every part of it fails at its end', async () => {
    // Each step changes an object of the live document that no step before it replaced.
    await create('app', [Q1, Q2]);
    await create('other', [Q1, Q2]);
    await create('third', [Q1]);
    await call('add_collection_to_allowlist', { collection: 'app', scope: { global: false, roles: ['user'] } });
    await call('add_collection_to_allowlist', { collection: 'other', scope: { global: false, roles: ['user'] } });
    await call('add_collection_to_allowlist', { collection: 'third' });
    await call('set_api_limits', { depth_limit: { global: 5 } });
    await call('set_graphql_schema_introspection_options', { disabled_for_roles: ['guest'] });
    const before = structuredClone(fixture.service.document());
    const exported = await exportMetadata();
    const response = await call('bulk', [
      { type: 'update_scope_of_collection_in_allowlist', args: { collection: 'other', scope: { global: false, roles: ['editor'] } } },
      { type: 'rename_query_collection', args: { name: 'app', new_name: 'renamed' } },
      { type: 'drop_query_from_collection', args: { collection_name: 'other', query_name: 'q1' } },
      { type: 'add_query_to_collection', args: { collection_name: 'third', query_name: 'q3', query: '{ c }' } },
      { type: 'drop_collection_from_allowlist', args: { collection: 'third' } },
      { type: 'set_api_limits', args: { depth_limit: { global: 9 } } },
      { type: 'set_graphql_schema_introspection_options', args: { disabled_for_roles: ['user'] } },
      { type: 'drop_query_collection', args: { collection: 'renamed', cascade: true } },
      { type: 'add_query_to_collection', args: { collection_name: 'third', query_name: 'broken', query: '{ a ' } },
    ]);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'parse-failed', path: '$.args[8].args.query' });
    // Nothing the steps before the failure built was written into the live document's own objects.
    expect(fixture.service.document()).toEqual(before);
    expect(await exportMetadata()).toEqual(exported);
  });

  it('applies a bulk of thousands of collection steps whole, in order', async () => {
    await create('big', []);
    const steps = Array.from({ length: 3000 }, (_, i) => ({
      type: 'add_query_to_collection',
      args: { collection_name: 'big', query_name: `q${i}`, query: `query Q${i} { a${i}: a }` },
    }));
    steps.push({ type: 'drop_query_from_collection', args: { collection_name: 'big', query_name: 'q0' } } as (typeof steps)[number]);
    const response = await call('bulk', steps);
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(3001);
    const [collection] = (await exportMetadata())['query_collections'] as { definition: { queries: { name: string }[] } }[];
    expect(collection!.definition.queries.map((query) => query.name)).toEqual(Array.from({ length: 2999 }, (_, i) => `q${i + 1}`));
    const stored = JSON.parse(await readFile(fixture.file, 'utf8')) as { resource_version: number };
    // One request, one change of the stored document.
    expect(stored.resource_version).toBe(2);
  });

  it('applies a bulk of thousands of allow-list steps whole; a scope set again changes nothing', async () => {
    const names = Array.from({ length: 3000 }, (_, i) => `c${i}`);
    const collections = names.map((name) => ({ name, definition: { queries: [Q1] } }));
    expect(await call('replace_metadata', { version: 3, remote_schemas: [], query_collections: collections })).toEqual(success);
    const response = await call(
      'bulk',
      names.map((collection, i) => ({ type: 'add_collection_to_allowlist', args: { collection, ...(i % 2 === 1 && { scope: { global: false, roles: ['user'] } }) } })),
    );
    expect(response.status).toBe(200);
    const allowlist = (await exportMetadata())['allowlist'] as Array<{ collection: string; scope?: unknown }>;
    expect(allowlist).toHaveLength(3000);
    expect(allowlist[2998]).toEqual({ collection: 'c2998' });
    expect(allowlist[2999]).toEqual({ collection: 'c2999', scope: { global: false, roles: ['user'] } });
    const version = () => readFile(fixture.file, 'utf8').then((text) => (JSON.parse(text) as { resource_version: number }).resource_version);
    const before = await version();
    expect(await call('update_scope_of_collection_in_allowlist', { collection: 'c2999', scope: { global: false, roles: ['user'] } })).toEqual(success);
    expect(await version()).toBe(before);
    expect(await call('update_scope_of_collection_in_allowlist', { collection: 'c2999', scope: { global: true } })).toEqual(success);
    expect(await version()).toBe(before + 1);
  });

  it('tells a listener of every change of the live document', async () => {
    const seen: unknown[] = [];
    const stop = fixture.service.onDocumentChange((document) => seen.push(document.query_collections?.map((c) => c.name)));
    await create('app');
    await create('app');
    await call('drop_query_collection', { collection: 'app' });
    stop();
    await create('later');
    expect(seen).toEqual([['app'], undefined]);
    expect(fixture.service.document().query_collections?.map((c) => c.name)).toEqual(['later']);
  });
});
