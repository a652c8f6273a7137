import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Session } from '@svc-graphql/jwt-session';
import { remoteSubscriptionRunner, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import { laneDecisions } from '../lane-decisions.js';

/**
 * The graphql-ws lane: a subscription that one remote answers as it is sent (every root field of
 * that remote, no customization, no relationship) is started without Envelop's per-operation hooks,
 * as the HTTP direct lane answers queries before Yoga. The document is parsed with the same caches
 * and limits, validated against the session's schema once per (schema, document, operation name),
 * and the remote-schemas runner does what the remote schemas plugin does for it (role check,
 * variables, presets, the shared upstream subscription, revalidation after swaps). What it saves
 * is what a subscriber holds while it is open: no Fetch `Request`, no GraphQL context built by
 * Yoga, no chain of per-plugin stream wrappers (a few KiB per subscriber, which ten thousand
 * subscribers multiply).
 *
 * Everything else goes through Envelop as before: queries and mutations, admin's operations (whose
 * errors Envelop marks), documents that do not parse or validate, subscriptions with relationships or to customized remotes, and anything that mixes remotes.
 */
export interface SubscriptionLaneOptions {
  registry: RemoteSchemaRegistry;
  /** The parse of the other paths, with their caches and limits; `undefined` when it fails. */
  documentOf: (text: string) => DocumentNode | undefined;
}

/** How the lane starts one operation of a document, decided once. */
interface Decision {
  /** The operation's own name (for logs and spans). */
  name: string | null;
  /** Starts it: its stream of results, or a single result that refuses it. */
  subscribe: (args: ExecutionArgs) => ExecutionResult | AsyncIterableIterator<ExecutionResult>;
}

/** A subscription the lane starts: its decision, with the schema and document it was made for. */
export interface LaneOperation extends Decision {
  schema: GraphQLSchema;
  document: DocumentNode;
}

export interface SubscriptionLane {
  /** The subscription `query` names for `session`, when the lane starts it; `undefined`: Envelop does. */
  find(session: Session, query: string, operationName: string | null): LaneOperation | undefined;
}

export function createSubscriptionLane(options: SubscriptionLaneOptions): SubscriptionLane {
  const { registry, documentOf } = options;
  // Per schema, document and operation name: how the lane starts it, or none.
  const decisionOf = laneDecisions<Decision>((schema, document, operation, operationName) => {
    if (operation.operation !== 'subscription') return undefined;
    const subscribe = remoteSubscriptionRunner(registry, schema, document, operationName);
    return subscribe && { name: operation.name?.value ?? null, subscribe };
  });

  return {
    find(session, query, operationName) {
      // Admin's errors are marked on their way out of Envelop's execution (they are shown whole).
      if (session.isAdmin) return undefined;
      const document = documentOf(query);
      if (document === undefined) return undefined;
      const schema = registry.schemaFor(session);
      const decision = decisionOf(schema, document, operationName);
      return decision && { schema, document, ...decision };
    },
  };
}
