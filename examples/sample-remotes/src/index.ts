import { createGeneratedSchema, type GeneratedSchemaOptions } from './generated-schema.js';
import { createSampleSchema } from './sample-schema.js';
import { startSchemaServer, type RunningRemote, type StartOptions } from './server.js';

export type { ReceivedRequest, RunningRemote, StartOptions } from './server.js';
export type { GeneratedSchemaOptions } from './generated-schema.js';
export type { SampleContext } from './sample-schema.js';
export { createSampleSchema, sampleTypeDefs } from './sample-schema.js';
export { createGeneratedSchema } from './generated-schema.js';
export { startSchemaServer } from './server.js';

export interface SampleRemoteOptions extends StartOptions {
  /** Returned by the `remoteName` query, to tell remotes apart. @default 'sample' */
  name?: string;
}

/**
 * Starts the sample remote: queries (`hello`, `user`, `users`, `node`, `search`, `messages`, `boom`,
 * `slow`, `echoHeaders`), the mutation `addMessage` and the subscriptions `countdown`,
 * `messageAdded` and `echoHeaders`, over HTTP and graphql-ws at `/graphql`.
 */
export function startSampleRemote(options: SampleRemoteOptions = {}): Promise<RunningRemote> {
  return startSchemaServer(createSampleSchema(options.name ?? 'sample'), options);
}

/** Starts a remote whose schema has `types` generated object types (see `createGeneratedSchema`). */
export function startGeneratedRemote(options: GeneratedSchemaOptions & StartOptions): Promise<RunningRemote> {
  return startSchemaServer(createGeneratedSchema(options), options);
}
