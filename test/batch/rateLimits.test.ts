import { describe, expect, it } from 'vitest';
import { readRateLimit, WindowLimiter } from '../../src/batch/pacer';

describe("reading a service's X-RateLimit headers", () => {
  const now = Date.parse('2026-11-25T12:00:00Z');

  it('takes them in any letter case; a reset in epoch seconds as it is, a small one as seconds from now', () => {
    expect(readRateLimit({ 'X-RateLimit-Limit': '100', 'x-ratelimit-remaining': '7', 'X-RATELIMIT-RESET': '1764072060' }, now)).toEqual({ limit: 100, remaining: 7, resetMs: 1_764_072_060_000 });
    expect(readRateLimit({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' }, now)).toEqual({ limit: 100, remaining: 0, resetMs: now + 30_000 });
    expect(readRateLimit({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1000000000' }, now)).toEqual({ limit: 100, remaining: 0, resetMs: now + 1_000_000_000_000 });
  });

  it('reads nothing when one is missing or not a number (limits off, or a header it cannot use)', () => {
    expect(readRateLimit({}, now)).toBeUndefined();
    expect(readRateLimit({ 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '30' }, now)).toBeUndefined();
    expect(readRateLimit({ 'x-ratelimit-limit': '100', 'x-ratelimit-reset': '30' }, now)).toBeUndefined();
    expect(readRateLimit({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '7' }, now)).toBeUndefined();
    expect(readRateLimit({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': 'many', 'x-ratelimit-reset': '30' }, now)).toBeUndefined();
  });
});

describe('a ceiling of starts per sliding window (a webhook receiver\'s --rate)', () => {
  it('lets `requests` start at once, then waits until the oldest start leaves the window', () => {
    const limiter = new WindowLimiter(2, 1000);
    expect(limiter.waitMs(0)).toBe(0);
    limiter.take(0);
    expect(limiter.waitMs(100)).toBe(0);
    limiter.take(100);
    expect(limiter.waitMs(100)).toBe(900);
    expect(limiter.waitMs(999)).toBe(1);
    // At 1000 ms the first start is a whole window old: one slot is free, not two.
    expect(limiter.waitMs(1000)).toBe(0);
    limiter.take(1000);
    expect(limiter.waitMs(1000)).toBe(100);
    expect(limiter.waitMs(1100)).toBe(0);
  });
});
