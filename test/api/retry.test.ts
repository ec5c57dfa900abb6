import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay, rateLimitWaitMs, retryDecision, type AttemptOutcome } from '../../src/api/retry';

const half = () => 0.5;

describe('which attempts are retried', () => {
  const cases: Array<[string, string, AttemptOutcome, string | undefined]> = [
    ['GET', '429', { kind: 'response', status: 429, rateLimitWaitMs: 5000 }, 'rate limited'],
    ['POST', '429 (refused before any work)', { kind: 'response', status: 429, rateLimitWaitMs: 5000 }, 'rate limited'],
    ['GET', '503', { kind: 'response', status: 503 }, 'service unavailable (503)'],
    ['GET', '502', { kind: 'response', status: 502 }, 'bad gateway (502)'],
    ['GET', '504', { kind: 'response', status: 504 }, 'gateway timeout (504)'],
    ['POST', '503 (may have acted)', { kind: 'response', status: 503 }, undefined],
    ['GET', '500', { kind: 'response', status: 500 }, undefined],
    ['GET', '404', { kind: 'response', status: 404 }, undefined],
    ['POST', 'connection refused (nothing sent)', { kind: 'network', failure: 'refused' }, 'connection refused'],
    ['POST', 'connect timeout (nothing sent)', { kind: 'network', failure: 'connect-timeout' }, 'could not connect in time'],
    ['GET', 'connection reset', { kind: 'network', failure: 'reset' }, 'connection reset'],
    ['POST', 'connection reset (may have acted)', { kind: 'network', failure: 'reset' }, undefined],
    ['GET', 'timeout (--timeout is the limit)', { kind: 'network', failure: 'timeout' }, undefined],
    ['GET', 'DNS failure', { kind: 'network', failure: 'dns' }, undefined],
  ];
  it.each(cases)('%s after %s', (method, _what, outcome, reason) => {
    expect(retryDecision(method, outcome, 0, half)?.reason).toBe(reason);
  });

  it('waits for the rate limit window plus a small margin', () => {
    expect(retryDecision('GET', { kind: 'response', status: 429, rateLimitWaitMs: 12_000 }, 0, half)?.delayMs).toBe(12_100);
  });
});

describe('backoff', () => {
  it('grows exponentially with equal jitter: half of the step for sure, the rest random, capped at 20 s', () => {
    expect([0, 1, 2, 3].map((retry) => backoffDelay(retry, () => 0))).toEqual([250, 500, 1000, 2000]);
    expect([0, 1, 2, 3].map((retry) => backoffDelay(retry, () => 0.999999))).toEqual([499, 999, 1999, 3999]);
    expect(backoffDelay(10, () => 0)).toBe(10_000);
    expect(backoffDelay(10, () => 0.999999)).toBe(19_999);
  });

  it('successive waits never shrink, whatever the random draws (past the cap too)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 0.999999, noNaN: true }), { minLength: 2, maxLength: 20 }), (draws) => {
        let previous = 0;
        for (const [retry, draw] of draws.entries()) {
          const wait = backoffDelay(retry, () => draw, previous);
          if (wait < previous) return false;
          previous = wait;
        }
        return true;
      }),
    );
  });

  it('the waits of one request, as the decisions give them, never shrink', () => {
    const draws = [0.99, 0, 0.5, 0, 0.99, 0, 0];
    const waits: number[] = [];
    let backoffMs = 0;
    for (const [retry, draw] of draws.entries()) {
      const decision = retryDecision('GET', { kind: 'response', status: 503 }, retry, () => draw, { backoffMs, refusals: 0 })!;
      waits.push(decision.delayMs);
      backoffMs = decision.delayMs;
    }
    expect(waits).toEqual([...waits].sort((a, b) => a - b));
    expect(waits[0]).toBe(497);
  });

  it('a host that refuses the connection twice in a row is reported at once', () => {
    const refused: AttemptOutcome = { kind: 'network', failure: 'refused' };
    expect(retryDecision('GET', refused, 0, half, { backoffMs: 0, refusals: 1 })?.reason).toBe('connection refused');
    expect(retryDecision('GET', refused, 1, half, { backoffMs: 375, refusals: 2 })).toBeUndefined();
  });
});

describe('how long a 429 asks to wait', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  it.each([
    ['Retry-After seconds', '12', undefined, 12_000],
    ['Retry-After wins over reset_at', '3', '2026-01-01T00:01:00Z', 3000],
    ['reset_at alone', undefined, '2026-01-01T00:00:30Z', 30_000],
    ['Retry-After as an HTTP date', 'Thu, 01 Jan 2026 00:00:05 GMT', undefined, 5000],
    ['a reset in the past (clock skew): the contract\'s 60 s', undefined, '2025-12-31T23:59:00Z', 60_000],
    ['a Retry-After date in the past, then reset_at', 'Wed, 31 Dec 2025 23:00:00 GMT', '2026-01-01T00:00:10Z', 10_000],
    ['nothing usable: the contract\'s 60 s', undefined, 'soon', 60_000],
  ])('%s', (_name, retryAfter, resetAt, expected) => {
    expect(rateLimitWaitMs(retryAfter, resetAt, now)).toBe(expected);
  });

  // A service 6d 12h ahead of us (the mock after a clock advance): its own Date is the reference.
  const serviceNowMs = Date.parse('2026-01-07T12:00:00Z');
  it.each([
    ['reset_at 30 s after its Date', undefined, '2026-01-07T12:00:30Z', 30_000],
    ['a Retry-After date 5 s after its Date', 'Wed, 07 Jan 2026 12:00:05 GMT', undefined, 5000],
    ['a reset_at before its Date: the contract\'s 60 s', undefined, '2026-01-07T11:59:00Z', 60_000],
  ])('measured from the service\'s Date: %s', (_name, retryAfter, resetAt, expected) => {
    expect(rateLimitWaitMs(retryAfter, resetAt, now, serviceNowMs)).toBe(expected);
  });
});
