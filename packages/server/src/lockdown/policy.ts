/**
 * The lock-down settings of the metadata compiled for requests: the allow-list table, the roles
 * without introspection, and each role's limits, so that a request's checks are lookups. Compiled
 * again whenever the metadata document changes.
 */
import type { ApiLimitOption, ApiLimitsMetadata, LockdownMetadata, RateLimitConfig } from '@svc-graphql/metadata-api';
import { createAllowlistTable, type AllowlistTable } from './allowlist.js';
import type { DocumentFacts } from './document-facts.js';
import { REJECT, type Rejection } from './rejections.js';

/** The role that is never limited nor allow-list checked. */
export const ADMIN_ROLE = 'admin';

/** A role's limits; a missing one does not apply. */
export interface RoleLimits {
  depth?: number;
  nodes?: number;
  batch?: number;
  timeSeconds?: number;
  rate?: RoleRateLimit;
}

export interface RoleRateLimit {
  maxPerMinute: number;
  /** `'IP'`, lower-cased session variable names, or `undefined` (the role alone). */
  uniqueParams: 'IP' | readonly string[] | undefined;
}

export interface LockdownPolicy {
  readonly allowlist: AllowlistTable;
  /** The limits that apply to `role` (none for admin, none when `api_limits.disabled`). */
  limitsFor(role: string): RoleLimits;
  introspectionDisabledFor(role: string): boolean;
  /**
   * The per-operation checks in their order (allow list when `allowlistEnabled`, introspection,
   * depth, nodes); the first that fails, or `undefined`. `operationName` picks the operation as
   * execution will.
   */
  checkOperation(request: { role: string; facts: DocumentFacts; operationName?: string | null | undefined; allowlistEnabled: boolean }): Rejection | undefined;
  /** A batch of `size` operations against the role's batch limit. */
  checkBatch(role: string, size: number): Rejection | undefined;
}

const NO_LIMITS: RoleLimits = Object.freeze({});

function pick(option: ApiLimitOption | undefined, role: string): number | undefined {
  if (option === undefined) return undefined;
  if (option.per_role !== undefined && Object.hasOwn(option.per_role, role)) return option.per_role[role];
  return option.global;
}

function pickRate(limits: ApiLimitsMetadata, role: string): RoleRateLimit | undefined {
  const option = limits.rate_limit;
  if (option === undefined) return undefined;
  const config: RateLimitConfig | undefined =
    option.per_role !== undefined && Object.hasOwn(option.per_role, role) ? option.per_role[role] : option.global;
  if (config === undefined) return undefined;
  const params = config.unique_params;
  return {
    maxPerMinute: config.max_reqs_per_min,
    uniqueParams: params === undefined || params === 'IP' ? params : params.map((name) => name.toLowerCase()),
  };
}

function roleLimits(limits: ApiLimitsMetadata, role: string): RoleLimits {
  const result: RoleLimits = {};
  const depth = pick(limits.depth_limit, role);
  if (depth !== undefined) result.depth = depth;
  const nodes = pick(limits.node_limit, role);
  if (nodes !== undefined) result.nodes = nodes;
  const batch = pick(limits.batch_limit, role);
  if (batch !== undefined) result.batch = batch;
  const time = pick(limits.time_limit, role);
  if (time !== undefined) result.timeSeconds = time;
  const rate = pickRate(limits, role);
  if (rate !== undefined) result.rate = rate;
  return Object.freeze(result);
}

/** Compiles the lock-down parts of a metadata document; `previous` lends the allow-list keys it computed. */
export function compileLockdownPolicy(metadata: Readonly<LockdownMetadata>, previous?: LockdownPolicy): LockdownPolicy {
  const allowlist = createAllowlistTable(metadata, previous?.allowlist);
  const disabledIntrospection = new Set(metadata.graphql_schema_introspection?.disabled_for_roles ?? []);
  const limits = metadata.api_limits?.disabled === true ? undefined : metadata.api_limits;
  // Roles named anywhere get their own precomputed limits; every other role shares the global ones.
  const byRole = new Map<string, RoleLimits>();
  const global = limits === undefined ? NO_LIMITS : roleLimits(limits, '\u0000 no role has this name');
  if (limits !== undefined) {
    const options = [limits.depth_limit, limits.node_limit, limits.batch_limit, limits.time_limit, limits.rate_limit];
    for (const option of options) for (const role of Object.keys(option?.per_role ?? {})) byRole.set(role, roleLimits(limits, role));
  }
  byRole.set(ADMIN_ROLE, NO_LIMITS);
  const limitsFor = (role: string): RoleLimits => byRole.get(role) ?? global;

  return {
    allowlist,
    limitsFor,
    introspectionDisabledFor: (role) => disabledIntrospection.has(role),
    checkOperation({ role, facts, operationName, allowlistEnabled }) {
      const isAdmin = role === ADMIN_ROLE;
      if (allowlistEnabled && !isAdmin && !allowlist.allows(facts.allowlistKey, role)) return REJECT.allowlist();
      const roleLimit = limitsFor(role);
      const needsCost = disabledIntrospection.has(role) || roleLimit.depth !== undefined || roleLimit.nodes !== undefined;
      if (!needsCost) return undefined;
      const cost = facts.operation(operationName);
      if (cost === undefined) return undefined;
      if (cost.introspection && disabledIntrospection.has(role)) return REJECT.introspection(role);
      if (roleLimit.depth !== undefined && cost.depth > roleLimit.depth) return REJECT.depth(cost.depth, roleLimit.depth);
      if (roleLimit.nodes !== undefined && cost.nodes > roleLimit.nodes) return REJECT.nodes(cost.nodes, roleLimit.nodes);
      return undefined;
    },
    checkBatch(role, size) {
      const limit = limitsFor(role).batch;
      return limit !== undefined && size > limit ? REJECT.batch(size, limit) : undefined;
    },
  };
}
