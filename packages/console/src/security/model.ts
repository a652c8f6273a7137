import type { MetadataDocument } from '../metadata/types.js';

/** The lock-down parts of the metadata as exported: query collections, the allow list, introspection, API limits. */

export interface QueryCollection {
  name: string;
  comment?: string;
  definition: { queries: Array<{ name: string; query: string }> };
}

export interface AllowlistEntry {
  collection: string;
  scope?: { global: boolean; roles?: string[] };
}

export interface LimitOption {
  global?: number;
  per_role?: Record<string, number>;
}

export interface RateLimitConfig {
  max_reqs_per_min: number;
  unique_params?: 'IP' | string[];
}

export interface ApiLimits {
  disabled?: boolean;
  depth_limit?: LimitOption;
  node_limit?: LimitOption;
  time_limit?: LimitOption;
  batch_limit?: LimitOption;
  rate_limit?: { global?: RateLimitConfig; per_role?: Record<string, RateLimitConfig> };
}

export function collectionsOf(document: MetadataDocument | undefined): QueryCollection[] {
  return (document?.['query_collections'] as QueryCollection[] | undefined) ?? [];
}

export function allowlistOf(document: MetadataDocument | undefined): AllowlistEntry[] {
  return (document?.['allowlist'] as AllowlistEntry[] | undefined) ?? [];
}

export function introspectionDisabledFor(document: MetadataDocument | undefined): string[] {
  return (document?.['graphql_schema_introspection'] as { disabled_for_roles?: string[] } | undefined)?.disabled_for_roles ?? [];
}

export function apiLimitsOf(document: MetadataDocument | undefined): ApiLimits | undefined {
  return document?.['api_limits'] as ApiLimits | undefined;
}

const NAME = /^[_A-Za-z][-_0-9A-Za-z]*$/;

/** Roles written `user, editor`: the names, or the first problem naming the field. */
export function parseRoles(text: string, field: string): { roles: string[] } | { problem: string } {
  const roles = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const bad = roles.find((role) => !NAME.test(role));
  if (bad !== undefined) return { problem: `${field}: "${bad}" is not a role name (letters, digits, - and _)` };
  return { roles: [...new Set(roles)] };
}

/** A whole number from 1 to `max`, or undefined for an empty text. */
export function parseCount(text: string, field: string, max: number): { value: number | undefined } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: undefined };
  if (!/^\d+$/.test(trimmed)) return { problem: `${field}: "${trimmed}" is not a whole number` };
  const value = Number(trimmed);
  if (value < 1 || value > max) return { problem: `${field}: must be from 1 to ${max}` };
  return { value };
}

/** Per-role values written `user=5, editor=10`. */
export function parsePerRole(text: string, field: string, max: number): { values: Record<string, number> } | { problem: string } {
  const values: Record<string, number> = {};
  for (const part of text.split(',').map((item) => item.trim()).filter((item) => item !== '')) {
    const match = /^([^=\s]+)\s*=\s*(.*)$/.exec(part);
    if (!match) return { problem: `${field}: write each role as role=number ("${part}" is not)` };
    const [, role, number] = match as unknown as [string, string, string];
    if (!NAME.test(role)) return { problem: `${field}: "${role}" is not a role name` };
    const parsed = parseCount(number, `${field}, role ${role}`, max);
    if ('problem' in parsed) return parsed;
    if (parsed.value === undefined) return { problem: `${field}: role ${role} has no number` };
    values[role] = parsed.value;
  }
  return { values };
}

export const COUNT_LIMITS = [
  { key: 'depth_limit', label: 'Depth', unit: 'levels', max: 1_000_000_000 },
  { key: 'node_limit', label: 'Nodes', unit: 'fields', max: 1_000_000_000 },
  { key: 'batch_limit', label: 'Batch', unit: 'operations', max: 1_000_000_000 },
  { key: 'time_limit', label: 'Time', unit: 'seconds', max: 2_147_483 },
] as const;

export type CountLimitKey = (typeof COUNT_LIMITS)[number]['key'];

/** The limits form: texts as typed. */
export interface LimitsForm {
  disabled: boolean;
  counts: Record<CountLimitKey, { global: string; perRole: string }>;
  rateGlobal: string;
  rateGlobalParams: string;
  ratePerRole: string;
  ratePerRoleParams: string;
}

function perRoleText(values: Record<string, number> | undefined): string {
  return Object.entries(values ?? {})
    .map(([role, value]) => `${role}=${value}`)
    .join(', ');
}

function paramsText(params: RateLimitConfig['unique_params']): string {
  return params === undefined ? '' : params === 'IP' ? 'IP' : params.join(', ');
}

export function limitsFormOf(limits: ApiLimits | undefined): LimitsForm {
  const counts = Object.fromEntries(
    COUNT_LIMITS.map(({ key }) => [key, { global: limits?.[key]?.global?.toString() ?? '', perRole: perRoleText(limits?.[key]?.per_role) }]),
  ) as LimitsForm['counts'];
  const perRole = limits?.rate_limit?.per_role ?? {};
  const firstRole = Object.values(perRole)[0];
  return {
    disabled: limits?.disabled ?? false,
    counts,
    rateGlobal: limits?.rate_limit?.global?.max_reqs_per_min.toString() ?? '',
    rateGlobalParams: paramsText(limits?.rate_limit?.global?.unique_params),
    ratePerRole: perRoleText(Object.fromEntries(Object.entries(perRole).map(([role, config]) => [role, config.max_reqs_per_min]))),
    ratePerRoleParams: paramsText(firstRole?.unique_params),
  };
}

function parseParams(text: string, field: string): { params: RateLimitConfig['unique_params'] } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { params: undefined };
  if (trimmed.toUpperCase() === 'IP') return { params: 'IP' };
  const names = trimmed.split(',').map((part) => part.trim()).filter((part) => part !== '');
  const bad = names.find((name) => !/^x-svc-[-_0-9a-z]+$/i.test(name));
  if (bad !== undefined) return { problem: `${field}: "${bad}" is neither IP nor a session variable (x-svc-…)` };
  return { params: names };
}

const RATE_MAX = 1_000_000;

/** The `set_api_limits` arguments of the form, or every problem found, each naming its field. */
export function limitsOfForm(form: LimitsForm): { limits: ApiLimits } | { problems: string[] } {
  const problems: string[] = [];
  const limits: ApiLimits = { disabled: form.disabled };
  for (const { key, label, max } of COUNT_LIMITS) {
    const global = parseCount(form.counts[key].global, `${label} limit for every role`, max);
    const perRole = parsePerRole(form.counts[key].perRole, `${label} limit per role`, max);
    if ('problem' in global) problems.push(global.problem);
    if ('problem' in perRole) problems.push(perRole.problem);
    if ('problem' in global || 'problem' in perRole) continue;
    const option: LimitOption = {
      ...(global.value !== undefined && { global: global.value }),
      ...(Object.keys(perRole.values).length > 0 && { per_role: perRole.values }),
    };
    if (Object.keys(option).length > 0) limits[key] = option;
  }
  const rateGlobal = parseCount(form.rateGlobal, 'Rate limit for every role', RATE_MAX);
  const globalParams = parseParams(form.rateGlobalParams, 'Rate limit for every role, counted per');
  const ratePerRole = parsePerRole(form.ratePerRole, 'Rate limit per role', RATE_MAX);
  const perRoleParams = parseParams(form.ratePerRoleParams, 'Rate limit per role, counted per');
  for (const parsed of [rateGlobal, globalParams, ratePerRole, perRoleParams]) if ('problem' in parsed) problems.push(parsed.problem);
  if (problems.length > 0) return { problems };
  const rate: NonNullable<ApiLimits['rate_limit']> = {};
  const config = (max: number, params: RateLimitConfig['unique_params']): RateLimitConfig => ({ max_reqs_per_min: max, ...(params !== undefined && { unique_params: params }) });
  if ('value' in rateGlobal && rateGlobal.value !== undefined && 'params' in globalParams) rate.global = config(rateGlobal.value, globalParams.params);
  if ('values' in ratePerRole && Object.keys(ratePerRole.values).length > 0 && 'params' in perRoleParams) {
    const params = perRoleParams.params;
    rate.per_role = Object.fromEntries(Object.entries(ratePerRole.values).map(([role, max]) => [role, config(max, params)]));
  }
  if (Object.keys(rate).length > 0) limits.rate_limit = rate;
  return { limits };
}
