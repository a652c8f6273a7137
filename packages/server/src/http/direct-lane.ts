import type { IncomingMessage, ServerResponse } from 'node:http';
import { context as otelContext } from '@opentelemetry/api';
import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { LRUCache } from 'lru-cache';
import { SessionError, type Session, type SessionResolver } from '@svc-graphql/jwt-session';
import { remoteOperationRunner, type RemoteSchemaRegistry } from '@svc-graphql/remote-schemas';
import type { Lockdown } from '../lockdown/enforce.js';
import { laneDecisions } from '../lane-decisions.js';
import { noteRejection } from '../lockdown/plugin.js';
import { rejectionBody } from '../lockdown/rejections.js';
import type { Handover, RequestRecord, RequestRecords } from '../request-record.js';
import { cachedDocuments } from './limits.js';

/**
 * The direct lane: a GraphQL request whose operation is answered by remotes alone is served by
 * the plain `node:http` handler, before Yoga's request pipeline (whatwg-node Request and Response
 * objects, Envelop's hooks). It reads the body, resolves the session, looks the operation up
 * (parsed, validated against the session's schema and planned once per document), calls the
 * remotes with the same code Yoga's path uses, and writes an answer that has no error.
 *
 * Anything else goes to Yoga, which decides as it always has: a request it does not recognize at
 * once (another path or method, a query string, no `Content-Length`, another content type or
 * `Accept`, a body that is not a plain `{query, variables, operationName}`), a refused session, an
 * operation that does not parse, validate or plan to remotes alone (subscriptions, local fields,
 * introspection), and every answer with errors. What the lane already did is handed over with it,
 * so nothing runs twice: the body (read again from memory), and on the request's record the
 * session or its refusal (taken by `useJwtSession` through its `resolvedSession` option, see
 * {@link handedOverSession}) and the remotes' answer (executed by {@link useDirectLaneHandover}).
 * Errors, their masking and their statuses are therefore always Yoga's.
 */

type LaneRequest = IncomingMessage & { body?: unknown };

/** The operation of one (schema, document, operation name), ready to run. */
interface Lane {
  run: (args: ExecutionArgs) => Promise<ExecutionResult>;
  type: 'query' | 'mutation';
  /** The operation's own name (for logs and spans). */
  name: string | null;
}

interface Params {
  query: string;
  variables: Record<string, unknown> | null | undefined;
  operationName: string | null | undefined;
}

export interface DirectLaneOptions {
  records: RequestRecords;
  graphqlPath: string;
  /** Bodies declared larger go to Yoga (which answers 413). */
  maxBodyBytes: number;
  resolver: SessionResolver;
  registry: RemoteSchemaRegistry;
  /** Yoga's caches of parsed documents and parse errors (shared: one parse per text for both paths). */
  documentCache: LRUCache<string, DocumentNode>;
  errorCache: LRUCache<string, object>;
  /** The parse Yoga's path uses (with the server's token and depth limits). */
  parse: (text: string) => DocumentNode;
  /** Headers CORS adds to an answer for this `Origin`. */
  corsHeaders: (origin: string | undefined) => Record<string, string> | undefined;
  /** Before the remotes are called: the operation of the request (request log, span). */
  onOperation?: (record: RequestRecord, type: 'query' | 'mutation', name: string | null) => void;
  /** An answer written by the lane (metrics). */
  onAnswered?: (type: 'query' | 'mutation', seconds: number) => void;
  /** The allow list and API limits: checked before the remotes are called; a refusal is answered here. */
  lockdown?: Lockdown;
  /** A failure of the lane itself (a bug: every expected failure is handed to Yoga); answered 500. */
  onUnexpectedError?: (error: unknown) => void;
}

/** Reads back a body the lane consumed, as whatwg-node reads a request's (an async iterable). */
class ReplayedBody {
  constructor(readonly bytes: Buffer) {}
  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    yield this.bytes;
  }
}

const JSON_CONTENT_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const DIGITS = /^\d+$/;
const PARAM_KEYS = new Set(['query', 'variables', 'operationName']);

/**
 * The media type Yoga answers a regular result with for this `Accept` (the first listed type it
 * can give, a wildcard giving `application/json`), or `undefined` when Yoga would pick another
 * processor or refuse: then Yoga answers.
 */
export function answerMediaType(accept: string | undefined): 'application/json' | 'application/graphql-response+json' | undefined {
  if (accept === undefined || accept === '') return 'application/json';
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...parameters] = entry.split(';');
    const charset = parameters.find((parameter) => parameter.includes('charset='));
    if (charset !== undefined && charset !== 'charset=utf-8') continue;
    if (mediaType === 'application/graphql-response+json') return mediaType;
    if (mediaType === 'application/json' || mediaType === 'application/*' || mediaType === '*/*') return 'application/json';
  }
  return undefined;
}

function readParams(body: Buffer): Params | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const params = value as Record<string, unknown>;
  for (const key of Object.keys(params)) if (!PARAM_KEYS.has(key)) return undefined;
  const { query, variables, operationName } = params;
  if (typeof query !== 'string' || query === '') return undefined;
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
  return {
    query,
    variables: variables as Record<string, unknown> | null | undefined,
    operationName: operationName as string | null | undefined,
  };
}

/**
 * The direct lane in front of `yoga` (the Node handler it falls back to). Requests it cannot
 * answer reach `yoga` unchanged but for their body, already read.
 */
export function createDirectLane(
  yoga: (req: IncomingMessage, res: ServerResponse) => void,
  options: DirectLaneOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { records, graphqlPath, maxBodyBytes, resolver, registry } = options;
  // Yoga's own caches: a document parsed here is not parsed again there.
  const documentOf = cachedDocuments(options, options.parse);
  // Per schema (the live one, or a role's), document and operation name: its lane, or none when
  // Yoga must answer it.
  const decisions = laneDecisions<Lane>((schema, document, operation, operationName) => {
    const run = remoteOperationRunner(registry, schema, document, operationName);
    return run && operation.operation !== 'subscription' ? { run, type: operation.operation, name: operation.name?.value ?? null } : undefined;
  });

  const laneFor = (schema: GraphQLSchema, text: string, operationName: string | null): { lane: Lane; document: DocumentNode } | undefined => {
    const document = documentOf(text);
    if (document === undefined) return undefined;
    const lane = decisions(schema, document, operationName);
    return lane === undefined ? undefined : { lane, document };
  };

  const handOver = (req: LaneRequest, res: ServerResponse, body: Buffer, record: RequestRecord, handover: Handover | undefined) => {
    req.body = new ReplayedBody(body);
    record.handover = handover;
    yoga(req, res);
  };

  const answer = async (req: LaneRequest, res: ServerResponse, body: Buffer, mediaType: string) => {
    const record = records.open(req);
    const params = readParams(body);
    if (!params) return handOver(req, res, body, record, undefined);
    let session: Session;
    try {
      session = await resolver.resolve(req.headers);
    } catch (error) {
      return handOver(req, res, body, record, error instanceof SessionError ? { session: error } : undefined);
    }
    const handover: Handover = { session };
    const schema = registry.schemaFor(session);
    const operationName = params.operationName ?? null;
    const found = laneFor(schema, params.query, operationName);
    if (!found) return handOver(req, res, body, record, handover);
    const { lane, document } = found;
    record.session = session;
    record.role = session.role;
    options.onOperation?.(record, lane.type, lane.name);
    const { lockdown } = options;
    if (lockdown !== undefined) {
      // Awaited only when the decision is a promise (Redis rate limits): a local decision costs no extra tick.
      const decision = lockdown.check({ session, document, operationName, req });
      const rejection = decision instanceof Promise ? await decision : decision;
      if (rejection !== undefined) {
        noteRejection(record, rejection);
        const retryAfter = rejection.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(rejection.retryAfterSeconds) };
        return writeAnswer(req, res, mediaType, rejection.status, JSON.stringify(rejectionBody(rejection)), retryAfter);
      }
      record.lockdownChecked = true;
      // An operation under a time limit runs on Yoga's path, which keeps to it.
      if (lockdown.timeLimitMs(session) !== undefined) return handOver(req, res, body, record, handover);
    }
    const started = performance.now();
    // What remote-schemas reads of a context: the request's record (its session, id and headers,
    // through the registry's options) and the parameters (the text sent to the remote).
    const contextValue = { req, params };
    let result: ExecutionResult;
    try {
      result = await lane.run({
        schema,
        document,
        operationName,
        variableValues: params.variables,
        contextValue,
        rootValue: undefined,
      });
    } catch (thrown) {
      handover.outcome = { started, thrown };
      return handOver(req, res, body, record, handover);
    }
    if ((result.errors !== undefined && result.errors.length > 0) || result.data == null || result.extensions?.['http'] !== undefined) {
      handover.outcome = { started, result };
      return handOver(req, res, body, record, handover);
    }
    options.onAnswered?.(lane.type, (performance.now() - started) / 1000);
    writeAnswer(req, res, mediaType, 200, JSON.stringify(result));
  };

  /** Writes a JSON answer of the lane in `mediaType`, with the CORS headers of the request's origin. */
  function writeAnswer(req: IncomingMessage, res: ServerResponse, mediaType: string, status: number, text: string, extra?: Record<string, string>): void {
    if (res.destroyed) return;
    const headers: Record<string, string | number> = { 'content-type': `${mediaType}; charset=utf-8`, 'content-length': Buffer.byteLength(text) };
    if (extra !== undefined) Object.assign(headers, extra);
    const cors = options.corsHeaders(req.headers.origin);
    if (cors) Object.assign(headers, cors);
    res.writeHead(status, headers);
    res.end(text);
  }

  return (req, res) => {
    const length = req.headers['content-length'];
    const contentType = req.headers['content-type'];
    const mediaType = answerMediaType(req.headers.accept);
    if (
      req.method !== 'POST' ||
      req.url !== graphqlPath ||
      length === undefined ||
      !DIGITS.test(length) ||
      Number(length) === 0 ||
      Number(length) > maxBodyBytes ||
      req.headers['transfer-encoding'] !== undefined ||
      req.headers['content-encoding'] !== undefined ||
      contentType === undefined ||
      !JSON_CONTENT_TYPE.test(contentType) ||
      mediaType === undefined
    ) {
      yoga(req, res);
      return;
    }
    // Node hands over at most Content-Length bytes. Kept as they arrive (a body declared large
    // but sent slowly holds only what has come).
    const chunks: Buffer[] = [];
    // The request's span (and any other OpenTelemetry context) stays active once the body is read.
    const active = otelContext.active();
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A client gone before its body ended: its response closes with it (no 'end').
    req.on('error', () => {});
    req.once('end', () => {
      otelContext.with(active, () => {
        answer(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), mediaType).catch((error: unknown) => {
          // Not expected (every failure above is handed to Yoga): the connection is not left hanging.
          options.onUnexpectedError?.(error);
          if (!res.headersSent) {
            res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
            res.end(JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'unexpected' } }] }));
          } else {
            res.destroy(error instanceof Error ? error : undefined);
          }
        });
      });
    });
  };
}

/**
 * The session (or refusal) the lane resolved for a request it handed to Yoga: what `useJwtSession`'s
 * `resolvedSession` option answers, so that the session is not resolved twice.
 */
export function handedOverSession(records: RequestRecords): (request: Request, serverContext: object) => Session | SessionError | undefined {
  return (_request, serverContext) => records.of(serverContext)?.handover?.session;
}

/**
 * The Yoga side of the hand-over, listed after the remote schemas plugin: an operation the lane
 * already ran is answered with what the remotes answered.
 */
export function useDirectLaneHandover(records: RequestRecords, options: { onExecutionStarted?: (record: RequestRecord, started: number) => void } = {}): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const record = records.of(args.contextValue);
      const outcome = record?.handover?.outcome;
      if (record === undefined || outcome === undefined) return;
      // Once, whatever Yoga's path found meanwhile (a schema swapped in between): the remotes
      // were called for this request already, and a mutation must not run twice.
      delete record.handover!.outcome;
      options.onExecutionStarted?.(record, outcome.started);
      const { result, thrown } = outcome;
      setExecuteFn(() => (result !== undefined ? result : Promise.reject(thrown)));
    },
  };
}
