/**
 * The lock-down checks in Yoga's pipeline, in the order the rules give them: a batch against its
 * role's batch limit once the body is parsed (a batch refused so counts as one request toward the
 * rate limit, and a client over its rate is answered 429 instead); then per operation, as soon as its parameters are
 * known, the rate limit (before the document is parsed), then the allow list, introspection, depth
 * and nodes (on the parsed document, before validation against the schema: an operation that is
 * not allowed is answered so whatever it asks for); then the run under the role's time limit.
 * graphql-ws makes the same checks at the same points (ws/operations.ts), and the direct lane its
 * own before it runs an operation.
 */
import { GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Session } from '@svc-graphql/jwt-session';
import { noteRequest } from '../http/request-log.js';
import type { ClientRequest, RequestRecord, RequestRecords } from '../request-record.js';
import type { Lockdown } from './enforce.js';
import { REJECT, type Rejection } from './rejections.js';
import { TimeLimitExceededError, withTimeLimit, type OperationSignals } from './time-limit.js';

/** The error of a rejection, with its HTTP status (and `Retry-After`) for Yoga. */
export function rejectionError(rejection: Rejection): GraphQLError {
  const headers = rejection.retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(rejection.retryAfterSeconds) };
  return new GraphQLError(rejection.message, {
    extensions: { code: rejection.code, path: '$', http: { status: rejection.status, ...(headers && { headers }) } },
  });
}

function rejectionResult(rejection: Rejection): ExecutionResult {
  return { errors: [rejectionError(rejection)] };
}

/** The refusal answered for a request, noted on its record for its http-log entry (the first one of a batch). */
export function noteRejection(record: RequestRecord | undefined, rejection: Rejection): void {
  if (record !== undefined) record.rejected ??= rejection.reason;
}

function requestOf(context: unknown): ClientRequest | undefined {
  const req = (context as { req?: unknown } | undefined)?.req;
  return typeof req === 'object' && req !== null && 'socket' in req ? (req as ClientRequest) : undefined;
}

export interface LockdownPluginOptions {
  /**
   * The document of an operation's text, parsed as Yoga parses it (same limits, same caches), or
   * `undefined` when it does not parse: Yoga then answers the parse error itself.
   */
  documentOf(query: string): DocumentNode | undefined;
}

export function useLockdown(lockdown: Lockdown, records: RequestRecords, options: LockdownPluginOptions): Plugin {
  /** Answers the operation with `rejection`, noted on its record (with its role and operation) for the http-log entry. */
  const refuse = (record: RequestRecord, setResult: (result: ExecutionResult) => void, rejection: Rejection, document?: DocumentNode, operationName?: unknown) => {
    noteRejection(record, rejection);
    noteRequest(record, document, operationName);
    setResult(rejectionResult(rejection));
  };

  /** After the rate limit: refused by it, or the checks of the parsed document. */
  const checkParams = (record: RequestRecord, session: Session, params: unknown, setResult: (result: ExecutionResult) => void, rate: Rejection | undefined) => {
    if (rate !== undefined) {
      refuse(record, setResult, rate);
      return;
    }
    // Anything but a text and an optional name is answered by Yoga's own checks of the parameters.
    const { query, operationName } = (params ?? {}) as { query?: unknown; operationName?: unknown };
    if (typeof query !== 'string' || (operationName != null && typeof operationName !== 'string')) return;
    const document = options.documentOf(query);
    if (document === undefined) return;
    const rejection = lockdown.checkDocument(session, document, operationName);
    if (rejection !== undefined) refuse(record, setResult, rejection, document, operationName);
  };

  return {
    onRequestParse({ serverContext }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (!Array.isArray(requestParserResult)) return;
          const record = records.of(serverContext);
          if (record !== undefined) record.batch = true;
          const session = record?.session;
          const rejection = session === undefined ? undefined : lockdown.checkBatch(session, requestParserResult.length);
          if (session === undefined || rejection === undefined) return undefined;
          // Refused whole, the batch is one request to the rate limit, which comes first: a client
          // over its rate gets 429 (not counted), any other is counted once and told the batch limit.
          const refuseWith = (rate: Rejection | undefined) => {
            noteRejection(record, rate ?? rejection);
            throw rejectionError(rate ?? rejection);
          };
          const rate = lockdown.checkRate(session, requestOf(serverContext));
          return rate instanceof Promise ? rate.then(refuseWith) : refuseWith(rate);
        },
      };
    },
    // Each operation of a batch comes here on its own. A decision of this instance's own counter
    // costs no promise: one is returned only while Redis is asked.
    onParams({ params, context, setResult }) {
      const record = records.of(context);
      const session = record?.session;
      if (record === undefined || session === undefined || record.lockdownChecked) return undefined;
      const rate = lockdown.checkRate(session, requestOf(context));
      if (rate instanceof Promise) return rate.then((rejection) => checkParams(record, session, params, setResult, rejection));
      checkParams(record, session, params, setResult, rate);
      return undefined;
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      if (records.of(args.contextValue)?.batch !== true) return;
      // A batch is answered with one JSON array: there is no stream for a subscription in it.
      setResultAndStopExecution({
        errors: [new GraphQLError('a subscription cannot be sent in a batch', { extensions: { code: 'validation-failed', path: '$', http: { status: 200 } } })],
      });
    },
  };
}

/**
 * The role's time limit around execution: listed after every plugin that sets the execute function
 * (the remotes', the direct lane's hand-over), so that it wraps the one that runs. The operation's
 * signal (in `signals`, by its GraphQL context) aborts when the limit passes: the remotes' calls
 * of the operation are abandoned with it. Subscriptions are not limited.
 */
export function useTimeLimit(lockdown: Lockdown, records: RequestRecords, signals: OperationSignals): Plugin {
  return {
    onExecute({ args, setExecuteFn, executeFn }) {
      const record = records.of(args.contextValue);
      const session = record?.session;
      const limitMs = session === undefined ? undefined : lockdown.timeLimitMs(session);
      if (limitMs === undefined) return;
      setExecuteFn(async (executeArgs) => {
        try {
          return await withTimeLimit(limitMs, (signal) => {
            signals.set(executeArgs.contextValue, signal);
            return Promise.resolve(executeFn(executeArgs)) as Promise<ExecutionResult>;
          });
        } catch (error) {
          if (!(error instanceof TimeLimitExceededError)) throw error;
          const rejection = REJECT.time(limitMs / 1000);
          lockdown.rejected(rejection);
          noteRejection(record, rejection);
          return rejectionResult(rejection);
        }
      });
    },
  };
}
