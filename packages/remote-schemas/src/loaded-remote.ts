import type { ExecutionResult } from 'graphql';
import type { RemoteClient } from './remote-client.js';
import type { PublicRemoteSchema } from './remote-schema.js';

/** A remote that answered and whose schema is built, ready to be composed. */
export interface LoadedRemote {
  name: string;
  /** The definition as configured (JSON), to tell whether a later plan may reuse this. */
  key: string;
  client: RemoteClient;
  introspection: ExecutionResult;
  public: PublicRemoteSchema;
  /**
   * No customization: an operation that touches only this remote can be sent to it as it is
   * (the fast path), without delegation.
   */
  forwardable: boolean;
}
