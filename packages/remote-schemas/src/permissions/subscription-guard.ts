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
    const inner = stream[Symbol.asyncIterator]();
    let waiting: ((step: IteratorResult<ExecutionResult>) => void) | undefined;
    let last: ExecutionResult | undefined;
    let closed = false;
    const close = () => {
      closed = true;
      this.#forget(open);
    };
    const open: Open = {
      role,
      document: args.document,
      operationName: args.operationName,
      variables: args.variableValues,
      schema: args.schema,
      revoke: (result) => {
        if (closed) return;
        close();
        void Promise.resolve(inner.return?.()).catch(() => {});
        if (waiting) {
          const resolve = waiting;
          waiting = undefined;
          resolve({ done: false, value: result });
        } else {
          last = result;
        }
      },
    };
    this.#open.add(open);
    if (this.#open.size === 1 && this.#watch) this.#unwatch = this.#watch(() => this.revalidate());
    return {
      next: () => {
        if (last) {
          const value = last;
          last = undefined;
          return Promise.resolve({ done: false, value });
        }
        if (closed) return Promise.resolve(DONE);
        return new Promise<IteratorResult<ExecutionResult>>((resolve, reject) => {
          waiting = resolve;
          inner.next().then(
            (step) => {
              if (waiting !== resolve) return;
              waiting = undefined;
              if (step.done) close();
              resolve(step);
            },
            (error: unknown) => {
              if (waiting !== resolve) return;
              waiting = undefined;
              close();
              reject(error);
            },
          );
        });
      },
      return: async () => {
        last = undefined;
        if (!closed) {
          close();
          await inner.return?.();
        }
        return DONE;
      },
      throw: async (error: unknown) => {
        last = undefined;
        if (!closed) {
          close();
          if (inner.throw) return inner.throw(error);
        }
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
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

function variablesFit(schema: GraphQLSchema, open: Open): boolean {
  const operation = getOperationAST(open.document, open.operationName);
  if (!operation) return false;
  if (!operation.variableDefinitions?.length) return true;
  return !getVariableValues(schema, operation.variableDefinitions, open.variables ?? {}, { maxErrors: 1 }).errors;
}
