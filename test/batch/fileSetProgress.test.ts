import { describe, expect, it } from 'vitest';
import { createFileSetProgress, formatByteRate, formatFinished, openFileSetProgress, transferFigures, type ProgressMode } from '../../src/batch/fileSetProgress';
import { CapturedStream, createTestContext } from '../helpers/context';

/** A clock moved by hand, so that rates and times left are exact. */
function manualClock() {
  let ms = Date.parse('2026-11-25T00:00:00Z');
  return { now: () => new Date(ms), sleep: async () => undefined, advance: (by: number) => (ms += by) };
}

const CLEAR = '\r\u001b[K';
const UP = '\u001b[1A';

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

  it('a rate only once bytes went and time passed; a finished file without one says no rate', () => {
    expect(formatByteRate(0, 1000)).toBeUndefined();
    expect(formatByteRate(-5, 1000)).toBeUndefined();
    expect(formatByteRate(1000, 0)).toBeUndefined();
    expect(formatByteRate(1000, -1)).toBeUndefined();
    expect(formatByteRate(1, 1)).toBe('1000 B/s');
    expect(formatByteRate(3072, 1500)).toBe('2.0 KB/s');
    expect(formatFinished(0, 0)).toBe('0 B in 0s');
    expect(formatFinished(2048, 2000)).toBe('2.0 KB in 2s (1.0 KB/s)');
  });

  it('figures: an empty file is complete; the time left is rounded up to a whole second', () => {
    expect(transferFigures(0, 0, 0)).toEqual(['██████████ 100%  0 B of 0 B  -/s', '100%  0 B of 0 B  -/s', '100%  -/s']);
    // 1.5 s left at 1000 B/s reads 2s; a third is 33%, never 34%.
    expect(transferFigures(1000, 2500, 1000)[2]).toBe(' 40%  1000 B/s  2s left');
    expect(transferFigures(1000, 3000, 1000)[2]).toBe(' 33%  1000 B/s  2s left');
  });

  it('on a terminal: a single file draws no line for the set; a finished file not kept leaves no line', () => {
    const t = setUp('terminal', { files: 1, bytes: 1000, keepFinished: false });
    const file = t.progress.start('a.pdf', 1000);
    expect(t.written()).toBe('a.pdf ░░░░░░░░░░   0%  0 B of 1000 B  -/s');
    t.clock.advance(1000);
    file.done();
    // Wiped, and nothing is drawn again: no file is in flight and a set of one has no line.
    expect(t.written()).toBe(`a.pdf ░░░░░░░░░░   0%  0 B of 1000 B  -/s${CLEAR}`);
    t.progress.finish();
    t.progress.clear();
    expect(t.written()).toBe(`a.pdf ░░░░░░░░░░   0%  0 B of 1000 B  -/s${CLEAR}`);
  });

  it('on a terminal: a wait for the rate limit is said on the set\'s line, with until when, in place of its rate and time left', () => {
    const t = setUp('terminal', { files: 2, bytes: 2000 });
    // 2026-11-25T00:00:00Z on the manual clock: the window resets 42 s later.
    t.progress.waiting(Date.parse('2026-11-25T00:00:42Z'));
    expect(t.written()).toBe('0 of 2 files waiting for the rate limit until 00:00:42 UTC');
    t.progress.waiting(undefined);
    const file = t.progress.start('a.pdf', 1000);
    t.clock.advance(500);
    file.sent(500);
    expect(t.written().split('\n').at(-1)).toBe('0 of 2 files ██░░░░░░░░  25%  500 B of 2.0 KB  1000 B/s  2s left');
    // A set of one file says it waits too.
    const one = setUp('terminal', { files: 1, bytes: 1000 });
    one.progress.waiting(Date.parse('2026-11-25T00:01:00Z'));
    expect(one.written()).toBe('0 of 1 files waiting for the rate limit until 00:01:00 UTC');
  });

  it('on a terminal: redrawn once 100 ms have passed, not before; the set sums the bytes of every file in flight', () => {
    const t = setUp('terminal', { files: 3, bytes: 3000 });
    const a = t.progress.start('a.pdf', 1000);
    const b = t.progress.start('b.pdf', 1000);
    const before = t.written().length;
    t.clock.advance(99);
    a.sent(100);
    expect(t.written().length).toBe(before);
    t.clock.advance(1);
    b.sent(200);
    // Three lines drawn before: the cursor goes up two to wipe them.
    expect(t.written().slice(before)).toBe(
      `${CLEAR}${UP}${CLEAR}${UP}${CLEAR}` +
        'a.pdf █░░░░░░░░░  10%  100 B of 1000 B  1000 B/s  1s left\n' +
        'b.pdf ██░░░░░░░░  20%  200 B of 1000 B  2.0 KB/s  1s left\n' +
        '0 of 3 files █░░░░░░░░░  10%  300 B of 2.9 KB  2.9 KB/s  1s left',
    );
  });

  it('a file that ends is taken off at once, however soon after the last redraw', () => {
    const t = setUp('terminal', { files: 3, bytes: 3000, keepFinished: false });
    const a = t.progress.start('a.pdf', 1000);
    const b = t.progress.start('b.pdf', 1000);
    t.progress.start('c.pdf', 1000);
    a.done();
    expect(t.written()).toMatch(/b\.pdf [^\n]*\nc\.pdf [^\n]*\n1 of 3 files [^\n]*$/);
    b.failed();
    expect(t.written()).toMatch(/\u001b\[Kc\.pdf [^\n]*\n1 of 3 files [^\n]*$/);
  });

  it('a file that ended says nothing more: no second count, no redraw', () => {
    const t = setUp('terminal', { files: 2, bytes: 2000, keepFinished: false });
    const a = t.progress.start('a.pdf', 1000);
    t.clock.advance(1000);
    a.done();
    const after = t.written();
    expect(after.endsWith('0 of 2 files')).toBe(false);
    expect(after).toMatch(/1 of 2 files [░█]+ +50%  1000 B of 2\.0 KB/);
    t.clock.advance(1000);
    a.sent(500);
    a.done();
    a.failed();
    expect(t.written()).toBe(after);
    const b = t.progress.start('b.pdf', 1000);
    b.failed();
    b.done();
    expect(t.written()).not.toContain('2 of 2 files');
    expect(t.written().endsWith('1 of 2 files')).toBe(false);
  });

  it('in a log: a file that failed, or ended twice, prints nothing more; names print on one line', () => {
    const t = setUp('lines', { files: 2, bytes: 3000 });
    const first = t.progress.start('w2\nsecond line.pdf', 2000);
    t.clock.advance(1000);
    first.done();
    first.done();
    first.failed();
    t.progress.clear();
    expect(t.written()).toBe('w2 second line.pdf: 2.0 KB in 1s (2.0 KB/s)\n');
  });

  it('fits the widest figures the terminal leaves room for, keeping the name readable', () => {
    // 59 columns: the bar does not fit beside a 16-column name, the bytes just do.
    const t = setUp('terminal', { files: 1, bytes: 2048, columns: 59 });
    const file = t.progress.start('a-name-of-twenty-chars.pdf', 2048);
    t.clock.advance(1000);
    file.sent(1024);
    const last = t.written().split(CLEAR).at(-1)!;
    expect(last).toBe('a-name-of-twent…  50%  1.0 KB of 2.0 KB  1.0 KB/s  1s left');
    expect([...last].length).toBe(58);
    // A short name needs no more room than it has: the bar fits beside it.
    const short = setUp('terminal', { files: 1, bytes: 2048, columns: 60 });
    short.progress.start('a.pdf', 2048);
    expect(short.written()).toBe('a.pdf ░░░░░░░░░░   0%  0 B of 2.0 KB  -/s');
  });

  it('on a terminal too narrow for any figures, the line is cut to the width, the name to one column', () => {
    const t = setUp('terminal', { files: 1, bytes: 2048, columns: 12 });
    t.progress.start('report.pdf', 2048);
    expect(t.written()).toBe('…   0%  -/s');
    const wider = setUp('terminal', { files: 1, bytes: 2048, columns: 8 });
    wider.progress.start('report.pdf', 2048);
    expect(wider.written()).toBe('…   0%…');
  });
});

describe('file set progress for a command', () => {
  async function run(options: Parameters<typeof createTestContext>[0], set: { lines?: boolean } = {}) {
    const at = new Date('2026-11-25T00:00:00Z');
    const t = createTestContext({ clock: { now: () => at, sleep: async () => undefined }, ...options });
    const progress = await openFileSetProgress(t.ctx, { files: 1, bytes: 2048, keepFinished: true, ...set });
    const file = progress.start(`${'long-name-'.repeat(10)}.pdf`, 2048);
    file.done();
    progress.finish();
    return t;
  }

  it('redraws on a terminal stderr, at its width; a line per file in a log; nothing under --json or when the caller prints its own', async () => {
    const terminal = await run({ tty: { stderr: true }, columns: 40 });
    expect(terminal.stderr()).toContain(CLEAR);
    for (const line of terminal.stderr().split(/\r\u001b\[K|\n/)) expect([...line].length).toBeLessThan(40);
    expect(terminal.stderr()).toContain('long-name-long-name-long-nam…   0%  -/s');

    const log = await run({});
    expect(log.stderr()).toBe(`${'long-name-'.repeat(10)}.pdf: 2.0 KB in 0s\n`);
    expect((await run({}, { lines: false })).stderr()).toBe('');
    expect((await run({ tty: true, globals: { json: true } })).stderr()).toBe('');
    expect((await run({ globals: { json: true } })).stderr()).toBe('');
    // On a terminal, lines: false changes nothing: the redrawn lines go away by themselves.
    expect((await run({ tty: { stderr: true }, columns: 40 }, { lines: false })).stderr()).toContain(CLEAR);
  });

  it('a terminal stderr that reports no width gets the usual 80 columns', async () => {
    const t = await run({ tty: { stderr: true }, columns: 0 });
    const lines = t.stderr().split(/\r\u001b\[K|\n/).filter((line) => line !== '');
    expect(Math.max(...lines.map((line) => [...line].length))).toBe(79);
  });
});
