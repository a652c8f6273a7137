import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyTooLargeError, BoundedBody, declaredTooLarge, readBoundedText } from '../src/index.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * A real HTTP server on 127.0.0.1 that answers each path with chunks the test set, written one by
 * one (without Content-Length unless `length` is set), and records whether the client read an
 * answer to its end or cut it off.
 */
interface Answer {
  chunks: Buffer[];
  length?: number;
}
const answers = new Map<string, Answer>();
const outcomes = new Map<string, 'finished' | 'cut off'>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? '/';
    const answer = answers.get(path) ?? { chunks: [] };
    response.writeHead(200, { 'content-type': 'application/json', ...(answer.length !== undefined && { 'content-length': String(answer.length) }) });
    response.on('close', () => outcomes.set(path, response.writableFinished ? 'finished' : 'cut off'));
    let i = 0;
    const next = (): void => {
      if (response.destroyed) return;
      const chunk = answer.chunks[i++];
      if (chunk === undefined) {
        response.end();
        return;
      }
      // One chunk per turn, so that the client sees them apart.
      response.write(chunk, () => setImmediate(next));
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let served = 0;
function serve(answer: Answer): string {
  const path = `/${++served}`;
  answers.set(path, answer);
  return `${base}${path}`;
}

async function fetchText(answer: Answer, maxBytes: number): Promise<string> {
  return readBoundedText(await fetch(serve(answer)), { maxBytes });
}

/** The same answer read from Node's `IncomingMessage` with {@link BoundedBody}, as a node:http client does. */
function nodeText(answer: Answer, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    get(serve(answer), (response) => {
      if (declaredTooLarge(response.headers['content-length'], maxBytes)) {
        response.destroy();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      const body = new BoundedBody(maxBytes);
      response.on('data', (chunk: Buffer) => {
        if (!body.push(chunk)) {
          response.destroy();
          reject(new BodyTooLargeError(maxBytes));
        }
      });
      response.on('end', () => resolve(body.text()));
    }).on('error', reject);
  });
}

const readers = [
  ['readBoundedText (fetch)', fetchText],
  ['BoundedBody (node:http)', nodeText],
] as const;

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

for (const [name, read] of readers) {
  describe(name, () => {
    it('reads a body as UTF-8 text, a character split across chunks included', async () => {
      const text = '{"name":"名前 ✓"}';
      const bytes = Buffer.from(text);
      const cut = bytes.indexOf(Buffer.from('前')) + 1;
      expect(await read({ chunks: [bytes.subarray(0, cut), bytes.subarray(cut)] }, 1024)).toBe(text);
    });

    it('drops one byte-order mark at the start, also when it is split across chunks', async () => {
      expect(await read({ chunks: [Buffer.concat([BOM, Buffer.from('{}')])] }, 1024)).toBe('{}');
      expect(await read({ chunks: [BOM.subarray(0, 1), BOM.subarray(1), Buffer.from('{}')] }, 1024)).toBe('{}');
      expect(await read({ chunks: [BOM] }, 1024)).toBe('');
    });

    it('keeps a byte-order mark anywhere else, and a second one at the start', async () => {
      expect(await read({ chunks: [Buffer.from('{"a":"'), BOM, Buffer.from('"}')] }, 1024)).toBe('{"a":"\uFEFF"}');
      expect(await read({ chunks: [BOM, BOM, Buffer.from('x')] }, 1024)).toBe('\uFEFFx');
    });

    it('turns bytes that are not UTF-8 into U+FFFD', async () => {
      expect(await read({ chunks: [Buffer.from([0x61, 0xff, 0x62])] }, 1024)).toBe('a\uFFFDb');
    });

    it('reads an empty body as the empty string', async () => {
      expect(await read({ chunks: [] }, 1024)).toBe('');
    });

    it('takes a body of exactly the limit (the mark counted) and refuses one byte more', async () => {
      expect(await read({ chunks: [BOM, Buffer.from('x'.repeat(97))] }, 100)).toBe('x'.repeat(97));
      await expect(read({ chunks: [BOM, Buffer.from('x'.repeat(98))] }, 100)).rejects.toThrowError(new BodyTooLargeError(100));
    });

    it('refuses by Content-Length before reading, and cuts a long chunked body off at the limit', async () => {
      await expect(read({ chunks: [Buffer.alloc(64 * 1024, 0x61)], length: 64 * 1024 }, 1000)).rejects.toThrowError(
        new BodyTooLargeError(1000),
      );
      const chunks = Array.from({ length: 512 }, () => Buffer.alloc(64 * 1024, 0x61)); // 32 MiB
      const before = served;
      await expect(read({ chunks }, 100_000)).rejects.toThrowError(BodyTooLargeError);
      await until(() => outcomes.get(`/${before + 1}`) === 'cut off');
    });
  });
}

describe('readBoundedText', () => {
  it("throws the caller's error for a body over the limit", async () => {
    const tooLarge = (max: number) => new RangeError(`the answer is larger than ${max} bytes`);
    await expect(readBoundedText(await fetch(serve({ chunks: [Buffer.alloc(10)] })), { maxBytes: 5, tooLarge })).rejects.toThrowError(
      new RangeError('the answer is larger than 5 bytes'),
    );
  });

  it('reads a request body (a server reading what a client sent)', async () => {
    const chunks = [BOM, Buffer.from('{"type":'), Buffer.from('"x"}')];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
        controller.close();
      },
    });
    const request = new Request('http://127.0.0.1/', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(await readBoundedText(request, { maxBytes: 100 })).toBe('{"type":"x"}');
    expect(await readBoundedText(new Request('http://127.0.0.1/'), { maxBytes: 100 })).toBe('');
  });
});

describe('readBoundedText and the stream of a refused body', () => {
  function source(contentLength: string | null): { source: { headers: Headers; body: ReadableStream<Uint8Array> }; cancelled: () => boolean } {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(64));
      },
      cancel() {
        cancelled = true;
      },
    });
    const headers = new Headers(contentLength === null ? {} : { 'content-length': contentLength });
    return { source: { headers, body }, cancelled: () => cancelled };
  }

  for (const declared of ['1000', null]) {
    const how = declared === null ? 'counted as it streams' : 'by its Content-Length';
    it(`cancels it by default (${how})`, async () => {
      const { source: s, cancelled } = source(declared);
      await expect(readBoundedText(s, { maxBytes: 100 })).rejects.toBeInstanceOf(BodyTooLargeError);
      await until(cancelled);
    });

    it(`leaves it to its owner, unlocked, with cancel: false (${how})`, async () => {
      const { source: s, cancelled } = source(declared);
      await expect(readBoundedText(s, { maxBytes: 100, cancel: false })).rejects.toBeInstanceOf(BodyTooLargeError);
      expect(cancelled()).toBe(false);
      expect(s.body.locked).toBe(false);
    });
  }
});

describe('declaredTooLarge', () => {
  it('is true only for a Content-Length over the limit', () => {
    expect([declaredTooLarge('11', 10), declaredTooLarge('10', 10), declaredTooLarge(null, 10), declaredTooLarge(undefined, 10), declaredTooLarge('x', 10)]).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
