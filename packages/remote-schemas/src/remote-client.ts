import { Source, getIntrospectionQuery, print, type DocumentNode, type ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { RemoteSchemaError, remoteCallError, toGraphQLError } from './errors.js';
import { forwardedHeaders, type HeaderPolicy } from './headers.js';
import { configuredHeaders, type ResolvedDefinition } from './definition.js';
import type { NormalizedOptions } from './options.js';
import { SubscriptionPool } from './subscriptions.js';
import type { Transport } from './transport.js';

export interface GraphQLRequestBody {
  query: string;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
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

/** Talks to one remote: introspection, queries and mutations over HTTP, subscriptions over graphql-ws. */
export class RemoteClient {
  readonly name: string;
  readonly definition: ResolvedDefinition;
  readonly subscriptions: SubscriptionPool;
  readonly #options: NormalizedOptions;
  readonly #policy: HeaderPolicy;

  readonly #transport: Transport;

  constructor(name: string, definition: ResolvedDefinition, options: NormalizedOptions, transport: Transport) {
    this.name = name;
    this.#transport = transport;
    this.definition = definition;
    this.#options = options;
    this.#policy = {
      sessionVariablePrefix: options.sessionVariablePrefix,
      adminSecretHeader: options.adminSecretHeader,
    };
    this.subscriptions = new SubscriptionPool(definition.url, definition.timeoutMs, options.logger);
  }

  /** The headers a request in `context` sends to this remote (CONTRACT 6). */
  headersFor(context: unknown): Record<string, string> {
    return forwardedHeaders(
      {
        configured: configuredHeaders(this.definition),
        forwardClientHeaders: this.definition.forwardClientHeaders,
        session: context === undefined ? undefined : this.#options.getSession(context),
        clientHeaders: context === undefined ? undefined : this.#options.getClientHeaders(context),
      },
      this.#policy,
    );
  }

  /**
   * One POST to the remote, bounded by `timeout_seconds`. Never rejects: a failed call, a timeout
   * or an answer that is not a GraphQL response becomes the `remote-schema-error` result.
   */
  async post(body: GraphQLRequestBody, headers: Record<string, string>): Promise<ExecutionResult> {
    const { url, timeoutMs } = this.definition;
    try {
      const response = await this.#transport(
        url,
        { accept: 'application/graphql-response+json, application/json', ...headers, 'content-type': 'application/json' },
        JSON.stringify(body),
        timeoutMs,
      );
      const json = parseGraphQLResponse(response.text, body.query);
      if (json) return json;
      this.#options.logger.warn(`remote schema "${this.name}": answer from "${url}" is not a GraphQL response (status ${response.status})`);
    } catch (error) {
      this.#options.logger.warn(`remote schema "${this.name}": request to "${url}" failed:`, describeError(error));
    }
    return { errors: [remoteCallError(url)] };
  }

  /** The executor used by delegation (customized remotes, or operations that mix sources). */
  readonly executor: Executor = ((request: ExecutionRequest) => {
    const headers = this.headersFor(request.context);
    const body: GraphQLRequestBody = {
      query: printCached(request.document),
      variables: request.variables ?? null,
      operationName: request.operationName ?? null,
    };
    if (request.operationType === 'subscription') {
      return this.subscriptions.subscribe(body, headers);
    }
    return this.post(body, headers);
  }) as Executor;

  /** The remote's introspection result; throws `remote-schema-error` when it cannot be had. */
  async introspect(): Promise<ExecutionResult> {
    const result = await this.post({ query: getIntrospectionQuery() }, forwardedHeaders(
      { configured: configuredHeaders(this.definition), forwardClientHeaders: false, session: undefined, clientHeaders: undefined },
      this.#policy,
    ));
    if (result.errors?.length || !result.data) {
      const first = result.errors?.[0];
      const message = first?.message ?? 'the introspection result has no data';
      throw new RemoteSchemaError(
        'remote-schema-error',
        first?.extensions?.['code'] === 'remote-schema-error' ? message : `introspection of "${this.definition.url}" failed: ${message}`,
      );
    }
    return result;
  }

  dispose(): Promise<void> {
    return this.subscriptions.dispose();
  }
}

function parseGraphQLResponse(text: string, query: string): ExecutionResult | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const { data, errors, extensions } = json as { data?: unknown; errors?: unknown; extensions?: unknown };
  if (data === undefined && errors === undefined) return undefined;
  const result: ExecutionResult = { data: (data ?? null) as Record<string, unknown> | null };
  if (Array.isArray(errors) && errors.length > 0) {
    const source = new Source(query);
    result.errors = errors.map((error) => toGraphQLError(error, source));
  }
  if (extensions && typeof extensions === 'object') result.extensions = extensions as Record<string, unknown>;
  return result;
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}

