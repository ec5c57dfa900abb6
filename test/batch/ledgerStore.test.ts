import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/types';
import { UsageError } from '../../src/errors';
import { LedgerAppender, forEachLedgerLine, ledgerPathOf, readLedgerLines, withLedger, type LineStore } from '../../src/batch/ledger';
import { LOGIN_LINKS, Ledger } from '../../src/batch/ledgers/loginLinks';
import { OUTBOX, Outbox, type EventLine } from '../../src/batch/ledgers/outbox';
import { lockPathOf } from '../../src/batch/lock';

// The store under every ledger kind (src/batch/ledger.ts): how lines are read, appended, made
// durable, compacted and read back, and how a ledger is held by one run at a time.

const realClock: Clock = { now: () => new Date(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
const at = '2026-11-23T10:00:00Z';
const runLine = (run: string) => ({ type: 'run', run, digest: 'd', items: 1, at });
const noLive = { count: 0, lines: async function* () {} };

function tempPath(name = 'ledger.ndjson'): string {
  return join(mkdtempSync(join(tmpdir(), 'taxprep-store-')), name);
}

function fileLines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').slice(0, -1);
}

/** What every FileHandle's methods come from, to spy on them. */
async function handlePrototype(): Promise<FileHandle> {
  const probe = await open(tempPath(), 'w');
  await probe.close();
  return Object.getPrototypeOf(probe) as FileHandle;
}

describe('reading a ledger', () => {
  it('a missing file is an empty ledger; a path that cannot be a file is an error', async () => {
    expect(await readLedgerLines(tempPath(), LOGIN_LINKS)).toEqual({ entries: [], completeLength: 0 });
    const file = tempPath('plain');
    writeFileSync(file, 'x');
    await expect(readLedgerLines(join(file, 'ledger.ndjson'), LOGIN_LINKS)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('skips blank lines, but counts them in the line a damage is reported at', async () => {
    const path = tempPath();
    writeFileSync(path, `\n${JSON.stringify(runLine('a'))}\n   \n${JSON.stringify(runLine('b'))}\n`);
    const seen: Array<{ run: string; offset: number; length: number }> = [];
    const read = await forEachLedgerLine<{ type: string; run: string }>(path, LOGIN_LINKS, (entry, position) => seen.push({ run: entry.run, ...position }));
    const length = JSON.stringify(runLine('a')).length + 1;
    expect(seen).toEqual([
      { run: 'a', offset: 1, length },
      { run: 'b', offset: 1 + length + 4, length },
    ]);
    expect(read).toEqual({ lines: 2, completeLength: statSync(path).size });
    writeFileSync(path, `\n${JSON.stringify(runLine('a'))}\n   \nnot json\n`);
    await expect(readLedgerLines(path, LOGIN_LINKS)).rejects.toThrow(`the login-link ledger ${path} is damaged at line 4`);
  });

  it.each(['42', '"run"', 'null', '[]', '{}', '{"type":"nope"}', '{"type":null}'])('refuses %s as a line', async (line) => {
    const path = tempPath();
    writeFileSync(path, `${JSON.stringify(runLine('a'))}\n${line}\n`);
    const error = await readLedgerLines(path, LOGIN_LINKS).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`the login-link ledger ${path} is damaged at line 2`);
  });

  it('reads a ledger larger than a read chunk whole, lines cut across chunks and multi-byte characters included, without its torn tail', async () => {
    const path = tempPath();
    const lines = Array.from({ length: 3000 }, (_, index) => JSON.stringify({ ...runLine(`run-${index}-Zoë-日本語`), digest: 'x'.repeat(index % 97) }));
    writeFileSync(path, `${lines.join('\n')}\n{"type":"run","ru`);
    const read = await readLedgerLines<{ type: string; run: string }>(path, LOGIN_LINKS);
    expect(read.entries.map((entry) => entry.run)).toEqual(lines.map((_, index) => `run-${index}-Zoë-日本語`));
    expect(read.completeLength).toBe(Buffer.byteLength(`${lines.join('\n')}\n`));
  });

  it('--ledger PATH wins over the default place', () => {
    const ctx = { env: { XDG_DATA_HOME: '/data' } };
    expect(ledgerPathOf(LOGIN_LINKS, ctx, { ledgerPath: '/elsewhere/l.ndjson' })).toBe('/elsewhere/l.ndjson');
    expect(ledgerPathOf(LOGIN_LINKS, ctx, { ledgerPath: undefined })).toBe('/data/taxprep/login-links.ndjson');
  });
});

describe('opening a ledger for appending', () => {
  it('makes its directories private and the file 0600', async () => {
    const path = join(tempPath('nested'), 'deeper', 'ledger.ndjson');
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    await appender.append(runLine('a'));
    await appender.close();
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(dirname(path))).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it.each([
    { lines: 99, live: 0, compacted: false },
    { lines: 100, live: 0, compacted: true },
    { lines: 200, live: 100, compacted: true },
    { lines: 201, live: 101, compacted: false },
  ])('compacts $lines lines of which $live live: $compacted', async ({ lines, live, compacted }) => {
    const path = tempPath();
    const text = Array.from({ length: lines }, (_, index) => `${JSON.stringify(runLine(`r${index}`))}\n`).join('');
    writeFileSync(path, text);
    const liveLines = Array.from({ length: live }, (_, index) => `${JSON.stringify(runLine(`live${index}`))}\n`);
    const opened = await LedgerAppender.open(path, LOGIN_LINKS, { lines, completeLength: Buffer.byteLength(text) }, {
      count: live,
      lines: async function* () {
        yield* liveLines;
      },
    });
    expect(opened.compacted).toBe(compacted);
    // The next line goes where the file ends, compacted or not.
    const next = opened.appender.appendLine(`${JSON.stringify(runLine('next'))}\n`);
    expect(next.position.offset).toBe(compacted ? Buffer.byteLength(liveLines.join('')) : Buffer.byteLength(text));
    await next.done;
    await opened.appender.close();
    expect(readFileSync(path, 'utf8')).toBe(`${compacted ? liveLines.join('') : text}${JSON.stringify(runLine('next'))}\n`);
  });

  it('a compacted file is flushed to the disk before it replaces the old one', async () => {
    const path = tempPath();
    const text = Array.from({ length: 100 }, (_, index) => `${JSON.stringify(runLine(`r${index}`))}\n`).join('');
    writeFileSync(path, text);
    const sync = vi.spyOn(await handlePrototype(), 'sync');
    try {
      const { appender, compacted } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 100, completeLength: Buffer.byteLength(text) }, noLive);
      expect(compacted).toBe(true);
      expect(sync).toHaveBeenCalled();
      await appender.close();
    } finally {
      sync.mockRestore();
    }
  });

  it('a ledger of which half the lines are superseded is left as it is', async () => {
    const path = tempPath();
    const ledger = await Ledger.open(path);
    for (let account = 1; account <= 60; account += 1) {
      const target = { origin: 'http://x', account_id: account, user_email: null };
      const link = { user_email: `u${account}@example.com`, purpose: 'expired_link', expires_at: '2026-12-01T00:00:00Z', created_at: at };
      await ledger.recordIssued(await ledger.recordIntent(target, { profile: null, at: new Date(at) }), target, link, { profile: null, at: new Date(at) });
    }
    await ledger.close();
    await (await Ledger.open(path)).close();
    expect(fileLines(path)).toHaveLength(120);
  });

  it('drops a torn last line before appending, and refuses a file whose torn line cannot be dropped', async () => {
    const path = tempPath();
    const whole = `${JSON.stringify(runLine('a'))}\n`;
    writeFileSync(path, `${whole}{"type":"ru`);
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 1, completeLength: Buffer.byteLength(whole) }, { count: 1, lines: noLive.lines });
    await appender.append(runLine('b'));
    await appender.close();
    expect(fileLines(path).map((line) => JSON.parse(line).run)).toEqual(['a', 'b']);
    // A character device cannot be truncated (EINVAL): appending to it could glue a line to a torn one.
    await expect(LedgerAppender.open('/dev/null', LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive)).rejects.toMatchObject({ code: 'EINVAL' });
  });
});

describe('appending', () => {
  it('lines appended together go out in one durable write, in order', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    const datasync = vi.spyOn(await handlePrototype(), 'datasync');
    try {
      await Promise.all([appender.append(runLine('a')), appender.append(runLine('b')), appender.append(runLine('c'))]);
      expect(datasync).toHaveBeenCalledTimes(1);
      await appender.append(runLine('d'));
      expect(datasync).toHaveBeenCalledTimes(2);
    } finally {
      datasync.mockRestore();
    }
    await appender.close();
    expect(fileLines(path).map((line) => JSON.parse(line).run)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('says where each line goes, in bytes, and whether the file holds it yet', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, OUTBOX, { lines: 0, completeLength: 0 }, noLive);
    const first = appender.appendLine('{"type":"pass","pass":"ü"}\n', { wait: false });
    const second = appender.appendLine('{"type":"pass","pass":"x"}\n', { wait: false });
    expect(first.position).toEqual({ offset: 0, length: 28 });
    expect(second.position).toEqual({ offset: 28, length: 27 });
    expect(appender.holds(0)).toBe(true);
    expect(appender.holds(28)).toBe(false);
    await appender.writtenTo(28);
    expect(appender.holds(28)).toBe(true);
    await appender.writtenTo(55);
    expect(appender.holds(55)).toBe(true);
    expect(appender.holds(56)).toBe(false);
    await appender.close();
  });

  it('a closed ledger refuses lines, waited or not, naming itself', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    await appender.close();
    await expect(appender.append(runLine('late'))).rejects.toThrow(`the login-link ledger ${path} is closed`);
    const unwaited = appender.appendLine(`${JSON.stringify(runLine('late'))}\n`, { wait: false });
    // Asked at once or a moment later, the line that could not be written is reported, naming the ledger.
    const again = appender.appendLine(`${JSON.stringify(runLine('later'))}\n`, { wait: false });
    await expect(appender.writtenTo(again.position.offset + again.position.length)).rejects.toThrow(`the login-link ledger ${path} `);
    await unwaited.done;
    await new Promise((resolve) => setImmediate(resolve));
    await expect(appender.writtenTo(unwaited.position.offset + unwaited.position.length)).rejects.toThrow(`the login-link ledger ${path} is closed`);
    await expect(appender.close()).rejects.toThrow(`the login-link ledger ${path} is closed`);

    const ledger = await Ledger.open(tempPath());
    await ledger.close();
    await expect(ledger.recordIntent({ origin: 'http://x', account_id: 1, user_email: null }, { profile: null, at: new Date() })).rejects.toThrow('ledger');
  });

  it('a line nobody waited for that could not be written is reported by close', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    const write = vi.spyOn(await handlePrototype(), 'write');
    write.mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    try {
      await appender.append(runLine('lost'), { wait: false });
      await expect(appender.close()).rejects.toThrow('no space left on device');
    } finally {
      write.mockRestore();
    }
  });

  it('a line whose write failed is never taken as written: reading it back is refused, naming the ledger', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    const write = vi.spyOn(await handlePrototype(), 'write');
    write.mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    try {
      const { position, done } = appender.appendLine(`${JSON.stringify(runLine('lost'))}\n`);
      await expect(done).rejects.toThrow('no space left on device');
      // Its caller was told; the one waiting to read the line back is told too, not handed other bytes.
      await expect(appender.writtenTo(position.offset + position.length)).rejects.toThrow(`the login-link ledger ${path} was not written`);
      await appender.close();
    } finally {
      write.mockRestore();
    }
  });

  it('lines nobody waits for gather under one timer, and close leaves no timer behind to keep the process alive', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const path = tempPath();
      const { appender } = await LedgerAppender.open(path, { ...OUTBOX, gatherMs: 60_000 }, { lines: 0, completeLength: 0 }, noLive);
      for (let index = 0; index < 3; index += 1) appender.appendLine(`${JSON.stringify({ type: 'pass', pass: `unwaited-${index}` })}\n`, { wait: false });
      // One gathering for the group: its end writes all three with one sync.
      expect(vi.getTimerCount()).toBe(1);
      await appender.close();
      expect(fileLines(path).map((line) => JSON.parse(line).pass)).toEqual(['unwaited-0', 'unwaited-1', 'unwaited-2']);
      // A watch that ends must not linger for a gathering of a minute.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  /** An appender of `gatherMs` whose first write sees a line nobody waits for queued while it is under way. */
  async function lineQueuedDuringWrite(gatherMs: number) {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, { ...OUTBOX, gatherMs }, { lines: 0, completeLength: 0 }, noLive);
    const prototype = await handlePrototype();
    const original = prototype.write;
    const write = vi.spyOn(prototype, 'write').mockImplementationOnce(function (this: FileHandle, ...args: Parameters<FileHandle['write']>) {
      void appender.append({ type: 'pass', pass: 'unwaited' }, { wait: false });
      return (original as (...args: unknown[]) => ReturnType<FileHandle['write']>).apply(this, args);
    });
    const datasync = vi.spyOn(prototype, 'datasync');
    try {
      await appender.append({ type: 'pass', pass: 'waited' });
    } finally {
      write.mockRestore();
    }
    return { path, appender, datasync, passes: () => fileLines(path).map((line) => JSON.parse(line).pass) };
  }

  it('a line nobody waits for, queued while a waited one is written, gathers rather than costing a second sync at once', async () => {
    const { appender, datasync, passes } = await lineQueuedDuringWrite(60_000);
    try {
      expect(datasync).toHaveBeenCalledTimes(1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(passes()).toEqual(['waited']);
      await appender.close();
      expect(passes()).toEqual(['waited', 'unwaited']);
    } finally {
      datasync.mockRestore();
    }
  });

  it('and is written on its own once its gathering ends', async () => {
    const { appender, datasync, passes } = await lineQueuedDuringWrite(20);
    datasync.mockRestore();
    for (let waited = 0; passes().length < 2 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(passes()).toEqual(['waited', 'unwaited']);
    await appender.close();
  });

  /** Lets I/O and promises run, with timers frozen (vi.useFakeTimers), until `done` or many turns passed. */
  /**
   * Turns of the event loop (no timer: they are faked) until `done`, at least 2,000 of them and,
   * with `orUpToMs`, as many more as fit in that real time: a write and its sync run on libuv's
   * threads, which a loaded machine's disk can keep longer than 2,000 quick turns.
   */
  async function turnsUntil(done: () => boolean, orUpToMs = 0): Promise<boolean> {
    const started = performance.now();
    for (let turn = 0; !done() && (turn < 2000 || performance.now() - started < orUpToMs); turn += 1) await new Promise((resolve) => setImmediate(resolve));
    return done();
  }

  it('a line queued during a slow write gathers from the end of that write: the lines after it join its sync', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const prototype = await handlePrototype();
    const original = prototype.write;
    const path = tempPath();
    const passes = () => fileLines(path).map((line) => JSON.parse(line).pass);
    const unwaited = (pass: string) => appender.appendLine(`${JSON.stringify({ type: 'pass', pass })}\n`, { wait: false });
    const { appender } = await LedgerAppender.open(path, { ...OUTBOX, gatherMs: 100 }, { lines: 0, completeLength: 0 }, noLive);
    const write = vi.spyOn(prototype, 'write').mockImplementationOnce(function (this: FileHandle, ...args: Parameters<FileHandle['write']>) {
      unwaited('during');
      // The write takes 90 ms.
      vi.advanceTimersByTime(90);
      return (original as (...args: unknown[]) => ReturnType<FileHandle['write']>).apply(this, args);
    });
    const datasync = vi.spyOn(prototype, 'datasync');
    try {
      await appender.append({ type: 'pass', pass: 'waited' });
      write.mockRestore();
      // 110 ms after the line was queued, 20 ms after the write ended: still gathering.
      vi.advanceTimersByTime(20);
      expect(await turnsUntil(() => passes().length > 1)).toBe(false);
      unwaited('after');
      await appender.close();
      expect(passes()).toEqual(['waited', 'during', 'after']);
      expect(datasync).toHaveBeenCalledTimes(2);
    } finally {
      write.mockRestore();
      datasync.mockRestore();
      vi.useRealTimers();
    }
  });

  it('without a timer: a line queued during a write goes out right after it, waited or not (a kind that does not gather), or waited (one that does)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const prototype = await handlePrototype();
    const original = prototype.write;
    try {
      for (const [kind, queuedDuringWrite] of [
        [LOGIN_LINKS, [{ wait: true }]],
        [LOGIN_LINKS, [{ wait: false }]],
        [OUTBOX, [{ wait: false }, { wait: true }]],
      ] as const) {
        const path = tempPath();
        const { appender } = await LedgerAppender.open(path, kind, { lines: 0, completeLength: 0 }, noLive);
        let end = 0;
        const write = vi.spyOn(prototype, 'write').mockImplementationOnce(function (this: FileHandle, ...args: Parameters<FileHandle['write']>) {
          for (const [index, options] of queuedDuringWrite.entries()) {
            const { position } = appender.appendLine(`${JSON.stringify(runLine(`during-${index}`))}\n`, options);
            end = position.offset + position.length;
          }
          return (original as (...args: unknown[]) => ReturnType<FileHandle['write']>).apply(this, args);
        });
        await appender.append(runLine('first'));
        write.mockRestore();
        expect(await turnsUntil(() => appender.holds(end), 10_000)).toBe(true);
        await appender.close();
        expect(fileLines(path).map((line) => JSON.parse(line).run)).toEqual(['first', ...queuedDuringWrite.map((_, index) => `during-${index}`)]);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('a line nobody waits for, of a kind that does not gather, is written without a timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const path = tempPath();
      const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
      const { position } = appender.appendLine(`${JSON.stringify(runLine('a'))}\n`, { wait: false });
      expect(await turnsUntil(() => appender.holds(position.offset + position.length), 10_000)).toBe(true);
      await appender.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('close waits for a write under way: the line it carries is written and its caller told so', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    const prototype = await handlePrototype();
    const original = prototype.write;
    let closing: Promise<void> | undefined;
    const write = vi.spyOn(prototype, 'write').mockImplementationOnce(function (this: FileHandle, ...args: Parameters<FileHandle['write']>) {
      closing = appender.close();
      return (original as (...args: unknown[]) => ReturnType<FileHandle['write']>).apply(this, args);
    });
    try {
      await appender.append(runLine('in flight'));
      await closing;
    } finally {
      write.mockRestore();
    }
    expect(fileLines(path).map((line) => JSON.parse(line).run)).toEqual(['in flight']);
  });

  it('each batch is on the disk before the next is written', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, LOGIN_LINKS, { lines: 0, completeLength: 0 }, noLive);
    const prototype = await handlePrototype();
    const original = { write: prototype.write, datasync: prototype.datasync };
    const calls: string[] = [];
    let second: Promise<void> | undefined;
    const write = vi.spyOn(prototype, 'write').mockImplementation(function (this: FileHandle, ...args: Parameters<FileHandle['write']>) {
      calls.push(`write ${JSON.parse(String(args[0])).run}`);
      second ??= appender.append(runLine('second'));
      return (original.write as (...args: unknown[]) => ReturnType<FileHandle['write']>).apply(this, args);
    });
    const datasync = vi.spyOn(prototype, 'datasync').mockImplementation(function (this: FileHandle) {
      calls.push('datasync');
      return original.datasync.apply(this);
    });
    try {
      await appender.append(runLine('first'));
      await second;
    } finally {
      write.mockRestore();
      datasync.mockRestore();
    }
    await appender.close();
    expect(calls).toEqual(['write first', 'datasync', 'write second', 'datasync']);
  });

  it('a kind that gathers lines nobody waits for still writes them on their own, in order', async () => {
    const path = tempPath();
    const { appender } = await LedgerAppender.open(path, { ...OUTBOX, gatherMs: 5 }, { lines: 0, completeLength: 0 }, noLive);
    for (const pass of ['a', 'b', 'c']) await appender.append({ type: 'pass', pass }, { wait: false });
    for (let waited = 0; !appender.holds(3 * 26) && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fileLines(path).map((line) => JSON.parse(line).pass)).toEqual(['a', 'b', 'c']);
    await appender.close();
  });
});

describe('reading a line back', () => {
  const body = JSON.stringify({ type: 'project.progress', data: { name: 'Zoë' } });
  const queued: Omit<EventLine, 'type'> = { id: 'msg_a', event: 'project.progress', hooks: ['hk_1'], body, seen_at: at, at };

  /** Overwrites the first line of `path` with `text`, padded with spaces to the same length. */
  function overwriteFirstLine(path: string, text: string) {
    const line = Buffer.alloc(readFileSync(path).indexOf(0x0a), ' ');
    Buffer.from(text).copy(line);
    const fd = openSync(path, 'r+');
    writeSync(fd, line, 0, line.length, 0);
    closeSync(fd);
  }

  it('refuses a line that is no longer the one it placed there', async () => {
    const path = tempPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued]);
    await outbox.close();
    const original = readFileSync(path);
    const changed = `the webhook outbox ledger ${path} changed under the holder of its lock (byte 0)`;
    for (const replacement of [
      'garbage',
      'null',
      '"a string"',
      JSON.stringify({ type: 'pass', pass: 'p', result: 'dropped', at }),
      JSON.stringify({ ...queued, type: 'event', body: undefined }),
      JSON.stringify({ ...queued, type: 'event', id: 'msg_b' }),
    ]) {
      writeFileSync(path, original);
      const reopened = await Outbox.open(path);
      const event = reopened.get('msg_a:hk_1')!.event;
      overwriteFirstLine(path, replacement);
      await expect(reopened.bodyOf(event)).rejects.toThrow(changed);
      overwriteFirstLine(path, original.toString('utf8').split('\n')[0]!);
      await reopened.close();
    }
    writeFileSync(path, original);
    const reopened = await Outbox.open(path);
    const event = reopened.get('msg_a:hk_1')!.event;
    expect(await reopened.bodyOf(event)).toBe(body);
    await reopened.close();
    await expect(reopened.bodyOf(event)).rejects.toThrow(`the webhook outbox ledger ${path} is not open for writing`);
  });

  it('an event line written without a body (by hand) reads back as it is: there is no body to read', async () => {
    const path = tempPath();
    writeFileSync(path, `${JSON.stringify({ ...queued, type: 'event', body: undefined })}\n${JSON.stringify({ ...queued, id: 'msg_b', type: 'event' })}\n`);
    const outbox = await Outbox.open(path);
    expect(await outbox.bodyOf(outbox.get('msg_a:hk_1')!.event)).toBeUndefined();
    // Once the file is open for reading too.
    expect(await outbox.bodyOf(outbox.get('msg_b:hk_1')!.event)).toBe(body);
    expect(await outbox.bodyOf(outbox.get('msg_a:hk_1')!.event)).toBeUndefined();
    await outbox.close();
  });

  it('a body whose line is queued but not yet written is read once it is', async () => {
    const path = tempPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued]);
    expect(await outbox.bodyOf(outbox.get('msg_a:hk_1')!.event)).toBe(body);
    const later = { ...queued, id: 'msg_later', body: JSON.stringify({ later: 'x'.repeat(200) }) };
    const queuing = outbox.queue([later]);
    expect(await outbox.bodyOf(outbox.get('msg_later:hk_1')!.event)).toBe(later.body);
    await queuing;
    await outbox.close();
  });

  it('reads back a line just queued, before and after the file is open for reading', async () => {
    const path = tempPath();
    const outbox = await Outbox.open(path);
    const second = { ...queued, id: 'msg_b', body: '{"n":2}' };
    await outbox.queue([queued]);
    const reading = outbox.bodyOf(outbox.get('msg_a:hk_1')!.event);
    await outbox.queue([second]);
    expect(await reading).toBe(body);
    expect(await outbox.bodyOf(outbox.get('msg_b:hk_1')!.event)).toBe('{"n":2}');
    await outbox.close();
  });
});

describe('holding a ledger', () => {
  const open = (lines: LineStore) => Ledger.open(lines);

  it('a ledger that cannot be created is a setting to fix, named with its errno; nothing was sent', async () => {
    const file = tempPath('plain');
    writeFileSync(file, 'x');
    const path = join(file, 'login-links.ndjson');
    const error = await withLedger(path, LOGIN_LINKS, { waitMs: 0, clock: realClock, open }, async () => 'ran').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`cannot use the login-link ledger ${path} (EEXIST); nothing was sent`);
    expect((error as UsageError).hint).toBe('Pass --ledger PATH to keep it somewhere writable, or fix the directory permissions.');
  });

  it('a ledger that cannot be opened: an errno is named, a refusal of its own or another failure passes as it is; the lock is released', async () => {
    const path = tempPath();
    const options = (failure: unknown) => ({
      waitMs: 0,
      clock: realClock,
      open: async (): Promise<Ledger> => {
        throw failure;
      },
    });
    const denied = Object.assign(new Error('permission denied'), { code: 'EACCES' });
    const wrapped = await withLedger(path, LOGIN_LINKS, options(denied), async () => 'ran').catch((caught: unknown) => caught);
    expect((wrapped as UsageError).message).toBe(`cannot use the login-link ledger ${path} (EACCES); nothing was sent`);
    expect(existsSync(lockPathOf(path))).toBe(false);
    const damaged = new UsageError(`the login-link ledger ${path} is damaged at line 2`);
    await expect(withLedger(path, LOGIN_LINKS, options(damaged), async () => 'ran')).rejects.toBe(damaged);
    const bug = new Error('a bug');
    await expect(withLedger(path, LOGIN_LINKS, options(bug), async () => 'ran')).rejects.toBe(bug);
    const oddCode = Object.assign(new Error('odd'), { code: 42 });
    await expect(withLedger(path, LOGIN_LINKS, options(oddCode), async () => 'ran')).rejects.toBe(oddCode);
    expect(existsSync(lockPathOf(path))).toBe(false);
  });

  it("closes the ledger and releases the lock whatever the work does, and returns the work's result", async () => {
    const path = tempPath();
    let held: Ledger | undefined;
    const failure = new Error('work failed');
    await expect(
      withLedger(path, LOGIN_LINKS, { waitMs: 0, clock: realClock, open }, async (ledger) => {
        held = ledger;
        expect(existsSync(lockPathOf(path))).toBe(true);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(existsSync(lockPathOf(path))).toBe(false);
    await expect(held!.startRun('d', 1, new Date())).rejects.toThrow(`the login-link ledger ${path} is closed`);
    expect(await withLedger(path, LOGIN_LINKS, { waitMs: 0, clock: realClock, open }, async () => 'ran')).toBe('ran');
  });
});
