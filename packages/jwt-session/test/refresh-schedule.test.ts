import { describe, expect, it } from 'vitest';
import { nextRefreshDelay } from '../src/refresh-schedule.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const delay = (headers: Record<string, string>, first = true): number | undefined => nextRefreshDelay(new Headers(headers), NOW, first);

describe('nextRefreshDelay', () => {
  it.each([
    ['max-age', { 'cache-control': 'public, max-age=300' }, 300_000],
    ['s-maxage', { 'cache-control': 's-maxage=120' }, 120_000],
    ['max-age with must-revalidate', { 'cache-control': 'max-age=90, must-revalidate' }, 90_000],
    ['must-revalidate alone', { 'cache-control': 'must-revalidate' }, 60_000],
    ['no-cache, which wins over max-age', { 'cache-control': 'no-cache, max-age=300' }, 60_000],
    ['no-store, which wins over max-age', { 'cache-control': 'max-age=300, no-store' }, 60_000],
    ['a Cache-Control without an age', { 'cache-control': 'public' }, 60_000],
    ['max-age=0 (under one second)', { 'cache-control': 'max-age=0' }, 60_000],
    ['an unparseable max-age', { 'cache-control': 'max-age=soon' }, 60_000],
    ['Expires without Cache-Control', { expires: new Date(NOW + 200_000).toUTCString() }, 200_000],
    ['Expires under one second away', { expires: new Date(NOW + 500).toUTCString() }, 60_000],
    ['Expires in the past', { expires: new Date(NOW - 5_000).toUTCString() }, 60_000],
    ['Cache-Control, which makes Expires irrelevant', { 'cache-control': 'max-age=30', expires: new Date(NOW + 200_000).toUTCString() }, 30_000],
  ])('%s', (_name, headers, expected) => {
    expect(delay(headers)).toBe(expected);
    expect(delay(headers, false)).toBe(expected);
  });

  it('never refreshes after the first fetch when nothing is parseable, and every minute after a later one', () => {
    expect(delay({})).toBeUndefined();
    expect(delay({ expires: 'not a date' })).toBeUndefined();
    expect(delay({}, false)).toBe(60_000);
    expect(delay({ expires: '0' }, false)).toBe(60_000);
  });
});
