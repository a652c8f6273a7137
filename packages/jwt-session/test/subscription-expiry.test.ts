import { Repeater } from 'graphql-yoga';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { endStreamAt } from '../src/subscription-expiry.js';
import { NAMESPACE, secretBytes, sign } from './utils/keys.js';
import { bearer, startApp, type TestApp } from './utils/server.js';
import { subscribeOverSse, type SseEvent } from './utils/sse.js';

const SECRET = 's'.repeat(32);
const ADMIN = 'the-admin-secret';
const roles = { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user' };
const EXPIRED_EVENT = '{"errors":[{"message":"Could not verify JWT: JWTExpired","extensions":{"code":"invalid-jwt","path":"$"}}]}';

const apps: TestApp[] = [];
async function app(allowedSkew = 0): Promise<TestApp> {
  const started = await startApp({ jwt: { type: 'HS256', key: SECRET, allowed_skew: allowedSkew }, adminSecret: ADMIN });
  apps.push(started);
  return started;
}
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

/** A token whose `exp` is `seconds` from now, and that `exp` in seconds. */
async function expiringToken(seconds: number): Promise<{ token: string; exp: number }> {
  const exp = Math.floor(Date.now() / 1000) + seconds;
  return { token: await sign({ [NAMESPACE]: roles }, secretBytes(SECRET), { alg: 'HS256', expiresIn: seconds }), exp };
}

const tick = (n: number): SseEvent => ({ event: 'next', data: JSON.stringify({ data: { ticks: n } }) });
const COMPLETE: SseEvent = { event: 'complete', data: '' };

describe('HTTP subscriptions of a session whose token expires', () => {
  it('end at expiry with a last JWTExpired event, then the stream closes and the source is returned', async () => {
    const server = await app();
    const { token, exp } = await expiringToken(2);
    const answer = await subscribeOverSse(server.url, 'subscription { ticks }', bearer(token));
    // The stream ended by itself: `ticks` alone would go on forever.
    const endedAt = Date.now();
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^text\/event-stream/);
    const events = answer.events;
    expect(events.at(-1)).toEqual(COMPLETE);
    expect(events.at(-2)).toEqual({ event: 'next', data: EXPIRED_EVENT });
    const ticks = events.slice(0, -2);
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks).toEqual(ticks.map((_, i) => tick(i + 1)));
    expect(endedAt).toBeGreaterThanOrEqual(exp * 1000);
    await expect.poll(() => server.liveTicks).toBe(0);
  });

  it('end at expiry plus allowed_skew', async () => {
    const server = await app(1);
    const { token, exp } = await expiringToken(1);
    const answer = await subscribeOverSse(server.url, 'subscription { ticks }', bearer(token));
    expect(Date.now()).toBeGreaterThanOrEqual((exp + 1) * 1000);
    expect(answer.events.slice(-2)).toEqual([{ event: 'next', data: EXPIRED_EVENT }, COMPLETE]);
    await expect.poll(() => server.liveTicks).toBe(0);
  });

  it('leave sessions that do not expire alone: admin secret, and a token without exp', async () => {
    const server = await app();
    const noExp = await sign({ [NAMESPACE]: roles }, secretBytes(SECRET), { alg: 'HS256', expiresIn: null });
    for (const headers of [{ 'x-svc-admin-secret': ADMIN }, bearer(noExp)]) {
      const answer = await subscribeOverSse(server.url, 'subscription { ticks(count: 3) }', headers);
      expect(answer.events).toEqual([tick(1), tick(2), tick(3), COMPLETE]);
    }
  });
});

describe('endStreamAt', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A source that never yields and records whether it was returned. */
  function endless(): { source: AsyncIterable<number>; returned: () => boolean } {
    let returned = false;
    const iterator: AsyncIterator<number> = {
      next: () => new Promise<never>(() => undefined),
      return: async () => {
        returned = true;
        return { done: true, value: undefined };
      },
    };
    return { source: { [Symbol.asyncIterator]: () => iterator }, returned: () => returned };
  }

  it('gives the last event at once, and returns the source, when the end has already passed', async () => {
    const { source, returned } = endless();
    const stream = endStreamAt(source, Date.now() - 1, () => -1);
    expect(await stream.next()).toEqual({ done: false, value: -1 });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    await vi.waitFor(() => expect(returned()).toBe(true));
  });

  it('waits out an end beyond the 2^31-1 ms a single timer can wait', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { source, returned } = endless();
    const stream = endStreamAt(source, Date.now() + 2 ** 32, () => -1);
    let settled = false;
    const next = stream.next().then((result) => {
      settled = true;
      return result;
    });
    await vi.advanceTimersByTimeAsync(2 ** 32 - 1);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await next).toEqual({ done: false, value: -1 });
    await vi.waitFor(() => expect(returned()).toBe(true));
  });

  it('clears its timer when the consumer returns early or the source finishes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { source, returned } = endless();
    const early = endStreamAt(source, Date.now() + 60_000, () => -1);
    expect(vi.getTimerCount()).toBe(1);
    await early.return?.();
    expect(vi.getTimerCount()).toBe(0);
    expect(returned()).toBe(true);

    const finite = endStreamAt(Repeater.race([[1, 2]]), Date.now() + 60_000, () => -1);
    expect(await finite.next()).toEqual({ done: false, value: 1 });
    expect(await finite.next()).toEqual({ done: false, value: 2 });
    expect(await finite.next()).toMatchObject({ done: true });
    expect(vi.getTimerCount()).toBe(0);
  });
});
