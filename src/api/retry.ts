/**
 * When to try a request again, as pure functions of what happened (tested as tables).
 *
 * A request is retried only when sending it again cannot do something twice: a GET always; a POST
 * only when the service provably did not act on it: a 429 (refused before any work) or a
 * connection that was never made (refused, or connect timeout). A POST that was sent and got no
 * answer (reset, timeout) or a 5xx may have been acted on, so it is reported instead.
 */

export const DEFAULT_MAX_RETRIES = 3;
/** No retry of one request begins later than this after its first attempt (each attempt has its own timeout). */
export const RETRY_BUDGET_MS = 120_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 20_000;
/** Added to a rate-limit wait so that the retry lands after the window has reset, not on its edge. */
const RATE_LIMIT_MARGIN_MS = 100;

export type NetworkFailureKind = 'refused' | 'connect-timeout' | 'reset' | 'timeout' | 'dns' | 'other';

export type AttemptOutcome =
  | { kind: 'response'; status: number; rateLimitWaitMs?: number }
  | { kind: 'network'; failure: NetworkFailureKind };

export interface RetryDecision {
  delayMs: number;
  /** What happened, for the note on stderr: "rate limited", "service unavailable (503)". */
  reason: string;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const RETRYABLE_STATUSES = new Map([
  [502, 'bad gateway (502)'],
  [503, 'service unavailable (503)'],
  [504, 'gateway timeout (504)'],
]);

/** Exponential backoff with full jitter: a random wait up to base * 2^retry, capped. */
export function backoffDelay(retry: number, random: () => number): number {
  return Math.floor(random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry));
}

/** Whether (and after how long) to retry, ignoring the retry count and budget. */
export function retryDecision(method: string, outcome: AttemptOutcome, retry: number, random: () => number): RetryDecision | undefined {
  const idempotent = IDEMPOTENT_METHODS.has(method.toUpperCase());
  if (outcome.kind === 'response') {
    if (outcome.status === 429) {
      const delayMs = outcome.rateLimitWaitMs === undefined ? backoffDelay(retry, random) : outcome.rateLimitWaitMs + RATE_LIMIT_MARGIN_MS;
      return { delayMs, reason: 'rate limited' };
    }
    const reason = RETRYABLE_STATUSES.get(outcome.status);
    return reason !== undefined && idempotent ? { delayMs: backoffDelay(retry, random), reason } : undefined;
  }
  switch (outcome.failure) {
    case 'refused':
      return { delayMs: backoffDelay(retry, random), reason: 'connection refused' };
    case 'connect-timeout':
      return { delayMs: backoffDelay(retry, random), reason: 'could not connect in time' };
    case 'reset':
      return idempotent ? { delayMs: backoffDelay(retry, random), reason: 'connection reset' } : undefined;
    default:
      return undefined;
  }
}

/** The contract's Limits table: a 429's message "advises retrying after 60 seconds". */
export const RATE_LIMIT_DEFAULT_WAIT_MS = 60_000;

/**
 * How long a 429 asks to wait: `Retry-After` (seconds or an HTTP date) when sent, being relative
 * and so immune to clock skew; else the body's `reset_at` when it is still ahead of our clock;
 * else the contract's 60 seconds (a `reset_at` in the past means the clocks disagree, not that
 * the limit is over).
 */
export function rateLimitWaitMs(retryAfter: string | undefined, resetAt: unknown, now: Date): number {
  if (retryAfter !== undefined && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date) && date > now.getTime()) return date - now.getTime();
  }
  if (typeof resetAt === 'string') {
    const reset = Date.parse(resetAt);
    if (!Number.isNaN(reset) && reset > now.getTime()) return reset - now.getTime();
  }
  return RATE_LIMIT_DEFAULT_WAIT_MS;
}
