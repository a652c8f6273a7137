/**
 * The part of `@svc-graphql/remote-schemas` this package drives. `@svc-graphql/remote-schemas`
 * does not re-export its types from its index yet, and packages only import each other's index, so
 * the shapes are declared here structurally identical to `packages/remote-schemas/src/types.ts`:
 * a real registry is assignable to them.
 */
import type { ExecutionResult, GraphQLSchema } from 'graphql';

/** A header sent to the remote: a literal value, or one read from the environment at call time. */
export type RemoteSchemaHeader = { name: string; value: string } | { name: string; value_from_env: string };

export interface TypeNamesCustomization {
  prefix?: string;
  suffix?: string;
  mapping?: Record<string, string>;
}

export interface FieldNamesCustomization {
  parent_type: string;
  prefix?: string;
  suffix?: string;
  mapping?: Record<string, string>;
}

export interface RemoteSchemaCustomization {
  root_fields_namespace?: string;
  type_names?: TypeNamesCustomization;
  field_names?: FieldNamesCustomization[];
}

/** RemoteSchemaDef (SPEC 2.4, CONTRACT 5). */
export interface RemoteSchemaDefinition {
  url?: string;
  url_from_env?: string;
  headers?: RemoteSchemaHeader[];
  forward_client_headers?: boolean;
  timeout_seconds?: number;
  customization?: RemoteSchemaCustomization;
}

export interface RemoteSchemaEntry {
  name: string;
  definition: RemoteSchemaDefinition;
}

export type RemoteSchemaErrorCode = 'remote-schema-error' | 'invalid-params' | 'invalid-configuration';

export interface RemoteSchemaProblem {
  name: string;
  code: RemoteSchemaErrorCode;
  message: string;
}

export interface RegistryPlan {
  readonly schema: GraphQLSchema;
  readonly problems: readonly RemoteSchemaProblem[];
}

export interface PlanOptions {
  reload?: Iterable<string> | 'all';
}

/** What the metadata service needs from `createRemoteSchemaRegistry()`. */
export interface RemoteSchemaRegistry {
  readonly schema: GraphQLSchema;
  onSchemaChange(listener: (schema: GraphQLSchema) => void): () => void;
  plan(desired: readonly RemoteSchemaEntry[], options?: PlanOptions): Promise<RegistryPlan>;
  commit(plan: RegistryPlan): void;
  problems(): readonly RemoteSchemaProblem[];
  introspect(name: string): Promise<ExecutionResult>;
  dispose(): Promise<void>;
}
