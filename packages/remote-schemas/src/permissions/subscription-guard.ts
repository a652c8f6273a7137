import {
  GraphQLError,
  getOperationAST,
  getVariableValues,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { Logger } from '../options.js';
import { isPushable, type PushableStream } from '../subscriptions.js';
import { SLICE_MS, runInSlices } from '../slices.js';

/** The error that ends a subscription its role may no longer run. */
export const NO_LONGER_PERMITTED_MESSAGE = 'the subscription is no longer permitted for this role';

export function noLongerPermitted(): GraphQLError {
  return new GraphQLError(NO_LONGER_PERMITTED_MESSAGE, { extensions: { code: 'access-denied', path: '$' } });
}

const DONE: IteratorResult<ExecutionResult> = { done: true, value: undefined };

/** A role's open subscription, as the guard knows it. */
interface Open {
  readonly role: string;
  readonly document: DocumentNode;
  readonly operationName: string | null | undefined;
  readonly variables: Readonly<Record<string, unknown>> | null | undefined;
  /** The schema it was last found valid on. */
  schema: GraphQLSchema;
  revoke(result: ExecutionResult): void;
}

/**
 * The open subscriptions of roles (not admin) that one app serves, validated again against their
 * role's schema after every schema swap. One that no longer validates (its document or its
 * variables) ends at once: a last result with the error {@link NO_LONGER_PERMITTED_MESSAGE}
 * (`access-denied`), then completion, whether it was waiting for an event or not.
 */
export class SubscriptionGuard {
  readonly #open = new Set<Open>();
  readonly #schemaFor: (role: string) => GraphQLSchema;
  readonly #logger: Logger;
  readonly #watch: ((onSwap: () => void) => () => void) | undefined;
  #unwatch: (() => void) | undefined;
  /** Revalidation passes started, one per swap. */
  #passes = 0;

  /**
   * `schemaFor`: the role's schema in the live state (the registry's `schemaFor`). `watch`, when
   * given, subscribes to swaps (the registry's `onSchemaChange`): the guard then revalidates on its
   * own, listening only while it has subscriptions open.
   */
  constructor(schemaFor: (role: string) => GraphQLSchema, logger: Logger, watch?: (onSwap: () => void) => () => void) {
    this.#schemaFor = schemaFor;
    this.#logger = logger;
    this.#watch = watch;
  }

  /** How many subscriptions are tracked (for tests and diagnostics). */
  get size(): number {
    return this.#open.size;
  }

  /** `stream`, the results of a subscription of `role` started with `args`, ended early when its role may no longer run it. */
  track(role: string, args: ExecutionArgs, stream: AsyncIterable<ExecutionResult>): AsyncIterableIterator<ExecutionResult> {
    const guarded = new Guarded(role, args, stream[Symbol.asyncIterator](), (open) => this.#forget(open));
    this.#open.add(guarded);
    if (this.#open.size === 1 && this.#watch) this.#unwatch = this.#watch(() => this.revalidate());
    return guarded;
  }

  #forget(open: Open): void {
    if (!this.#open.delete(open) || this.#open.size > 0) return;
    this.#unwatch?.();
    this.#unwatch = undefined;
  }

  /**
   * After a swap: every open subscription validated against its role's schema of the new live
   * state. Done in slices of a few milliseconds (a role's schema may have to be built first), the
   * first one at once; a later swap takes over from an earlier pass that has not finished.
   */
  revalidate(): void {
    if (this.#open.size === 0) return;
    const pass = ++this.#passes;
    void runInSlices(this.#revalidation(pass), SLICE_MS);
  }

  *#revalidation(pass: number): Generator<void, void, void> {
    const verdicts = new Map<GraphQLSchema, Map<DocumentNode, boolean>>();
    for (const open of [...this.#open]) {
      if (pass !== this.#passes) return;
      if (!this.#open.has(open)) continue;
      let valid: boolean;
      let schema: GraphQLSchema | undefined;
      try {
        schema = this.#schemaFor(open.role);
        if (schema === open.schema) continue;
        let byDocument = verdicts.get(schema);
        if (!byDocument) verdicts.set(schema, (byDocument = new Map()));
        let documentValid = byDocument.get(open.document);
        if (documentValid === undefined) {
          // graphql-js's rules leave the operation's root type to execution: a schema without a
          // subscription type validates any subscription.
          const operation = getOperationAST(open.document, open.operationName);
          documentValid = Boolean(operation && schema.getRootType(operation.operation)) && validate(schema, open.document).length === 0;
          byDocument.set(open.document, documentValid);
        }
        valid = documentValid && variablesFit(schema, open);
      } catch (error) {
        // Whatever cannot be checked does not go on.
        this.#logger.error(`remote schemas: a subscription of role "${open.role}" could not be validated again; ended:`, error);
        valid = false;
      }
      if (valid && schema) open.schema = schema;
      else open.revoke({ errors: [noLongerPermitted()] });
      yield;
    }
  }
}

/**
 * A role's open subscription as the guard knows it, and the stream its consumer reads: the inner
 * stream's results until it is revoked, then the revoking result and the end. What a waiting read
 * holds is one promise and the inner stream's own (its handlers are made once, not once per event:
 * a subscription waits for its next event for as long as the remote takes). When the inner stream
 * can push its results (a {@link PushableStream}), so can this one: `listen` is then set.
 */
class Guarded implements Open, AsyncIterableIterator<ExecutionResult> {
  /** Set when the inner stream can push (see {@link PushableStream}). */
  readonly listen: ((listener: (step: IteratorResult<ExecutionResult>) => void) => void) | undefined;
  /** The consumer listening, until the end. */
  #listener: ((step: IteratorResult<ExecutionResult>) => void) | undefined = undefined;
  readonly #onPushed = (step: IteratorResult<ExecutionResult>): void => {
    const listener = this.#listener;
    if (listener === undefined) return;
    if (step.done === true) {
      this.#listener = undefined;
      this.#close();
    }
    listener(step);
  };
  readonly document: DocumentNode;
  readonly operationName: string | null | undefined;
  readonly variables: Readonly<Record<string, unknown>> | null | undefined;
  schema: GraphQLSchema;
  /** The revoking result, when it came with no read waiting. */
  #last: ExecutionResult | undefined = undefined;
  #closed = false;
  #resolve: ((step: IteratorResult<ExecutionResult>) => void) | undefined = undefined;
  #reject: ((error: unknown) => void) | undefined = undefined;
  readonly #wait = (resolve: (step: IteratorResult<ExecutionResult>) => void, reject: (error: unknown) => void): void => {
    this.#resolve = resolve;
    this.#reject = reject;
  };
  readonly #onStep = (step: IteratorResult<ExecutionResult>): void => {
    const resolve = this.#take();
    if (resolve === undefined) return;
    if (step.done === true) this.#close();
    resolve(step);
  };
  readonly #onError = (error: unknown): void => {
    const reject = this.#reject;
    if (this.#take() === undefined || reject === undefined) return;
    this.#close();
    reject(error);
  };

  constructor(
    readonly role: string,
    args: ExecutionArgs,
    readonly inner: AsyncIterator<ExecutionResult>,
    readonly forget: (open: Open) => void,
  ) {
    this.document = args.document;
    this.operationName = args.operationName;
    this.variables = args.variableValues;
    this.schema = args.schema;
    const pushing = isPushable(inner) ? inner : undefined;
    this.listen = pushing && ((listener) => this.#listen(pushing, listener));
  }

  #listen(inner: PushableStream<ExecutionResult>, listener: (step: IteratorResult<ExecutionResult>) => void): void {
    const last = this.#last;
    this.#last = undefined;
    if (last !== undefined || this.#closed) {
      // Revoked before anyone listened: the revoking result, then the end.
      if (last !== undefined) listener({ done: false, value: last });
      listener(DONE);
      return;
    }
    this.#listener = listener;
    inner.listen(this.#onPushed);
  }

  revoke(result: ExecutionResult): void {
    if (this.#closed) return;
    this.#close();
    // A listener gets the revoking result and the end, not the end of the inner stream ended here.
    const listener = this.#listener;
    this.#listener = undefined;
    void Promise.resolve(this.inner.return?.()).catch(() => {});
    if (listener !== undefined) {
      listener({ done: false, value: result });
      listener(DONE);
      return;
    }
    const resolve = this.#take();
    if (resolve !== undefined) resolve({ done: false, value: result });
    else this.#last = result;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    const last = this.#last;
    if (last !== undefined) {
      this.#last = undefined;
      return Promise.resolve({ done: false, value: last });
    }
    if (this.#closed) return Promise.resolve(DONE);
    const waiting = new Promise<IteratorResult<ExecutionResult>>(this.#wait);
    this.inner.next().then(this.#onStep, this.#onError);
    return waiting;
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    this.#last = undefined;
    if (!this.#closed) {
      this.#close();
      await this.inner.return?.();
    }
    // The inner stream ended (a listener had its end from it), or could not tell: it ends here.
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.(DONE);
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.#last = undefined;
    if (!this.#closed) {
      this.#close();
      if (this.inner.throw) return this.inner.throw(error);
    }
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }

  /** The waiting read's resolve (it stops waiting), if a read is waiting. */
  #take(): ((step: IteratorResult<ExecutionResult>) => void) | undefined {
    const resolve = this.#resolve;
    this.#resolve = undefined;
    this.#reject = undefined;
    return resolve;
  }

  #close(): void {
    this.#closed = true;
    this.forget(this);
  }
}

function variablesFit(schema: GraphQLSchema, open: Open): boolean {
  const operation = getOperationAST(open.document, open.operationName);
  if (!operation) return false;
  if (!operation.variableDefinitions?.length) return true;
  return !getVariableValues(schema, operation.variableDefinitions, open.variables ?? {}, { maxErrors: 1 }).errors;
}
