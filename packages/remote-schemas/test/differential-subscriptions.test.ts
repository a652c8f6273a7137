import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kind, Source, getLocation, parse, type SelectionSetNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startSampleRemote, type RunningRemote } from '@svc-graphql/sample-remotes';
import { createRemoteSchemaRegistry, type RemoteSchemaCustomization, type RemoteSchemaRegistry } from '../src/index.js';
import { startGateway, type Gateway } from './utils/gateway.js';
import { memoryLogger } from './utils/fixtures.js';
import { customizationArb, namingOf, type Naming } from './utils/differential-customization.js';
import { clientLocationOf, fullAnswer, fullErrors, type FullAnswer, type Location } from './utils/differential-operations.js';

/**
 * Differential test of subscriptions: a subscription to the sample remote's `countdown`, generated
 * in the remote's own names, is sent to the remote over graphql-ws, and as a client of the
 * customized remote writes it to the gateway, over graphql-ws and over SSE. Each event, errors in
 * full included, must be the remote's, renamed; a variable value that cannot be coerced is answered
 * as the remote answers it (one result without `data`). A subscription whose root field is left out
 * by `@skip` / `@include` is not sent to the remote (graphql-js 16 throws there, and its graphql-ws
 * server closes the socket): the GraphQL specification raises a request error, which is what the
 * gateway must answer, located at the directives. Under a `root_fields_namespace` the client writes
 * the field (and the fragments around it) inside the namespace field, and each event is nested
 * under it; there the conditions are also written with variables, which the gateway decides for
 * each request (the remote itself is sent the field left, without them).
 *
 * `DIFF_SUB_RUNS` sets the number of customizations tried (default 30), each with one to three
 * subscriptions.
 */

const RUNS = Math.max(1, Number(process.env['DIFF_SUB_RUNS'] ?? 30));

/**
 * `@skip` / `@include` with a literal: graphql-js 16's validation throws on one whose `if` is a
 * variable at the root of a subscription (its single-field rule reads the directive without
 * variables), on the remote as in the gateway.
 */
interface Condition {
  name: 'skip' | 'include';
  value: boolean;
}

interface Occurrence {
  /** How the root field is written: as it is, in an inline fragment, or in a named fragment. */
  wrap: 'none' | 'inline' | 'spread';
  onField: Condition | undefined;
  onWrap: Condition | undefined;
}

interface Subscription {
  named: boolean;
  alias: boolean;
  /**
   * Under a namespace, the client writes the conditions' values as variables (`$c0`, ...): the
   * gateway decides them for each request, and sends the remote the field left without them.
   */
  variableConditions: boolean;
  /** `from` as a literal, or a variable with a valid or an invalid value. */
  from: { kind: 'literal'; value: number } | { kind: 'variable'; value: unknown; invalid: boolean };
  interval: 'literal' | 'variable' | 'absent';
  occurrences: Occurrence[];
}

const conditionArb: fc.Arbitrary<Condition | undefined> = fc.option(
  fc.record({ name: fc.constantFrom('skip' as const, 'include' as const), value: fc.boolean() }),
  { freq: 2, nil: undefined },
);

const subscriptionArb: fc.Arbitrary<Subscription> = fc.record({
  named: fc.boolean(),
  alias: fc.boolean(),
  variableConditions: fc.boolean(),
  from: fc.oneof(
    fc.record({ kind: fc.constant('literal' as const), value: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant('variable' as const), value: fc.integer({ min: 0, max: 2 }), invalid: fc.constant(false) }),
    fc.record({ kind: fc.constant('variable' as const), value: fc.constantFrom<unknown>('NOPE', null, 1.5, [1]), invalid: fc.constant(true) }),
  ),
  interval: fc.constantFrom('literal' as const, 'variable' as const, 'absent' as const),
  occurrences: fc.array(
    fc.record({ wrap: fc.constantFrom('none' as const, 'inline' as const, 'spread' as const), onField: conditionArb, onWrap: conditionArb }),
    { minLength: 1, maxLength: 2 },
  ),
});

function excludes(condition: Condition | undefined): boolean {
  return condition !== undefined && (condition.name === 'skip') === condition.value;
}

/** Whether every occurrence of the root field is left out. */
function allSkipped(op: Subscription): boolean {
  return op.occurrences.every((o) => excludes(o.onField) || (o.wrap !== 'none' && excludes(o.onWrap)));
}

interface Written {
  query: string;
  variables: Record<string, unknown>;
  operationName?: string;
}

/** The subscription in the remote's names (`naming` undefined) or as a client of `naming` writes it. */
function write(op: Subscription, naming: Naming | undefined): Written {
  const definitions: string[] = [];
  const variables: Record<string, unknown> = {};
  const type = (name: string) => (naming ? naming.type(name) : name);
  // Not with an invalid variable value: its error's location is mapped from the remote's document,
  // which must then have the client's shape.
  const asVariables = op.variableConditions && naming?.namespace !== undefined && !(op.from.kind === 'variable' && op.from.invalid);
  const condition = (c: Condition | undefined): string => {
    if (!c) return '';
    if (!asVariables) return ` @${c.name}(if: ${c.value})`;
    const name = `c${definitions.filter((d) => d.startsWith('$c')).length}`;
    definitions.push(`$${name}: Boolean!`);
    variables[name] = c.value;
    return ` @${c.name}(if: $${name})`;
  };
  let from: string;
  if (op.from.kind === 'literal') {
    from = String(op.from.value);
  } else {
    definitions.push(`$from: ${type('Int')}!`);
    variables['from'] = op.from.value;
    from = '$from';
  }
  let interval = '';
  if (op.interval === 'literal') interval = ', intervalMs: 1';
  else if (op.interval === 'variable') {
    definitions.push(`$interval: ${type('Int')}`);
    variables['interval'] = 1;
    interval = ', intervalMs: $interval';
  }
  // Under a namespace, the field and its fragments are inside the namespace field, on its type.
  const namespace = naming?.namespace;
  const root = namespace ? `${namespace}_subscription` : 'Subscription';
  const fragments: string[] = [];
  const selections = op.occurrences.map((o) => {
    const field = `${op.alias ? 'n: ' : ''}countdown(from: ${from}${interval})${condition(o.onField)}`;
    if (o.wrap === 'none') return field;
    if (o.wrap === 'inline') return `...${condition(o.onWrap)} { ${field} }`;
    const name = `F${fragments.length}`;
    fragments.push(`fragment ${name} on ${root} { ${field} }`);
    return `...${name}${condition(o.onWrap)}`;
  });
  const head = `subscription${op.named ? ' Main' : ''}${definitions.length ? `(${definitions.join(', ')})` : ''}`;
  const body = namespace ? `${namespace} { ${selections.join(' ')} }` : selections.join(' ');
  return {
    query: [`${head} { ${body} }`, ...fragments].join('\n'),
    variables,
    ...(op.named && { operationName: 'Main' }),
  };
}

/** Every result of a graphql-ws subscription, or what ended it otherwise. */
async function overWebSocket(url: string, request: Written): Promise<unknown[]> {
  const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  const results: unknown[] = [];
  try {
    for await (const result of client.iterate(request)) results.push(result);
  } catch (error) {
    results.push({ thrown: error instanceof Error ? error.message : Array.isArray(error) ? error : String((error as { code?: unknown }).code) });
  } finally {
    await client.dispose();
  }
  return results;
}

/** Every `next` event of an SSE subscription (Yoga's `text/event-stream`). */
async function overSse(url: string, request: Written): Promise<{ status: number; results: unknown[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  const results = text
    .split('\n\n')
    .filter((event) => event.startsWith('event: next'))
    .map((event) => JSON.parse(event.slice(event.indexOf('data: ') + 6)) as unknown);
  return { status: response.status, results };
}

/**
 * The `@skip` / `@include` directives that leave out a selection at the root of the client's
 * subscription, in the order execution meets them (what is inside a selection left out is not
 * looked at).
 */
function excludingDirectives(query: string, namespaced: boolean, variables: Record<string, unknown>): Location[] {
  const source = new Source(query);
  const document = parse(source);
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const found: Location[] = [];
  const walk = (set: SelectionSetNode): void => {
    for (const selection of set.selections) {
      const excluding = selection.directives?.find((d) => {
        const argument = d.arguments?.[0]?.value;
        const value = argument?.kind === Kind.BOOLEAN ? argument.value : argument?.kind === Kind.VARIABLE ? variables[argument.name.value] : undefined;
        return typeof value === 'boolean' && (d.name.value === 'skip') === value;
      });
      if (excluding) found.push(getLocation(source, excluding.loc!.start));
      else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) walk(fragments.get(selection.name.value)!.selectionSet);
    }
  };
  if (operation.kind === Kind.OPERATION_DEFINITION) {
    // Under a namespace, the stream's field is inside the namespace field.
    const first = operation.selectionSet.selections[0]!;
    walk(namespaced && first.kind === Kind.FIELD ? first.selectionSet! : operation.selectionSet);
  }
  return found;
}

describe('differential: subscriptions through the gateway answer as the remote does', () => {
  let remote: RunningRemote;
  let registry: RemoteSchemaRegistry;
  let gateway: Gateway;

  beforeAll(async () => {
    remote = await startSampleRemote({ name: 'sample' });
    registry = createRemoteSchemaRegistry({ retry: false, logger: memoryLogger() });
    gateway = await startGateway(registry);
  });

  afterAll(async () => {
    await gateway.close();
    await registry.dispose();
    await remote.close();
  });

  /** What the client must receive, from the remote's own results (`undefined`: the remote is not asked). */
  function expected(op: Subscription, naming: Naming, client: Written, remoteQuery: string, results: unknown[] | undefined): FullAnswer[] {
    if (results === undefined) {
      const name = op.named ? 'Subscription "Main"' : 'Anonymous Subscription';
      return [
        {
          hasData: false,
          data: undefined,
          errors: fullErrors([
            {
              message: `${name} must select one top level field, but every one is left out by @skip or @include.`,
              locations: excludingDirectives(client.query, naming.namespace !== undefined, client.variables),
            },
          ]),
        },
      ];
    }
    const key = op.alias ? 'n' : 'countdown';
    const namespace = naming.namespace;
    // Only the remote's errors have locations to move, and then the two documents have one shape.
    let located: ((location: Location) => Location | undefined) | undefined;
    const locate = (location: Location) => (located ??= clientLocationOf(remoteQuery, client.query, namespace))(location);
    return results.map((raw) => {
      const result = raw as { data?: { countdown?: unknown; n?: unknown } | null; errors?: Array<Record<string, unknown>> };
      const value = result.data ? { [key]: result.data.n ?? result.data.countdown } : result.data;
      const data = value && namespace ? { [namespace]: value } : value;
      const errors = (result.errors ?? []).map((e) => ({
        ...e,
        ...(Array.isArray(e['path']) && namespace && { path: [namespace, ...(e['path'] as unknown[])] }),
        message: String(e['message']).replace(/"Int(!?)"/g, `"${naming.type('Int')}$1"`),
        ...(Array.isArray(e['locations']) && { locations: (e['locations'] as Location[]).map((l) => locate(l) ?? { line: -1, column: -1 }) }),
      }));
      return fullAnswer({ ...('data' in result && { data }), ...(errors.length > 0 && { errors }) });
    });
  }

  it(
    'for generated subscriptions and customizations, over graphql-ws and SSE',
    async () => {
      await fc.assert(
        fc.asyncProperty(customizationArb, fc.array(subscriptionArb, { minLength: 1, maxLength: 3 }), async (customization, ops) => {
          const plan = await registry.plan([{ name: 'sample', definition: { url: remote.url, timeout_seconds: 10, customization } }]);
          fc.pre(plan.problems.length === 0);
          registry.commit(plan);
          const naming = namingOf(customization as RemoteSchemaCustomization);
          for (const op of ops) {
            const client = write(op, naming);
            const own = write(op, undefined);
            // The remote is asked only when a root field is left: graphql-js 16 throws otherwise.
            const direct = allSkipped(op) && !(op.from.kind === 'variable' && op.from.invalid) ? undefined : await overWebSocket(remote.wsUrl, own);
            const want = expected(op, naming, client, own.query, direct);
            const [ws, sse] = await Promise.all([overWebSocket(gateway.wsUrl, client), overSse(gateway.url, client)]);
            try {
              expect(ws.map((r) => fullAnswer(r as object))).toEqual(want);
              expect(sse.status).toBe(200);
              expect(sse.results.map((r) => fullAnswer(r as object))).toEqual(want);
            } catch (error) {
              const context = [
                `customization: ${JSON.stringify(customization)}`,
                `client document:\n${client.query}`,
                `variables: ${JSON.stringify(client.variables)}`,
                `remote answered: ${JSON.stringify(direct)}`,
                `gateway (graphql-ws) answered: ${JSON.stringify(ws)}`,
                `gateway (SSE) answered: ${JSON.stringify(sse.results)}`,
              ].join('\n');
              throw new Error(`${(error as Error).message}\n\n${context}`, { cause: error });
            }
          }
        }),
        { numRuns: RUNS, maxSkipsPerRun: 1 },
      );
    },
    60_000 + RUNS * 1_000,
  );
});
