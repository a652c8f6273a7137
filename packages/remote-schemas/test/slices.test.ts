import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { introspectionFromSchema } from 'graphql';
import { createGeneratedSchema } from '@svc-graphql/sample-remotes';
import { parseJsonInSlices, parseJsonInSteps, runInSlices, yieldToEventLoop } from '../src/slices.js';

/** JSON.parse's value or the fact that it refused the text. */
function expected(text: string): { value: unknown } | 'refused' {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return 'refused';
  }
}

async function actual(text: string): Promise<{ value: unknown } | 'refused'> {
  try {
    return { value: await runInSlices(parseJsonInSteps(text), 0) };
  } catch (error) {
    // SyntaxError, or RangeError for nesting deeper than JSON.parse itself goes (as JSON.parse).
    if (error instanceof SyntaxError || error instanceof RangeError) return 'refused';
    throw error;
  }
}

// JSON text with whitespace between all tokens, so that splitting is tried everywhere.
const spaced = fc
  .tuple(fc.jsonValue({ maxDepth: 7 }), fc.constantFrom('', ' ', '\n\t ', '\r\n'))
  .map(([value, space]) => JSON.stringify(value, null, space));

describe('parseJsonInSteps', () => {
  it('gives what JSON.parse gives, for any JSON value', async () => {
    await fc.assert(
      fc.asyncProperty(spaced, async (text) => {
        expect(await actual(text)).toEqual(expected(text));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what JSON.parse refuses, and accepts what it accepts, for damaged texts', async () => {
    const damaged = fc
      .tuple(spaced, fc.nat(), fc.constantFrom('', ',', ':', '"', '\\', '[', ']', '{', '}', ' ', '1', 'x', 'null', '\u0001'), fc.nat({ max: 2 }))
      .map(([text, at, insert, remove]) => {
        const i = text.length === 0 ? 0 : at % text.length;
        return text.slice(0, i) + insert + text.slice(i + remove);
      });
    await fc.assert(
      fc.asyncProperty(damaged, async (text) => {
        expect(await actual(text)).toEqual(expected(text));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['an empty text', ''],
    ['whitespace only', '  \n'],
    ['a trailing comma in an array', '[1,2,]'],
    ['a trailing comma in an object', '{"a":1,}'],
    ['a missing colon', '{"a" 1}'],
    ['mismatched brackets', '[{]}'],
    ['a second value', '{} {}'],
    ['an unterminated string', '{"a":"b'],
    ['an escaped closing quote', '["a\\"]'],
    ['a leading zero', '[01]'],
    ['a raw control character in a key', '{"a\u0001":1}'],
  ])('refuses %s like JSON.parse', async (_name, text) => {
    expect(expected(text)).toBe('refused');
    expect(await actual(text)).toBe('refused');
  });

  it('keeps "__proto__" as an own key and the last of repeated keys, as JSON.parse does', async () => {
    const text = '{"__proto__": {"polluted": true}, "a": 1, "a": 2, "b": {"__proto__": [1]}}';
    const value = (await actual(text)) as { value: Record<string, unknown> };
    expect(value).toEqual(expected(text));
    expect(Object.getPrototypeOf(value.value)).toBe(Object.prototype);
    expect(Object.keys(value.value)).toEqual(['__proto__', 'a', 'b']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('parses deeply nested texts like JSON.parse, and refuses what it refuses', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const text = nested(2_000);
    expect(JSON.stringify((await actual(text)) as { value: unknown })).toBe(JSON.stringify({ value: JSON.parse(text) }));
    expect(await actual(nested(2_000).slice(0, -1))).toBe('refused');
    // A million levels: the levels below the split depth are one JSON.parse, so this stays one
    // pass over the text (no rescanning per level); compared by walking, not by a deep equal.
    const deep = nested(1_000_000);
    const parsed = await actual(deep);
    expect(parsed).not.toBe('refused');
    let levels = 0;
    let inner: unknown = (parsed as { value: unknown }).value;
    while (Array.isArray(inner) && inner.length === 1) {
      inner = inner[0];
      levels++;
    }
    expect(levels).toBe(1_000_000 - 1);
    expect(inner).toEqual([]);
    expect(await actual(deep.slice(1))).toBe('refused');
  });

  it('parses an introspection result of 2,000 types in many steps, to the same value', async () => {
    const text = JSON.stringify({ data: introspectionFromSchema(createGeneratedSchema({ types: 2000 })) });
    const steps = parseJsonInSteps(text);
    let pauses = 0;
    let step = steps.next();
    while (!step.done) {
      pauses++;
      step = steps.next();
    }
    // At least one chance to pause per 32 KiB of text.
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(text.length / 32_768));
    expect(step.value).toEqual(JSON.parse(text));
  });
});

describe('parseJsonInSlices', () => {
  it('lets timers run while a large text is parsed', async () => {
    const text = JSON.stringify({ data: introspectionFromSchema(createGeneratedSchema({ types: 3000 })) });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      const value = await parseJsonInSlices(text, 0);
      expect(value).toEqual(JSON.parse(text));
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(1);
  });

  it('refuses a small invalid text too', async () => {
    await expect(parseJsonInSlices('{"a":', 5)).rejects.toBeInstanceOf(SyntaxError);
  });
});

describe('yieldToEventLoop', () => {
  it('lets an I/O callback be followed by timers before it resumes', async () => {
    // Called from an I/O callback, a single setImmediate would resume before any timer.
    const { createServer, connect } = await import('node:net');
    const server = createServer((socket) => socket.end('x'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('data', () => {
        setTimeout(() => order.push('timer'), 0);
        // Make sure the timer is due by the time the loop reaches its timers phase.
        const until = Date.now() + 3;
        while (Date.now() < until);
        void yieldToEventLoop().then(() => {
          order.push('resumed');
          socket.destroy();
          resolve();
        });
      });
    });
    server.close();
    expect(order).toEqual(['timer', 'resumed']);
  });
});
