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

/**
 * Exponential backoff with "equal jitter": half of base * 2^retry (capped) for sure, plus a random
 * part of up to the other half, so that clients that failed together spread out. Each range starts
 * where the previous one ends, so successive waits never shrink; at the cap the ranges overlap,
 * and the wait is then at least the previous one (`previousMs`). (Full jitter, used before, could
 * wait 221 ms after 1.4 s, which reads as a countdown gone wrong.)
 */
export function backoffDelay(retry: number, random: () => number, previousMs = 0): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.max(previousMs, Math.floor(ceiling / 2 + random() * (ceiling / 2)));
}

/** What earlier attempts of the same request did, for the next decision. */
export interface RetryHistory {
  /** The longest backoff waited so far (429 waits follow the service and do not count). */
  backoffMs: number;
  /** Consecutive attempts, this one included, that found nothing listening. */
  refusals: number;
}

/**
 * A host that refuses the connection twice in a row has nothing listening: a wrong port or a
 * service that is down, which more waiting seldom cures. Reported then, not after every retry.
 */
export const REFUSALS_BEFORE_REPORTING = 2;

/** Whether (and after how long) to retry, ignoring the retry count and budget. */
export function retryDecision(
  method: string,
  outcome: AttemptOutcome,
  retry: number,
  random: () => number,
  history: RetryHistory = { backoffMs: 0, refusals: outcome.kind === 'network' && outcome.failure === 'refused' ? 1 : 0 },
): RetryDecision | undefined {
  const idempotent = IDEMPOTENT_METHODS.has(method.toUpperCase());
  const backoff = () => backoffDelay(retry, random, history.backoffMs);
  if (outcome.kind === 'response') {
    if (outcome.status === 429) {
      const delayMs = outcome.rateLimitWaitMs === undefined ? backoff() : outcome.rateLimitWaitMs + RATE_LIMIT_MARGIN_MS;
      return { delayMs, reason: 'rate limited' };
    }
    const reason = RETRYABLE_STATUSES.get(outcome.status);
    return reason !== undefined && idempotent ? { delayMs: backoff(), reason } : undefined;
  }
  switch (outcome.failure) {
    case 'refused':
      return history.refusals >= REFUSALS_BEFORE_REPORTING ? undefined : { delayMs: backoff(), reason: 'connection refused' };
    case 'connect-timeout':
      return { delayMs: backoff(), reason: 'could not connect in time' };
    case 'reset':
      return idempotent ? { delayMs: backoff(), reason: 'connection reset' } : undefined;
    default:
      return undefined;
  }
}

/** The service's `Date` header (whole seconds), in milliseconds since the epoch; undefined when absent or unreadable. */
export function serviceDateMs(headers: Record<string, string>): number | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === 'date');
  const ms = key === undefined ? NaN : Date.parse(headers[key]!);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The contract's Limits table: a 429's message "advises retrying after 60 seconds". */
export const RATE_LIMIT_DEFAULT_WAIT_MS = 60_000;

/**
 * How long a 429 asks to wait: `Retry-After` (seconds or an HTTP date) when sent, seconds being
 * relative and so immune to clock skew; else the body's `reset_at` when it is still ahead; else
 * the contract's 60 seconds (a `reset_at` in the past means the clocks disagree, not that the limit
 * is over). Instants are measured from the service's own `Date` when it sent one (`serviceNowMs`),
 * so a service whose clock differs from ours (the mock after a clock advance) is waited for as
 * long as it means; its whole seconds make the wait at most a second longer, never shorter.
 */
export function rateLimitWaitMs(retryAfter: string | undefined, resetAt: unknown, now: Date, serviceNowMs?: number): number {
  const reference = serviceNowMs ?? now.getTime();
  if (retryAfter !== undefined && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date) && date > reference) return date - reference;
  }
  if (typeof resetAt === 'string') {
    const reset = Date.parse(resetAt);
    if (!Number.isNaN(reset) && reset > reference) return reset - reference;
  }
  return RATE_LIMIT_DEFAULT_WAIT_MS;
}
