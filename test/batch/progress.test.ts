import { describe, expect, it } from 'vitest';
import { createProgress, formatProgress, formatRate } from '../../src/batch/progress';
import type { Clock } from '../../src/types';
import { CapturedStream } from '../helpers/context';

/** A clock the test moves by hand. */
function handClock(): Clock & { advance(ms: number): void } {
  let nowMs = Date.parse('2026-11-25T12:00:00Z');
  return { now: () => new Date(nowMs), sleep: async (ms) => void (nowMs += ms), advance: (ms) => void (nowMs += ms) };
}

describe('the count line of a batch on a terminal', () => {
  it('redraws the line in place at each item with the count, the share, the rate and the time left; clears it before other output and at the end', () => {
    const stream = new CapturedStream({ isTTY: true });
    const clock = handClock();
    const progress = createProgress(stream, { enabled: true, total: 4, clock });
    progress.clear();
    expect(stream.text()).toBe('');
    clock.advance(500);
    progress.advance();
    expect(stream.text()).toBe('\r\x1b[K  1/4  25%  2.0/s  ETA 2s');
    clock.advance(1500);
    progress.advance();
    progress.clear();
    progress.clear();
    expect(stream.text().slice('\r\x1b[K  1/4  25%  2.0/s  ETA 2s'.length)).toBe('\r\x1b[K  2/4  50%  1.0/s  ETA 2s\r\x1b[K');
    progress.advance();
    progress.finish();
    expect(stream.text().endsWith('\r\x1b[K  3/4  75%  1.5/s  ETA 1s\r\x1b[K')).toBe(true);
  });

  it('during a wait for the rate limit says it waits and until when, not a rate and a time left; the next item brings them back', () => {
    const stream = new CapturedStream({ isTTY: true });
    const clock = handClock();
    const progress = createProgress(stream, { enabled: true, total: 10, clock });
    clock.advance(100);
    progress.advance();
    progress.waiting(Date.parse('2026-11-25T12:00:10Z'));
    expect(stream.text().split('\r\x1b[K').at(-1)).toBe('  1/10  10%  waiting for the rate limit until 12:00:10 UTC');
    clock.advance(10_000);
    progress.waiting(undefined);
    progress.advance();
    expect(stream.text().split('\r\x1b[K').at(-1)).toBe('  2/10  20%  11.9/min  ETA 41s');
  });

  it('writes nothing when not enabled (a pipe, --json)', () => {
    const stream = new CapturedStream({ isTTY: false });
    const progress = createProgress(stream, { enabled: false, total: 4, clock: handClock() });
    progress.advance();
    progress.clear();
    progress.finish();
    expect(stream.text()).toBe('');
  });

  it('reads 100% for an empty batch, no rate before time has passed, and rates per second, minute or hour', () => {
    expect(formatProgress(0, 0, 0)).toBe('  0/0  100%  -/s  ETA ?');
    expect(formatProgress(3, 3, 1000)).toBe('  3/3  100%  3.0/s  ETA 0s');
    // An item finished in the same millisecond the batch started: no rate yet, so no time left is guessed.
    expect(formatProgress(1, 3, 0)).toBe('  1/3  33%  -/s  ETA ?');
    expect(formatRate(5, 0)).toBeUndefined();
    expect(formatRate(1, 1000)).toBe('1.0/s');
    expect(formatRate(1, 60_000)).toBe('1.0/min');
    expect(formatRate(1, 60_001)).toBe('60.0/h');
  });
});
