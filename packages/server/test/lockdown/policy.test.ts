import { parse } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { clientIp, normalizeAddress } from '../../src/lockdown/client-ip.js';
import { createDocumentFactsCache } from '../../src/lockdown/document-facts.js';
import { compileLockdownPolicy } from '../../src/lockdown/policy.js';
import { rejectionBody } from '../../src/lockdown/rejections.js';
import { TimeLimitExceededError, withTimeLimit } from '../../src/lockdown/time-limit.js';

const facts = createDocumentFactsCache();
const Q = (text: string) => facts(parse(text));

const metadata = {
  query_collections: [{ name: 'app', definition: { queries: [{ name: 'a', query: '{ a { b { c } } }' }, { name: 'i', query: '{ __schema { queryType { name } } }' }] } }],
  allowlist: [{ collection: 'app' }],
  graphql_schema_introspection: { disabled_for_roles: ['user'] },
  api_limits: {
    depth_limit: { global: 2, per_role: { editor: 5 } },
    node_limit: { global: 10, per_role: { editor: 2 } },
    batch_limit: { global: 3 },
    time_limit: { per_role: { user: 4 } },
    rate_limit: {
      global: { max_reqs_per_min: 100, unique_params: 'IP' as const },
      per_role: { user: { max_reqs_per_min: 5, unique_params: ['X-Svc-User-Id'] }, bot: { max_reqs_per_min: 1 } },
    },
  },
};
const policy = compileLockdownPolicy(metadata);

describe('the lock-down policy', () => {
  it("gives a role its own limits over the global ones, and admin none", () => {
    expect(policy.limitsFor('editor')).toEqual({ depth: 5, nodes: 2, batch: 3, rate: { maxPerMinute: 100, uniqueParams: 'IP' } });
    expect(policy.limitsFor('user')).toEqual({ depth: 2, nodes: 10, batch: 3, timeSeconds: 4, rate: { maxPerMinute: 5, uniqueParams: ['x-svc-user-id'] } });
    expect(policy.limitsFor('bot').rate).toEqual({ maxPerMinute: 1, uniqueParams: undefined });
    expect(policy.limitsFor('anyone')).toEqual({ depth: 2, nodes: 10, batch: 3, rate: { maxPerMinute: 100, uniqueParams: 'IP' } });
    expect(policy.limitsFor('admin')).toEqual({});
    expect(policy.limitsFor('constructor')).toEqual(policy.limitsFor('anyone'));
  });

  it('applies nothing when api_limits is disabled', () => {
    const off = compileLockdownPolicy({ ...metadata, api_limits: { ...metadata.api_limits, disabled: true } });
    expect(off.limitsFor('user')).toEqual({});
    expect(off.checkBatch('user', 100)).toBeUndefined();
  });

  it('checks an operation in order: allow list, introspection, depth, nodes', () => {
    const check = (role: string, text: string, allowlistEnabled = true) => policy.checkOperation({ role, facts: Q(text), allowlistEnabled });
    expect(check('user', '{ nope }')).toEqual({ reason: 'allowlist', message: 'query is not allowed', code: 'validation-failed', status: 200 });
    expect(check('user', '{ __schema { queryType { name } } }')).toMatchObject({ reason: 'introspection', message: 'introspection is disabled for role "user"' });
    expect(check('user', '# same\n{ a { b { c __typename } } }')).toMatchObject({ reason: 'depth', message: "the operation's depth 3 exceeds the limit of 2" });
    expect(check('editor', '{ a { b { c } } }')).toMatchObject({ reason: 'nodes', message: 'the operation has 3 nodes, more than the limit of 2' });
    expect(check('editor', '{ x { y } }', false)).toBeUndefined();
    expect(check('guest', '{ __type(name: "A") { name } }', false)).toBeUndefined();
    // Admin is never allow-listed nor limited.
    expect(check('admin', '{ deep { deep { deep { deep } } } }')).toBeUndefined();
  });

  it('refuses a batch over the role limit', () => {
    expect(policy.checkBatch('user', 3)).toBeUndefined();
    expect(policy.checkBatch('user', 4)).toEqual({
      reason: 'batch',
      message: 'the batch has 4 operations, more than the limit of 3',
      code: 'validation-failed',
      status: 200,
    });
    expect(rejectionBody(policy.checkBatch('user', 4)!)).toEqual({
      errors: [{ message: 'the batch has 4 operations, more than the limit of 3', extensions: { code: 'validation-failed', path: '$' } }],
    });
  });
});

describe('the client IP', () => {
  it('is the socket address without --trust-proxy, whatever X-Forwarded-For claims', () => {
    expect(clientIp('10.0.0.9', '6.6.6.6', 0)).toBe('10.0.0.9');
    expect(clientIp('::ffff:10.0.0.9', null, 0)).toBe('10.0.0.9');
  });

  it('is the N-th address from the right behind N proxies, never one the client wrote', () => {
    // The client wrote "6.6.6.6"; the one proxy appended the address it saw.
    expect(clientIp('10.0.0.1', '6.6.6.6, 203.0.113.7', 1)).toBe('203.0.113.7');
    expect(clientIp('10.0.0.1', ['6.6.6.6', '203.0.113.7, 10.0.0.2'], 2)).toBe('203.0.113.7');
    expect(clientIp('10.0.0.1', '6.6.6.6,203.0.113.7,10.0.0.2', 1)).toBe('10.0.0.2');
  });

  it('falls back to the socket address when the list is shorter than N or the entry is not an address', () => {
    expect(clientIp('10.0.0.1', '203.0.113.7', 2)).toBe('10.0.0.1');
    expect(clientIp('10.0.0.1', 'unknown', 1)).toBe('10.0.0.1');
    expect(clientIp('10.0.0.1', undefined, 1)).toBe('10.0.0.1');
  });

  it('normalizes ports, brackets and IPv4-mapped IPv6', () => {
    expect(normalizeAddress('[2001:DB8::1]:443')).toBe('2001:db8::1');
    expect(normalizeAddress('203.0.113.7:5000')).toBe('203.0.113.7');
    expect(normalizeAddress('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeAddress('not an ip')).toBeUndefined();
  });
});

describe('the time limit', () => {
  it('answers TimeLimitExceededError and aborts the run past the limit', async () => {
    vi.useFakeTimers();
    try {
      let signal: AbortSignal | undefined;
      const run = withTimeLimit(4000, (given) => {
        signal = given;
        return new Promise(() => undefined);
      });
      const outcome = run.catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(3999);
      expect(signal?.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await outcome).toBeInstanceOf(TimeLimitExceededError);
      expect(signal?.aborted).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers the run within the limit and follows a parent signal', async () => {
    expect(await withTimeLimit(1000, async () => 'done')).toBe('done');
    const parent = new AbortController();
    let signal: AbortSignal | undefined;
    const running = withTimeLimit(60_000, (given) => {
      signal = given;
      return new Promise((_, reject) => given.addEventListener('abort', () => reject(new Error('aborted'))));
    });
    parent.abort();
    await expect(withTimeLimit(60_000, async (given) => given.aborted, parent.signal)).resolves.toBe(true);
    expect(signal?.aborted).toBe(false);
    void running.catch(() => undefined);
  });
});
