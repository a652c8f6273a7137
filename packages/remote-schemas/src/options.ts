import type { GraphQLSchema } from 'graphql';

/** The part of a request's session the remote is told about (by default `context.session`). */
export interface ForwardedSession {
  role: string;
  /** Lower-cased names that keep their prefix, e.g. `x-svc-user-id`. */
  variables: Record<string, string>;
  /**
   * Admin sees remote URLs in errors as configured; every other session sees them without user,
   * password, query string and fragment.
   * @default false
   */
  isAdmin?: boolean;
}

/** Headers of the client request: a Fetch `Headers`, or a Node-style record. */
export type ClientHeaders = Headers | Record<string, string | string[] | undefined>;

export interface Logger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** What a call to a remote for a client's query or mutation came to. */
export interface RemoteRequestEvent {
  /** The remote schema's name, as configured. */
  remoteSchema: string;
  /**
   * `ok`: a GraphQL response without errors; `timeout`: no answer within the remote's
   * `timeout_seconds`; `error`: anything else (the call failed, the answer was not a GraphQL
   * response or was too large, or it carried errors).
   */
  outcome: 'ok' | 'error' | 'timeout';
  /** From just before the request was sent to the answer read (or the failure). */
  durationSeconds: number;
}

/** Callbacks for metrics; each is called synchronously and must not throw (a throw is logged). */
export interface RemoteSchemaHooks {
  /**
   * After each HTTP call to a remote for a client operation (query or mutation; not introspection,
   * not subscriptions), with the GraphQL context of the client's request.
   */
  onRemoteRequest?(event: RemoteRequestEvent, context: unknown): void;
  /**
   * After each schema swap (the registry committed a new live schema, retries included), with the
   * names of the remote schemas it was planned from (those that failed to load included).
   */
  onSchemaSwap?(event: SchemaSwapEvent): void;
  /** A subscription refused because its remote has `maxSubscriptionsPerRemote` open already. */
  onSubscriptionRefused?(event: SubscriptionRefusedEvent): void;
}

export interface SubscriptionRefusedEvent {
  /** The remote schema's name, as configured. */
  readonly remoteSchema: string;
}

export interface SchemaSwapEvent {
  /** The names of the remote schemas of the committed plan, in order, loaded or not. */
  readonly remoteSchemas: readonly string[];
}

export interface RemoteSchemaRegistryOptions {
  /**
   * The schema the remotes are stitched next to. Its resolvers are kept.
   * @default `type Query { no_queries_available: String }` (as Hasura); that placeholder field is
   * dropped as soon as a remote contributes a query field.
   */
  localSchema?: GraphQLSchema;
  /** @default warnings and errors to the console, nothing else */
  logger?: Logger;
  /**
   * Used for introspection, queries and mutations instead of the default transport.
   * @default node:http(s) with keep-alive agents (cheaper per request than `fetch`)
   */
  fetch?: typeof fetch;
  /**
   * Background retry of remotes that could not be reached (start, reload, update); `false` turns it off.
   * @default { initialDelayMs: 1000, maxDelayMs: 60000 }
   */
  retry?: { initialDelayMs?: number; maxDelayMs?: number } | false;
  /** Prefix of session variables and of the headers never forwarded from clients. @default 'x-svc-' */
  sessionVariablePrefix?: string;
  /**
   * Reads the session from the GraphQL context; `undefined` sends no session headers (and is not
   * admin).
   * @default (context) => context.session (`role`, `variables`, and `isAdmin` when it is `true`)
   */
  getSession?: (context: unknown) => ForwardedSession | undefined;
  /**
   * Reads the client's request headers from the GraphQL context (used with `forward_client_headers`).
   * @default (context) => context.request?.headers (Yoga's Fetch Request)
   */
  getClientHeaders?: (context: unknown) => ClientHeaders | undefined;
  /**
   * Reads the request id from the GraphQL context: sent to remotes as `x-request-id` (HTTP calls,
   * and the `connection_init` headers of the graphql-ws connection a subscription opens). A
   * client's own `x-request-id` header is never forwarded as it is, even with
   * `forward_client_headers`: the id this returns (the server's checked one) is sent instead.
   * @default (context) => context.requestId, when it is a string
   */
  getRequestId?: (context: unknown) => string | undefined;
  /**
   * Reads the operation's abort signal from the GraphQL context: once it aborts (a time limit
   * passed, the client went away), the operation's queries and mutations still waiting for a
   * remote are abandoned (their sockets closed) and none is sent any more; each answers
   * `remote-schema-error`, and no warning is logged for it. Subscriptions are not affected.
   * @default none: calls end with their answer or their remote's `timeout_seconds`
   */
  getSignal?: (context: unknown) => AbortSignal | undefined;
  /** Never forwarded to a remote, whatever the configuration. @default 'x-svc-admin-secret' */
  adminSecretHeader?: string;
  /**
   * The largest answer taken from a remote, in bytes: an HTTP body (introspection, queries,
   * mutations) or one graphql-ws message. A larger one is never buffered: the call fails as soon as
   * the declared `Content-Length`, or the bytes received so far, pass the limit, and answers the
   * `remote-schema-error` result (a subscription ends with the WebSocket's: `WebSocket exception
   * occurred while subscribing to "<ws url>"`).
   * @default 67108864 (64 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Sockets the default transport opens to one remote origin at most; further calls wait for a free
   * one (still bounded by the remote's `timeout_seconds`). Does not apply to a given `fetch`.
   * @default 128
   */
  maxSocketsPerRemote?: number;
  /**
   * Subscriptions to one remote at most, open at once (each client subscription counts, shared
   * upstream or not). Every subscriber keeps its own session upstream, so clients choose how many
   * upstream connections are open; this bounds them: past it, a subscription ends at once with
   * `remote-schema-error` `too many subscriptions to remote schema "<name>"`, a warning is logged
   * and `hooks.onSubscriptionRefused` is called.
   * @default 20000
   */
  maxSubscriptionsPerRemote?: number;
  /** @deprecated The former name of `maxSubscriptionsPerRemote` (used when that one is not given). */
  maxSubscriptionConnectionsPerRemote?: number;
  /**
   * Serve each role only what its permission on a remote grants (`RemoteSchemaEntry.permissions`).
   * On: `plan()` checks every permission of every loaded remote against the remote's own schema
   * and reports those that do not fit; `schemaFor(session)` answers admin the live schema, a
   * request without a session the local schema alone, and any other role its own schema, with nothing of a remote where
   * it has no consistent permission; preset arguments and input fields are filled in from the
   * permission (and the session) on the way to the remote. Off: permissions are ignored and every
   * role sees the live schema.
   * @default false
   */
  enableRemoteSchemaPermissions?: boolean;
  /**
   * Role schemas kept at once per live state (least recently used go first; one is built again,
   * in a few milliseconds, when its role comes back). Every swap starts with an empty cache.
   * @default 1000
   */
  maxRoleSchemas?: number;
  /** Callbacks for metrics (calls to remotes, schema swaps). */
  hooks?: RemoteSchemaHooks;
}

export interface NormalizedOptions {
  localSchema: GraphQLSchema | undefined;
  logger: Logger;
  fetch: typeof fetch | undefined;
  retry: { initialDelayMs: number; maxDelayMs: number } | false;
  sessionVariablePrefix: string;
  getSession: (context: unknown) => ForwardedSession | undefined;
  getClientHeaders: (context: unknown) => ClientHeaders | undefined;
  getRequestId: (context: unknown) => string | undefined;
  getSignal: (context: unknown) => AbortSignal | undefined;
  adminSecretHeader: string;
  maxResponseBytes: number;
  maxSocketsPerRemote: number;
  maxSubscriptionsPerRemote: number;
  enableRemoteSchemaPermissions: boolean;
  maxRoleSchemas: number;
  hooks: RemoteSchemaHooks;
}

const noop = () => {};

const defaultLogger: Logger = {
  debug: noop,
  info: noop,
  warn: (...args) => console.warn(...args),
  error: (...args) => console.error(...args),
};

function property(value: unknown, key: string): unknown {
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function defaultGetSession(context: unknown): ForwardedSession | undefined {
  return sessionShape(property(context, 'session'));
}

/**
 * What an app's session object is to the registry: a string `role`, `variables` an object (none:
 * `{}`), admin only when `isAdmin` is `true` itself (`"true"` or `1` is not admin); anything
 * without a string role is no session.
 */
function sessionShape(session: unknown): ForwardedSession | undefined {
  if (!session || typeof session !== 'object') return undefined;
  const role = property(session, 'role');
  if (typeof role !== 'string') return undefined;
  const variables = property(session, 'variables');
  // A copy of what was read, once: a getter cannot answer one thing here and another later.
  return {
    role,
    variables: variables && typeof variables === 'object' && !Array.isArray(variables) ? (variables as Record<string, string>) : {},
    isAdmin: property(session, 'isAdmin') === true,
  };
}

/** An app's `getSession`, its answers taken as {@link sessionShape} reads them. */
function checkedGetSession(getSession: (context: unknown) => unknown): (context: unknown) => ForwardedSession | undefined {
  return (context) => sessionShape(getSession(context));
}

/** The options {@link createRemoteSchemaRegistry} takes. */
const OPTION_KEYS = [
  'localSchema',
  'logger',
  'fetch',
  'retry',
  'sessionVariablePrefix',
  'getSession',
  'getClientHeaders',
  'getRequestId',
  'getSignal',
  'adminSecretHeader',
  'maxResponseBytes',
  'maxSocketsPerRemote',
  'maxSubscriptionsPerRemote',
  'maxSubscriptionConnectionsPerRemote',
  'enableRemoteSchemaPermissions',
  'maxRoleSchemas',
  'hooks',
];

function defaultGetClientHeaders(context: unknown): ClientHeaders | undefined {
  const headers = property(property(context, 'request'), 'headers');
  return headers && typeof headers === 'object' ? (headers as ClientHeaders) : undefined;
}

function noSignal(): undefined {
  return undefined;
}

function defaultGetRequestId(context: unknown): string | undefined {
  const id = property(context, 'requestId');
  return typeof id === 'string' ? id : undefined;
}

function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`createRemoteSchemaRegistry: expected "${name}" to be a positive number, but got ${String(value)}`);
  }
  return value;
}

function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`createRemoteSchemaRegistry: expected "${name}" to be a positive integer, but got ${String(value)}`);
  }
  return value;
}

/** Fills in defaults; a bad option throws a `TypeError` naming it. */
export function normalizeOptions(options: RemoteSchemaRegistryOptions = {}): NormalizedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('createRemoteSchemaRegistry: expected the options to be an object');
  // A misspelt option (`enableRemoteSchemaPermission`) would otherwise be left out in silence.
  // Own and inherited enumerable keys: a misspelt option on a prototype is one too.
  for (const key in options) {
    if (!OPTION_KEYS.includes(key)) throw new TypeError(`createRemoteSchemaRegistry: "${key}" is not an option`);
  }
  for (const name of ['getSession', 'getClientHeaders'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new TypeError(`createRemoteSchemaRegistry: expected "${name}" to be a function, but got ${typeof options[name]}`);
    }
  }
  if (options.logger !== undefined && !['debug', 'info', 'warn', 'error'].every((level) => typeof property(options.logger, level) === 'function')) {
    throw new TypeError('createRemoteSchemaRegistry: expected "logger" to have debug, info, warn and error functions');
  }
  const fetchFn = options.fetch;
  if (fetchFn !== undefined && typeof fetchFn !== 'function') {
    throw new TypeError(`createRemoteSchemaRegistry: expected "fetch" to be a function, but got ${typeof fetchFn}`);
  }
  if (options.getRequestId !== undefined && typeof options.getRequestId !== 'function') {
    throw new TypeError(`createRemoteSchemaRegistry: expected "getRequestId" to be a function, but got ${typeof options.getRequestId}`);
  }
  if (options.getSignal !== undefined && typeof options.getSignal !== 'function') {
    throw new TypeError(`createRemoteSchemaRegistry: expected "getSignal" to be a function, but got ${typeof options.getSignal}`);
  }
  const prefix = (options.sessionVariablePrefix ?? 'x-svc-').toLowerCase();
  if (prefix === '') throw new TypeError('createRemoteSchemaRegistry: "sessionVariablePrefix" must not be empty');
  const permissions = options.enableRemoteSchemaPermissions;
  if (permissions !== undefined && typeof permissions !== 'boolean') {
    throw new TypeError(
      `createRemoteSchemaRegistry: expected "enableRemoteSchemaPermissions" to be a boolean, but got ${typeof permissions}`,
    );
  }
  let retry: NormalizedOptions['retry'] = false;
  if (options.retry !== false) {
    const initialDelayMs = positive('retry.initialDelayMs', options.retry?.initialDelayMs, 1000);
    const maxDelayMs = positive('retry.maxDelayMs', options.retry?.maxDelayMs, 60_000);
    retry = { initialDelayMs, maxDelayMs: Math.max(initialDelayMs, maxDelayMs) };
  }
  return {
    localSchema: options.localSchema,
    logger: options.logger ?? defaultLogger,
    fetch: fetchFn,
    retry,
    sessionVariablePrefix: prefix,
    getSession: options.getSession === undefined ? defaultGetSession : checkedGetSession(options.getSession),
    getClientHeaders: options.getClientHeaders ?? defaultGetClientHeaders,
    getRequestId: options.getRequestId ?? defaultGetRequestId,
    getSignal: options.getSignal ?? noSignal,
    adminSecretHeader: (options.adminSecretHeader ?? `${prefix}admin-secret`).toLowerCase(),
    maxResponseBytes: positiveInteger('maxResponseBytes', options.maxResponseBytes, 64 * 1024 * 1024),
    maxSocketsPerRemote: positiveInteger('maxSocketsPerRemote', options.maxSocketsPerRemote, 128),
    maxSubscriptionsPerRemote:
      options.maxSubscriptionsPerRemote === undefined
        ? positiveInteger('maxSubscriptionConnectionsPerRemote', options.maxSubscriptionConnectionsPerRemote, 20_000)
        : positiveInteger('maxSubscriptionsPerRemote', options.maxSubscriptionsPerRemote, 20_000),
    enableRemoteSchemaPermissions: permissions ?? false,
    maxRoleSchemas: positiveInteger('maxRoleSchemas', options.maxRoleSchemas, 1000),
    hooks: normalizeHooks(options.hooks),
  };
}

function normalizeHooks(hooks: RemoteSchemaHooks | undefined): RemoteSchemaHooks {
  if (hooks === undefined) return {};
  if (typeof hooks !== 'object' || hooks === null) {
    throw new TypeError(`createRemoteSchemaRegistry: expected "hooks" to be an object, but got ${hooks === null ? 'null' : typeof hooks}`);
  }
  const normalized: RemoteSchemaHooks = {};
  for (const name of ['onRemoteRequest', 'onSchemaSwap', 'onSubscriptionRefused'] as const) {
    const hook = hooks[name];
    if (hook === undefined) continue;
    if (typeof hook !== 'function') {
      throw new TypeError(`createRemoteSchemaRegistry: expected "hooks.${name}" to be a function, but got ${typeof hook}`);
    }
  }
  if (hooks.onRemoteRequest) normalized.onRemoteRequest = hooks.onRemoteRequest.bind(hooks);
  if (hooks.onSchemaSwap) normalized.onSchemaSwap = hooks.onSchemaSwap.bind(hooks);
  if (hooks.onSubscriptionRefused) normalized.onSubscriptionRefused = hooks.onSubscriptionRefused.bind(hooks);
  return normalized;
}
