import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ADMIN_SECRET, startFuzzTarget, type FuzzTarget } from './utils/fuzz-server.js';

/**
 * A client may send `complete` for an operation that is still starting and then use its id again.
 * graphql-ws would then attach the first operation's stream to the second one's id, where nothing
 * ends it: a subscription to the remote held open after the client left (found by the fuzz suite).
 * The server refuses the second `subscribe` until the first has started, and ends the first.
 */
describe('graphql-ws: an id used again while its operation is still starting', () => {
  let target: FuzzTarget;

  beforeAll(async () => {
    target = await startFuzzTarget();
  });

  afterAll(async () => {
    await target?.close();
  });

  it('refuses the second subscribe with an error for that id, and leaves no remote subscription open', async () => {
    const socket = new WebSocket(target.server.wsUrl, ['graphql-transport-ws']);
    const received: Array<{ id?: string; type: string; payload?: unknown }> = [];
    socket.on('message', (data: Buffer) => received.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const send = (message: unknown) => socket.send(JSON.stringify(message));
    const until = async (done: () => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`gave up waiting; received ${JSON.stringify(received)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    send({ type: 'connection_init', payload: { headers: { 'x-svc-admin-secret': ADMIN_SECRET } } });
    await until(() => received.some((m) => m.type === 'connection_ack'));
    // All three in one go: the first subscription cannot have started when the third arrives.
    send({ id: 'a', type: 'subscribe', payload: { query: 'subscription { messageAdded { id text } }' } });
    send({ id: 'a', type: 'complete' });
    send({ id: 'a', type: 'subscribe', payload: { query: 'subscription { countdown(from: 1, intervalMs: 1) }' } });

    await until(() => received.some((m) => m.id === 'a' && (m.type === 'error' || m.type === 'complete')));
    const answer = received.find((m) => m.id === 'a' && m.type === 'error');
    expect(answer?.payload).toEqual([
      {
        message: 'an operation with id "a" is still starting; send it again once it has ended',
        extensions: { code: 'validation-failed', path: '$' },
      },
    ]);
    // The id can be used once the first operation has started and ended.
    await until(() => target.remote.openSockets() === 0);
    received.length = 0;
    send({ id: 'a', type: 'subscribe', payload: { query: 'subscription { countdown(from: 1, intervalMs: 1) }' } });
    await until(() => received.some((m) => m.id === 'a' && m.type === 'complete'));
    expect(received.filter((m) => m.type === 'next').map((m) => m.payload)).toEqual([{ data: { countdown: 1 } }, { data: { countdown: 0 } }]);

    socket.close();
    await until(() => target.remote.openSockets() === 0);
  });
});
