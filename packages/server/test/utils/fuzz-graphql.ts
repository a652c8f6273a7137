import fc from 'fast-check';
import { ADMIN_SECRET, JWT_KEY, USER_ROLE } from './fuzz-server.js';
import { partialRecord, sometimes } from './fuzz-common.js';
import { signedToken, signHs256, tokenLike, userClaims } from './fuzz-tokens.js';

/**
 * GraphQL documents for the sample remote: mostly valid selections built from its real fields, then
 * near misses (unknown fields, wrong arguments, cycles in fragments), then text edits of those.
 * Arguments that make the remote wait (`slow`, `countdown`) stay small so that no run hangs; the
 * never-ending `messageAdded` is only asked for over WebSocket.
 */

interface FieldShape {
  args?: Record<string, fc.Arbitrary<string>>;
  /** The type of its selection set, when it has one. */
  of?: string;
}

const smallInt = fc.integer({ min: 0, max: 3 }).map(String);
const stringLiteral = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 12 }).map((text) => JSON.stringify(text)) },
  { weight: 1, arbitrary: fc.constantFrom('"\\u0000"', '"\\uD800"', '"\\"', '"""block\\"""string"""', '"\\x"', '"unterminated') },
);
const idLiteral = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('"1"', '"2"', '"p1"', '"nope"', '1') },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom('-0', '""', '1.5', 'true'), stringLiteral) },
);
const roleLiteral = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('ADMIN', 'EDITOR', 'VIEWER') },
  { weight: 1, arbitrary: fc.constantFrom('OWNER', '"ADMIN"', 'null', 'admin') },
);

/** Any GraphQL input value, including variables and some that no type accepts. */
const anyValue: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    stringLiteral,
    fc.constantFrom('true', 'false', 'null', 'ADMIN', '$v', '$name', '$input', '$undefinedVariable', '12345678901234567890', '1e999'),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
    fc
      .array(fc.tuple(fc.constantFrom('text', 'author', 'id', 'x', '__typename'), tie('value')), { maxLength: 3 })
      .map((entries) => `{${entries.map(([key, value]) => `${key}: ${value}`).join(', ')}}`),
  ),
})).value;

const messageInput = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(stringLiteral, fc.option(stringLiteral))
      .map(([text, author]) => `{text: ${text}${author === null ? '' : `, author: ${author}`}}`),
  },
  { weight: 1, arbitrary: anyValue },
);

/** The sample remote's types and fields, as a client sees them through the gateway. */
const SCHEMA: Record<string, Record<string, FieldShape>> = {
  Query: {
    hello: { args: { name: fc.oneof({ weight: 4, arbitrary: stringLiteral }, { weight: 1, arbitrary: anyValue }) } },
    remoteName: {},
    user: { args: { id: idLiteral }, of: 'User' },
    users: { args: { role: roleLiteral }, of: 'User' },
    node: { args: { id: idLiteral }, of: 'Node' },
    search: { args: { term: fc.oneof(fc.constantFrom('"a"', '"Ada"', '""', '"o"'), stringLiteral) }, of: 'SearchResult' },
    messages: { of: 'Message' },
    boom: {},
    slow: { args: { ms: smallInt } },
    echoHeaders: {},
    __typename: {},
    __schema: { of: '__Schema' },
    __type: { args: { name: fc.constantFrom('"User"', '"Query"', '"Nope"', '""') }, of: '__Type' },
  },
  Mutation: {
    addMessage: { args: { input: messageInput }, of: 'Message' },
    __typename: {},
  },
  Subscription: {
    countdown: { args: { from: smallInt, intervalMs: smallInt } },
    echoHeaders: {},
  },
  User: { id: {}, name: {}, role: {}, posts: { of: 'Post' }, __typename: {} },
  Post: { id: {}, title: {}, author: { of: 'User' }, __typename: {} },
  Message: { id: {}, text: {}, author: {}, __typename: {} },
  Node: { id: {}, __typename: {} },
  SearchResult: { __typename: {} },
  __Schema: { queryType: { of: '__Type' }, types: { of: '__Type' }, directives: { of: '__Directive' } },
  __Type: { name: {}, kind: {}, fields: { of: '__Field' }, ofType: { of: '__Type' } },
  __Field: { name: {}, type: { of: '__Type' }, args: { of: '__InputValue' } },
  __InputValue: { name: {}, defaultValue: {} },
  __Directive: { name: {}, locations: {} },
};

/** Types a fragment may spread into the given type. */
const SPREADS: Record<string, string[]> = {
  Node: ['User', 'Post'],
  SearchResult: ['User', 'Post'],
  User: ['User', 'Node'],
  Post: ['Post', 'Node'],
};

const alias = sometimes(fc.constantFrom('a', 'b', 'hello', 'user', 'x_1', '__typename'), 15);
const directive = sometimes(
  fc.constantFrom('@include(if: true)', '@skip(if: false)', '@skip(if: $flag)', '@include(if: "yes")', '@deprecated', '@nope', '@skip'),
  4,
);

/** A selection set on `type`, `depth` levels deep at most. */
function selectionSet(type: string, depth: number): fc.Arbitrary<string> {
  const fields = SCHEMA[type] ?? { __typename: {} };
  const field = fc.constantFrom(...Object.keys(fields)).chain((name) => {
    const shape = fields[name] as FieldShape;
    const args = Object.entries(shape.args ?? {});
    const argumentList =
      args.length === 0
        ? fc.constant('')
        : fc
            .tuple(...args.map(([arg, value]) => fc.option(value, { freq: 6 }).map((v) => (v === null ? '' : `${arg}: ${v}`))))
            .map((parts) => parts.filter(Boolean))
            .map((parts) => (parts.length === 0 ? '' : `(${parts.join(', ')})`));
    const nested =
      shape.of === undefined
        ? fc.constant('')
        : depth <= 0
          ? fc.constant(' { __typename }')
          : selectionSet(shape.of, depth - 1).map((s) => ` ${s}`);
    return fc
      .tuple(alias, argumentList, directive, nested)
      .map(([a, argumentText, d, sub]) => `${a === undefined ? '' : `${a}: `}${name}${argumentText}${d === undefined ? '' : ` ${d}`}${sub}`);
  });
  const spreads = SPREADS[type] ?? [];
  const inlineFragment =
    spreads.length === 0 || depth <= 0
      ? field
      : fc.constantFrom(...spreads).chain((on) => selectionSet(on, depth - 1).map((s) => `... on ${on} ${s}`));
  const selection = fc.oneof(
    { weight: 16, arbitrary: field },
    { weight: 2, arbitrary: inlineFragment },
    { weight: 1, arbitrary: fc.constantFrom('...F', '...G', 'unknownField', '__typename', 'hello(nope: 1)', '...on Nope { x }') },
  );
  return fc.array(selection, { minLength: 1, maxLength: 3 }).map((items) => `{ ${items.join(' ')} }`);
}

const variableDefinitions = sometimes(
  fc
    .uniqueArray(
      fc.tuple(
        fc.constantFrom('$v', '$name', '$input', '$flag'),
        fc.constantFrom('String', 'Int', 'Boolean!', 'MessageInput!', 'ID', '[String]', 'Nope', 'User'),
      ),
      { selector: ([name]) => name, minLength: 1, maxLength: 4 },
    )
    .map((defs) => `(${defs.map(([name, type]) => `${name}: ${type}`).join(', ')})`),
  20,
);

const fragmentDefinition = fc
  .tuple(fc.constantFrom('F', 'G'), fc.constantFrom('User', 'Post', 'Node', 'Query', 'Nope'))
  .chain(([name, on]) => selectionSet(on === 'Nope' ? 'User' : on, 1).map((s) => `fragment ${name} on ${on} ${s}`));

const operationKind = fc.oneof(
  { weight: 6, arbitrary: fc.constant('query') },
  { weight: 1, arbitrary: fc.constant('mutation') },
  { weight: 1, arbitrary: fc.constant('subscription') },
);

/** One operation: keyword, optional name and variables, a selection set on its root type. */
const operation = operationKind.chain((kind) => {
  const root = kind === 'query' ? 'Query' : kind === 'mutation' ? 'Mutation' : 'Subscription';
  return fc
    .tuple(sometimes(fc.constantFrom('A', 'B', 'Op', 'query'), 30), variableDefinitions, selectionSet(root, 3))
    .map(([name, vars, s]) =>
      name === undefined && vars === undefined && kind === 'query' ? s : `${kind}${name === undefined ? '' : ` ${name}`}${vars ?? ''} ${s}`,
    );
});

/** A document built from the sample schema: usually one operation, sometimes more, and fragments. */
const wellFormedDocument: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      { weight: 9, arbitrary: fc.array(operation, { minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.array(operation, { minLength: 2, maxLength: 3 }) },
    ),
    fc.oneof(
      { weight: 9, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(fragmentDefinition, { minLength: 1, maxLength: 2 }) },
    ),
  )
  .map(([operations, fragments]) => [...operations, ...fragments].join('\n'));

/** Subscriptions for the WebSocket property, the never-ending `messageAdded` included (the run closes the socket). */
export const subscriptionDocument: fc.Arbitrary<string> = fc.oneof(
  selectionSet('Subscription', 1).map((s) => `subscription ${s}`),
  fc.constantFrom(
    'subscription { messageAdded { id text } }',
    'subscription { countdown(from: 2, intervalMs: 1) }',
    'subscription ($flag: Boolean!) { countdown(from: 1) @skip(if: $flag) }',
    'subscription { ... on Subscription { echoHeaders } }',
  ),
);

const noise = fc.constantFrom(
  ...['{', '}', '(', ')', '[', ']', '...', '$', '@', ':', '!', '=', '|', '&', '"', '"""', '#', '\\', '\n', ' '],
  ...['query', 'fragment', 'on', '\u0000', '\uFEFF', '\uD800', '😀', 'ä'],
);

/**
 * Edits can turn `slow(ms: 3)` into `slow(ms: 33333333)`; whatever the edits did, the arguments
 * that make the remote wait stay at one digit.
 */
function tameWaits(text: string): string {
  return text.replace(/\b(ms|from|intervalMs)(\s*:\s*)-?\d[\d.eE+-]*/g, (_match, name: string, colon: string) => `${name}${colon}3`);
}

/** A document edited at a few random places: deletions, duplications and stray punctuation. */
const mutatedDocument: fc.Arbitrary<string> = fc
  .tuple(
    wellFormedDocument,
    fc.array(fc.tuple(fc.nat(), fc.nat({ max: 8 }), fc.constantFrom('delete', 'insert', 'duplicate', 'replace'), noise), {
      minLength: 1,
      maxLength: 5,
    }),
  )
  .map(([text, edits]) =>
    edits.reduce((current, [at, length, kind, piece]) => {
      const i = current.length === 0 ? 0 : at % current.length;
      switch (kind) {
        case 'delete':
          return current.slice(0, i) + current.slice(i + length);
        case 'insert':
          return current.slice(0, i) + piece + current.slice(i);
        case 'duplicate':
          return current.slice(0, i + length) + current.slice(i);
        case 'replace':
          return current.slice(0, i) + piece + current.slice(i + 1);
      }
    }, text),
  )
  .map(tameWaits);

/** Any query text: mostly from the schema, sometimes edited, sometimes plain random text. */
export const queryText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: wellFormedDocument },
  { weight: 3, arbitrary: mutatedDocument },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '{}', '{ }', 'query', '#', '{ __typename }', 'subscription { countdown(from: 1) }') },
);

/** Variables as the `variables` member of a request: mostly an object, sometimes any JSON. */
export const variables: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record(
      {
        v: fc.jsonValue({ maxDepth: 2 }),
        name: fc.oneof(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })),
        input: fc.oneof(
          fc.record({ text: fc.string({ maxLength: 10 }), author: fc.option(fc.string({ maxLength: 5 })) }, { requiredKeys: [] }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        flag: fc.jsonValue({ maxDepth: 1 }),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

/** The JSON body of a GraphQL request: its members present or not, and of the right type or not. */
const graphqlRequest: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.oneof({ weight: 20, arbitrary: queryText }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }),
    partialRecord({
      variables: [variables, 40],
      operationName: [fc.oneof(fc.constantFrom('A', 'B', 'Op', '', 'Nope', null), fc.jsonValue({ maxDepth: 1 })), 12],
      extensions: [fc.oneof(fc.constant({ persistedQuery: { version: 1, sha256Hash: 'abc' } }), fc.jsonValue({ maxDepth: 2 })), 10],
      documentId: [fc.string({ maxLength: 8 }), 3],
    }),
  )
  .map(([query, rest]) => ({ query, ...rest }));

/** The body of a POST: mostly a GraphQL request as JSON, then any JSON, text or bytes. */
export const requestBody: fc.Arbitrary<string | Uint8Array<ArrayBuffer>> = fc.oneof(
  { weight: 24, arbitrary: graphqlRequest.map((request) => JSON.stringify(request)) },
  { weight: 1, arbitrary: fc.array(graphqlRequest, { maxLength: 3 }).map((batch) => JSON.stringify(batch)) },
  { weight: 2, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: queryText },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => new Uint8Array(bytes)) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"query":', 'null', '[]', '{"query":"{ hello }"}garbage', '\uFEFF{"query":"{ hello }"}') },
);

/** A header value fetch can send: no NUL, CR or LF, Latin-1 only. */
export const headerValue: fc.Arbitrary<string> = fc.string({
  unit: fc
    .oneof(
      { weight: 20, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
      { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
      { weight: 1, arbitrary: fc.constant(0x09) },
    )
    .map((code) => String.fromCharCode(code)),
  maxLength: 40,
});

const tokenChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!#$%&*+^`|~'.split(''));
const headerName = fc.string({ unit: tokenChars, minLength: 1, maxLength: 16 });

const goodToken = signHs256(userClaims(USER_ROLE), JWT_KEY);
const adminToken = signHs256(userClaims('admin'), JWT_KEY);

/** Every way the suite writes an `Authorization` header. */
export const authorization: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(`Bearer ${goodToken}`, `bearer ${goodToken}`, `  Bearer   ${goodToken}  `, `Bearer ${adminToken}`) },
  { weight: 4, arbitrary: signedToken(JWT_KEY).map((token) => `Bearer ${token}`) },
  { weight: 2, arbitrary: tokenLike.map((token) => `Bearer ${token}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ...['Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', '', goodToken, `Token ${goodToken}`],
      ...[`Bearer ${goodToken} extra`, `Bearer ${goodToken}=`, `Bearer ${goodToken.slice(0, -2)}`],
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/** Who the request claims to be: mostly someone the server lets in, else every wrong way of saying it. */
export const credentials: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ authorization: `Bearer ${goodToken}` }) },
  { weight: 4, arbitrary: fc.constant({ 'x-svc-admin-secret': ADMIN_SECRET }) },
  { weight: 1, arbitrary: fc.constant({ authorization: `Bearer ${adminToken}`, 'x-svc-admin-secret': ADMIN_SECRET }) },
  {
    weight: 2,
    arbitrary: partialRecord({
      authorization: [authorization, 70],
      'x-svc-admin-secret': [fc.oneof(fc.constantFrom(ADMIN_SECRET, `${ADMIN_SECRET} `, 'wrong', ''), headerValue), 40],
      cookie: [fc.oneof(fc.constantFrom(`token=${goodToken}`, 'a=b; c', ';;;=', `authorization=Bearer ${goodToken}`), headerValue), 30],
    }).map((headers) => headers as Record<string, string>),
  },
);

const contentType = fc.oneof(
  { weight: 24, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/graphql+json',
      'application/graphql-response+json',
      'application/graphql',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=fuzz',
      'multipart/form-data',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/** A set of request headers: credentials, content types, session variables and anything else. */
export const requestHeaders: fc.Arbitrary<Record<string, string>> = fc
  .tuple(
    credentials,
    partialRecord({
      'content-type': [contentType, 95],
      accept: [
        fc.oneof(
          fc.constantFrom('application/json', 'application/graphql-response+json', 'text/event-stream', 'multipart/mixed', '*/*'),
          fc.constantFrom('text/html', 'application/xml'),
          headerValue,
        ),
        15,
      ],
      'x-svc-role': [fc.oneof(fc.constantFrom(USER_ROLE, USER_ROLE, 'admin', 'editor', ''), headerValue), 15],
      'x-svc-user-id': [headerValue, 15],
      'X-SVC-Default-Role': [headerValue, 5],
      'x-svc-allowed-roles': [headerValue, 5],
      origin: [fc.constantFrom('http://evil.example', 'null', 'http://127.0.0.1'), 10],
    }),
    fc.dictionary(headerName, headerValue, { maxKeys: 2 }),
  )
  .map(([who, known, extra]) => ({ ...extra, ...(known as Record<string, string>), ...who }));

/** A claims-carrying `Authorization` header and how the rest of the request looks, for the token property. */
export const tokenRequest = fc.record({
  token: signedToken(JWT_KEY),
  role: sometimes(fc.oneof(fc.constantFrom(USER_ROLE, 'admin', 'editor', ''), headerValue), 25),
  // Mostly answered by the gateway itself: this property is about the token, not the remote.
  query: fc.oneof(
    { weight: 6, arbitrary: fc.constant('{ __typename }') },
    { weight: 1, arbitrary: fc.constantFrom('{ hello }', 'query { user(id: "1") { name } }', 'mutation { __typename }') },
  ),
});
