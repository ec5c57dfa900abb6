import { describe, expect, it } from 'vitest';
import { createFileSetProgress, transferFigures, type ProgressMode } from '../../src/batch/fileSetProgress';
import { CapturedStream } from '../helpers/context';

/** A clock moved by hand, so that rates and times left are exact. */
function manualClock() {
  let ms = Date.parse('2026-11-25T00:00:00Z');
  return { now: () => new Date(ms), sleep: async () => undefined, advance: (by: number) => (ms += by) };
}

function setUp(mode: ProgressMode, options: { files: number; bytes: number; columns?: number; keepFinished?: boolean }) {
  const stream = new CapturedStream({ isTTY: mode === 'terminal' });
  const clock = manualClock();
  const progress = createFileSetProgress({
    stream,
    mode,
    columns: options.columns ?? 100,
    width: (text) => [...text].length,
    clock,
    files: options.files,
    bytes: options.bytes,
    keepFinished: options.keepFinished ?? true,
  });
  return { progress, clock, written: () => stream.text() };
}

describe('file set progress', () => {
  it('figures: bytes, the average rate and the time left at it; narrower forms after', () => {
    expect(transferFigures(1024 * 1024, 4 * 1024 * 1024, 500)).toEqual([
      '██░░░░░░░░  25%  1.0 MB of 4.0 MB  2.0 MB/s  2s left',
      ' 25%  1.0 MB of 4.0 MB  2.0 MB/s  2s left',
      ' 25%  2.0 MB/s  2s left',
    ]);
    expect(transferFigures(0, 10, 0)[0]).toBe('░░░░░░░░░░   0%  0 B of 10 B  -/s');
  });

  it('on a terminal: each file and the whole set, redrawn in place at most every 100 ms, the finished line kept', () => {
    const t = setUp('terminal', { files: 2, bytes: 3000 });
    const first = t.progress.start('w2.pdf', 2000);
    expect(t.written()).toBe('w2.pdf ░░░░░░░░░░   0%  0 B of 2.0 KB  -/s\n0 of 2 files ░░░░░░░░░░   0%  0 B of 2.9 KB  -/s');
    t.clock.advance(50);
    first.sent(500);
    expect(t.written()).not.toContain('500 B');
    t.clock.advance(450);
    first.sent(1000);
    expect(t.written()).toContain(
      '\r\u001b[K\u001b[1A\r\u001b[Kw2.pdf █████░░░░░  50%  1000 B of 2.0 KB  2.0 KB/s  1s left\n0 of 2 files ███░░░░░░░  33%  1000 B of 2.9 KB  2.0 KB/s  1s left',
    );
    t.clock.advance(500);
    first.done();
    expect(t.written()).toMatch(/w2\.pdf ██████████ 100%  2\.0 KB in 1s \(2\.0 KB\/s\)\n1 of 2 files ██████░░░░  66%  2\.0 KB of 2\.9 KB  2\.0 KB\/s  1s left$/);
    t.progress.start('b.pdf', 1000).failed();
    t.progress.finish();
    expect(t.written().endsWith('\r\u001b[K')).toBe(true);
  });

  it('never wider than the terminal: the name keeps room, the figures give way', () => {
    const t = setUp('terminal', { files: 1, bytes: 3 * 1024 * 1024, columns: 40 });
    const file = t.progress.start(`${'long-name-'.repeat(8)}.pdf`, 3 * 1024 * 1024);
    t.clock.advance(1000);
    file.sent(1024 * 1024);
    for (const line of t.written().split(/\r\u001b\[K|\n/)) expect([...line].length).toBeLessThan(40);
    expect(t.written()).toContain('long-name-long…  33%  1.0 MB/s  2s left');
  });

  it('in a log: one line per finished file, never a carriage return', () => {
    const t = setUp('lines', { files: 2, bytes: 3000 });
    const first = t.progress.start('w2.pdf', 2000);
    t.clock.advance(1000);
    first.sent(2000);
    first.done();
    t.progress.start('b.pdf', 1000).failed();
    t.progress.finish();
    expect(t.written()).toBe('w2.pdf: 2.0 KB in 1s (2.0 KB/s)\n');
  });

  it('off: nothing at all', () => {
    const t = setUp('off', { files: 1, bytes: 10 });
    const file = t.progress.start('w2.pdf', 10);
    file.sent(10);
    file.done();
    t.progress.finish();
    expect(t.written()).toBe('');
  });
});
