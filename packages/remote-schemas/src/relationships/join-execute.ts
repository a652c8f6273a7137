import {
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  isListType,
  isNonNullType,
  type DirectiveNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLOutputType,
} from 'graphql';
import { MAX_REMOTE_ERRORS } from '../errors.js';
import type { LoadedRemote } from '../loaded-remote.js';
import { rename } from '../plan/execute.js';
import { targetRequest, type CallItem, type JoinValues } from './join-calls.js';
import type { JoinPlan, Locator, Occurrence } from './join-plan.js';

/** Requests asked again when fields of a target request made its whole answer null (a non-null root field). */
const MAX_RETRIES = 4;

/** Where a value sits in the answer, up to the root: to write `null` where GraphQL requires it, and to name paths. */
interface Position {
  readonly up: Position | undefined;
  readonly container: Record<string, unknown> | unknown[];
  readonly key: string | number;
  readonly nullable: boolean;
}

/** An object of the answer that has a relationship field to fill. */
interface Site {
  readonly object: Record<string, unknown>;
  readonly occurrence: Occurrence;
  /** The object's own position. */
  readonly position: Position | undefined;
}

/** What one call answered for a group of sites: the value, and the target's errors with their path below the field. */
interface Outcome {
  value: unknown;
  errors: Array<{ error: GraphQLError; rest: ReadonlyArray<string | number> }>;
}

/** Sites that share one call (the same field and join values, or one batch). */
interface Group {
  readonly occurrence: Occurrence;
  readonly sites: Site[];
  readonly join: JoinValues;
}

interface BatchGroup {
  readonly occurrence: Occurrence;
  readonly join: JoinValues;
  /** Distinct join values of the batched field, in first-seen order, with their sites. */
  readonly keys: Map<string, { value: unknown; sites: Site[] }>;
}

function itemType(type: GraphQLOutputType | undefined): GraphQLOutputType | undefined {
  const nullable = type && isNonNullType(type) ? type.ofType : type;
  return nullable && isListType(nullable) ? (nullable.ofType as GraphQLOutputType) : undefined;
}

/** Every object below `value` (through lists at any depth) that has a relationship field `locator` knows of. */
function collect(
  value: unknown,
  locator: Locator,
  type: GraphQLOutputType | undefined,
  position: Position | undefined,
  into: Site[],
  included: (occurrence: Occurrence) => boolean,
): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    const item = itemType(type);
    const nullable = item === undefined || !isNonNullType(item);
    for (let i = 0; i < value.length; i++) collect(value[i], locator, item, { up: position, container: value, key: i, nullable }, into, included);
    return;
  }
  const object = value as Record<string, unknown>;
  const first = into.length;
  let stale: string[] | undefined;
  for (const [placeholder, byType] of locator.sites) {
    const typeName = object[placeholder];
    let occurrence = typeof typeName === 'string' ? byType.get(typeName) : undefined;
    if (occurrence === undefined) {
      // A source that left the placeholder out, or wrote something else there (an object of its
      // own making where the target's value goes): the join fields, which are ours and name the
      // type, say which relationship this is. Its value comes from the target whatever the source
      // wrote.
      for (const candidate of byType.values()) {
        // (A relationship without join fields cannot be told this way: only its placeholder says.
        // Nor one the operation skips: its placeholder is left out on purpose, while the join
        // fields it shares with another relationship field are there.)
        if (candidate.joinKeys.length > 0 && included(candidate) && candidate.joinKeys.every((key) => Object.hasOwn(object, key))) {
          occurrence = candidate;
          break;
        }
      }
    }
    if (occurrence) into.push({ object, occurrence, position });
    else for (const candidate of byType.values()) (stale ??= []).push(...candidate.joinKeys);
  }
  // The join fields of a relationship field not there (skipped, or not of this object's type) go,
  // but for those another relationship field of the object reads.
  if (stale) {
    const read = new Set(into.slice(first).flatMap((site) => site.occurrence.joinKeys));
    for (const key of stale) if (!read.has(key)) delete object[key];
  }
  for (const [key, child] of locator.children) {
    if (Object.hasOwn(object, key)) {
      collect(object[key], child.locator, child.type, { up: position, container: object, key, nullable: !isNonNullType(child.type) }, into, included);
    }
  }
}

/** Whether `@skip` / `@include` among `directives` let a selection through with `variables`. */
function passes(directives: readonly DirectiveNode[], variables: { readonly [name: string]: unknown } | undefined): boolean {
  const node = { directives };
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.['if'] === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.['if'] !== false;
}

/** A path of the answer with the keys of ours replaced by the client's. */
function clientPath(plan: JoinPlan, path: ReadonlyArray<string | number>): Array<string | number> {
  return path.map((segment) => (typeof segment === 'string' ? (plan.ownKeys.get(segment) ?? segment) : segment));
}

function pathOf(position: Position | undefined): Array<string | number> {
  const path: Array<string | number> = [];
  for (let p = position; p; p = p.up) path.push(p.key);
  return path.reverse();
}

/** A JSON value as a map key (join values are scalars, enums or lists of them). */
function keyOf(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value === 'string' ? `"${value}` : JSON.stringify(value);
}

/** The join values of one source object as a map key. */
function joinKey(join: JoinValues): string {
  return join.length === 1 ? keyOf(join[0]) : JSON.stringify(join);
}

/** `object[from]` renamed `to` in place, keeping the order of the keys (the placeholder stood where the field goes). */
function renameKey(object: Record<string, unknown>, from: string, to: string, value: unknown): void {
  const keys = Object.keys(object);
  const at = keys.indexOf(from);
  const after = keys.slice(at + 1).map((key) => [key, object[key]] as const);
  for (const [key] of after) delete object[key];
  delete object[from];
  object[to] = value;
  for (const [key, item] of after) object[key] = item;
}

/** Runs the joins of one answer of the sources. */
class Join {
  readonly #plan: JoinPlan;
  readonly #args: ExecutionArgs;
  data: Record<string, unknown> | null;
  readonly #errors: GraphQLError[] = [];
  /** Errors of the joins past {@link MAX_REMOTE_ERRORS}, counted but not made. */
  #leftOut = 0;

  constructor(plan: JoinPlan, args: ExecutionArgs, data: Record<string, unknown>) {
    this.#plan = plan;
    this.#args = args;
    this.data = data;
  }

  /** Whether the operation asks for `occurrence` with its variables: one of its nodes is under no `@skip` / `@include` that leaves it out. */
  readonly #included = (occurrence: Occurrence): boolean =>
    occurrence.conditions.some((conditions) => conditions.every((directives) => passes(directives, this.#args.variableValues ?? undefined)));

  /**
   * The errors of the joins at the client's paths: each error of a target's answer once per source
   * object that used it, the first {@link MAX_REMOTE_ERRORS} of them in all (a target's errors
   * times thousands of source objects would be millions); past that, one more error says how many
   * there were.
   */
  errors(): GraphQLError[] {
    if (this.#leftOut === 0) return this.#errors;
    const total = this.#errors.length + this.#leftOut;
    return [
      ...this.#errors,
      new GraphQLError(`the relationships' calls gave ${String(total)} errors at fields of this operation: the first ${String(MAX_REMOTE_ERRORS)} are passed on`, {
        extensions: { code: 'remote-schema-error' },
      }),
    ];
  }

  /** `null` at `position` or the nearest nullable place above it, as execution propagates a null. */
  #nullOut(position: Position | undefined): void {
    for (let p = position; p; p = p.up) {
      if (p.nullable) {
        (p.container as Record<string | number, unknown>)[p.key] = null;
        return;
      }
    }
    this.data = null;
  }

  async run(): Promise<void> {
    let sites: Site[] = [];
    collect(this.data, this.#plan.root, undefined, undefined, sites, this.#included);
    while (sites.length > 0 && this.data !== null) sites = await this.#level(sites);
  }

  /** One level: every call of these sites, one request per target remote, in parallel; answers the next level's sites. */
  async #level(sites: readonly Site[]): Promise<Site[]> {
    const groups = new Map<string, Group>();
    const batches = new Map<string, BatchGroup>();
    const empty: Site[] = [];
    for (const site of sites) {
      const { occurrence } = site;
      const join = occurrence.joinKeys.map((key) => site.object[key]);
      if (join.some((value) => value === null || value === undefined)) {
        empty.push(site);
        continue;
      }
      const batch = occurrence.call.batch;
      if (batch) {
        const rest = join.map((value, i) => (i === batch.joinIndex ? null : value));
        const id = `${occurrence.call.id}|${JSON.stringify(rest)}`;
        let group = batches.get(id);
        if (!group) batches.set(id, (group = { occurrence, join, keys: new Map() }));
        const value = join[batch.joinIndex];
        const key = keyOf(value);
        const entry = group.keys.get(key);
        if (entry) entry.sites.push(site);
        else group.keys.set(key, { value, sites: [site] });
        continue;
      }
      const id = `${occurrence.call.id}|${joinKey(join)}`;
      const group = groups.get(id);
      if (group) group.sites.push(site);
      else groups.set(id, { occurrence, sites: [site], join });
    }
    // The join values are read; the join fields are ours, not the client's (last in the object:
    // removed from the end, the object keeps its shape's fast path).
    for (const site of sites) {
      const keys = site.occurrence.joinKeys;
      for (let i = keys.length - 1; i >= 0; i--) delete site.object[keys[i]!];
    }
    const next: Site[] = [];
    for (const site of empty) this.#fill(site, null, [], next);

    const requests = new Map<LoadedRemote, { items: CallItem[]; done: Array<(outcome: Outcome) => void> }>();
    const request = (remote: LoadedRemote) => {
      let entry = requests.get(remote);
      if (!entry) requests.set(remote, (entry = { items: [], done: [] }));
      return entry;
    };
    for (const group of groups.values()) {
      const { call } = group.occurrence;
      const entry = request(call.remote);
      entry.items.push({ call, values: call.arguments.map((argument) => argument.value(group.join)) });
      entry.done.push((outcome) => {
        for (const site of group.sites) this.#fill(site, outcome.value, outcome.errors, next);
      });
    }
    for (const group of batches.values()) {
      const { call } = group.occurrence;
      const batch = call.batch!;
      const keys = [...group.keys.values()];
      const values = call.arguments.map((argument, i) => (i === batch.argument ? keys.map((key) => key.value) : argument.value(group.join)));
      const entry = request(call.remote);
      entry.items.push({ call, values });
      entry.done.push((outcome) => this.#matchBatch(group, keys, outcome, next));
    }
    await Promise.all([...requests].map(([remote, entry]) => this.#send(remote, entry.items, entry.done)));
    return next;
  }

  /**
   * Asks `remote` for `items` in one document. When the answer is `null` as a whole because some
   * fields failed (a non-null root field of the target), the other fields are asked again without
   * them, so that one key's failure does not cost the others their values.
   */
  async #send(remote: LoadedRemote, items: readonly CallItem[], done: ReadonlyArray<(outcome: Outcome) => void>): Promise<void> {
    const prefix = this.#plan.prefix;
    const outcomes: Outcome[] = items.map(() => ({ value: null, errors: [] }));
    let pending = items.map((_, i) => i);
    for (let round = 0; pending.length > 0; round++) {
      const asked = pending.map((i) => items[i]!);
      const { document, text, variables } = targetRequest(asked, prefix, this.#args.variableValues);
      const result = await remote.client.send(
        { document, text, variables, operationName: null, schema: this.#args.schema },
        this.#args.contextValue,
        'query',
      );
      const data = (result.data ?? null) as Record<string, unknown> | null;
      const failed = new Set<number>();
      const general: GraphQLError[] = [];
      const own: Array<[number, GraphQLError, ReadonlyArray<string | number>]> = [];
      for (const error of result.errors ?? []) {
        const path = error.path ?? [];
        const alias = typeof path[0] === 'string' && path[0].startsWith(prefix) ? Number(path[0].slice(prefix.length)) : Number.NaN;
        if (alias >= 0 && alias < asked.length) {
          failed.add(alias);
          own.push([alias, error, path.slice(1 + asked[alias]!.call.path.length)]);
        } else {
          // Not the answer of one field (the call failed, or an error without a path): every field of the call gets it.
          general.push(error);
        }
      }
      const nulledByOthers = data === null && general.length === 0 && failed.size > 0 && failed.size < asked.length;
      for (const [alias, error, rest] of own) outcomes[pending[alias]!]!.errors.push({ error, rest });
      if (nulledByOthers && round < MAX_RETRIES) {
        pending = pending.filter((_, alias) => !failed.has(alias));
        continue;
      }
      if (nulledByOthers) {
        general.push(
          new GraphQLError(`remote schema "${remote.name}" answered no data: other fields asked in the same request failed`, {
            extensions: { code: 'remote-schema-error' },
          }),
        );
        pending = pending.filter((_, alias) => !failed.has(alias));
      }
      pending.forEach((index, alias) => {
        const { call } = items[index]!;
        for (const error of general) outcomes[index]!.errors.push({ error, rest: [] });
        let value: unknown = data?.[`${prefix}${alias}`] ?? null;
        for (const field of call.path) value = unwrap(value, field);
        if (value !== null && call.typenames) rename(value, call.typenames, call.typeToPublic);
        outcomes[index]!.value = value;
      });
      pending = [];
    }
    outcomes.forEach((outcome, i) => done[i]!(outcome));
  }

  /** A batch's list answer, matched back to the join values by the match field or by position. */
  #matchBatch(group: BatchGroup, keys: ReadonlyArray<{ value: unknown; sites: Site[] }>, outcome: Outcome, next: Site[]): void {
    const { call } = group.occurrence;
    const { matchKey } = call.batch!;
    const list = outcome.value;
    const byIndex = new Map<number, number>();
    const values = new Map<number, unknown>();
    if (Array.isArray(list)) {
      if (matchKey === undefined) {
        if (list.length !== keys.length) {
          const error = new GraphQLError(
            `remote schema "${call.remote.name}" answered ${String(list.length)} items for ${String(keys.length)} keys of relationship "${group.occurrence.binding.compiled.name}"`,
            { extensions: { code: 'remote-schema-error' } },
          );
          for (const key of keys) for (const site of key.sites) this.#fill(site, null, [...outcome.errors, { error, rest: [] }], next);
          return;
        }
        list.forEach((item, i) => {
          byIndex.set(i, i);
          values.set(i, item);
        });
      } else {
        const position = new Map(keys.map((key, i) => [keyOf(key.value), i]));
        list.forEach((item, i) => {
          if (item === null || typeof item !== 'object') {
            // A null item says nothing of its key: its errors go by position when the list has one item per key.
            if (list.length === keys.length) byIndex.set(i, i);
            return;
          }
          const record = item as Record<string, unknown>;
          const at = position.get(keyOf(record[matchKey]));
          delete record[matchKey];
          if (at === undefined) return;
          byIndex.set(i, at);
          if (!values.has(at)) values.set(at, item);
        });
      }
    }
    keys.forEach((key, i) => {
      const errors = outcome.errors.flatMap(({ error, rest }) => {
        // An error of the whole list, or of an item that matches no key, is every key's.
        if (rest.length === 0 || typeof rest[0] !== 'number' || !byIndex.has(rest[0])) return [{ error, rest: [] }];
        return byIndex.get(rest[0]) === i ? [{ error, rest: rest.slice(1) }] : [];
      });
      for (const site of key.sites) this.#fill(site, values.get(i) ?? null, errors, next);
    });
  }

  /** Puts `value` in the site's field, the errors at its path, and finds the next level's sites in it. */
  #fill(site: Site, value: unknown, errors: Outcome['errors'], next: Site[]): void {
    const { object, occurrence } = site;
    const { key, placeholder, binding } = occurrence;
    // An object shared by several places (one value of the level above) is filled once per place.
    if (placeholder === key || !Object.hasOwn(object, placeholder)) object[key] = value;
    else renameKey(object, placeholder, key, value);
    const reported = errors.length > 0;
    const room = Math.max(MAX_REMOTE_ERRORS - this.#errors.length, 0);
    this.#leftOut += Math.max(errors.length - room, 0);
    for (const { error, rest } of errors.length > room ? errors.slice(0, room) : errors) {
      this.#errors.push(
        new GraphQLError(error.message, {
          nodes: occurrence.nodes,
          path: [...pathOf(site.position), key, ...clientPath(this.#plan, rest)],
          ...(error.extensions && Object.keys(error.extensions).length > 0 ? { extensions: error.extensions } : {}),
        }),
      );
    }
    if (value === null || value === undefined) {
      if (binding.nonNull) {
        if (reported) {
          // Its errors say why it is null.
        } else if (this.#errors.length >= MAX_REMOTE_ERRORS) {
          this.#leftOut++;
        } else {
          this.#errors.push(
            new GraphQLError(`Cannot return null for non-nullable field ${binding.parentType}.${binding.compiled.name}.`, {
              nodes: occurrence.nodes,
              path: [...pathOf(site.position), key],
            }),
          );
        }
        this.#nullOut(site.position);
      }
      return;
    }
    if (occurrence.inner) {
      collect(value, occurrence.inner, occurrence.type, { up: site.position, container: object, key, nullable: !binding.nonNull }, next, this.#included);
    }
  }
}

/** The value of field `field` of the level below (through lists). */
function unwrap(value: unknown, field: string): unknown {
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) return value.map((item) => unwrap(item, field));
  return (value as Record<string, unknown>)[field] ?? null;
}

/**
 * The client's answer from the sources' answer to the join plan's base document: every
 * relationship field filled level by level (one request per target remote per level), the join
 * fields and placeholders removed, errors at the client's paths.
 */
export async function executeJoins(plan: JoinPlan, result: ExecutionResult, args: ExecutionArgs): Promise<ExecutionResult> {
  const data = result.data as Record<string, unknown> | null | undefined;
  const join = data ? new Join(plan, args, data) : undefined;
  if (join) await join.run();
  const errors = (result.errors ?? []).map((error) => {
    if (!error.path?.some((segment) => typeof segment === 'string' && plan.ownKeys.has(segment))) return error;
    (error as { path: ReadonlyArray<string | number> | undefined }).path = clientPath(plan, error.path);
    return error;
  });
  if (!join) return errors.length > 0 ? { ...result, errors } : result;
  for (const error of join.errors()) errors.push(error);
  const out: ExecutionResult = { ...result, data: join.data };
  if (errors.length > 0) out.errors = errors;
  return out;
}
