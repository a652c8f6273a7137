import {
  GraphQLError,
  getIntrospectionQuery,
  print,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type Source,
} from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { RemoteSchemaError, asRequestErrors, remoteCallError, remoteErrors } from './errors.js';
import { forwardedHeaders, type HeaderPolicy } from './headers.js';
import { configuredHeaders, type ResolvedDefinition } from './definition.js';
import { PrintedLocations, type SentLocations } from './locations.js';
import { MAX_JSON_NESTING, jsonNestedDeeperThan, valueNestedDeeperThan } from './json-depth.js';
import { isGraphQLResponseShape } from './response-shape.js';
import type { ForwardedSession, NormalizedOptions } from './options.js';
import { guardAnswer, type AnswerGuard } from './permissions/answer-check.js';
import { answerPlanFor } from './permissions/answer-plan.js';
import { applyPresets } from './permissions/presets.js';
import { roleSchemaInfo, type RemoteAccess } from './permissions/role-schema.js';
import { noLongerPermitted } from './permissions/subscription-guard.js';
import { redactUrl, redactUrls } from './redact.js';
import { declaredVariables } from './sent-document.js';
import { SLICE_MS, parseJsonInSlices } from './slices.js';
import { SubscriptionPool, single, type EventFilter } from './subscriptions.js';
import { RemoteCallAbortedError, RemoteTimeoutError, type Transport } from './transport.js';
import { endRemoteSpan, startRemoteSpan } from './tracing.js';

export interface GraphQLRequestBody {
  query: string;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
}

/** An operation of a client request, for one remote. */
export interface RemoteRequest {
  /** In the remote's own names. */
  document: DocumentNode;
  /** The text of `document` to send unless presets change the document; `document` printed when absent. */
  text?: string | undefined;
  /** Where the positions of `text` come from in the client's document. */
  locations?: SentLocations | undefined;
  /**
   * The client's source, for a `document` without `text` (delegation's): its nodes copied from the
   * client's document point into it.
   */
  clientSource?: Source | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
  operationName?: string | null | undefined;
  /**
   * The schema the client's request runs on. A role's schema carries the role's grant on this
   * remote, whose presets are added here, right before sending.
   */
  schema: GraphQLSchema | undefined;
}

const printed = new WeakMap<DocumentNode, string>();

/** `print()` is costly; the same document object is printed once. */
export function printCached(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

/** A call to a remote that failed (logged), answered with the `remote-schema-error` result. */
const FAILED = Symbol('failed');
/** A call to a remote that had no answer within `timeout_seconds`, answered as `FAILED`. */
const TIMED_OUT = Symbol('timed out');

/**
 * What is sent for a request: the GraphQL body, where its text's positions come from, and how the
 * answer is guarded for a role (`undefined`: passed on as it is).
 */
interface Prepared {
  body: GraphQLRequestBody;
  locations: SentLocations;
  guard: AnswerGuard | undefined;
  /** The document the body's text is printed from (presets aside). */
  sent: DocumentNode;
}

/** The operations sent over HTTP; subscriptions go over graphql-ws. */
export type HttpOperation = 'query' | 'mutation';

/** Told by the registry when a client's subscriptions start using or stop using connections. */
export interface ClientHooks {
  onBusy(client: RemoteClient): void;
  onIdle(client: RemoteClient): void;
  /**
   * What `role` may use of the remote named `remote` in the live state now (`undefined`: nothing):
   * an open subscription's events are checked against the role's grant of the moment, not the
   * one it started with.
   */
  currentAccess(role: string, remote: string): RemoteAccess | undefined;
}

/** Talks to one remote: introspection, queries and mutations over HTTP, subscriptions over graphql-ws. */
export class RemoteClient {
  readonly name: string;
  readonly definition: ResolvedDefinition;
  /** The remote's URL without user, password, query string and fragment (computed once). */
  readonly publicUrl: string;
  /** The URL admin's errors name: as configured, or `{{VARIABLE}}` for one read from the environment. */
  readonly adminUrl: string;
  readonly subscriptions: SubscriptionPool;
  readonly #options: NormalizedOptions;
  readonly #policy: HeaderPolicy;

  readonly #transport: Transport;
  readonly #hooks: ClientHooks | undefined;

  constructor(
    name: string,
    definition: ResolvedDefinition,
    options: NormalizedOptions,
    transport: Transport,
    hooks?: ClientHooks,
  ) {
    this.name = name;
    this.#transport = transport;
    this.#hooks = hooks;
    this.definition = definition;
    // A URL read from the environment is the variable's value: no answer shows it, not even to
    // admin; errors name the variable as the metadata API does.
    const fromEnv = definition.urlEnv === undefined ? undefined : `{{${definition.urlEnv}}}`;
    this.publicUrl = fromEnv ?? redactUrl(definition.url);
    this.adminUrl = fromEnv ?? definition.url;
    this.#options = options;
    this.#policy = {
      sessionVariablePrefix: options.sessionVariablePrefix,
      adminSecretHeader: options.adminSecretHeader,
    };
    this.subscriptions = new SubscriptionPool({
      name,
      url: definition.url,
      adminUrl: this.adminUrl,
      publicUrl: this.publicUrl,
      timeoutMs: definition.timeoutMs,
      logger: options.logger,
      maxMessageBytes: options.maxResponseBytes,
      maxSubscriptions: options.maxSubscriptionsPerRemote,
      onRefused: () => {
        try {
          options.hooks.onSubscriptionRefused?.({ remoteSchema: name });
        } catch (error) {
          options.logger.error(`remote schema "${name}": the onSubscriptionRefused hook failed:`, error);
        }
      },
      ...(hooks ? { onBusy: () => hooks.onBusy(this), onIdle: () => hooks.onIdle(this) } : {}),
    });
  }

  /** The headers a request with `session` in `context` sends to this remote. */
  #headers(session: ForwardedSession | undefined, context: unknown): Record<string, string> {
    const headers = forwardedHeaders(
      {
        configured: configuredHeaders(this.definition),
        forwardClientHeaders: this.definition.forwardClientHeaders,
        session,
        clientHeaders: context === undefined ? undefined : this.#options.getClientHeaders(context),
      },
      this.#policy,
    );
    // The request's id (a header the remote schema's configuration sets keeps its value).
    const requestId = context === undefined ? undefined : this.#options.getRequestId(context);
    if (requestId !== undefined && headers['x-request-id'] === undefined) headers['x-request-id'] = requestId;
    return headers;
  }

  #session(context: unknown): ForwardedSession | undefined {
    return context === undefined ? undefined : this.#options.getSession(context);
  }

  /**
   * The body to send for `request`, with the presets of the role's grant when the request runs on
   * a role's schema; or the errors that answer the call instead (a session variable a preset needs
   * is missing or cannot be coerced). For a role, also how its answer is guarded (what its grant
   * hides, and the document asking `__typename` where a check needs it). With permissions
   * enforced, a request of a role that does not run on a schema built for it is never sent: it
   * would skip the role's presets and checks.
   */
  #prepare(request: RemoteRequest, session: ForwardedSession | undefined): Prepared | ExecutionResult {
    const role = roleSchemaInfo(request.schema);
    if (this.#options.enableRemoteSchemaPermissions && session && session.isAdmin !== true && role?.role !== session.role) {
      this.#options.logger.error(
        `remote schema "${this.name}": a request of role "${session.role}" does not run on that role's schema; not sent ` +
          '(is the session found before the schema is chosen? see getSession)',
      );
      return { errors: [new GraphQLError('the request cannot be sent to the remote schema', { extensions: { code: 'unexpected', path: '$' } })] };
    }
    const access = role?.remotes.get(this.name);
    let { document } = request;
    let variables = declaredVariables(document, request.operationName, request.variables);
    // A value nested deeper than JSON can be written out: an error of the request, not of the remote call.
    if (variables && valueNestedDeeperThan(variables)) return nestedTooDeeply();
    let { text, locations } = request;
    if (role && !access) {
      return { errors: [new GraphQLError('the request cannot be sent to the remote schema', { extensions: { code: 'unexpected', path: '$' } })] };
    }
    const source = locations?.source ?? request.clientSource;
    let guard: AnswerGuard | undefined;
    if (access) {
      const plan = answerPlanFor(document, request.operationName, access.grant, access.schema);
      guard = { grant: access.grant, remote: access.schema, plan };
      // A document that also asks `__typename` somewhere: printed (its other nodes keep their places).
      if (plan && plan.document !== document) {
        document = plan.document;
        text = undefined;
        locations = undefined;
      }
    }
    const sent = document;
    if (access?.grant.hasPresets) {
      const outcome = applyPresets({ document, variables, source }, access.schema, access.grant, session, this.#options.sessionVariablePrefix);
      if ('errors' in outcome) {
        if (outcome.detail) this.#options.logger.warn(`remote schema "${this.name}": role "${session?.role}": ${outcome.detail}`);
        return { errors: outcome.errors };
      }
      // The rewritten text, printed from a template compiled once per document and grant.
      if (outcome.text !== undefined) {
        text = outcome.text;
        locations = outcome.locations;
      }
      // Only what the text sent declares: a preset may have taken a variable's place.
      variables = outcome.document ? declaredVariables(outcome.document, request.operationName, outcome.variables) : outcome.variables;
    }
    if (text === undefined) {
      text = printCached(document);
      locations = undefined;
    }
    return {
      body: {
        query: text,
        variables: (variables ?? null) as Record<string, unknown> | null,
        operationName: request.operationName ?? null,
      },
      locations: locations ?? new PrintedLocations(document, text, source),
      guard,
      sent,
    };
  }

  /**
   * A query or mutation of the client request whose GraphQL context is `context`; the call is
   * reported to `hooks.onRemoteRequest` (a request answered without a call, e.g. refused for a
   * missing session variable, is not).
   */
  async send(request: RemoteRequest, context: unknown, operation: HttpOperation): Promise<ExecutionResult> {
    const session = this.#session(context);
    const prepared = this.#prepare(request, session);
    if (!('body' in prepared)) return prepared;
    const { body, locations, guard } = prepared;
    const admin = session?.isAdmin === true;
    const onRemoteRequest = this.#options.hooks.onRemoteRequest;
    const started = onRemoteRequest === undefined ? 0 : performance.now();
    const signal = context === undefined ? undefined : this.#options.getSignal(context);
    const answer = await this.#exchange(body, this.#headers(session, context), operation, false, locations, signal);
    if (onRemoteRequest !== undefined) {
      const outcome = answer === TIMED_OUT ? 'timeout' : answer === FAILED || answer.errors?.length ? 'error' : 'ok';
      try {
        onRemoteRequest({ remoteSchema: this.name, outcome, durationSeconds: (performance.now() - started) / 1000 }, context);
      } catch (error) {
        this.#options.logger.error(`remote schema "${this.name}": the onRemoteRequest hook failed:`, error);
      }
    }
    if (typeof answer === 'symbol') return { errors: [remoteCallError(admin ? this.adminUrl : this.publicUrl)] };
    return guard ? guardAnswer(guard, answer) : answer;
  }

  /** A subscription of the client request whose GraphQL context is `context`. */
  subscribe(request: RemoteRequest, context: unknown): AsyncIterableIterator<ExecutionResult> {
    const session = this.#session(context);
    const prepared = this.#prepare(request, session);
    if (!('body' in prepared)) return single(prepared);
    const filter = prepared.guard && session ? this.#eventFilter(request, session.role, prepared) : undefined;
    return this.subscriptions.subscribe(prepared.body, this.#headers(session, context), session?.isAdmin === true, prepared.locations, filter);
  }

  /**
   * Each event of a role's subscription guarded by the role's grant of the moment: a permission
   * changed since the subscription started is applied to the events that follow. When the role
   * lost this remote, or its new grant needs another document than the one sent (a `__typename`
   * the remote was not asked for), the subscription ends with the error of a subscription no
   * longer permitted.
   */
  #eventFilter(request: RemoteRequest, role: string, prepared: Prepared): EventFilter {
    let guard = prepared.guard!;
    const sentText = printCached(prepared.sent);
    return (event) => {
      const access = this.#hooks?.currentAccess(role, this.name);
      if (this.#hooks && access?.grant !== guard.grant) {
        const plan = access && answerPlanFor(request.document, request.operationName, access.grant, access.schema);
        if (!access || printCached(plan?.document ?? request.document) !== sentText) {
          return { result: { errors: [noLongerPermitted()] }, last: true };
        }
        guard = { grant: access.grant, remote: access.schema, plan };
      }
      return { result: guardAnswer(guard, event), last: false };
    };
  }

  /**
   * One POST to the remote, bounded by `timeout_seconds`. Never rejects: a failed call, a timeout,
   * an answer over `maxResponseBytes` or one that is not a GraphQL response becomes the
   * `remote-schema-error` result, which names the URL as configured for admin (`admin`) and
   * without credentials for anyone else. Only a query may be sent twice (see `Transport`).
   * `locations` places the locations of the remote's errors in the client's document.
   */
  async post(
    body: GraphQLRequestBody,
    headers: Record<string, string>,
    operation: HttpOperation,
    admin: boolean,
    inSlices = false,
    locations?: SentLocations,
  ): Promise<ExecutionResult> {
    const answer = await this.#exchange(body, headers, operation, inSlices, locations);
    return typeof answer === 'symbol' ? { errors: [remoteCallError(admin ? this.adminUrl : this.publicUrl)] } : answer;
  }

  /**
   * The remote's GraphQL response, or why there is none: `TIMED_OUT` (no answer within
   * `timeout_seconds`) or `FAILED` (any other failure, logged; or the operation's `signal`
   * aborted, not logged: whoever aborted it answers the client). Never rejects.
   */
  async #exchange(
    body: GraphQLRequestBody,
    headers: Record<string, string>,
    operation: HttpOperation,
    inSlices = false,
    locations?: SentLocations,
    signal?: AbortSignal,
  ): Promise<ExecutionResult | typeof FAILED | typeof TIMED_OUT> {
    const { url, timeoutMs } = this.definition;
    const sent = { accept: 'application/graphql-response+json, application/json', ...headers, 'content-type': 'application/json' };
    // A CLIENT span (a no-op without an OpenTelemetry SDK) whose `traceparent` the remote receives.
    const span = startRemoteSpan(this.name, url, sent);
    try {
      const response = await this.#transport(url, sent, JSON.stringify(body), timeoutMs, operation === 'query', signal);
      // A large answer (an introspection result) is parsed in slices, not in one block.
      const json = inSlices
        ? await parseJsonInSlices(response.text, SLICE_MS).then((value) => readGraphQLResponse(value, locations), () => undefined)
        : parseGraphQLResponse(response.text, locations);
      if (json) {
        endRemoteSpan(span, response.status);
        return json;
      }
      endRemoteSpan(span, response.status, 'invalid_graphql_response');
      this.#options.logger.warn(
        `remote schema "${this.name}": answer from "${this.publicUrl}" is not a GraphQL response (status ${response.status})`,
      );
    } catch (error) {
      endRemoteSpan(span, undefined, error instanceof Error ? error.name : 'error');
      if (error instanceof RemoteCallAbortedError) return FAILED;
      this.#options.logger.warn(`remote schema "${this.name}": request to "${this.publicUrl}" failed:`, describeError(error));
      if (error instanceof RemoteTimeoutError) return TIMED_OUT;
    }
    return FAILED;
  }

  /** The executor used by delegation (customized remotes, or operations that mix sources). */
  readonly executor: Executor = ((request: ExecutionRequest) => {
    const remoteRequest: RemoteRequest = {
      document: request.document,
      variables: request.variables,
      operationName: request.operationName,
      // The gateway field being resolved: its schema is the one the client's request runs on.
      schema: request.info?.schema,
      clientSource: request.info?.operation.loc?.source,
    };
    if (request.operationType === 'subscription') return this.subscribe(remoteRequest, request.context);
    return this.send(remoteRequest, request.context, request.operationType === 'mutation' ? 'mutation' : 'query');
  }) as Executor;

  /**
   * The remote's introspection result; throws `remote-schema-error` when it cannot be had. The
   * message names the URL without credentials: it reaches the metadata API's answers and logs.
   */
  async introspect(): Promise<ExecutionResult> {
    const result = await this.post(
      { query: getIntrospectionQuery() },
      forwardedHeaders(
        { configured: configuredHeaders(this.definition), forwardClientHeaders: false, session: undefined, clientHeaders: undefined },
        this.#policy,
      ),
      'query',
      false,
      true,
    );
    if (result.errors?.length || !result.data) {
      const first = result.errors?.[0];
      const message = first?.message ?? 'the introspection result has no data';
      throw new RemoteSchemaError(
        'remote-schema-error',
        first?.extensions?.['code'] === 'remote-schema-error' ? message : `introspection of "${this.publicUrl}" failed: ${message}`,
      );
    }
    return result;
  }

  /** Ends its subscriptions (`removed`: with an error saying that its remote schema was removed). */
  dispose(removed = false): Promise<void> {
    return this.subscriptions.dispose(removed);
  }
}

/** The answer to variable values nested more deeply than the gateway writes JSON. */
function nestedTooDeeply(): ExecutionResult {
  const message = `variable values are nested too deeply: more than ${MAX_JSON_NESTING} levels`;
  return { errors: asRequestErrors([new GraphQLError(message, { extensions: { code: 'validation-failed', path: '$' } })]) };
}

function parseGraphQLResponse(text: string, locations: SentLocations | undefined): ExecutionResult | undefined {
  // An answer nested deeper than any operation asks is not GraphQL (and would overflow the stack of what writes it out).
  if (jsonNestedDeeperThan(text)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  return readGraphQLResponse(json, locations);
}

/**
 * A remote's GraphQL response, `undefined` when it is not one. An answer without `data` is the
 * remote refusing the request before executing it: it keeps no `data`, and its errors are request
 * errors (see `asRequestErrors`).
 */
function readGraphQLResponse(json: unknown, locations: SentLocations | undefined): ExecutionResult | undefined {
  // Anything but the GraphQL response shape is no answer (`{"data":"x"}` would otherwise reach the
  // client as it is on the fast path); nor is one without data whose errors are an empty list.
  if (!isGraphQLResponseShape(json)) return undefined;
  const { data, errors, extensions } = json;
  if (data === undefined && errors?.length === 0) return undefined;
  const result: ExecutionResult = data === undefined ? {} : { data };
  if (errors !== undefined && errors.length > 0) {
    const converted = remoteErrors(errors, locations);
    result.errors = data === undefined ? asRequestErrors(converted) : converted;
  }
  if (extensions && typeof extensions === 'object') result.extensions = extensions as Record<string, unknown>;
  return result;
}

/** An error for a log line, any URL in it without credentials. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return redactUrls(`${error.name}: ${error.message}${cause}`);
  }
  return redactUrls(String(error));
}

