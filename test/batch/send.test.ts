import { describe, expect, it, vi } from 'vitest';
import type { ApiResponse } from '../../src/api/types';
import { ApiError, CliError, MissingCredentialsError, NetworkError, UsageError } from '../../src/errors';
import type { RateLimitPacer } from '../../src/batch/pacer';
import { isGlobalFailure, provablyNotApplied, sendTracked, type TrackedWrite } from '../../src/batch/send';

// The crash points are logged here in the order reached, among the write's own steps.
const steps: string[] = [];
vi.mock('../../src/lib/crashPoints', () => ({ crashPoint: (point: string) => steps.push(`crash point ${point}`) }));

/**
 * The tracked write in process, one step at a time: what is recorded, in which order, and what
 * the pacer hears. The kills between the steps are proved end to end by test/e2e/crash-points.test.ts.
 */

const apiError = (status: number, code = 'X') => new ApiError(status, { error: { code, message: `${code} answered ${status}` } });
const ANSWER: ApiResponse<{ id: number; created_at: string }> = { status: 201, data: { id: 7, created_at: '2026-01-01T00:00:00Z' }, json: { id: 7 }, headers: { 'x-ratelimit-remaining': '9' } };

/** A write whose every step is logged; `send` answers ANSWER or throws `fails`. */
function loggedWrite(options: { fails?: unknown; intentFails?: unknown } = {}) {
  steps.length = 0;
  const write: TrackedWrite<typeof ANSWER.data> = {
    async recordIntent() {
      steps.push('intent');
      if (options.intentFails !== undefined) throw options.intentFails;
      return 'intent-1';
    },
    async send() {
      steps.push('send');
      if (options.fails !== undefined) throw options.fails;
      return ANSWER;
    },
    async recordRefused(intent, error) {
      steps.push(`refused ${intent} ${error.code}`);
    },
    async recordDone(intent, response) {
      steps.push(`done ${intent} ${response.data.id}`);
    },
    serviceNow: (response) => Date.parse(response.data.created_at),
  };
  return { write };
}

/** A pacer that logs what it is told. */
function loggedPacer() {
  const calls: unknown[][] = [];
  const pacer = {
    acquire: async () => {
      calls.push(['acquire']);
      return 5;
    },
    record: (...args: unknown[]) => calls.push(['record', ...args]),
    release: (...args: unknown[]) => calls.push(['release', ...args]),
    fail: (...args: unknown[]) => calls.push(['fail', ...args]),
  } as unknown as RateLimitPacer;
  return { pacer, calls };
}

describe('sendTracked', () => {
  it('records the intent before the request and the answer after it, and tells the pacer the answer', async () => {
    const { write } = loggedWrite();
    const { pacer, calls } = loggedPacer();
    await expect(sendTracked(write, { pacer })).resolves.toEqual({ intent: 'intent-1', response: ANSWER });
    expect(steps).toEqual([
      'crash point batch.before-intent',
      'intent',
      'crash point batch.after-intent',
      'send',
      'crash point batch.after-request',
      'done intent-1 7',
      'crash point batch.after-record',
    ]);
    expect(calls).toEqual([['acquire'], ['record', 5, ANSWER.headers, Date.parse('2026-01-01T00:00:00Z')]]);
  });

  it('a write that cannot tell the service time gives the pacer none', async () => {
    const { write } = loggedWrite();
    const { pacer, calls } = loggedPacer();
    await sendTracked({ ...write, serviceNow: undefined }, { pacer });
    expect(calls).toEqual([['acquire'], ['record', 5, ANSWER.headers, undefined]]);
  });

  it('works without a pacer', async () => {
    const { write } = loggedWrite();
    await expect(sendTracked(write, {})).resolves.toEqual({ intent: 'intent-1', response: ANSWER });
    expect(steps.filter((step) => !step.startsWith('crash point'))).toEqual(['intent', 'send', 'done intent-1 7']);
  });

  it('a refusal the service answered (4xx) settles the intent as refused, is rethrown, and tells the pacer the request may have been counted', async () => {
    const refusal = apiError(422, 'VALIDATION_ERROR');
    const { write } = loggedWrite({ fails: refusal });
    const { pacer, calls } = loggedPacer();
    await expect(sendTracked(write, { pacer })).rejects.toBe(refusal);
    expect(steps).toEqual(['crash point batch.before-intent', 'intent', 'crash point batch.after-intent', 'send', 'refused intent-1 VALIDATION_ERROR']);
    expect(calls).toEqual([['acquire'], ['fail', 5]]);
  });

  it.each([
    ['a 5xx', apiError(500, 'INTERNAL_ERROR')],
    ['a timeout', new NetworkError('TIMEOUT', 'no answer in time')],
    ['a reset after sending', new NetworkError('NETWORK_ERROR', 'reset', { mayHaveReachedService: true })],
  ])('%s leaves the intent open (the write may have happened) and is rethrown', async (_what, failure) => {
    const { write } = loggedWrite({ fails: failure });
    const { pacer, calls } = loggedPacer();
    await expect(sendTracked(write, { pacer })).rejects.toBe(failure);
    expect(steps).toEqual(['crash point batch.before-intent', 'intent', 'crash point batch.after-intent', 'send']);
    expect(calls).toEqual([['acquire'], ['fail', 5]]);
  });

  it('a request that never left settles the intent as refused', async () => {
    const never = new NetworkError('NETWORK_ERROR', 'connection refused', { mayHaveReachedService: false });
    const { write } = loggedWrite({ fails: never });
    await expect(sendTracked(write, {})).rejects.toBe(never);
    expect(steps).toEqual(['crash point batch.before-intent', 'intent', 'crash point batch.after-intent', 'send', 'refused intent-1 NETWORK_ERROR']);
  });

  it('an intent that cannot be recorded sends nothing and frees the pacer slot (nothing was counted)', async () => {
    const diskFull = new Error('ENOSPC');
    const { write } = loggedWrite({ intentFails: diskFull });
    const { pacer, calls } = loggedPacer();
    await expect(sendTracked(write, { pacer })).rejects.toBe(diskFull);
    expect(steps).toEqual(['crash point batch.before-intent', 'intent']);
    expect(calls).toEqual([['acquire'], ['release', 5]]);
  });
});

describe('provablyNotApplied', () => {
  it('is true for an answer below 500 and a request that never left, false otherwise', () => {
    expect(provablyNotApplied(apiError(400))).toBe(true);
    expect(provablyNotApplied(apiError(499))).toBe(true);
    expect(provablyNotApplied(apiError(500))).toBe(false);
    expect(provablyNotApplied(apiError(503))).toBe(false);
    expect(provablyNotApplied(new NetworkError('NETWORK_ERROR', 'refused', { mayHaveReachedService: false }))).toBe(true);
    expect(provablyNotApplied(new NetworkError('NETWORK_ERROR', 'reset'))).toBe(false);
    expect(provablyNotApplied(new UsageError('bad flag'))).toBe(false);
    expect(provablyNotApplied(new Error('bug'))).toBe(false);
  });
});

describe('isGlobalFailure', () => {
  it.each(['INVALID_API_KEY', 'EXPIRED_API_KEY', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMIT_EXCEEDED'])('%s stops the run', (code) => {
    expect(isGlobalFailure(apiError(401, code))).toBe(true);
  });

  it('so do an unreachable service and a missing key; an item of its own does not', () => {
    expect(isGlobalFailure(new NetworkError('TIMEOUT', 'no answer'))).toBe(true);
    expect(isGlobalFailure(new MissingCredentialsError('no key'))).toBe(true);
    expect(isGlobalFailure(apiError(404, 'ACCOUNT_NOT_FOUND'))).toBe(false);
    expect(isGlobalFailure(apiError(409, 'DUPLICATE_EMAIL'))).toBe(false);
    expect(isGlobalFailure(new UsageError('bad row'))).toBe(false);
    expect(isGlobalFailure(new Error('bug') as unknown as CliError)).toBe(false);
  });
});
