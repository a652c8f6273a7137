import type { ExecutionResult, GraphQLSchema } from 'graphql';
import type { RemoteClient } from './remote-client.js';
import type { PublicRemoteSchema } from './remote-schema.js';

/** A remote that answered and whose schema is built, ready to be composed. */
export interface LoadedRemote {
  name: string;
  /** The definition as configured (JSON), to tell whether a later plan may reuse this. */
  key: string;
  client: RemoteClient;
  introspection: ExecutionResult;
  /**
   * The remote's own schema as introspected, before any customization: permissions are checked
   * against it and presets are added to requests in its names.
   */
  own: GraphQLSchema;
  /**
   * The schema `public` is built from: `own`, or a copy of it whose built-in scalars a type name
   * mapping renamed. A role's part of the remote is cut from it.
   */
  base: GraphQLSchema;
  public: PublicRemoteSchema;
  /** Builds the public schema of a part of `base` (a role's) as `public` was built: same customization, same client. */
  publicOf(part: GraphQLSchema): PublicRemoteSchema;
  /**
   * No customization: an operation that touches only this remote can be sent to it as it is
   * (the fast path), without delegation.
   */
  forwardable: boolean;
}
