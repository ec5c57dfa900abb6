import type { Clock } from '../types';
import { serviceDateMs } from '../api/retry';
import { CliError, EXIT } from '../errors';

/** What one answer said about the key's quota (`X-RateLimit-*`), on the service's clock. */
export interface RateLimitReading {
  limit: number;
  remaining: number;
  /** When the window resets, in milliseconds since the epoch on the service's clock. */
  resetMs: number;
}

/**
 * Reads `X-RateLimit-Limit/Remaining/Reset`; undefined when the service sent none (limits off).
 * `serviceNowMs` places a reset given as "seconds from now" on the service's clock.
 */
export function readRateLimit(headers: Record<string, string>, serviceNowMs: number): RateLimitReading | undefined {
  const header = (name: string) => {
    const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
    return key === undefined ? undefined : Number(headers[key]);
  };
  const limit = header('x-ratelimit-limit');
  const remaining = header('x-ratelimit-remaining');
  const reset = header('x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined || ![limit, remaining, reset].every(Number.isFinite)) return undefined;
  // Epoch seconds, as the mock and most services send it; a small number is "seconds from now".
  const resetMs = reset > 1e9 ? reset * 1000 : serviceNowMs + reset * 1000;
  return { limit, remaining, resetMs };
}

/** How coarse the `Date` header is. */
const DATE_RESOLUTION_MS = 1000;

/** Slack after a reset before sending again, for rounding of the reset time and clock drift. */
const RESET_MARGIN_MS = 20;
/**
 * The longest the pacer waits for a window to reset. The contract's per-minute window never needs
 * more; a longer wait means the daily quota is spent, and a cron job should stop, not hang.
 */
export const MAX_PACING_WAIT_MS = 2 * 60_000;

/** The key's quota is spent until a reset too far away to wait for; the batch stops there. */
export class QuotaExhaustedError extends CliError {
  readonly exitCode = EXIT.RATE_LIMITED;
  readonly code = 'RATE_LIMIT_EXCEEDED';
}

/**
 * Paces requests to the key's rate limit so that a batch does not trip 429 in the first place,
 * whether the service counts in fixed windows or in a sliding log (the contract does not say).
 *
 * What is left is the service's own count from the answer it counted last, less the requests
 * still in flight (any of them may be counted after it). Answers arrive in any order, so the one
 * counted last is told by its headers, not by when it arrives: a later reset, or on the same reset
 * fewer remaining. An earlier-counted answer arriving late changes nothing, so no slot is left
 * unused (it used to lower the estimate for the rest of the window).
 *
 * Once the reported reset has passed, how much came free is unknown: the whole quota in a fixed
 * window, the oldest requests' slots in a sliding log. One request goes out alone, and its answer
 * says; this costs one round trip per reset and never a 429.
 *
 * The service's clock may differ from ours (the mock's virtual clock runs ahead after an advance),
 * so reset times are converted with an offset measured from answers, never compared raw: from a
 * created record's time when the batch has one, else from the answer's `Date` header.
 */
export class RateLimitPacer {
  private reading: RateLimitReading | undefined;
  /** Requests started and not yet settled by `record` or `release`. */
  private readonly inFlight = new Set<number>();
  private started = 0;
  /** The reading whose reset had passed when the lone request that asks what came free started. */
  private probed: RateLimitReading | undefined;
  /** Service clock minus local clock, in milliseconds. */
  private clockOffsetMs = 0;
  private waitingForAnswer: Array<() => void> = [];
  /** When the window the key spent resets (local ms), while requests wait for it; what `onWait` listeners were last told. */
  private waitingUntilMs: number | undefined;
  private readonly waitListeners = new Set<(untilMs: number | undefined) => void>();

  constructor(private readonly clock: Clock) {}

  /**
   * Tells `listener` when requests start waiting for the key's window to reset (its local time),
   * and when they go again (undefined): a progress line says it is waiting, and until when, rather
   * than a rate and a time left that the wait makes untrue. Returns the unsubscribe.
   */
  onWait(listener: (untilMs: number | undefined) => void): () => void {
    this.waitListeners.add(listener);
    return () => this.waitListeners.delete(listener);
  }

  /** Waits until a request may start, and counts it; returns its number for `record` or `release`. */
  async acquire(signal?: AbortSignal): Promise<number> {
    for (;;) {
      const reading = this.reading;
      if (reading === undefined) return this.start();
      const untilResetMs = reading.resetMs - this.clockOffsetMs - this.clock.now().getTime() + RESET_MARGIN_MS;
      if (untilResetMs <= 0) {
        if (this.probed !== reading) {
          this.probed = reading;
          return this.start();
        }
        await this.nextAnswer(Number.POSITIVE_INFINITY, signal);
      } else if (reading.remaining - this.inFlight.size > 0) {
        return this.start();
      } else if (reading.remaining <= 0 && this.inFlight.size === 0 && untilResetMs > MAX_PACING_WAIT_MS) {
        const resetAt = new Date(reading.resetMs - this.clockOffsetMs).toISOString();
        throw new QuotaExhaustedError(`the key's rate limit of ${reading.limit} requests allows no more until ${resetAt}; the batch stopped`, {
          details: { limit: reading.limit, reset_at: resetAt },
          hint: 'Run the same command again after that time: what was already done is not sent again.',
        });
      } else {
        // The key's window is spent (not only taken by requests in flight): a wait worth saying.
        if (reading.remaining <= 0) this.tellWaiting(this.clock.now().getTime() + untilResetMs);
        await this.nextAnswer(untilResetMs, signal);
      }
    }
  }

  private tellWaiting(untilMs: number | undefined): void {
    if (untilMs === this.waitingUntilMs) return;
    this.waitingUntilMs = untilMs;
    for (const listener of this.waitListeners) listener(untilMs);
  }

  /**
   * Learns from the answer to request `sequence`. `serviceNowMs` is the service's time at the
   * answer when known (a created record's `created_at`), to keep reset times on our clock.
   */
  record(sequence: number, headers: Record<string, string>, serviceNowMs?: number): void {
    const localNowMs = this.clock.now().getTime();
    if (serviceNowMs !== undefined && Number.isFinite(serviceNowMs)) this.clockOffsetMs = serviceNowMs - localNowMs;
    else this.learnOffsetFromDate(headers, localNowMs);
    const reading = readRateLimit(headers, localNowMs + this.clockOffsetMs);
    if (reading !== undefined) this.learn(reading);
    this.release(sequence);
  }

  /**
   * Request `sequence` was sent and failed with no headers to learn from (a refusal, a timeout):
   * the service may have counted it, so its slot stays spent until an answer counted after it
   * says what is left (at worst one slot of the window goes unused). Freed as never sent, a
   * refusal among a window's last requests let one request too many start, answered 429.
   */
  fail(sequence: number): void {
    if (this.reading !== undefined) this.reading.remaining -= 1;
    this.release(sequence);
  }

  /** Request `sequence` ended without being counted by the service (never sent), or was recorded. */
  release(sequence: number): void {
    this.inFlight.delete(sequence);
    // A lone request that failed told nothing: the next one asks again.
    if (this.inFlight.size === 0) this.probed = undefined;
    for (const wake of this.waitingForAnswer.splice(0)) wake();
  }

  /**
   * `Date` is in whole seconds and taken before the answer travelled, so it reads up to a second
   * (and the trip) early: it replaces the offset only when they disagree by more than that, which
   * keeps an offset measured to the millisecond, and 0 for a service in step with us. Reading
   * early errs on the safe side: resets are then placed a little later, never sooner.
   */
  private learnOffsetFromDate(headers: Record<string, string>, localNowMs: number): void {
    const dateMs = serviceDateMs(headers);
    if (dateMs === undefined) return;
    const offsetMs = dateMs - localNowMs;
    if (Math.abs(offsetMs - this.clockOffsetMs) > DATE_RESOLUTION_MS) this.clockOffsetMs = offsetMs;
  }

  private start(): number {
    if (this.waitingUntilMs !== undefined) this.tellWaiting(undefined);
    this.started += 1;
    this.inFlight.add(this.started);
    return this.started;
  }

  /** Keeps the reading of the answer the service counted last. */
  private learn(reading: RateLimitReading): void {
    const current = this.reading;
    if (current === undefined || reading.resetMs > current.resetMs || (reading.resetMs === current.resetMs && reading.remaining < current.remaining)) {
      this.reading = reading;
    }
  }

  /** Resolves at the next answer or after `timeoutMs`, whichever is first; leaves no timer behind. */
  private async nextAnswer(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const done = new AbortController();
    const stop = signal ? AbortSignal.any([signal, done.signal]) : done.signal;
    const timeout = Number.isFinite(timeoutMs) ? this.clock.sleep(timeoutMs, stop) : abortion(stop);
    try {
      await Promise.race([new Promise<void>((resolve) => this.waitingForAnswer.push(resolve)), timeout]);
    } finally {
      done.abort();
      await timeout.catch(() => undefined);
    }
  }
}

/** Rejects with the signal's reason when it aborts. */
function abortion(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

/**
 * Pages of a list (`api.pages(...)`) read through the pacer: a slot is taken before each request
 * and the answer's rate-limit headers recorded, so that the reads a batch makes first (`docs sync`
 * listing what an account has) and its writes share one view of the limit.
 */
export async function* pacedPages<P extends { headers: Record<string, string> }>(pacer: RateLimitPacer, pages: AsyncIterable<P>, signal?: AbortSignal): AsyncGenerator<P> {
  const iterator = pages[Symbol.asyncIterator]();
  for (;;) {
    const sequence = await pacer.acquire(signal);
    let next: IteratorResult<P>;
    try {
      next = await iterator.next();
    } catch (error) {
      pacer.fail(sequence);
      throw error;
    }
    // The list ended without another request: the slot was not used.
    if (next.done === true) {
      pacer.release(sequence);
      return;
    }
    pacer.record(sequence, next.value.headers);
    yield next.value;
  }
}

/**
 * A hard ceiling of `requests` starts per sliding `windowMs` (rclone's --tpslimit), for a
 * destination that says nothing about its limits: a webhook receiver's `--rate`.
 */
export class WindowLimiter {
  private readonly starts: number[] = [];

  constructor(
    private readonly requests: number,
    private readonly windowMs: number,
  ) {}

  /** Milliseconds until a start is allowed (0: now). */
  waitMs(nowMs: number): number {
    while (this.starts.length > 0 && this.starts[0]! <= nowMs - this.windowMs) this.starts.shift();
    return this.starts.length < this.requests ? 0 : this.starts[0]! + this.windowMs - nowMs;
  }

  /** Counts a start; call only when `waitMs` said 0. */
  take(nowMs: number): void {
    this.starts.push(nowMs);
  }
}
