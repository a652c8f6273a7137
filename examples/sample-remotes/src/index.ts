import { createGeneratedSchema, type GeneratedSchemaOptions } from './generated-schema.js';
import { createDirectorySchema } from './directory-schema.js';
import { createOrdersSchema, createOrgsSchema, createUsersSchema } from './commerce-schemas.js';
import { createSampleSchema } from './sample-schema.js';
import { startSchemaServer, type RunningRemote, type StartOptions } from './server.js';

export type { ReceivedRequest, RunningRemote, StartOptions } from './server.js';
export type { GeneratedSchemaOptions } from './generated-schema.js';
export type { SampleContext } from './sample-schema.js';
export { createSampleSchema, sampleTypeDefs } from './sample-schema.js';
export { createGeneratedSchema } from './generated-schema.js';
export { createDirectorySchema, directoryTypeDefs } from './directory-schema.js';
export {
  createOrdersSchema,
  createOrgsSchema,
  createUsersSchema,
  orderRecord,
  ordersTypeDefs,
  orgsTypeDefs,
  userRecord,
  usersTypeDefs,
} from './commerce-schemas.js';
export type { OrderRecord, UserRecord } from './commerce-schemas.js';
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

/**
 * Starts the directory remote: an interface `Node` and a union `SearchResult` of `User`, `Post` and
 * `Secret`, enums `Role` and `Visibility`, and subscriptions (`nodeAdded`, `roleChanged`,
 * `userUpdated`) that emit until they are stopped; for tests of what narrow roles are answered.
 */
export function startDirectoryRemote(options: StartOptions = {}): Promise<RunningRemote> {
  return startSchemaServer(createDirectorySchema(), options);
}

/** The commerce services for remote relationships: orders, users and organizations (see commerce-schemas.ts). */
export const COMMERCE_SCHEMAS = { orders: createOrdersSchema, users: createUsersSchema, orgs: createOrgsSchema } as const;

/** Starts one of the commerce services (`orders`, `users` or `orgs`). */
export function startCommerceRemote(schema: keyof typeof COMMERCE_SCHEMAS, options: StartOptions = {}): Promise<RunningRemote> {
  return startSchemaServer(COMMERCE_SCHEMAS[schema](), options);
}
