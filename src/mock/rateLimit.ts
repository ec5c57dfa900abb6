import { MockError } from './errors';
import type { MockClock, MockSettings, RateLimitWindow } from './deps';

/** What the limiter tells the router about one admitted request, for the `X-RateLimit-*` headers. */
export interface RateLimitStatus {
  /** The limit of the tightest window (the fewest requests left). */
  limit: number;
  /** How many more requests would be admitted right now. */
  remaining: number;
  /** When `remaining` next grows (the oldest counted request leaves the window), in seconds since the epoch with milliseconds as a fraction. */
  resetEpochSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `keyId` against every window, or throws 429 `RATE_LIMIT_EXCEEDED`
   * without counting it. Synchronous, so concurrent requests can never both take the last slot.
   * Returns undefined when rate limiting is off.
   */
  admit(keyId: string): RateLimitStatus | undefined;
}

/** What the contract's 429 message advises (its "Limits" table). */
export const ADVISED_RETRY_SECONDS = 60;

/**
 * An exact sliding log per key and window: a request is admitted iff fewer than `limit` requests
 * were admitted in the `windowSeconds` before it, so "100 a minute" holds for any 60 seconds, not
 * only for clock-aligned minutes. Each log keeps the admission times (virtual clock) still inside
 * its window, at most `limit` of them, so memory is bounded by the limit and by the traffic.
 * Settings are read on every request: a `/_mock` control may replace them while running, and
 * logs start over when they change or the store is reset (`currentState` then gives a new state
 * object), so no control needs to reach the limiter.
 */
export function createRateLimiter(settings: MockSettings, clock: MockClock, currentState: () => object): RateLimiter {
  let logs = new Map<string, TimestampLog[]>();
  let loggedFor = signature(settings.rateLimits);
  let loggedState = currentState();

  const reset = () => {
    logs = new Map();
    loggedFor = signature(settings.rateLimits);
    loggedState = currentState();
  };

  return {
    admit(keyId) {
      const windows = settings.rateLimits;
      if (windows.length === 0) return undefined;
      if (signature(windows) !== loggedFor || currentState() !== loggedState) reset();

      const nowMs = clock.nowMs();
      let keyLogs = logs.get(keyId);
      if (!keyLogs) {
        keyLogs = windows.map(() => new TimestampLog());
        logs.set(keyId, keyLogs);
      }
      let refusal: { window: RateLimitWindow; admitAtMs: number } | undefined;
      for (let index = 0; index < windows.length; index += 1) {
        const window = windows[index]!;
        const log = keyLogs[index]!;
        log.dropBefore(nowMs - window.windowSeconds * 1000);
        if (log.size < window.limit) continue;
        // When several windows are full, the one that frees up last is the one worth waiting for.
        const admitAtMs = log.at(log.size - window.limit) + window.windowSeconds * 1000;
        if (!refusal || admitAtMs > refusal.admitAtMs) refusal = { window, admitAtMs };
      }
      if (refusal) throw rateLimitError(refusal.window, refusal.admitAtMs, nowMs);

      for (const log of keyLogs) log.push(nowMs);
      return tightestWindow(windows, keyLogs);
    },
  };
}

function signature(windows: RateLimitWindow[]): string {
  return windows.map((window) => `${window.limit}/${window.windowSeconds}`).join(',');
}

/**
 * The window with the fewest requests left. Remaining (the minimum over windows) grows only once
 * every window at that minimum has let its oldest request go, so on a tie the one that does so
 * last is reported.
 */
function tightestWindow(windows: RateLimitWindow[], logs: TimestampLog[]): RateLimitStatus {
  let limit = 0;
  let remaining = Infinity;
  let resetMs = 0;
  for (let index = 0; index < windows.length; index += 1) {
    const window = windows[index]!;
    const log = logs[index]!;
    const left = window.limit - log.size;
    const freesAtMs = log.at(0) + window.windowSeconds * 1000;
    if (left < remaining || (left === remaining && freesAtMs > resetMs)) {
      limit = window.limit;
      remaining = left;
      resetMs = freesAtMs;
    }
  }
  return { limit, remaining, resetEpochSeconds: resetMs / 1000 };
}

function rateLimitError(window: RateLimitWindow, admitAtMs: number, nowMs: number): MockError<'RATE_LIMIT_EXCEEDED'> {
  const retryAfterSeconds = Math.max(1, Math.ceil((admitAtMs - nowMs) / 1000));
  const resetAt = new Date(admitAtMs).toISOString();
  return new MockError(
    'RATE_LIMIT_EXCEEDED',
    `Rate limit of ${window.limit} requests per ${describeSeconds(window.windowSeconds)} exceeded. ` +
      `Retry after ${ADVISED_RETRY_SECONDS} seconds; this key's next request is admitted at ${resetAt}.`,
    { limit: window.limit, window_seconds: window.windowSeconds, reset_at: resetAt },
    {
      'retry-after': String(retryAfterSeconds),
      'x-ratelimit-limit': String(window.limit),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(admitAtMs / 1000),
    },
  );
}

function describeSeconds(seconds: number): string {
  if (seconds === 86_400) return 'day';
  if (seconds === 3600) return 'hour';
  if (seconds === 60) return 'minute';
  return `${seconds} seconds`;
}

/**
 * Admission times in order, oldest first, in a ring that grows by doubling: it never holds more
 * than the window's limit, and only as many as were admitted within the window.
 */
class TimestampLog {
  private ring = new Float64Array(8);
  private head = 0;
  size = 0;

  /** The `index`-th oldest time held. */
  at(index: number): number {
    return this.ring[(this.head + index) & (this.ring.length - 1)]!;
  }

  /** Forgets times at or before `cutoffMs`: they are no longer inside the window. */
  dropBefore(cutoffMs: number): void {
    while (this.size > 0 && this.ring[this.head]! <= cutoffMs) {
      this.head = (this.head + 1) & (this.ring.length - 1);
      this.size -= 1;
    }
  }

  push(timeMs: number): void {
    if (this.size === this.ring.length) {
      const grown = new Float64Array(this.ring.length * 2);
      for (let index = 0; index < this.size; index += 1) grown[index] = this.at(index);
      this.ring = grown;
      this.head = 0;
    }
    this.ring[(this.head + this.size) & (this.ring.length - 1)] = timeMs;
    this.size += 1;
  }
}
