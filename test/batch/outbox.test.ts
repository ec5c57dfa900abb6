import { mkdtempSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LedgerAppender } from '../../src/batch/ledger';
import { OUTBOX, Outbox, type EventLine } from '../../src/batch/ledgers/outbox';

// The outbox keeps each event's body in its file, not in memory (LedgerKind.keptOnDisk): these
// prove the body read back is the one queued, after the file was compacted and after a restart.

const DAY_MS = 86_400_000;

function outboxPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'taxprep-outbox-')), 'outbox.ndjson');
}

function event(id: string, data: Record<string, unknown>, at: Date, pass?: string): Omit<EventLine, 'type'> {
  const seenAt = at.toISOString();
  return { id, event: 'project.progress', hooks: ['hk_a'], body: JSON.stringify({ type: 'project.progress', timestamp: seenAt, data }), seen_at: seenAt, at: seenAt, ...(pass === undefined ? {} : { pass }) };
}

function lines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('webhook outbox bodies', () => {
  it('reads each body back from the file as queued, after compaction moved the lines and after restarts', async () => {
    const path = outboxPath();
    const now = Date.now();
    const old = new Date(now - 10 * DAY_MS);
    // Multi-byte characters: positions are bytes, not characters.
    const first = event('msg_first', { name: 'Zoë Ångström', note: '日本語 — ✓' }, old);
    const second = event('msg_second', { name: 'Bob' }, old);
    const third = event('msg_third', { name: 'Chloé', amount: 12.5 }, old, 'pass_1');

    let outbox = await Outbox.open(path);
    await outbox.queue([first, second]);
    await outbox.queue([third]);
    await outbox.settlePass('pass_1', 'committed', old);
    // Read back before the attempt lines queued without waiting are on the disk.
    const delivered = new Date(now - 9 * DAY_MS).toISOString();
    void outbox.recordAttempt({ id: 'msg_first', hook: 'hk_a', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: delivered });
    for (let attempt = 1; attempt <= 150; attempt += 1) {
      void outbox.recordAttempt({ id: 'msg_second', hook: 'hk_a', attempt, result: 'retry', detail: 'HTTP 500', next_at: new Date(now + DAY_MS).toISOString(), at: new Date(now).toISOString() });
    }
    expect(await outbox.bodyOf(outbox.get('msg_third:hk_a')!.event)).toBe(third.body);
    expect(await outbox.bodyOf(outbox.get('msg_second:hk_a')!.event)).toBe(second.body);
    await outbox.close();
    const before = lines(path);
    expect(before).toHaveLength(3 + 1 + 151);

    // A restart: the first event, delivered 9 days ago, and the 149 superseded attempts are dropped.
    outbox = await Outbox.open(path);
    const compacted = lines(path);
    expect(compacted.map((line) => line.type)).toEqual(['event', 'attempt', 'event']);
    expect(compacted.map((line) => line.id)).toEqual(['msg_second', 'msg_second', 'msg_third']);
    // The file keeps the body (the one source of truth), and the committed pass is no longer named.
    expect(compacted[2]).toMatchObject({ body: third.body });
    expect(compacted[2]).not.toHaveProperty('pass');
    expect(outbox.get('msg_first:hk_a')).toBeUndefined();
    expect(await outbox.bodyOf(outbox.get('msg_second:hk_a')!.event)).toBe(second.body);
    expect(await outbox.bodyOf(outbox.get('msg_third:hk_a')!.event)).toBe(third.body);
    // A line appended after the compaction is placed after the new file's end.
    const fourth = event('msg_fourth', { name: 'Dörte' }, new Date(now));
    await outbox.queue([fourth]);
    expect(await outbox.bodyOf(outbox.get('msg_fourth:hk_a')!.event)).toBe(fourth.body);
    await outbox.close();

    // Another restart, without compaction this time: the positions come from reading the new file.
    outbox = await Outbox.open(path);
    expect(lines(path)).toHaveLength(4);
    for (const queued of [second, third, fourth]) expect(await outbox.bodyOf(outbox.get(`${queued.id}:hk_a`)!.event)).toBe(queued.body);
    await outbox.close();
  });

  it('holds no body in memory: the event it folds has none', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([event('msg_only', { name: 'Eve' }, new Date())]);
    expect(outbox.get('msg_only:hk_a')!.event).not.toHaveProperty('body');
    await outbox.close();
  });
});

describe('webhook outbox outcomes', () => {
  // Attempt outcomes are recorded without waiting (a lost one only sends that delivery again, under
  // its same id) and gather before they are written: one fdatasync for a group of answers.
  const attempt = (id: string, number: number) => ({ id, hook: 'hk_a', attempt: number, result: 'retry' as const, detail: 'HTTP 500', next_at: new Date(Date.now() + DAY_MS).toISOString(), at: new Date().toISOString() });
  const written = (path: string) => lines(path).map((line) => (line.type === 'attempt' ? `${line.id}#${line.attempt}` : `${line.type} ${line.id}`));

  it('are written in order, in one group, with the next line a caller waits for', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([event('msg_one', { name: 'Eve' }, new Date())]);
    for (let number = 1; number <= 5; number += 1) void outbox.recordAttempt(attempt('msg_one', number));
    expect(written(path)).toEqual(['event msg_one']);
    await outbox.queue([event('msg_two', { name: 'Bob' }, new Date())]);
    expect(written(path)).toEqual(['event msg_one', 'msg_one#1', 'msg_one#2', 'msg_one#3', 'msg_one#4', 'msg_one#5', 'event msg_two']);
    await outbox.close();
  });

  it('gather across answers that come one by one: one fdatasync for all of them and the waited line', async () => {
    const path = outboxPath();
    // A gathering that never ends on its own within the test, so that only the waited line ends it.
    const appender = (await LedgerAppender.open(path, { ...OUTBOX, gatherMs: 60_000 }, { lines: 0, completeLength: 0 }, { count: 0, lines: async function* () {} })).appender;
    const probe = await open(path, 'r');
    const datasync = vi.spyOn(Object.getPrototypeOf(probe) as { datasync: () => Promise<void> }, 'datasync');
    await probe.close();
    try {
      for (let number = 1; number <= 5; number += 1) {
        void appender.append({ type: 'attempt', ...attempt('msg_one', number) }, { wait: false });
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(datasync).not.toHaveBeenCalled();
      await appender.append({ type: 'redeliver', id: 'msg_one', hook: 'hk_a', at: new Date().toISOString() });
      expect(datasync).toHaveBeenCalledTimes(1);
      expect(lines(path).map((line) => line.attempt ?? line.type)).toEqual([1, 2, 3, 4, 5, 'redeliver']);
      void appender.append({ type: 'attempt', ...attempt('msg_one', 6) }, { wait: false });
      await appender.close();
      expect(datasync).toHaveBeenCalledTimes(2);
      expect(lines(path).map((line) => line.attempt ?? line.type)).toEqual([1, 2, 3, 4, 5, 'redeliver', 6]);
    } finally {
      datasync.mockRestore();
    }
  });

  it('are all on disk once the outbox is closed, and on their own soon after, without a close', async () => {
    const path = outboxPath();
    let outbox = await Outbox.open(path);
    await outbox.queue([event('msg_one', { name: 'Eve' }, new Date())]);
    void outbox.recordAttempt(attempt('msg_one', 1));
    void outbox.recordAttempt(attempt('msg_one', 2));
    await outbox.close();
    expect(written(path)).toEqual(['event msg_one', 'msg_one#1', 'msg_one#2']);

    outbox = await Outbox.open(path);
    void outbox.recordAttempt(attempt('msg_one', 3));
    for (let waited = 0; written(path).length < 4 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(written(path)).toEqual(['event msg_one', 'msg_one#1', 'msg_one#2', 'msg_one#3']);
    await outbox.close();
  });

  it('are read back by a delivery that needs a body queued after them', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    const queued = event('msg_one', { name: 'Eve' }, new Date());
    await outbox.queue([queued]);
    void outbox.recordAttempt(attempt('msg_one', 1));
    expect(await outbox.bodyOf(outbox.get('msg_one:hk_a')!.event)).toBe(queued.body);
    await outbox.close();
    expect(written(path)).toEqual(['event msg_one', 'msg_one#1']);
  });
});
