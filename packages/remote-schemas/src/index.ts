export { createRemoteSchemaRegistry } from './registry.js';
export { useRemoteSchemas, remoteOperationRunner, remoteSubscriptionRunner } from './plugin.js';
export { RemoteSchemaError, httpExceptionMessage } from './errors.js';
export { isPushable, type PushableStream } from './subscriptions.js';
export type {
  ClientHeaders,
  ForwardedSession,
  Logger,
  RemoteRequestEvent,
  RemoteSchemaHooks,
  SchemaSwapEvent,
  SubscriptionRefusedEvent,
  RemoteSchemaRegistryOptions,
} from './options.js';
export type {
  FieldNamesCustomization,
  PlanOptions,
  RegistryPlan,
  RemoteSchemaCustomization,
  RemoteSchemaDefinition,
  RemoteSchemaEntry,
  RemoteSchemaErrorCode,
  RemoteSchemaHeader,
  RemoteSchemaPermission,
  RegistryPermissions,
  RemoteSchemaProblem,
  RemoteSchemaRegistry,
  TypeNamesCustomization,
} from './types.js';
export type {
  RemoteFieldCall,
  RemoteFieldPath,
  RemoteRelationship,
  RemoteRelationshipBatch,
  RemoteRelationshipDefinition,
  ToRemoteSchemaRelationship,
} from './relationships/types.js';
