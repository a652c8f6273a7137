import fc from 'fast-check';
import { partialRecord } from './fuzz-common.js';
import type { LOCKDOWN_OPERATION_TYPES } from '../../../metadata-api/src/lockdown-operations.js';

/**
 * Arguments of the metadata operations on query collections, the allow list, introspection and
 * API limits: mostly of the right shape (so that the fuzz gets past validation and reaches the
 * store), sometimes anything.
 */

const queryText = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('{ hello }', 'query Q { hello }', 'query { __typename hello } fragment F on Query { hello }') },
  { weight: 2, arbitrary: fc.constantFrom('', '{', 'type Query { a: Int }', 'fragment F on Query { hello }', '{'.repeat(3000)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

export function lockdownArgs(
  type: (typeof LOCKDOWN_OPERATION_TYPES)[number],
  name: fc.Arbitrary<unknown>,
  role: fc.Arbitrary<unknown>,
  anyJson: fc.Arbitrary<unknown>,
): fc.Arbitrary<unknown> {
  const query = fc.record({ name, query: fc.oneof({ weight: 5, arbitrary: queryText }, { weight: 1, arbitrary: anyJson }) });
  const scope = fc.oneof(
    fc.constant({ global: true }),
    fc.record({ global: fc.constant(false), roles: fc.array(role, { maxLength: 3 }) }),
    anyJson,
  );
  const limit = partialRecord({
    global: [fc.oneof(fc.integer({ min: -1, max: 20 }), anyJson), 80],
    per_role: [fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), fc.integer({ min: 0, max: 5 }), { maxKeys: 2 }), anyJson), 40],
  });
  const rate = fc.record({
    max_reqs_per_min: fc.oneof(fc.integer({ min: 0, max: 100 }), anyJson),
    unique_params: fc.oneof(fc.constantFrom('IP', 'ip', 'x'), fc.array(fc.constantFrom('x-svc-user-id', 'X-Svc-Org', 'x-svc-role', 'user'), { maxLength: 2 }), anyJson),
  });
  switch (type) {
    case 'create_query_collection':
      return fc
        .tuple(name, fc.oneof(fc.record({ queries: fc.array(query, { maxLength: 3 }) }), anyJson), partialRecord({ comment: [anyJson, 20] }))
        .map(([n, definition, rest]) => ({ name: n, definition, ...rest }));
    case 'rename_query_collection':
      return fc.record({ name, new_name: name });
    case 'drop_query_collection':
      return fc.tuple(name, partialRecord({ cascade: [fc.oneof(fc.boolean(), anyJson), 60] })).map(([n, rest]) => ({ collection: n, ...rest }));
    case 'add_query_to_collection':
      return fc.record({ collection_name: name, query_name: name, query: queryText });
    case 'drop_query_from_collection':
      return fc.record({ collection_name: name, query_name: name });
    case 'add_collection_to_allowlist':
    case 'update_scope_of_collection_in_allowlist':
      return fc.tuple(name, partialRecord({ scope: [scope, 70] })).map(([n, rest]) => ({ collection: n, ...rest }));
    case 'drop_collection_from_allowlist':
      return fc.record({ collection: name });
    case 'set_graphql_schema_introspection_options':
      return fc.oneof(fc.record({ disabled_for_roles: fc.array(role, { maxLength: 3 }) }), anyJson);
    case 'set_api_limits':
      return fc.oneof(
        partialRecord({
          disabled: [fc.oneof(fc.boolean(), anyJson), 30],
          depth_limit: [limit, 40],
          node_limit: [limit, 40],
          time_limit: [limit, 30],
          batch_limit: [limit, 30],
          rate_limit: [partialRecord({ global: [rate, 70], per_role: [fc.dictionary(fc.string({ maxLength: 6 }), rate, { maxKeys: 2 }), 40] }), 40],
        }),
        anyJson,
      );
    case 'remove_api_limits':
      return fc.oneof(fc.constant({}), anyJson);
  }
}
