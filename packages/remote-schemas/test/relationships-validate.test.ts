import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { LoadedRemote } from '../src/loaded-remote.js';
import { compileRelationship } from '../src/relationships/validate.js';

/**
 * The reasons a relationship is refused for, where the sample remotes have no such schema: a type
 * without any field to join on, and an input object argument missing a required field.
 */

const orders = {
  name: 'orders',
  own: buildSchema(`
    type Audit { order: Order, lines: [Line!]! }
    type Line { sku: String! }
    type Order { id: ID!, audit: Audit }
    type Query { order(id: ID!): Order, audit: Audit }
  `),
} as unknown as LoadedRemote;
const users = {
  name: 'users',
  own: buildSchema(`
    input Range { from: Int!, to: Int = 10, note: String }
    type User { id: ID! }
    type Query { usersIn(range: Range!): [User!]! }
  `),
} as unknown as LoadedRemote;
const lookup = (name: string) => (name === 'users' ? users : 'missing');

function refusal(type: string, lhs: string[], remoteField: unknown) {
  return compileRelationship(
    { name: 'rel', type_name: type, definition: { to_remote_schema: { remote_schema: 'users', lhs_fields: lhs, remote_field: remoteField } } } as never,
    orders,
    lookup,
  );
}

describe('relationship reasons', () => {
  it('says what a join field is when the type has none, instead of listing no fields', () => {
    expect(refusal('Audit', ['order'], { usersIn: { arguments: { range: { from: 1 } } } })).toEqual({
      reason:
        'field with name "order" is not provided by the lhs entity; type "Audit" has no field to join on ' +
        '(a field without arguments whose type is a scalar, an enum, or a list of them)',
      code: 'invalid-configuration',
    });
    expect(refusal('Order', ['audit'], {})).toMatchObject({
      reason: 'field with name "audit" is not provided by the lhs entity; the allowed fields are "id"',
    });
  });

  it('names the required field missing from an input object, and its input type', () => {
    expect(refusal('Order', ['id'], { usersIn: { arguments: { range: { to: 3, note: 'x' } } } })).toEqual({
      reason: 'missing required field "from" of input type "Range"',
      code: 'invalid-configuration',
    });
    expect(refusal('Order', ['id'], { usersIn: { arguments: { range: { from: 1 } } } })).not.toHaveProperty('reason');
  });
});
