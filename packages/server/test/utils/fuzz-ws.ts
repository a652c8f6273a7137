import fc from 'fast-check';
import WebSocket from 'ws';
import { ADMIN_SECRET, REQUEST_TIMEOUT_MS } from './fuzz-server.js';
import { partialRecord, sometimes } from './fuzz-common.js';
import { authorization, credentials, headerValue, queryText, subscriptionDocument, variables } from './fuzz-graphql.js';

/** One step of a graphql-ws conversation as a client drives it. */
export type WsStep =
  | { kind: 'text'; data: string }
  | { kind: 'binary'; data: Uint8Array }
  /** A text frame whose bytes are not UTF-8: the WebSocket layer itself must refuse it. */
  | { kind: 'bad-utf8'; data: Uint8Array }
  /** Wait until a `connection_init` sent so far is acknowledged or refused. */
  | { kind: 'settle' }
  | { kind: 'pause'; ms: number };

export interface WsScenario {
  protocols: readonly string[];
  upgradeHeaders: Record<string, string>;
  steps: WsStep[];
}

/** What became of the connection. */
export interface WsOutcome {
  /** The HTTP status when the upgrade itself was refused. */
  upgradeStatus?: number;
  /** The close code and reason, when the server closed the connection. */
  closed?: { code: number; reason: string };
  /** The connection was open at the end and answered a ping (and, once acknowledged, an operation). */
  usable: boolean;
  /** A message of a type only servers send (`next`, `error`, `connection_ack`) went out. */
  sentServerMessage: boolean;
}

const SERVER_MESSAGE_TYPES: ReadonlySet<unknown> = new Set(['next', 'error', 'connection_ack']);

/** The id of the operation the check sends; the generated ids never take it. */
const CHECK_ID = 'fuzz-usability-check';

const goodId = fc.constantFrom('1', '2', 'a', 'b');
const anyId = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '__proto__', 'constructor', 'toString', 'x'.repeat(300)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);

/** `payload.headers` of a `connection_init`: credentials as for HTTP, and headers no HTTP request could carry. */
const initHeaders = fc
  .tuple(
    credentials,
    partialRecord({
      'x-svc-role': [fc.oneof(fc.constantFrom('user', 'admin', ''), headerValue), 15],
      'x-svc-user-id': [fc.oneof(headerValue, fc.jsonValue({ maxDepth: 1 })), 20],
      host: [headerValue, 5],
      'not a header': [headerValue, 5],
      'x-svc-note': [fc.constantFrom('line\nbreak', '\u0000', 'ü'), 5],
    }),
    fc.oneof(
      { weight: 5, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }) },
    ),
  )
  .map(([who, known, extra]) => ({ ...extra, ...known, ...who }));

const initPayload = fc.oneof(
  { weight: 8, arbitrary: initHeaders.map((headers) => ({ headers })) },
  { weight: 1, arbitrary: fc.record({ headers: fc.jsonValue({ maxDepth: 2 }) }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

const subscribePayload = fc
  .tuple(
    fc.oneof({ weight: 2, arbitrary: subscriptionDocument }, { weight: 3, arbitrary: queryText }),
    partialRecord({
      variables: [variables, 30],
      operationName: [
        fc.oneof({ weight: 4, arbitrary: fc.constantFrom('A', 'Op', null) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }),
        15,
      ],
      extensions: [fc.jsonValue({ maxDepth: 2 }), 5],
    }),
  )
  .map(([query, rest]) => ({ query, ...rest }));

/** Messages of the protocol's shapes: mostly right, then with fields wrong, missing or extra. */
const message: fc.Arbitrary<unknown> = fc
  .oneof(
    { weight: 2, arbitrary: initPayload.map((payload) => ({ type: 'connection_init', payload })) },
    { weight: 12, arbitrary: fc.tuple(goodId, subscribePayload).map(([id, payload]) => ({ id, type: 'subscribe', payload })) },
    { weight: 4, arbitrary: goodId.map((id) => ({ id, type: 'complete' })) },
    { weight: 1, arbitrary: fc.constantFrom('ping', 'pong').map((type) => ({ type })) },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          id: fc.oneof(goodId, anyId),
          type: fc.oneof(
            fc.constantFrom('connection_init', 'subscribe', 'complete', 'ping', 'pong', 'next', 'error', 'connection_ack'),
            fc.constantFrom('start', 'stop', 'ka', 'CONNECTION_INIT', ''),
            fc.jsonValue({ maxDepth: 0 }),
          ),
          payload: fc.oneof(subscribePayload, fc.jsonValue({ maxDepth: 2 })),
        },
        { requiredKeys: [] },
      ),
    },
  )
  .chain((base) =>
    sometimes(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 }), 5).map((extra) =>
      extra === undefined || typeof base !== 'object' || base === null ? base : { ...extra, ...base },
    ),
  );

const step: fc.Arbitrary<WsStep> = fc.oneof(
  { weight: 24, arbitrary: message.map((m): WsStep => ({ kind: 'text', data: JSON.stringify(m) })) },
  { weight: 5, arbitrary: fc.constant<WsStep>({ kind: 'settle' }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 20 }).map((ms): WsStep => ({ kind: 'pause', ms })) },
  { weight: 1, arbitrary: message.map((m): WsStep => ({ kind: 'binary', data: Buffer.from(JSON.stringify(m)) })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((data): WsStep => ({ kind: 'binary', data })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((data): WsStep => ({ kind: 'text', data })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', '{}', 'null', '[]', '{"type":', '{"type":"connection_init"}{"type":"ping"}')
      .map((data): WsStep => ({ kind: 'text', data })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.uint8Array({ maxLength: 16 }), fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]))
      .map(([prefix, bad]): WsStep => ({
        kind: 'bad-utf8',
        data: Buffer.concat([Buffer.from(prefix.map((b) => b & 0x7f)), Buffer.from(bad)]),
      })),
  },
);

/** A connection: the subprotocol offered, headers of the upgrade request, and what is sent. */
export const wsScenario: fc.Arbitrary<WsScenario> = fc.record({
  protocols: fc.oneof(
    { weight: 12, arbitrary: fc.constant(['graphql-transport-ws']) },
    // Offering only protocols the server does not speak ends in the client (no subprotocol chosen), not here.
    { weight: 1, arbitrary: fc.constantFrom([], ['graphql-ws', 'graphql-transport-ws'], ['graphql-transport-ws', 'nope']) },
  ),
  upgradeHeaders: partialRecord({
    authorization: [authorization, 10],
    cookie: [headerValue, 10],
    origin: [fc.constantFrom('http://evil.example', 'null'), 10],
    'x-svc-admin-secret': [fc.constantFrom(ADMIN_SECRET, 'wrong'), 10],
  }).map((headers) => headers as Record<string, string>),
  steps: fc
    .tuple(
      // Most connections start the way a client does, so that the rest reaches the operations.
      fc.oneof(
        {
          weight: 3,
          arbitrary: initPayload.map((payload): WsStep[] => [
            { kind: 'text', data: JSON.stringify({ type: 'connection_init', payload }) },
            { kind: 'settle' },
          ]),
        },
        { weight: 1, arbitrary: fc.constant<WsStep[]>([]) },
      ),
      fc.array(step, { minLength: 1, maxLength: 8 }),
    )
    .map(([opening, rest]) => [...opening, ...rest]),
});

/** A frame as the server reads it: `String(buffer)`, so a binary frame counts as its UTF-8 text. */
function sentType(step: WsStep): unknown {
  if (step.kind !== 'text' && step.kind !== 'binary') return undefined;
  try {
    const parsed: unknown = JSON.parse(typeof step.data === 'string' ? step.data : Buffer.from(step.data).toString());
    return typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Plays `scenario` against the server, then checks whether the connection still works: a ping
 * must be answered, and on an acknowledged connection a `{ __typename }` operation too. Every wait
 * is bounded; running out of time throws (the server hung).
 */
export async function playScenario(url: string, scenario: WsScenario): Promise<WsOutcome> {
  const socket = new WebSocket(url, [...scenario.protocols], { headers: scenario.upgradeHeaders, handshakeTimeout: REQUEST_TIMEOUT_MS });
  const received: Array<Record<string, unknown>> = [];
  let closed: { code: number; reason: string } | undefined;
  let upgradeStatus: number | undefined;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  socket.on('message', (data: Buffer) => {
    try {
      received.push(JSON.parse(data.toString()) as Record<string, unknown>);
    } catch {
      received.push({ unparsable: data.toString() });
    }
    notify();
  });
  socket.on('close', (code: number, reason: Buffer) => {
    closed = { code, reason: reason.toString() };
    notify();
  });
  socket.on('unexpected-response', (_request, response) => {
    upgradeStatus = response.statusCode;
    response.resume();
    socket.terminate();
  });
  // Errors (a refused upgrade, a reset) end in 'close' as well; the outcome says what happened.
  socket.on('error', () => undefined);

  const until = (what: string, done: () => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      if (done()) {
        resolve();
        return;
      }
      const check = () => {
        if (!done()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${what} within ${REQUEST_TIMEOUT_MS} ms (received ${JSON.stringify(received).slice(0, 500)})`));
      }, REQUEST_TIMEOUT_MS);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
    });

  const isOpen = () => socket.readyState === WebSocket.OPEN;
  const acked = () => received.some((m) => m['type'] === 'connection_ack');
  const send = (data: string | Uint8Array, binary: boolean) =>
    new Promise<void>((resolve) => {
      if (!isOpen()) {
        resolve();
        return;
      }
      // A send that fails because the server closed meanwhile is part of the game, not an error.
      socket.send(data, { binary }, () => resolve());
    });

  let initSent = false;
  let sentServerMessage = false;
  try {
    await new Promise<void>((resolve) => {
      socket.once('open', () => resolve());
      socket.once('close', () => resolve());
    });
    for (const current of scenario.steps) {
      if (closed !== undefined) break;
      switch (current.kind) {
        case 'text':
        case 'binary':
          if (sentType(current) === 'connection_init') initSent = true;
          if (SERVER_MESSAGE_TYPES.has(sentType(current))) sentServerMessage = true;
          await send(current.data, current.kind === 'binary');
          break;
        case 'bad-utf8':
          await send(current.data, false);
          break;
        case 'settle':
          if (initSent) await until('connection_ack or close after connection_init', () => acked() || closed !== undefined);
          break;
        case 'pause':
          await new Promise((resolve) => setTimeout(resolve, current.ms));
          break;
      }
    }

    const ended = (): WsOutcome => {
      if (upgradeStatus !== undefined) return { upgradeStatus, usable: false, sentServerMessage };
      return { ...(closed !== undefined && { closed }), usable: false, sentServerMessage };
    };
    // A close frame may have arrived while the 'close' event still waits for the TCP connection to end.
    if (!isOpen()) {
      await until('the end of a closing connection', () => closed !== undefined || upgradeStatus !== undefined);
      return ended();
    }

    const nonce = Math.random().toString(36).slice(2);
    await send(JSON.stringify({ type: 'ping', payload: { nonce } }), false);
    const ourPong = () => received.some((m) => m['type'] === 'pong' && (m['payload'] as { nonce?: unknown } | undefined)?.nonce === nonce);
    await until('pong', () => ourPong() || closed !== undefined);
    if (initSent) await until('connection_ack or close after connection_init', () => acked() || closed !== undefined);

    if (closed === undefined && acked()) {
      await send(JSON.stringify({ id: CHECK_ID, type: 'subscribe', payload: { query: '{ __typename }' } }), false);
      const answered = () => received.some((m) => m['id'] === CHECK_ID && m['type'] === 'complete');
      await until('an answer to { __typename }', () => closed !== undefined || answered());
      if (closed === undefined) {
        const answers = received.filter((m) => m['id'] === CHECK_ID);
        const expected = [{ id: CHECK_ID, type: 'next', payload: { data: { __typename: 'Query' } } }, { id: CHECK_ID, type: 'complete' }];
        if (JSON.stringify(answers) !== JSON.stringify(expected)) {
          throw new Error(`{ __typename } on an acknowledged connection answered ${JSON.stringify(answers)}`);
        }
      }
    }
    if (closed !== undefined || !isOpen()) {
      await until('the end of a closing connection', () => closed !== undefined);
      return ended();
    }
    return { usable: true, sentServerMessage };
  } finally {
    if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) {
      socket.close(1000);
      await until('close after the client closed', () => closed !== undefined || upgradeStatus !== undefined).catch(() =>
        socket.terminate(),
      );
    }
  }
}

/** A message of at least `bytes` bytes: plain text, or a protocol message (a subscribe). */
export function oversizedMessage(bytes: number, asSubscribe: boolean): string {
  if (!asSubscribe) return 'x'.repeat(bytes);
  return JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `{ hello(name: "${'x'.repeat(bytes)}") }` } });
}
