/**
 * Work on large remote answers (a 5,000-type introspection result is about 4.5 MB of JSON) done in
 * slices, with the event loop let through between them, so that requests being served while a
 * remote schema is added are not held up by one long block.
 */

/** How long one slice of such work may hold the event loop, in milliseconds. */
export const SLICE_MS = 8;

/**
 * Lets the event loop run: timers, and I/O such as requests waiting to be read. A single
 * `setImmediate` is not enough when called from an I/O callback (the answer of a remote arrives in
 * one): it runs in the same loop iteration's check phase, before any timer or other socket. The
 * second one is queued from the check phase, so it runs only after a full iteration.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Runs `work` slice by slice: it yields (a generator's `yield`) wherever it may be paused. */
export async function runInSlices<T>(work: Generator<void, T, void>, sliceMs: number): Promise<T> {
  let deadline = performance.now() + sliceMs;
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (performance.now() >= deadline) {
      await yieldToEventLoop();
      deadline = performance.now() + sliceMs;
    }
  }
}

/** Texts up to this size go to `JSON.parse` whole. */
const SMALL_TEXT = 64 * 1024;
/**
 * Containers at depths below this are built here, member by member; every value at this depth
 * (and every key, string and number above it) goes to `JSON.parse` whole. An introspection result's
 * types are at depth 4 (`data.__schema.types[i]`), each a few hundred bytes to a few kilobytes.
 */
const SPLIT_DEPTH = 4;
/** Characters scanned between two chances to pause. */
const STEP_CHARS = 16 * 1024;

function unexpected(at: number, text: string): SyntaxError {
  return new SyntaxError(
    at >= text.length ? 'Unexpected end of JSON input' : `Unexpected token ${JSON.stringify(text[at])} in JSON at position ${at}`,
  );
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipWhitespace(text: string, at: number): number {
  while (at < text.length && isWhitespace(text.charCodeAt(at))) at++;
  return at;
}

/** The index after the string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) throw unexpected(text.length, text);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** The index after the number, `true`, `false` or `null` (or whatever else) starting at `start`. */
function scalarEnd(text: string, start: number): number {
  let at = start;
  for (; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (isWhitespace(code) || code === 0x2c || code === 0x5d || code === 0x7d) break;
  }
  if (at === start) throw unexpected(start, text);
  return at;
}

/**
 * The index after the object or array starting at `start`, following strings and brackets only
 * (what is between them is checked by `JSON.parse` afterwards). One tight pass: this is most of
 * the cost of parsing in slices.
 */
function containerEnd(text: string, start: number): number {
  const length = text.length;
  let depth = 0;
  let at = start;
  while (at < length) {
    const code = text.charCodeAt(at);
    if (code === 0x22) {
      at = stringEnd(text, at);
      continue;
    }
    at++;
    if (code === 0x7b || code === 0x5b) depth++;
    else if ((code === 0x7d || code === 0x5d) && --depth === 0) return at;
  }
  throw unexpected(length, text);
}

interface Frame {
  readonly value: unknown[] | Record<string, unknown>;
  readonly array: boolean;
  key: string;
}

/**
 * The one pass over `text`: containers near the top are built here, everything else is sliced
 * out and given to `JSON.parse`, which also checks it. Yields every `STEP_CHARS` or so.
 */
export function* parseJsonInSteps(text: string): Generator<void, unknown, void> {
  const stack: Frame[] = [];
  let at = 0;
  let scanned = 0;
  let result: unknown;
  // What is expected next: a value, a value or `]` (after `[`), a key or `}` (after `{`), a key
  // (after `,` in an object), or `,` / the container's end (after a value).
  let expect = 'value' as 'value' | 'value-or-end' | 'key-or-end' | 'key' | 'next';
  const attach = (value: unknown) => {
    const frame = stack[stack.length - 1];
    if (frame === undefined) {
      result = value;
    } else if (frame.array) {
      (frame.value as unknown[]).push(value);
    } else {
      // As JSON.parse does: an own property, also for "__proto__"; a repeated key keeps the last value.
      Object.defineProperty(frame.value, frame.key, { value, writable: true, enumerable: true, configurable: true });
    }
  };
  for (;;) {
    if (at - scanned >= STEP_CHARS) {
      scanned = at;
      yield;
    }
    at = skipWhitespace(text, at);
    const code: number = text.charCodeAt(at);
    const frame = stack[stack.length - 1];
    if (expect === 'next') {
      if (frame === undefined) {
        if (at !== text.length) throw unexpected(at, text);
        return result;
      }
      if (code === 0x2c) {
        expect = frame.array ? 'value' : 'key';
        at++;
      } else if (code === (frame.array ? 0x5d : 0x7d)) {
        stack.pop();
        at++;
        attach(frame.value);
        expect = 'next';
      } else {
        throw unexpected(at, text);
      }
      continue;
    }
    if (expect === 'key-or-end' || expect === 'value-or-end') {
      if (code === (expect === 'key-or-end' ? 0x7d : 0x5d)) {
        stack.pop();
        at++;
        attach(frame?.value);
        expect = 'next';
        continue;
      }
      expect = expect === 'key-or-end' ? 'key' : 'value';
    }
    if (expect === 'key') {
      if (code !== 0x22) throw unexpected(at, text);
      const end = stringEnd(text, at);
      (frame as Frame).key = JSON.parse(text.slice(at, end)) as string;
      at = skipWhitespace(text, end);
      if (text.charCodeAt(at) !== 0x3a) throw unexpected(at, text);
      at++;
      expect = 'value';
      continue;
    }
    // A value.
    if (at >= text.length) throw unexpected(at, text);
    const open = code === 0x7b || code === 0x5b;
    if (open && stack.length < SPLIT_DEPTH) {
      const array: boolean = code === 0x5b;
      stack.push({ value: array ? [] : {}, array, key: '' });
      expect = array ? 'value-or-end' : 'key-or-end';
      at++;
      continue;
    }
    let end: number;
    if (code === 0x22) {
      end = stringEnd(text, at);
    } else if (!open) {
      end = scalarEnd(text, at);
    } else {
      end = containerEnd(text, at);
    }
    const value: unknown = JSON.parse(text.slice(at, end));
    at = end;
    attach(value);
    expect = 'next';
  }
}

/**
 * `JSON.parse(text)` for a text of any size, in slices of about `sliceMs` with the event loop let
 * through between them. The value is the one `JSON.parse` gives, and text `JSON.parse` refuses is
 * refused (with a `SyntaxError`, whose message may differ).
 */
export function parseJsonInSlices(text: string, sliceMs: number): Promise<unknown> {
  if (text.length <= SMALL_TEXT) return Promise.resolve().then(() => JSON.parse(text));
  return runInSlices(parseJsonInSteps(text), sliceMs);
}
