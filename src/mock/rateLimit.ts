import { MockError } from './errors';
import type { MockClock, MockSettings, RateLimitWindow } from './deps';

/** What the limiter tells the router about one admitted request, for the `X-RateLimit-*` headers. */
export interface RateLimitStatus {
  limit: number;
  remaining: number;
  /** When the window resets, in seconds since the epoch (virtual clock). */
  resetEpochSeconds: number;
}

interface WindowCount {
  windowStartMs: number;
  count: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `keyId` against every window, or throws 429 `RATE_LIMIT_EXCEEDED`
   * without counting it. Synchronous, so concurrent requests can never both take the last slot.
   * Returns undefined when rate limiting is off.
   */
  admit(keyId: string): RateLimitStatus | undefined;
}

/**
 * Fixed windows aligned to multiples of their length on the virtual clock (a day window starts at
 * midnight UTC), so advancing the clock past a boundary frees the quota, as a real day would.
 * Settings are read on every request: a `/_mock` control may replace them while running, and
 * counts start over when they change or the store is reset (`currentState` then gives a new
 * state object), so no control needs to reach the limiter.
 */
export function createRateLimiter(settings: MockSettings, clock: MockClock, currentState: () => object): RateLimiter {
  let counts = new Map<string, WindowCount[]>();
  let countedFor = signature(settings.rateLimits);
  let countedState = currentState();

  const reset = () => {
    counts = new Map();
    countedFor = signature(settings.rateLimits);
    countedState = currentState();
  };

  return {
    admit(keyId) {
      const windows = settings.rateLimits;
      if (windows.length === 0) return undefined;
      if (signature(windows) !== countedFor || currentState() !== countedState) reset();

      const nowMs = clock.nowMs();
      const current = currentCounts(counts, keyId, windows, nowMs);
      const exceeded = windows
        .map((window, index) => ({ window, resetMs: windowEndMs(window, nowMs), count: current[index]!.count }))
        .filter(({ window, count }) => count >= window.limit)
        // When several windows are full, the one that frees up last is the one worth waiting for.
        .sort((a, b) => b.resetMs - a.resetMs)[0];
      if (exceeded) throw rateLimitError(exceeded.window, exceeded.resetMs, nowMs);

      for (const entry of current) entry.count += 1;
      return tightestWindow(windows, current, nowMs);
    },
  };
}

function signature(windows: RateLimitWindow[]): string {
  return windows.map((window) => `${window.limit}/${window.windowSeconds}`).join(',');
}

function windowStartMs(window: RateLimitWindow, nowMs: number): number {
  const lengthMs = window.windowSeconds * 1000;
  return Math.floor(nowMs / lengthMs) * lengthMs;
}

function windowEndMs(window: RateLimitWindow, nowMs: number): number {
  return windowStartMs(window, nowMs) + window.windowSeconds * 1000;
}

/** The key's counters for the windows that contain `nowMs`, starting afresh where a window has rolled over. */
function currentCounts(counts: Map<string, WindowCount[]>, keyId: string, windows: RateLimitWindow[], nowMs: number): WindowCount[] {
  let entries = counts.get(keyId);
  if (!entries) {
    entries = windows.map(() => ({ windowStartMs: -1, count: 0 }));
    counts.set(keyId, entries);
  }
  windows.forEach((window, index) => {
    const start = windowStartMs(window, nowMs);
    const entry = entries[index]!;
    if (entry.windowStartMs !== start) {
      entry.windowStartMs = start;
      entry.count = 0;
    }
  });
  return entries;
}

/** The window with the fewest requests left (the shorter one on a tie): what the headers report. */
function tightestWindow(windows: RateLimitWindow[], current: WindowCount[], nowMs: number): RateLimitStatus {
  let best: RateLimitStatus | undefined;
  windows.forEach((window, index) => {
    const remaining = window.limit - current[index]!.count;
    const resetEpochSeconds = Math.ceil(windowEndMs(window, nowMs) / 1000);
    if (!best || remaining < best.remaining || (remaining === best.remaining && resetEpochSeconds < best.resetEpochSeconds)) {
      best = { limit: window.limit, remaining, resetEpochSeconds };
    }
  });
  return best!;
}

function rateLimitError(window: RateLimitWindow, resetMs: number, nowMs: number): MockError<'RATE_LIMIT_EXCEEDED'> {
  const retryAfterSeconds = Math.max(1, Math.ceil((resetMs - nowMs) / 1000));
  const resetAt = new Date(resetMs).toISOString();
  return new MockError(
    'RATE_LIMIT_EXCEEDED',
    `Rate limit of ${window.limit} requests per ${describeSeconds(window.windowSeconds)} exceeded. Retry after ${retryAfterSeconds} seconds.`,
    { limit: window.limit, window_seconds: window.windowSeconds, reset_at: resetAt },
    {
      'retry-after': String(retryAfterSeconds),
      'x-ratelimit-limit': String(window.limit),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
    },
  );
}

function describeSeconds(seconds: number): string {
  if (seconds === 86_400) return 'day';
  if (seconds === 3600) return 'hour';
  if (seconds === 60) return 'minute';
  return `${seconds} seconds`;
}
