import type { DocumentNode, GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../options.js';
import { compilePlan } from './compile.js';
import type { Plan, PlanDecision } from './plan.js';

/** Documents whose plans are kept per schema (least recently used first out). */
export const MAX_PLANNED_DOCUMENTS = 1000;

type Decisions = Map<string | null | undefined, PlanDecision | undefined>;

/**
 * One cache per schema: a swap drops the plans of the old schema with it, and a role's schema
 * (its grant, its presets) has plans of its own. Keyed by the parsed document, which Yoga's
 * parser cache hands out again for the same text.
 */
const caches = new WeakMap<GraphQLSchema, LRUCache<DocumentNode, Decisions>>();

/**
 * The plan of an operation, built once per (document, operation name, schema). `undefined`: serve
 * the operation as before. Why an operation cannot be planned is logged at debug level when
 * that is decided (once per document, operation and schema).
 */
export function planFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger | undefined,
): Plan | undefined {
  const decision = decisionFor(schema, document, operationName, logger);
  return decision && 'plan' in decision ? decision.plan : undefined;
}

/**
 * What the gateway does with a subscription: its plan (a namespaced subscription, or one to a
 * remote with renamed types or fields), a refusal (a namespaced subscription no plan can serve),
 * or `undefined` (sent as it is, or delegated).
 */
export function subscriptionPlanFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger | undefined,
): Plan | { refusal: string } | undefined {
  const decision = decisionFor(schema, document, operationName, logger);
  if (!decision || 'fallback' in decision) return undefined;
  return 'plan' in decision ? (decision.plan.operation === 'subscription' ? decision.plan : undefined) : decision;
}

function decisionFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  logger: Logger | undefined,
): PlanDecision | undefined {
  let cache = caches.get(schema);
  if (!cache) {
    cache = new LRUCache({ max: MAX_PLANNED_DOCUMENTS });
    caches.set(schema, cache);
  }
  let decisions = cache.get(document);
  if (!decisions) {
    decisions = new Map();
    cache.set(document, decisions);
  }
  if (decisions.has(operationName)) return decisions.get(operationName);
  const decision = compilePlan(schema, document, operationName);
  decisions.set(operationName, decision);
  if (decision && 'fallback' in decision) {
    const name = decision.operationName;
    logger?.debug(`remote schemas: operation ${name ? `"${name}" ` : ''}executed with delegation: ${decision.fallback}`);
  }
  return decision;
}
