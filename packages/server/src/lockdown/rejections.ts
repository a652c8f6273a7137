/**
 * The answers of the lock-down checks, in one table: the reason (the `reason` label of
 * `svc_graphql_rejected_operations_total`), the message, the code and the HTTP status. Messages are
 * for people at the boundary; the server branches and counts on `reason`.
 */

export type RejectionReason = 'allowlist' | 'introspection' | 'depth' | 'nodes' | 'batch' | 'time' | 'rate';

export interface Rejection {
  reason: RejectionReason;
  message: string;
  code: 'validation-failed' | 'unexpected' | 'rate-limit-exceeded';
  /** The HTTP status of the answer (200 but for the rate limit). */
  status: number;
  /** `Retry-After` of a rate-limited request, in whole seconds. */
  retryAfterSeconds?: number;
}

export const REJECT = {
  allowlist: (): Rejection => ({ reason: 'allowlist', message: 'query is not allowed', code: 'validation-failed', status: 200 }),
  introspection: (role: string): Rejection => ({
    reason: 'introspection',
    message: `introspection is disabled for role "${role}"`,
    code: 'validation-failed',
    status: 200,
  }),
  depth: (depth: number, limit: number): Rejection => ({
    reason: 'depth',
    message: `the operation's depth ${String(depth)} exceeds the limit of ${String(limit)}`,
    code: 'validation-failed',
    status: 200,
  }),
  nodes: (nodes: number, limit: number): Rejection => ({
    reason: 'nodes',
    message: `the operation has ${String(nodes)} nodes, more than the limit of ${String(limit)}`,
    code: 'validation-failed',
    status: 200,
  }),
  batch: (size: number, limit: number): Rejection => ({
    reason: 'batch',
    message: `the batch has ${String(size)} operations, more than the limit of ${String(limit)}`,
    code: 'validation-failed',
    status: 200,
  }),
  time: (seconds: number): Rejection => ({
    reason: 'time',
    message: `the operation exceeded the time limit of ${String(seconds)} seconds`,
    code: 'unexpected',
    status: 200,
  }),
  rate: (retryAfterSeconds: number): Rejection => ({
    reason: 'rate',
    message: 'rate limit exceeded',
    code: 'rate-limit-exceeded',
    status: 429,
    retryAfterSeconds,
  }),
} as const;

/** The GraphQL error body of a rejection: `{"errors":[{"message", "extensions": {"code", "path": "$"}}]}`. */
export function rejectionBody(rejection: Rejection): { errors: Array<{ message: string; extensions: { code: string; path: string } }> } {
  return { errors: [{ message: rejection.message, extensions: { code: rejection.code, path: '$' } }] };
}
