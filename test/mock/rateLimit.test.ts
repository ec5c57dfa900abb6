import { afterEach, describe, expect, it } from 'vitest';
import type { RateLimitWindow } from '../../src/mock/deps';
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

/** Virtual seconds left in the current window, plus one: advancing by this crosses the boundary. */
function toNextWindow(mock: RunningMock, windowSeconds: number): number {
  const nowMs = mock.deps.clock.now().getTime();
  const lengthMs = windowSeconds * 1000;
  return lengthMs - (nowMs % lengthMs) + 1000;
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
    const retryAfter = Number(rejected.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rejected.headers['x-ratelimit-remaining']).toBe('0');
    expect(rejected.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(rejected.json.error.message).toContain(`Retry after ${retryAfter} seconds`);
    expect(rejected.json.error.details).toEqual({ limit: 100, window_seconds: 60, reset_at: expect.any(String) });
    const resetAt = Date.parse(rejected.json.error.details.reset_at);
    expect(resetAt % 60_000).toBe(0);
    expect(Number(rejected.headers['x-ratelimit-reset'])).toBe(resetAt / 1000);

    // Keys are counted separately, and the next minute on the virtual clock starts afresh.
    expect((await mock.request('/deliverables', { key: mock.keys.beacon })).status).toBe(200);
    await mock.deps.clock.advance(toNextWindow(mock, 60));
    expect((await mock.request(path, { key: mock.keys.acme })).status).toBe(200);
  });
});

describe('configured limits', () => {
  it('enforces a daily quota beside the minute window, and frees it the next virtual day', async () => {
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
    expect(Date.parse(limited.json.error.details.reset_at) % 86_400_000).toBe(0);

    await mock.deps.clock.advance(toNextWindow(mock, 86_400));
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
    await mock.deps.clock.advance(toNextWindow(mock, 60));
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
