import type { Clock } from '../../../context';
import { CliError, EXIT } from '../../../errors';

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

/** Slack after a window's reset before sending again, for rounding of the reset second and clock drift. */
const RESET_MARGIN_MS = 50;
/** How long to wait for news when the quota looks spent but the next reset is not known yet. */
const UNKNOWN_RESET_POLL_MS = 1000;
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
 * Paces requests to the key's rate limit so that a batch does not trip 429 in the first place.
 * It spends the window's remaining quota at full concurrency, then waits for the window to reset:
 * for fixed windows this is the fastest schedule that never exceeds the limit.
 *
 * The service's clock may differ from ours (the mock's virtual clock runs ahead in tests), so reset
 * times are converted with an offset measured from answers (`serviceNowMs`), never compared raw.
 * The estimate of what is left is conservative: requests started after the answer that reported
 * the quota are assumed to count against it.
 */
export class RateLimitPacer {
  private reading: RateLimitReading | undefined;
  /** How many requests had started when the request that produced `reading` started. */
  private startedAtReading = 0;
  private started = 0;
  /** Service clock minus local clock, in milliseconds. */
  private clockOffsetMs = 0;
  /** The window's length, learnt from two answers in different windows. */
  private windowLengthMs = Number.POSITIVE_INFINITY;
  private waitingForAnswer: Array<() => void> = [];

  constructor(private readonly clock: Clock) {}

  /** Waits until a request may start, and counts it; returns its sequence number for `record`. */
  async acquire(signal?: AbortSignal): Promise<number> {
    for (;;) {
      const reading = this.reading;
      if (reading === undefined || reading.remaining - (this.started - this.startedAtReading) > 0) {
        this.started += 1;
        return this.started;
      }
      if (Number.isFinite(reading.resetMs)) {
        const waitMs = reading.resetMs - this.clockOffsetMs - this.clock.now().getTime() + RESET_MARGIN_MS;
        if (waitMs > MAX_PACING_WAIT_MS) {
          const resetAt = new Date(reading.resetMs - this.clockOffsetMs).toISOString();
          throw new QuotaExhaustedError(`the key's rate limit of ${reading.limit} requests allows no more until ${resetAt}; the batch stopped`, {
            details: { limit: reading.limit, reset_at: resetAt },
            hint: 'Run the same command again after that time: links already generated are not generated again.',
          });
        }
        if (waitMs > 0) await this.clock.sleep(waitMs, signal);
      } else {
        await Promise.race([new Promise<void>((resolve) => this.waitingForAnswer.push(resolve)), this.clock.sleep(UNKNOWN_RESET_POLL_MS, signal)]);
      }
      // Unless an answer told us more meanwhile, assume a fresh window: if we are wrong, the
      // client waits out the 429 the service answers, so the guess costs time, never an item.
      if (this.reading === reading) {
        this.reading = { limit: reading.limit, remaining: reading.limit, resetMs: reading.resetMs + this.windowLengthMs };
        this.startedAtReading = this.started;
      }
    }
  }

  /**
   * Learns from an answer to the request numbered `sequence`. `serviceNowMs` is the service's time
   * at the answer when known (a link's `created_at`), to keep reset times on our clock.
   */
  record(sequence: number, headers: Record<string, string>, serviceNowMs?: number): void {
    const localNowMs = this.clock.now().getTime();
    if (serviceNowMs !== undefined && Number.isFinite(serviceNowMs)) this.clockOffsetMs = serviceNowMs - localNowMs;
    const reading = readRateLimit(headers, localNowMs + this.clockOffsetMs);
    if (reading !== undefined) this.learn(sequence, reading);
    for (const wake of this.waitingForAnswer.splice(0)) wake();
  }

  private learn(sequence: number, reading: RateLimitReading): void {
    const current = this.reading;
    if (current !== undefined && Number.isFinite(current.resetMs) && reading.resetMs > current.resetMs) {
      this.windowLengthMs = Math.min(this.windowLengthMs, reading.resetMs - current.resetMs);
    }
    const left = (candidate: RateLimitReading, since: number) => candidate.remaining - (this.started - since);
    const newerWindow = current === undefined || !Number.isFinite(current.resetMs) || reading.resetMs > current.resetMs;
    const sameWindowButLower = current !== undefined && reading.resetMs === current.resetMs && left(reading, sequence) < left(current, this.startedAtReading);
    if (newerWindow || sameWindowButLower) {
      this.reading = reading;
      this.startedAtReading = sequence;
    }
  }
}
