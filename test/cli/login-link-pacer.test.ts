import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types';
import { MAX_PACING_WAIT_MS, QuotaExhaustedError, RateLimitPacer } from '../../src/batch/pacer';
import { formatProgress, formatRate } from '../../src/batch/progress';
import { runPool } from '../../src/batch/pool';

/**
 * Virtual time: sleeps are timers that fire only when every promise has settled that can, in
 * order of their time. A run is exact and repeatable: no test here waits on the real clock.
 */
function virtualTime(startMs: number) {
  let nowMs = startMs;
  let order = 0;
  const timers: Array<{ at: number; order: number; fire: () => void; cancelled: boolean }> = [];
  const clock: Clock = {
    now: () => new Date(nowMs),
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer = { at: nowMs + Math.max(0, ms), order: (order += 1), fire: resolve, cancelled: false };
        timers.push(timer);
        signal?.addEventListener(
          'abort',
          () => {
            timer.cancelled = true;
            reject(signal.reason);
          },
          { once: true },
        );
      }),
  };
  const sleeps: number[] = [];
  const recordingClock: Clock = { now: clock.now, sleep: (ms, signal) => (sleeps.push(ms), clock.sleep(ms, signal)) };
  /** Runs `work` to its end, moving time from timer to timer whenever nothing else can happen. */
  async function run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const watched = work.finally(() => (settled = true));
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve));
      if (settled) break;
      timers.sort((a, b) => a.at - b.at || a.order - b.order);
      const next = timers.shift();
      if (next === undefined) throw new Error('deadlock: nothing to wait for and the work has not ended');
      if (next.cancelled) continue;
      nowMs = Math.max(nowMs, next.at);
      next.fire();
    }
    return watched;
  }
  return { clock, recordingClock, sleeps, run, nowMs: () => nowMs };
}

interface Admission {
  status: 201 | 429;
  headers: Record<string, string>;
}

/** Fixed windows aligned to multiples of their length, as the mock counted until now. */
function fixedWindowLimiter(limit: number, windowMs: number) {
  const counts = new Map<number, number>();
  return (nowMs: number): Admission => {
    const window = Math.floor(nowMs / windowMs);
    const used = counts.get(window) ?? 0;
    const reset = String(((window + 1) * windowMs) / 1000);
    if (used >= limit) return { status: 429, headers: {} };
    counts.set(window, used + 1);
    return { status: 201, headers: { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(limit - used - 1), 'x-ratelimit-reset': reset } };
  };
}

/** An exact sliding log: at most `limit` admissions in any `windowMs`; Reset is when the oldest leaves. */
function slidingLogLimiter(limit: number, windowMs: number) {
  const log: number[] = [];
  return (nowMs: number): Admission => {
    while (log.length > 0 && log[0]! <= nowMs - windowMs) log.shift();
    if (log.length >= limit) return { status: 429, headers: {} };
    log.push(nowMs);
    return {
      status: 201,
      headers: { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(limit - log.length), 'x-ratelimit-reset': String((log[0]! + windowMs) / 1000) },
    };
  };
}

const LIMIT = 50;
const WINDOW_MS = 5000;
const LINKS = 250;
const CONCURRENCY = 4;
/** 1.3 s into a 5 s window: a fixed-window run's first window is short. */
const START_MS = 1_800_000_001_300;

/**
 * A batch of `LINKS` requests through the pacer against a limiter, with network delays that vary
 * per request so that answers arrive in another order than the service counted them.
 */
async function simulate(admit: (nowMs: number) => Admission) {
  const time = virtualTime(START_MS);
  const pacer = new RateLimitPacer(time.clock);
  const counted: number[] = [];
  let refused = 0;
  let answeredOutOfOrder = 0;
  let lastAnsweredCount = -1;
  const items = Array.from({ length: LINKS }, (_, index) => index);
  await time.run(
    runPool(items, CONCURRENCY, new AbortController().signal, async (index) => {
      const sequence = await pacer.acquire();
      await time.clock.sleep(2 + ((index * 7) % 5));
      const countedAt = time.nowMs();
      const admission = admit(countedAt);
      const countOrder = counted.length;
      if (admission.status === 201) counted.push(countedAt);
      else refused += 1;
      await time.clock.sleep(1 + ((index * 13) % 11));
      if (countOrder < lastAnsweredCount) answeredOutOfOrder += 1;
      lastAnsweredCount = Math.max(lastAnsweredCount, countOrder);
      pacer.record(sequence, admission.headers, countedAt);
    }),
  );
  return { counted, refused, answeredOutOfOrder, elapsedMs: counted.at(-1)! - START_MS };
}

describe('rate-limit pacer, against both kinds of window', () => {
  it('fixed windows: every window is filled, the run ends within 1.05x of the minimum, never a 429', async () => {
    const result = await simulate(fixedWindowLimiter(LIMIT, WINDOW_MS));
    expect(result.answeredOutOfOrder).toBeGreaterThan(10);
    expect(result.refused).toBe(0);
    expect(result.counted).toHaveLength(LINKS);
    const perWindow = new Map<number, number>();
    for (const at of result.counted) perWindow.set(Math.floor(at / WINDOW_MS), (perWindow.get(Math.floor(at / WINDOW_MS)) ?? 0) + 1);
    // The fewest windows 250 requests can span at 50 a window: no slot of any window left unused.
    expect([...perWindow.values()]).toEqual([50, 50, 50, 50, 50]);
    const minimumMs = (Math.floor(START_MS / WINDOW_MS) + LINKS / LIMIT - 1) * WINDOW_MS - START_MS;
    expect(result.elapsedMs / minimumMs).toBeLessThanOrEqual(1.05);
  });

  it('a sliding log: the run ends within 1.05x of the minimum, never a 429', async () => {
    const result = await simulate(slidingLogLimiter(LIMIT, WINDOW_MS));
    expect(result.answeredOutOfOrder).toBeGreaterThan(10);
    expect(result.refused).toBe(0);
    expect(result.counted).toHaveLength(LINKS);
    const minimumMs = (LINKS / LIMIT - 1) * WINDOW_MS;
    expect(result.elapsedMs / minimumMs).toBeLessThanOrEqual(1.05);
  });
});

describe('rate-limit pacer', () => {
  const headers = (remaining: number, resetSeconds: number) => ({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(resetSeconds) });

  it('spends the window, waits for its reset on the service clock, sends one request alone, then spends the rest', async () => {
    const time = virtualTime(1_800_000_000_000);
    const pacer = new RateLimitPacer(time.recordingClock);
    // The service clock runs one hour ahead of ours (the mock's virtual clock, advanced).
    const serviceNow = () => time.nowMs() + 3_600_000;
    const resetSeconds = (serviceNow() + 2000) / 1000;
    await time.run(
      (async () => {
        const first = await pacer.acquire();
        pacer.record(first, headers(2, resetSeconds), serviceNow());
        const [second, third] = [await pacer.acquire(), await pacer.acquire()];
        pacer.record(third, headers(0, resetSeconds), serviceNow());
        // The earlier-counted answer arriving last does not hide the slots of the next window.
        pacer.record(second, headers(1, resetSeconds), serviceNow());
        expect(time.sleeps).toEqual([]);
        const fourth = await pacer.acquire();
        expect(time.sleeps).toHaveLength(1);
        expect(time.sleeps[0]).toBeGreaterThanOrEqual(2000);
        expect(time.sleeps[0]).toBeLessThan(2200);
        let fifthStarted = false;
        const fifth = pacer.acquire().then((sequence) => ((fifthStarted = true), sequence));
        await time.clock.sleep(0);
        expect(fifthStarted).toBe(false);
        pacer.record(fourth, headers(2, resetSeconds + 2), serviceNow());
        pacer.record(await fifth, headers(1, resetSeconds + 2), serviceNow());
        await pacer.acquire();
        expect(time.sleeps).toHaveLength(1);
      })(),
    );
  });

  it('stops instead of waiting hours when the quota is spent until a distant reset (the daily window)', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.record(await pacer.acquire(), headers(0, (startMs + 5 * 3_600_000) / 1000), startMs);
    const error = await pacer.acquire().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect((error as QuotaExhaustedError).exitCode).toBe(6);
    expect((error as QuotaExhaustedError).message).toContain(`allows no more until ${new Date(startMs + 5 * 3_600_000).toISOString()}`);
    expect(time.sleeps).toEqual([]);
  });

  it('a request refused after the service counted it keeps its slot spent: the last slot of a window is not sent twice', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    const resetSeconds = (startMs + 10_000) / 1000;
    pacer.record(await pacer.acquire(), headers(1, resetSeconds), startMs);
    // The window's last slot: a 404 counted by the service, whose error carries no headers.
    pacer.fail(await pacer.acquire());
    await time.run(pacer.acquire());
    expect(time.sleeps).toHaveLength(1);
    expect(time.sleeps[0]).toBeGreaterThanOrEqual(10_000);
    expect(time.nowMs()).toBeGreaterThanOrEqual(startMs + 10_000);
  });

  it('a request that was never sent gives its slot back', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.record(await pacer.acquire(), headers(1, (startMs + 10_000) / 1000), startMs);
    pacer.release(await pacer.acquire());
    await pacer.acquire();
    expect(time.sleeps).toEqual([]);
  });

  it('does not pace when the service sends no rate-limit headers', async () => {
    const time = virtualTime(0);
    const pacer = new RateLimitPacer(time.recordingClock);
    for (let index = 0; index < 50; index += 1) pacer.record(await pacer.acquire(), {});
    expect(time.sleeps).toEqual([]);
  });
});

describe('rate-limit pacer, at its edges', () => {
  const headers = (remaining: number, reset: number) => ({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(reset) });
  /** Whether `promise` settles within a few turns of the event loop (nothing here waits on real time). */
  async function settlesNow(promise: Promise<unknown>): Promise<boolean> {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    return settled;
  }

  it('waits out a per-minute window spent with a minute to go, rather than stopping the batch', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.record(await pacer.acquire(), headers(0, (startMs + 60_000) / 1000), startMs);
    await time.run(pacer.acquire());
    expect(time.sleeps).toEqual([60_020]);
  });

  it('waits up to two minutes for a reset, and stops when it is further away', async () => {
    // The reset lands exactly MAX_PACING_WAIT_MS away, its 20 ms of slack included.
    const startMs = 1_800_000_000_020;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.record(await pacer.acquire(), headers(0, (startMs - 20 + MAX_PACING_WAIT_MS) / 1000), startMs);
    await time.run(pacer.acquire());
    expect(time.sleeps).toEqual([MAX_PACING_WAIT_MS]);

    const later = virtualTime(startMs);
    const stopping = new RateLimitPacer(later.recordingClock);
    stopping.record(await stopping.acquire(), headers(0, (startMs - 20 + MAX_PACING_WAIT_MS + 1000) / 1000), startMs);
    await expect(stopping.acquire()).rejects.toBeInstanceOf(QuotaExhaustedError);
    expect(later.sleeps).toEqual([]);
  });

  it('does not stop at a distant reset while a request is in flight: its answer may say more', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.clock);
    const [first, second] = [await pacer.acquire(), await pacer.acquire()];
    const farReset = (startMs + 5 * 3_600_000) / 1000;
    pacer.record(first, headers(0, farReset), startMs);
    const third = pacer.acquire();
    expect(await settlesNow(third)).toBe(false);
    pacer.record(second, headers(0, farReset), startMs);
    await expect(third).rejects.toBeInstanceOf(QuotaExhaustedError);
  });

  it('names the reset on our clock when the service clock runs ahead', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.clock);
    const serviceNowMs = startMs + 3_600_000;
    pacer.record(await pacer.acquire(), headers(0, (serviceNowMs + 5 * 3_600_000) / 1000), serviceNowMs);
    const error = (await pacer.acquire().catch((caught: unknown) => caught)) as QuotaExhaustedError;
    const resetAt = new Date(startMs + 5 * 3_600_000).toISOString();
    expect(error.message).toBe(`the key's rate limit of 3 requests allows no more until ${resetAt}; the batch stopped`);
    expect(error.details).toEqual({ limit: 3, reset_at: resetAt });
  });

  it('counts a reset given in seconds from now from the service time of the answer', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.record(await pacer.acquire(), headers(0, 30), startMs + 3_600_000);
    await time.run(pacer.acquire());
    expect(time.sleeps).toEqual([30_020]);
  });

  it('keeps the clock offset it learned when an answer does not tell the service time', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    const serviceNowMs = startMs + 3_600_000;
    const reset = (serviceNowMs + 2000) / 1000;
    pacer.record(await pacer.acquire(), headers(2, reset), serviceNowMs);
    const [second, third] = [await pacer.acquire(), await pacer.acquire()];
    pacer.record(second, headers(1, reset));
    pacer.record(third, headers(0, reset), Number.NaN);
    await time.run(pacer.acquire());
    expect(time.sleeps).toEqual([2020]);
  });

  it('an answer without rate-limit headers leaves what the pacer knew as it was', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.record(await pacer.acquire(), headers(1, (startMs + 10_000) / 1000), startMs);
    pacer.record(await pacer.acquire(), {});
    await pacer.acquire();
    expect(time.sleeps).toEqual([]);
    // The one slot the reading left is now taken: the next request waits for the reset.
    expect(await settlesNow(pacer.acquire())).toBe(false);
  });

  it('a failed request is no longer in flight: an answer counted after it frees its slot', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.clock);
    pacer.record(await pacer.acquire(), headers(2, (startMs + 10_000) / 1000), startMs);
    pacer.fail(await pacer.acquire());
    pacer.record(await pacer.acquire(), headers(1, (startMs + 20_000) / 1000), startMs);
    expect(await settlesNow(pacer.acquire())).toBe(true);
  });

  it('a failure before any answer needs no reading to be counted', async () => {
    const time = virtualTime(0);
    const pacer = new RateLimitPacer(time.recordingClock);
    pacer.fail(await pacer.acquire());
    expect(await settlesNow(pacer.acquire())).toBe(true);
  });

  it('once a reset passed, one request alone asks what came free, whatever the answers to earlier requests say', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.clock);
    const reset = (startMs + 1000) / 1000;
    pacer.record(await pacer.acquire(), headers(1, reset), startMs);
    const early = await pacer.acquire();
    await time.run(time.clock.sleep(2000));
    const probe = pacer.acquire();
    expect(await settlesNow(probe)).toBe(true);
    // An answer to a request sent before the reset, with the same figures, tells nothing new.
    pacer.record(early, headers(1, reset), time.nowMs());
    const next = pacer.acquire();
    expect(await settlesNow(next)).toBe(false);
    pacer.record(await probe, headers(2, reset + 5), startMs + 2000);
    expect(await settlesNow(next)).toBe(true);
  });

  it('an answer counted before the one it knows, arriving late, changes nothing', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.clock);
    const [early, late] = [await pacer.acquire(), await pacer.acquire()];
    pacer.record(late, headers(3, (startMs + 10_000) / 1000), startMs);
    pacer.record(early, headers(0, (startMs + 5000) / 1000), startMs);
    for (let slot = 0; slot < 3; slot += 1) expect(await settlesNow(pacer.acquire())).toBe(true);
    expect(await settlesNow(pacer.acquire())).toBe(false);
  });

  it('a lone request that failed after a reset leaves the next one to ask again; one failing beside it does not', async () => {
    const startMs = 1_800_000_000_000;
    const time = virtualTime(startMs);
    const pacer = new RateLimitPacer(time.clock);
    const reset = (startMs + 1000) / 1000;
    pacer.record(await pacer.acquire(), headers(2, reset), startMs);
    const inFlight = await pacer.acquire();
    await time.run(time.clock.sleep(2000));
    const probe = await pacer.acquire();
    pacer.release(inFlight);
    const waiting = pacer.acquire();
    expect(await settlesNow(waiting)).toBe(false);
    pacer.release(probe);
    expect(await settlesNow(waiting)).toBe(true);
  });

  it('leaves no timer behind: the wait for a reset is cancelled when an answer comes first', async () => {
    const signals: AbortSignal[] = [];
    const nowMs = 1_800_000_000_000;
    const clock: Clock = {
      now: () => new Date(nowMs),
      sleep: (_ms, signal) => {
        signals.push(signal!);
        return new Promise((_, reject) => signal!.addEventListener('abort', () => reject(signal!.reason), { once: true }));
      },
    };
    const pacer = new RateLimitPacer(clock);
    pacer.record(await pacer.acquire(), headers(1, (nowMs + 10_000) / 1000), nowMs);
    const second = await pacer.acquire();
    const third = pacer.acquire();
    expect(await settlesNow(third)).toBe(false);
    expect(signals.map((signal) => signal.aborted)).toEqual([false]);
    pacer.record(second, headers(1, (nowMs + 10_000) / 1000), nowMs);
    await third;
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
  });
});

describe('the rate a batch reports', () => {
  it('reads sensibly after a wait: per minute or hour below one a second, nothing when nothing was generated', () => {
    expect(formatRate(250, 20_000)).toBe('12.5/s');
    expect(formatRate(3, 65_000)).toBe('2.8/min');
    expect(formatRate(1, 2 * 3_600_000)).toBe('0.5/h');
    expect(formatRate(0, 65_000)).toBeUndefined();
    expect(formatProgress(0, 10, 5000)).toBe('  0/10  0%  -/s  ETA ?');
    expect(formatProgress(2, 10, 60_000)).toBe('  2/10  20%  2.0/min  ETA 4m');
  });
});
