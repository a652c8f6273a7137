import { describe, expect, it } from 'vitest';
import { isConnectionFailure } from '../src/errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isConnectionFailure', () => {
  it.each([
    ['a reset connection', withCode('ECONNRESET', 'read ECONNRESET')],
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a host that cannot be resolved', withCode('ENOTFOUND', 'getaddrinfo ENOTFOUND db')],
    ['a connection lost by node-postgres', new Error('Connection terminated unexpectedly')],
    ['a connection that could not be made in time', new Error('timeout expired')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['a query that got no answer', new Error('Query read timeout')],
    ['a PostgreSQL connection exception (class 08)', withCode('08006', 'connection failure')],
    ['a server shutting down', withCode('57P01', 'terminating connection due to administrator command')],
    ['a server still starting', withCode('57P03', 'the database system is starting up')],
    ['a failure wrapped with its cause', new Error('cannot save metadata', { cause: withCode('EPIPE') })],
    ['a statement the server cancelled after statement_timeout', withCode('57014', 'canceling statement due to statement timeout')],
    ['a lock the server gave up on after lock_timeout', withCode('55P03', 'canceling statement due to lock timeout')],
  ])('counts %s as the database being unreachable', (_title, error) => {
    expect(isConnectionFailure(error)).toBe(true);
  });

  it.each([
    ['bad SQL', withCode('42601', 'syntax error at or near "SELEC"')],
    ['a refused password', withCode('28P01', 'password authentication failed for user "postgres"')],
    ['a file system error', withCode('EACCES', 'permission denied')],
    ['something that is not an error', 'ECONNRESET'],
  ])('counts %s as an answer from the database, not as unreachable', (_title, error) => {
    expect(isConnectionFailure(error)).toBe(false);
  });
});
