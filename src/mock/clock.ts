import type { MockClock, MockStore } from './deps';

/**
 * The virtual clock: real time plus the store's `clockOffsetMs`. The offset lives in the state, so
 * an advanced clock survives a restart (with `--data-dir`) and a reset returns it to real time.
 * Within one run it never goes backward, even when the machine's clock is set back.
 */
export function createClock(store: MockStore, realNow: () => number = Date.now): MockClock {
  let latest = 0;
  let stateOfLatest = store.state;
  const nowMs = () => {
    // A reset starts a new state (and a new offset): the old high-water mark no longer applies.
    if (store.state !== stateOfLatest) {
      stateOfLatest = store.state;
      latest = 0;
    }
    latest = Math.max(latest, realNow() + store.state.clockOffsetMs);
    return latest;
  };
  const now = () => new Date(nowMs());
  return {
    now,
    nowMs,
    nowIso: () => now().toISOString(),
    async advance(milliseconds) {
      if (!Number.isFinite(milliseconds) || milliseconds < 0) {
        throw new RangeError(`the clock moves forward only: ${milliseconds} ms is not a duration of 0 or more`);
      }
      store.state.clockOffsetMs += milliseconds;
      await store.commit();
    },
  };
}
