import type { Plugin } from 'graphql-yoga';

/** Operations of one batch executed at once; the others wait their turn. */
export const BATCH_CONCURRENCY = 16;

interface Slots {
  active: number;
  readonly waiting: Array<() => void>;
}

/**
 * At most `max` operations of one HTTP request (a batch: a JSON array of operations) execute at
 * once; the others wait their turn, in order. Yoga starts every operation of a batch together, and
 * a batch of thousands would otherwise take every socket to a remote and make other clients'
 * calls wait past their remote's timeout. Waiting comes before the role's time limit starts.
 */
export function useBatchConcurrency(max: number = BATCH_CONCURRENCY): Plugin {
  // Only the requests that are batches of more than `max` operations: every other operation
  // executes without a turn to take.
  const byRequest = new WeakMap<Request, Slots>();
  return {
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (Array.isArray(requestParserResult) && requestParserResult.length > max) byRequest.set(request, { active: 0, waiting: [] });
        },
      };
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const request = (args.contextValue as { request?: Request } | undefined)?.request;
      const slots = request && byRequest.get(request);
      if (!slots) return;
      setExecuteFn(async (executionArgs) => {
        // A slot is handed from one operation to the next waiting one directly, never left free between.
        if (slots.active < max) slots.active++;
        else await new Promise<void>((resolve) => slots.waiting.push(resolve));
        try {
          return await executeFn(executionArgs);
        } finally {
          const next = slots.waiting.shift();
          if (next) next();
          else slots.active--;
        }
      });
    },
  };
}
