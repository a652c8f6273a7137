/**
 * The lock-down checks of the request path: the policy compiled from the metadata (recompiled on
 * every change), the rate counter (this instance's, or Redis shared by every instance), and the
 * order of the checks: rate, then allow list, introspection, depth, nodes. Every transport (the
 * direct lane, Yoga's HTTP path, graphql-ws) asks the same {@link Lockdown}.
 */
import type { DocumentNode } from 'graphql';
import type { Session } from '@svc-graphql/jwt-session';
import type { LockdownMetadata } from '@svc-graphql/metadata-api';
import { clientIp } from './client-ip.js';
import { createDocumentFactsCache } from './document-facts.js';
import { ADMIN_ROLE, compileLockdownPolicy, type LockdownPolicy } from './policy.js';
import { createLocalRateLimiter, rateLimitKey, type RateDecision, type RateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter } from './redis-rate-limiter.js';
import { REJECT, type Rejection, type RejectionReason } from './rejections.js';
import type { ClientRequest } from '../request-record.js';

export interface LockdownOptions {
  /** The metadata document now, and its changes. */
  document(): Readonly<LockdownMetadata>;
  onDocumentChange(listener: (document: Readonly<LockdownMetadata>) => void): () => void;
  enableAllowlist: boolean;
  trustProxy: number;
  rateLimitRedisUrl?: string | undefined;
  rateLimitKeyPrefix?: string | undefined;
  logger: { info(...args: unknown[]): void; warn(...args: unknown[]): void; error(...args: unknown[]): void };
  /** An operation refused (metrics). */
  onRejected?: (reason: RejectionReason) => void;
}

/** One operation to check. */
export interface OperationToCheck {
  session: Session;
  document: DocumentNode;
  operationName: string | null | undefined;
  /** The Node request (HTTP) or WebSocket upgrade the operation came with: its address and `X-Forwarded-For`. */
  req: ClientRequest | undefined;
}

export interface Lockdown {
  /** The first check the operation fails (counting it toward its rate limit when it passes that), or `undefined`: {@link checkRate}, then {@link checkDocument}. */
  check(operation: OperationToCheck): Rejection | undefined | Promise<Rejection | undefined>;
  /**
   * The rate limit of the session's role, counting the operation when it passes (a refused one is
   * not counted); the first check, made before the document is parsed.
   */
  checkRate(session: Session, req: ClientRequest | undefined): Rejection | undefined | Promise<Rejection | undefined>;
  /** The checks of the parsed document, in order: allow list, introspection, depth, nodes. */
  checkDocument(session: Session, document: DocumentNode, operationName: string | null | undefined): Rejection | undefined;
  /** A batch of `size` operations against the role's batch limit. */
  checkBatch(session: Session, size: number): Rejection | undefined;
  /** The time limit of the role's operations, in milliseconds, if any. */
  timeLimitMs(session: Session): number | undefined;
  /** Counts a refusal that was answered outside the checks above (time). */
  rejected(rejection: Rejection): void;
  /** The `/healthz` warning of the rate-limit store, if any. */
  warning(): string | undefined;
  dispose(): Promise<void>;
}

/** The rate counter: Redis shared by every instance with a URL, else this instance's own (said at start). */
function rateLimiterOf(options: LockdownOptions): RateLimiter {
  if (options.rateLimitRedisUrl === undefined) {
    options.logger.info('rate limits are counted by each instance alone (no --rate-limit-redis-url)');
    return createLocalRateLimiter();
  }
  return createRedisRateLimiter({
    url: options.rateLimitRedisUrl,
    ...(options.rateLimitKeyPrefix !== undefined && { keyPrefix: options.rateLimitKeyPrefix }),
    logger: options.logger,
  });
}

export function createLockdown(options: LockdownOptions): Lockdown {
  // Likely an imported document run without the flag: said once rather than served silently.
  let allowlistNoted = options.enableAllowlist;
  const noteAllowlist = (document: ReturnType<LockdownOptions['document']>): void => {
    if (allowlistNoted || !document.allowlist?.length) return;
    allowlistNoted = true;
    options.logger.warn('the metadata has an allow list, but the allow list is disabled (--enable-allowlist): it is kept, not enforced');
  };
  const initial = options.document();
  noteAllowlist(initial);
  let policy: LockdownPolicy = compileLockdownPolicy(initial);
  const stopWatching = options.onDocumentChange((document) => {
    noteAllowlist(document);
    try {
      policy = compileLockdownPolicy(document, policy);
    } catch (error) {
      options.logger.error('the lock-down settings of the metadata could not be compiled:', error);
    }
  });
  const facts = createDocumentFactsCache();
  const limiter = rateLimiterOf(options);
  const { enableAllowlist, trustProxy } = options;

  const refuse = (rejection: Rejection): Rejection => {
    options.onRejected?.(rejection.reason);
    return rejection;
  };

  const checkDocument = (session: Session, document: DocumentNode, operationName: string | null | undefined): Rejection | undefined => {
    if (session.role === ADMIN_ROLE) return undefined;
    const rejection = policy.checkOperation({ role: session.role, facts: facts(document), operationName, allowlistEnabled: enableAllowlist });
    return rejection === undefined ? undefined : refuse(rejection);
  };

  const checkRate = (session: Session, req: ClientRequest | undefined): Rejection | undefined | Promise<Rejection | undefined> => {
    if (session.role === ADMIN_ROLE) return undefined;
    const rate = policy.limitsFor(session.role).rate;
    if (rate === undefined) return undefined;
    const key = rateLimitKey(rate, {
      role: session.role,
      ip: clientIp(req?.socket.remoteAddress, req?.headers['x-forwarded-for'], trustProxy),
      variables: session.variables,
    });
    const decide = (decision: RateDecision): Rejection | undefined =>
      decision.allowed ? undefined : refuse(REJECT.rate(decision.retryAfterSeconds));
    const decision = limiter.hit(key, rate.maxPerMinute);
    return decision instanceof Promise ? decision.then(decide) : decide(decision);
  };

  return {
    check({ session, req, document, operationName }) {
      const rate = checkRate(session, req);
      if (rate instanceof Promise) return rate.then((rejection) => rejection ?? checkDocument(session, document, operationName));
      return rate ?? checkDocument(session, document, operationName);
    },
    checkRate,
    checkDocument,
    checkBatch(session, size) {
      if (session.role === ADMIN_ROLE) return undefined;
      const rejection = policy.checkBatch(session.role, size);
      return rejection === undefined ? undefined : refuse(rejection);
    },
    timeLimitMs(session) {
      if (session.role === ADMIN_ROLE) return undefined;
      const seconds = policy.limitsFor(session.role).timeSeconds;
      return seconds === undefined ? undefined : seconds * 1000;
    },
    rejected(rejection) {
      options.onRejected?.(rejection.reason);
    },
    warning: () => (limiter.isHealthy() ? undefined : 'WARN: rate limit store unreachable'),
    async dispose() {
      stopWatching();
      await limiter.dispose();
    },
  };
}
