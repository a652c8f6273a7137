/**
 * The lock-down checks in Yoga's and graphql-ws's pipeline: each operation (of a batch too) is
 * checked before it executes (so before any remote is called), a batch against its role's batch
 * limit once it is parsed, and an operation runs under its role's time limit.
 */
import type { IncomingMessage } from 'node:http';
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestRecord, RequestRecords } from '../request-record.js';
import type { Lockdown } from './enforce.js';
import { REJECT, type Rejection } from './rejections.js';
import { TimeLimitExceededError, withTimeLimit } from './time-limit.js';

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

/** Requests that are batches (a JSON array of operations): they cannot hold a subscription. */
const batches = new WeakSet<RequestRecord>();

/** Requests the direct lane already checked (and counted) before it handed them to Yoga. */
const checkedByLane = new WeakSet<RequestRecord>();

/** Marks a request whose operation the direct lane checked: Yoga's path does not count it again. */
export function markChecked(record: RequestRecord): void {
  checkedByLane.add(record);
}

function requestOf(context: unknown): IncomingMessage | undefined {
  const req = (context as { req?: unknown } | undefined)?.req;
  return typeof req === 'object' && req !== null && 'socket' in req ? (req as IncomingMessage) : undefined;
}

export function useLockdown(lockdown: Lockdown, records: RequestRecords): Plugin {
  return {
    onRequestParse({ serverContext }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (!Array.isArray(requestParserResult)) return;
          const record = records.of(serverContext);
          if (record !== undefined) batches.add(record);
          const session = record?.session;
          const rejection = session === undefined ? undefined : lockdown.checkBatch(session, requestParserResult.length);
          if (rejection !== undefined) throw rejectionError(rejection);
        },
      };
    },
    async onExecute({ args, setResultAndStopExecution }) {
      const record = records.of(args.contextValue);
      const session = record?.session;
      if (record === undefined || session === undefined || checkedByLane.has(record)) return;
      const rejection = await lockdown.check({ session, document: args.document, operationName: args.operationName, req: requestOf(args.contextValue) });
      if (rejection !== undefined) setResultAndStopExecution(rejectionResult(rejection));
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const record = records.of(args.contextValue);
      if (record !== undefined && batches.has(record)) {
        // A batch is answered with one JSON array: there is no stream for a subscription in it.
        setResultAndStopExecution({
          errors: [new GraphQLError('a subscription cannot be sent in a batch', { extensions: { code: 'validation-failed', path: '$', http: { status: 200 } } })],
        });
        return;
      }
      const session = record?.session;
      if (session === undefined) return;
      const rejection = await lockdown.check({ session, document: args.document, operationName: args.operationName, req: requestOf(args.contextValue) });
      if (rejection !== undefined) setResultAndStopExecution(rejectionResult(rejection));
    },
  };
}

/**
 * The role's time limit around execution: listed after every plugin that sets the execute function
 * (the remotes', the direct lane's hand-over), so that it wraps the one that runs. Subscriptions
 * are not limited.
 */
export function useTimeLimit(lockdown: Lockdown, records: RequestRecords): Plugin {
  return {
    onExecute({ args, setExecuteFn, executeFn }) {
      const session = records.of(args.contextValue)?.session;
      const limitMs = session === undefined ? undefined : lockdown.timeLimitMs(session);
      if (limitMs === undefined) return;
      setExecuteFn(async (executeArgs) => {
        try {
          return await withTimeLimit(limitMs, () => Promise.resolve(executeFn(executeArgs)) as Promise<ExecutionResult>);
        } catch (error) {
          if (!(error instanceof TimeLimitExceededError)) throw error;
          const rejection = REJECT.time(limitMs / 1000);
          lockdown.rejected(rejection);
          return rejectionResult(rejection);
        }
      });
    },
  };
}
