import { GraphQLError, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { AnswerPlan, FieldCheck, Shape, TypeCheck } from './answer-plan.js';
import { hiddenNamesOf } from './answer-rules.js';
import type { RoleGrant } from './grant.js';
import { scrubHiddenNames, withoutHiddenNames } from './hidden-names.js';

/** The error of a non-null place whose value a role may not see. */
export const OUTSIDE_ROLE_MESSAGE = "the remote answered a value outside this role's schema";

/** A value to keep (possibly changed in place), one the role may not see, or a null its parent must take. */
const KEEP = 0;
const HIDDEN = 1;
const BUBBLE = 2;
type Outcome = typeof KEEP | typeof HIDDEN | typeof BUBBLE;

type Segment = string | number;

/**
 * One walk over one answer, along the objects its document selects. The answer was just parsed
 * from the remote's JSON and belongs to this request (or, for a subscription's event shared by
 * subscribers with the same session, to each of them alike: the walk changes nothing twice), so
 * it is changed in place.
 */
class Walk {
  /** The path in the answer as the client gets it (list indices after the items left out). */
  readonly #path: Segment[] = [];
  /** The same path in the remote's answer (indices as the remote sent them). */
  readonly #original: Segment[] = [];
  readonly errors: GraphQLError[] = [];
  /** Paths in the remote's answer (JSON) of values left out or nulled because the role may not see them. */
  removed: Set<string> | undefined;
  /** Lists with items left out: their path in the remote's answer (JSON) -> the indices left out, ascending. */
  dropped: Map<string, number[]> | undefined;
  /** Of {@link removed}, the fields whose value was hidden: the field itself stays in the answer (null, or its null taken by a parent). */
  nulled: Set<string> | undefined;

  fields(object: Record<string, unknown>, fields: readonly FieldCheck[]): Outcome {
    for (const { key, check } of fields) {
      if (!Object.hasOwn(object, key)) continue;
      this.#path.push(key);
      this.#original.push(key);
      const outcome = this.#value(object[key], check);
      if (outcome === HIDDEN) (this.nulled ??= new Set()).add(this.#remove());
      if (outcome !== KEEP) {
        if (check.nonNull) {
          if (outcome === HIDDEN) this.errors.push(outsideError([...this.#path]));
          this.#path.pop();
          this.#original.pop();
          return BUBBLE;
        }
        object[key] = null;
      }
      this.#path.pop();
      this.#original.pop();
    }
    return KEEP;
  }

  /**
   * A value at a place of type `check`, its own non-null aside (the caller decides what a failure
   * does). A value of another kind than the place holds is not the role's to see.
   */
  #value(value: unknown, check: TypeCheck): Outcome {
    if (value === null || value === undefined) return KEEP;
    if (check.item) return Array.isArray(value) ? this.#list(value, check.item) : HIDDEN;
    if (typeof value === 'object') {
      if (check.shape === undefined || Array.isArray(value)) return HIDDEN;
      return this.object(value as Record<string, unknown>, check.shape);
    }
    if (check.shape) return HIDDEN;
    if (check.values) return typeof value === 'string' && check.values.has(value) ? KEEP : HIDDEN;
    return KEEP;
  }

  /** An object of `shape`: keys the document does not select left out, then the checks of its fields. */
  object(object: Record<string, unknown>, shape: Shape): Outcome {
    let fields = shape.fields;
    if (shape.typename !== undefined) {
      const typename = object[shape.typename];
      if (shape.injected) delete object[shape.typename];
      // A remote that does not say which type it answered gets the benefit of no doubt.
      if (typeof typename !== 'string') return HIDDEN;
      if (shape.allowed && !shape.allowed.has(typename)) return HIDDEN;
      fields = shape.byType?.get(typename);
    }
    if (shape.typenames) {
      for (const key of shape.typenames.keys) {
        const typename = object[key];
        if (typename !== undefined && (typeof typename !== 'string' || !shape.typenames.names.has(typename))) return HIDDEN;
      }
    }
    for (const key in object) {
      if (shape.keys.has(key)) continue;
      // Not asked for: not the role's to see (a hostile or faulty remote's extra field).
      delete object[key];
      this.#original.push(key);
      this.#remove();
      this.#original.pop();
    }
    return fields ? this.fields(object, fields) : KEEP;
  }

  #list(list: unknown[], item: TypeCheck): Outcome {
    let kept = 0;
    let dropped: number[] | undefined;
    for (let index = 0; index < list.length; index++) {
      this.#path.push(kept);
      this.#original.push(index);
      const outcome = this.#value(list[index], item);
      if (outcome === HIDDEN) {
        // Left out of the list, whatever the nullability of its items.
        this.#remove();
        (dropped ??= []).push(index);
      } else if (outcome === BUBBLE && item.nonNull) {
        this.#path.pop();
        this.#original.pop();
        return BUBBLE;
      } else {
        list[kept++] = outcome === BUBBLE ? null : list[index];
      }
      this.#path.pop();
      this.#original.pop();
    }
    if (dropped) {
      list.length = kept;
      (this.dropped ??= new Map()).set(JSON.stringify(this.#original), dropped);
    }
    return KEEP;
  }

  /** Notes the value at the current path as removed; its key. */
  #remove(): string {
    const key = JSON.stringify(this.#original);
    (this.removed ??= new Set()).add(key);
    return key;
  }
}

function outsideError(path: Segment[]): GraphQLError {
  return new GraphQLError(OUTSIDE_ROLE_MESSAGE, { path, extensions: { code: 'remote-schema-error' } });
}

/**
 * The remote's answer as the role may see it, by `plan`: keys no object of the document selects
 * are left out; an object of a runtime type the role does not see (by the gateway's `__typename`
 * or the client's), or an enum value it does not see, is left out of a list, nulled in a nullable
 * field, and in a non-null field nulls the nearest nullable place above with the error
 * {@link OUTSIDE_ROLE_MESSAGE} (`data` itself when nothing above is nullable). The remote's errors
 * about what was left out go with it; the others follow the items left out of lists. `__typename`
 * fields the gateway asked for itself are taken out.
 */
export function checkAnswer(plan: AnswerPlan, result: ExecutionResult): ExecutionResult {
  const data = result.data as Record<string, unknown> | null | undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return result;
  const walk = new Walk();
  // The root's own `__typename` names the root type: nothing the role does not see.
  const outcome = walk.object(data, plan.root);
  const remote = result.errors ?? [];
  const asked = remote.every((error) => asks(plan.root, error.path)) ? remote : remote.filter((error) => asks(plan.root, error.path));
  if (!walk.removed && walk.errors.length === 0 && asked === remote) return result;
  const errors = [...followRemovals(asked, walk), ...walk.errors];
  // Every error may have been about what was left out: then the answer has none.
  const { errors: _remote, ...rest } = result;
  return { ...rest, data: outcome === BUBBLE ? null : data, ...(errors.length > 0 ? { errors } : {}) };
}

/**
 * Whether `path` (of a remote's error, in the answer's keys) stays within what the document asks:
 * an error at a key it did not select is about something the role was not answered.
 */
function asks(root: Shape, path: ReadonlyArray<string | number> | undefined): boolean {
  let shape: Shape | undefined = root;
  let check: TypeCheck | undefined;
  for (const segment of path ?? []) {
    if (typeof segment === 'number') {
      // An index below a list; anywhere else it says nothing the checks know.
      if (check?.item === undefined) return shape === undefined;
      check = check.item;
      continue;
    }
    if (check !== undefined) {
      // A key below a scalar, an enum or a list itself: nothing the document asks.
      if (check.shape === undefined) return false;
      shape = check.shape;
    }
    if (shape === undefined) return true;
    if (!shape.keys.has(segment)) return false;
    check = fieldCheck(shape, segment);
    shape = undefined;
    // Below a value without checks (a custom scalar, `__typename`): the remote's own business.
    if (check === undefined) return true;
  }
  return true;
}

/** The check of the field at `key` of an object of `shape` (of any of its runtime types). */
function fieldCheck(shape: Shape, key: string): TypeCheck | undefined {
  const own = shape.fields?.find((field) => field.key === key);
  if (own) return own.check;
  for (const fields of shape.byType?.values() ?? []) {
    const found = fields.find((field) => field.key === key);
    if (found) return found.check;
  }
  return undefined;
}

/**
 * The remote's errors with paths as the client gets them; those below a value left out are dropped.
 * An error at a field whose value was hidden stays: the field is still in the answer, and the
 * error's text has had the hidden names taken out.
 */
function followRemovals(errors: readonly GraphQLError[], walk: Walk): GraphQLError[] {
  const kept: GraphQLError[] = [];
  for (const error of errors) {
    const original = error.path;
    if (!original?.length) {
      kept.push(error);
      continue;
    }
    const prefix: Segment[] = [];
    let path: Segment[] | undefined = [];
    for (const [at, segment] of original.entries()) {
      let moved = segment;
      if (typeof segment === 'number') {
        const dropped = walk.dropped?.get(JSON.stringify(prefix));
        if (dropped?.includes(segment)) {
          path = undefined;
          break;
        }
        if (dropped) moved = segment - dropped.filter((index) => index < segment).length;
      }
      prefix.push(segment);
      const key = JSON.stringify(prefix);
      if (walk.removed?.has(key) && !(at === original.length - 1 && walk.nulled?.has(key))) {
        path = undefined;
        break;
      }
      path.push(moved);
    }
    if (!path) continue;
    if (path.some((segment, i) => segment !== original[i])) (error as { path: ReadonlyArray<Segment> }).path = path;
    kept.push(error);
  }
  return kept;
}

/** How a role's answers from one remote are guarded: what its grant hides, and the checks of the document sent. */
export interface AnswerGuard {
  readonly grant: RoleGrant;
  /** The remote's own schema the grant was checked against. */
  readonly remote: GraphQLSchema;
  /** `undefined`: no operation to check (the remote's own validation answers it). */
  readonly plan: AnswerPlan | undefined;
}

/**
 * A remote's answer to a role: its errors and extensions without the names the role does not see,
 * then its data checked by the guard's plan (see {@link checkAnswer}).
 */
export function guardAnswer(guard: AnswerGuard, result: ExecutionResult): ExecutionResult {
  if (result.errors?.length) {
    scrubHiddenNames(result.errors, hiddenNamesOf(guard.grant, guard.remote));
    // Without `data` (the remote refused the operation, or a subscription's `error` message) an
    // error's path is nothing of the answer: a remote's may name anything, so the role gets none.
    if (!('data' in result)) for (const error of result.errors) if (error.path !== undefined) (error as { path: unknown }).path = undefined;
  }
  let answer = result;
  // The answer's own extensions (a remote's tracing or cost report, say) may name types too.
  if (answer.extensions) answer = { ...answer, extensions: withoutHiddenNames(answer.extensions, hiddenNamesOf(guard.grant, guard.remote)) };
  return guard.plan ? checkAnswer(guard.plan, answer) : answer;
}
