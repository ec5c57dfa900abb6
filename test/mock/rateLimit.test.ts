import { afterEach, describe, expect, it } from 'vitest';
import type { MockClock, MockSettings, RateLimitWindow } from '../../src/mock/deps';
import type { MockError } from '../../src/mock/errors';
import { createRateLimiter } from '../../src/mock/rateLimit';
import { startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

async function start(rateLimits?: RateLimitWindow[]): Promise<{ mock: RunningMock; path: string }> {
  mock = await startMock(rateLimits === undefined ? {} : { rateLimits });
  const account = mock.deps.store.state.accounts.find((candidate) => candidate.partner_id === 1)!;
  return { mock, path: `/accounts/${account.id}` };
}

describe('the contract limits: 100 a minute per key', () => {
  it('lets exactly 100 of 200 concurrent requests through, and says when to retry', async () => {
    const { mock, path } = await start();
    const responses = await Promise.all(Array.from({ length: 200 }, () => mock.request(path, { key: mock.keys.acme })));
    const passed = responses.filter((response) => response.status === 200);
    const limited = responses.filter((response) => response.status === 429);
    expect(passed).toHaveLength(100);
    expect(limited).toHaveLength(100);

    expect(passed.every((response) => response.headers['x-ratelimit-limit'] === '100')).toBe(true);
    expect(new Set(passed.map((response) => response.headers['x-ratelimit-remaining'])).size).toBe(100);
    expect(passed.map((response) => Number(response.headers['x-ratelimit-remaining'])).sort((a, b) => a - b)[0]).toBe(0);

    const rejected = limited[0]!;
    expect(rejected.headers['x-ratelimit-remaining']).toBe('0');
    expect(rejected.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(rejected.json.error.message).toContain('Retry after 60 seconds');
    expect(rejected.json.error.details).toEqual({ limit: 100, window_seconds: 60, reset_at: expect.any(String) });
    const resetAtMs = Date.parse(rejected.json.error.details.reset_at);
    expect(Number(rejected.headers['x-ratelimit-reset'])).toBe(resetAtMs / 1000);
    const retryAfter = Number(rejected.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Keys are counted separately; once the first request is a minute old, the key may send again.
    expect((await mock.request('/deliverables', { key: mock.keys.beacon })).status).toBe(200);
    await mock.deps.clock.advance(resetAtMs - mock.deps.clock.nowMs());
    expect((await mock.request(path, { key: mock.keys.acme })).status).toBe(200);
  });
});

/** A limiter on a clock the test moves by hand, for exact times. */
function limiterAt(windows: RateLimitWindow[]) {
  let nowMs = Date.UTC(2026, 0, 1, 12, 0, 59, 500);
  const clock = { nowMs: () => nowMs } as MockClock;
  const settings = { rateLimits: windows } as MockSettings;
  const state = {};
  const limiter = createRateLimiter(settings, clock, () => state);
  return {
    advance: (ms: number) => (nowMs += ms),
    now: () => nowMs,
    admit: () => limiter.admit('key'),
    /** Admits `count` requests, each of which must pass. */
    admitAll(count: number) {
      for (let i = 0; i < count; i += 1) limiter.admit('key');
    },
    refusal() {
      try {
        limiter.admit('key');
      } catch (error) {
        return error as MockError<'RATE_LIMIT_EXCEEDED'> & { details: { reset_at: string } };
      }
      throw new Error('the request was admitted');
    },
  };
}

describe('a sliding window: the limit holds for any stretch of the window length', () => {
  it('does not let a burst through across a minute boundary', () => {
    const limiter = limiterAt([{ limit: 100, windowSeconds: 60 }]);
    limiter.admitAll(100);
    // Clock-aligned windows would start afresh at 12:01:00, one second later.
    limiter.advance(1000);
    expect(limiter.refusal().details).toEqual({ limit: 100, window_seconds: 60, reset_at: '2026-01-01T12:01:59.500Z' });
    limiter.advance(58_999);
    expect(limiter.refusal().headers['retry-after']).toBe('1');
    limiter.advance(1);
    limiter.admitAll(100);
    expect(limiter.refusal().details.reset_at).toBe('2026-01-01T12:02:59.500Z');
  });

  it('frees requests one by one as each leaves the window', () => {
    const limiter = limiterAt([{ limit: 4, windowSeconds: 60 }]);
    limiter.admitAll(2);
    limiter.advance(30_000);
    limiter.admitAll(2);
    const refused = limiter.refusal();
    expect(refused.headers).toEqual({
      'retry-after': '30',
      'x-ratelimit-limit': '4',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String((limiter.now() + 30_000) / 1000),
    });
    expect(refused.message).toBe(
      "Rate limit of 4 requests per minute exceeded. Retry after 60 seconds; this key's next request is admitted at 2026-01-01T12:01:59.500Z.",
    );
    limiter.advance(30_000);
    // The two oldest left together: two more, then full again until the next two leave.
    expect(limiter.admit()).toEqual({ limit: 4, remaining: 1, resetEpochSeconds: (limiter.now() - 30_000 + 60_000) / 1000 });
    expect(limiter.admit()).toEqual({ limit: 4, remaining: 0, resetEpochSeconds: (limiter.now() - 30_000 + 60_000) / 1000 });
    expect(limiter.refusal().details.reset_at).toBe(new Date(limiter.now() + 30_000).toISOString());
  });

  it('reports the tightest window, and on a 429 the full window that frees up last', () => {
    const limiter = limiterAt([
      { limit: 3, windowSeconds: 60 },
      { limit: 5, windowSeconds: 86_400 },
    ]);
    const start = limiter.now();
    expect(limiter.admit()).toEqual({ limit: 3, remaining: 2, resetEpochSeconds: (start + 60_000) / 1000 });
    limiter.admitAll(2);
    limiter.advance(60_000);
    // Minute window empty again (3 left), day window at 2 left: the day window is the tightest.
    expect(limiter.admit()).toEqual({ limit: 5, remaining: 1, resetEpochSeconds: (start + 86_400_000) / 1000 });
    limiter.admit();
    expect(limiter.refusal().details).toEqual({ limit: 5, window_seconds: 86_400, reset_at: new Date(start + 86_400_000).toISOString() });
    expect(limiter.refusal().message).toContain('Retry after 60 seconds');
  });
});

describe('configured limits', () => {
  it('enforces a daily quota beside the minute window, and frees it a virtual day later', async () => {
    const { mock, path } = await start([
      { limit: 100, windowSeconds: 60 },
      { limit: 3, windowSeconds: 86_400 },
    ]);
    for (let i = 0; i < 3; i += 1) {
      const response = await mock.request(path, { key: mock.keys.acme });
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBe('3');
      expect(response.headers['x-ratelimit-remaining']).toBe(String(2 - i));
    }
    const limited = await mock.request(path, { key: mock.keys.acme });
    expect(limited.status).toBe(429);
    expect(limited.json.error.details).toMatchObject({ limit: 3, window_seconds: 86_400 });
    await mock.deps.clock.advance(Date.parse(limited.json.error.details.reset_at) - mock.deps.clock.nowMs());
    expect((await mock.request(path, { key: mock.keys.acme })).status).toBe(200);
  });

  it('counts neither refused keys nor requests it answered 429', async () => {
    const { mock, path } = await start([
      { limit: 2, windowSeconds: 60 },
      { limit: 4, windowSeconds: 86_400 },
    ]);
    // Refused for lacking a permission: not counted against the read-only key.
    const refused = await mock.request('/accounts', { key: mock.keys.readOnly, body: { email: 'x@example.com', first_name: 'X', last_name: 'Y' } });
    expect(refused.status).toBe(403);
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await mock.request(path, { key: mock.keys.readOnly })).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    // Had the three 429s counted, the daily quota of 4 would now be spent.
    await mock.deps.clock.advance(60_000);
    expect((await mock.request(path, { key: mock.keys.readOnly })).status).toBe(200);
    expect((await mock.request(path, { key: mock.keys.readOnly })).status).toBe(200);
  });

  it('sends the rate-limit headers on authenticated error answers too, and counts them', async () => {
    const { mock } = await start([{ limit: 2, windowSeconds: 60 }]);
    const missing = await mock.request('/accounts/999999', { key: mock.keys.acme });
    expect(missing.status).toBe(404);
    expect(missing.headers['x-ratelimit-remaining']).toBe('1');
    const invalid = await mock.request('/accounts/abc', { key: mock.keys.acme });
    expect(invalid.status).toBe(400);
    expect(invalid.headers['x-ratelimit-remaining']).toBe('0');
    expect((await mock.request('/accounts/999999', { key: mock.keys.acme })).status).toBe(429);
  });

  it('does not limit at all when off, and sends no rate-limit headers', async () => {
    const { mock, path } = await start([]);
    const responses = await Promise.all(Array.from({ length: 150 }, () => mock.request(path, { key: mock.keys.acme })));
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(responses[0]!.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('follows limits changed while running, starting the count afresh', async () => {
    const { mock, path } = await start([{ limit: 5, windowSeconds: 60 }]);
    for (let i = 0; i < 3; i += 1) await mock.request(path, { key: mock.keys.acme });
    mock.deps.settings.rateLimits = [{ limit: 2, windowSeconds: 60 }];
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await mock.request(path, { key: mock.keys.acme })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
