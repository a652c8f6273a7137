import { createMetadataService, type MetadataService } from '@svc-graphql/metadata-api';
import { createRemoteSchemaRegistry, type RemoteSchemaRegistry, type RemoteSchemaHooks } from '@svc-graphql/remote-schemas';
import type { MetadataStore } from '@svc-graphql/metadata-api';
import { errorMessage, ServerOptionError } from './errors.js';
import type { Cleanups } from './lifecycle.js';
import type { OperationSignals } from './lockdown/time-limit.js';
import type { Logger } from './observability/logger.js';
import type { ServerMetrics } from './observability/metrics.js';
import type { RequestRecords } from './request-record.js';
import { sessionOfRecord } from './session.js';
import type { ResolvedSettings } from './settings.js';
import { openStore } from './store.js';

export interface Metadata {
  store: MetadataStore;
  registry: RemoteSchemaRegistry;
  service: MetadataService;
}

export interface MetadataOptions {
  logger: Logger;
  metrics: ServerMetrics | undefined;
  /** Where the registry reads a request's session, id and headers (from the GraphQL context it is given). */
  records: RequestRecords;
  /** Where the registry finds the abort signal of an operation (its remote calls are abandoned with it). */
  signals: OperationSignals;
  /** A call to a remote for the request of `context` (its http-log entry counts them); absent: not counted. */
  onRemoteCall: ((context: unknown) => void) | undefined;
  cleanups: Cleanups;
}

/**
 * The remote schemas registry and the metadata service on the store `databaseUrl` names, with the
 * metadata loaded (a store that cannot be read at start is a {@link ServerOptionError} naming
 * `databaseUrl`). Both are released by `cleanups`.
 */
export async function openMetadata(settings: ResolvedSettings, options: MetadataOptions): Promise<Metadata> {
  const { logger, metrics, records, signals, onRemoteCall, cleanups } = options;
  const store = openStore(settings.databaseUrl, (message) => logger.warn(message));
  const hooks: RemoteSchemaHooks = {};
  if (metrics !== undefined || onRemoteCall !== undefined) {
    hooks.onRemoteRequest = (event, context) => {
      onRemoteCall?.(context);
      metrics?.countRemoteRequest(event.remoteSchema, event.outcome, event.durationSeconds);
    };
  }
  if (metrics !== undefined) {
    hooks.onSchemaSwap = (event) => metrics.countSchemaSwap(event.remoteSchemas);
    hooks.onSubscriptionRefused = (event) => metrics.countRefusedSubscription(event.remoteSchema);
  }
  const registry = createRemoteSchemaRegistry({
    logger,
    maxResponseBytes: settings.maxRemoteResponseSize,
    maxSubscriptionsPerRemote: settings.maxSubscriptionsPerRemote,
    // The role's schema and presets, the x-request-id sent on and the forwarded headers all come
    // from the request's record, whatever the context (Yoga's, graphql-ws's, the direct lane's).
    getSession: sessionOfRecord(records),
    getRequestId: (context) => records.of(context)?.id,
    getClientHeaders: (context) => records.of(context)?.headers,
    getSignal: signals.of,
    enableRemoteSchemaPermissions: settings.enableRemoteSchemaPermissions,
    hooks,
  });
  cleanups.add(() => registry.dispose(), 'closing the remote schemas');
  const service = createMetadataService({ registry, store, remoteSchemaPermissions: settings.enableRemoteSchemaPermissions, logger });
  cleanups.add(() => service.close(), 'closing the metadata store');
  metrics?.setMetadata({
    inconsistentObjects: () => service.inconsistentObjects().length,
    resourceVersion: () => service.resourceVersion(),
  });
  try {
    await service.init();
  } catch (error) {
    throw new ServerOptionError('databaseUrl', 'ERR_STORE_UNAVAILABLE', errorMessage(error), { cause: error });
  }
  return { store, registry, service };
}

/** The `/healthz` line of the metadata's state. */
export function healthOf(service: MetadataService, otherWarning?: string): string {
  if (!service.isStoreReachable()) return 'WARN: metadata store unreachable';
  if (!service.isConsistent()) return 'WARN: inconsistent metadata';
  return otherWarning ?? 'OK';
}

