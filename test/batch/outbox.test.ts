import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LedgerAppender } from '../../src/batch/ledger';
import { OUTBOX, Outbox, defaultOutboxPath, readOutbox, type EventLine } from '../../src/batch/ledgers/outbox';
import { UsageError } from '../../src/errors';

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

describe('webhook outbox deliveries', () => {
  const HOUR_MS = 3_600_000;
  const at = (ms: number) => new Date(ms).toISOString();
  const queued = (id: string, hooks: string[], seenMs: number, pass?: string): Omit<EventLine, 'type'> => ({ ...event(id, { id }, new Date(seenMs), pass), hooks });

  it('each delivery says where it stands: queued, retried, delivered, failed, due again', async () => {
    const path = outboxPath();
    const now = Date.parse('2026-11-25T12:00:00Z');
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_a', ['hk_1', 'hk_2'], now)]);
    const fresh = outbox.get('msg_a:hk_1')!;
    expect({ key: fresh.key, id: fresh.id, hook: fresh.hook, status: fresh.status, attempts: fresh.attempts, dueMs: fresh.dueMs, detail: fresh.detail, updated_at: fresh.updated_at }).toEqual({
      key: 'msg_a:hk_1',
      id: 'msg_a',
      hook: 'hk_1',
      status: 'pending',
      attempts: 0,
      dueMs: now,
      detail: null,
      updated_at: at(now),
    });
    expect(fresh.last.type).toBe('event');
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_1', attempt: 1, result: 'retry', detail: 'HTTP 500', next_at: at(now + 60_000), at: at(now + 1000) });
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_2', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(now + 2000) });
    const retried = outbox.get('msg_a:hk_1')!;
    expect([retried.status, retried.attempts, retried.dueMs, retried.detail, retried.updated_at]).toEqual(['pending', 1, now + 60_000, 'HTTP 500', at(now + 1000)]);
    const delivered = outbox.get('msg_a:hk_2')!;
    expect([delivered.status, delivered.attempts, delivered.dueMs, delivered.detail]).toEqual(['delivered', 1, Number.POSITIVE_INFINITY, 'HTTP 204']);
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_1', attempt: 2, result: 'failed', detail: 'HTTP 410', at: at(now + 3000) });
    expect([outbox.get('msg_a:hk_1')!.status, outbox.get('msg_a:hk_1')!.dueMs]).toEqual(['failed', Number.POSITIVE_INFINITY]);
    // A redelivery starts the schedule again from its own time.
    await outbox.redeliver('msg_a', 'hk_1', new Date(now + 4000));
    const again = outbox.get('msg_a:hk_1')!;
    expect([again.status, again.attempts, again.dueMs, again.detail, again.updated_at, again.last.type]).toEqual(['pending', 0, now + 4000, null, at(now + 4000), 'redeliver']);
    // Outcomes for what the outbox does not hold change nothing.
    void outbox.recordAttempt({ id: 'msg_unknown', hook: 'hk_1', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(now) });
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_9', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(now) });
    await outbox.redeliver('msg_unknown', 'hk_1', new Date(now));
    expect(outbox.get('msg_a:hk_9')).toBeUndefined();
    expect(outbox.get('msg_unknown:hk_1')).toBeUndefined();
    expect([...outbox.all()].map((delivery) => `${delivery.key} ${delivery.status}`)).toEqual(['msg_a:hk_1 pending', 'msg_a:hk_2 delivered']);
    await outbox.close();

    // The same, read again from the file by a reader without the lock.
    const view = await readOutbox(path);
    expect([...view.all()].map((delivery) => `${delivery.key} ${delivery.status} ${delivery.attempts} ${delivery.dueMs}`)).toEqual([`msg_a:hk_1 pending 0 ${now + 4000}`, `msg_a:hk_2 delivered 1 Infinity`]);
    await view.close();
  });

  it('finds a delivery by its key, the webhook-id being everything before the last colon', async () => {
    const outbox = await Outbox.open(outboxPath());
    await outbox.queue([queued('msg:with:colons', ['hk_1'], Date.now())]);
    expect(outbox.get('msg:with:colons:hk_1')?.id).toBe('msg:with:colons');
    expect(outbox.get('msg:with:colons:hk_2')).toBeUndefined();
    expect(outbox.get('msg:with:colons')).toBeUndefined();
    expect(outbox.get('no-colon')).toBeUndefined();
    expect(outbox.ofEvent('msg:with:colons').map((delivery) => delivery.key)).toEqual(['msg:with:colons:hk_1']);
    expect(outbox.ofEvent('msg_none')).toEqual([]);
    await outbox.close();
  });

  it('a key without a colon names no delivery, even one whose id and hook it could be cut into', async () => {
    const outbox = await Outbox.open(outboxPath());
    await outbox.queue([queued('msg_a', ['msg_ab'], Date.now())]);
    expect(outbox.get('msg_a:msg_ab')?.key).toBe('msg_a:msg_ab');
    expect(outbox.get('msg_ab')).toBeUndefined();
    await outbox.close();
  });

  it('settles a pass that queued nothing', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    await outbox.settlePass('pass_empty', 'committed', new Date(0));
    await outbox.settlePass('pass_void', 'dropped', new Date(0));
    await outbox.close();
    expect((await readOutbox(path)).unsettledPasses()).toEqual([]);
  });

  it("records an attempt's outcome without waiting for the disk", async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_a', ['hk_1'], Date.now())]);
    await outbox.recordAttempt({ id: 'msg_a', hook: 'hk_1', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(Date.now()) });
    // Resolved, and still gathering (OUTBOX.gatherMs) rather than written.
    expect(lines(path).map((line) => line.type)).toEqual(['event']);
    await outbox.close();
    expect(lines(path).map((line) => line.type)).toEqual(['event', 'attempt']);
  });

  it('queues a change once, for the hooks it matched, and none for no hook', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_a', ['hk_1'], Date.now()), queued('msg_none', [], Date.now())]);
    await outbox.queue([queued('msg_a', ['hk_2'], Date.now())]);
    expect(outbox.hasEvent('msg_a')).toBe(true);
    expect(outbox.hasEvent('msg_none')).toBe(false);
    expect(outbox.ofEvent('msg_a').map((delivery) => delivery.hook)).toEqual(['hk_1']);
    await outbox.close();
    expect(lines(path).map((line) => `${line.type} ${line.id}`)).toEqual(['event msg_a']);
  });

  it('a hand-edited file: a repeated id keeps the first event, an event for no hook is left out', async () => {
    const path = outboxPath();
    const seen = at(Date.now());
    const line = (id: string, hooks: string[]) => JSON.stringify({ type: 'event', id, event: 'project.progress', hooks, body: '{}', seen_at: seen, at: seen });
    writeFileSync(path, `${line('msg_a', ['hk_1'])}\n${line('msg_a', ['hk_2'])}\n${line('msg_b', [])}\n`);
    const view = await readOutbox(path);
    expect([...view.all()].map((delivery) => delivery.key)).toEqual(['msg_a:hk_1']);
    expect(view.hasEvent('msg_b')).toBe(false);
  });

  it("sends nothing of a pass until it is committed; a dropped pass's changes are forgotten", async () => {
    const path = outboxPath();
    const now = Date.now();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_a', ['hk_1'], now, 'pass_1'), queued('msg_b', ['hk_1'], now, 'pass_1'), queued('msg_c', ['hk_1'], now, 'pass_2'), queued('msg_d', ['hk_1'], now)]);
    expect(outbox.unsettledPasses()).toEqual(['pass_1', 'pass_2']);
    expect([...outbox.all()].map((delivery) => delivery.id)).toEqual(['msg_d']);
    expect(outbox.ofEvent('msg_a')).toEqual([]);
    expect(outbox.eventsSince(0).map((queuedEvent) => queuedEvent.id)).toEqual(['msg_d']);
    // Queued, though: the same change found again is not queued a second time.
    expect(outbox.hasEvent('msg_a')).toBe(true);

    await outbox.settlePass('pass_1', 'committed', new Date(now));
    await outbox.settlePass('pass_2', 'dropped', new Date(now));
    expect(outbox.unsettledPasses()).toEqual([]);
    expect([...outbox.all()].map((delivery) => delivery.id)).toEqual(['msg_a', 'msg_b', 'msg_d']);
    expect(outbox.get('msg_a:hk_1')!.event.pass).toBeUndefined();
    expect(outbox.hasEvent('msg_c')).toBe(false);
    await outbox.close();
    expect(lines(path).slice(-2)).toEqual([
      { type: 'pass', pass: 'pass_1', result: 'committed', at: at(now) },
      { type: 'pass', pass: 'pass_2', result: 'dropped', at: at(now) },
    ]);

    const view = await readOutbox(path);
    expect(view.unsettledPasses()).toEqual([]);
    expect([...view.all()].map((delivery) => delivery.id)).toEqual(['msg_a', 'msg_b', 'msg_d']);
  });

  it('lists the changes seen since a time, from that very millisecond on', async () => {
    const outbox = await Outbox.open(outboxPath());
    const now = Date.parse('2026-11-25T12:00:00Z');
    await outbox.queue([queued('msg_old', ['hk_1'], now - HOUR_MS), queued('msg_edge', ['hk_1'], now), queued('msg_new', ['hk_1'], now + 1)]);
    expect(outbox.eventsSince(now).map((queuedEvent) => queuedEvent.id)).toEqual(['msg_edge', 'msg_new']);
    expect(outbox.eventsSince(now + 1).map((queuedEvent) => queuedEvent.id)).toEqual(['msg_new']);
    await outbox.close();
  });

  it('knows since when a hook has failed every attempt, until one succeeds', async () => {
    const outbox = await Outbox.open(outboxPath());
    const now = Date.parse('2026-11-25T12:00:00Z');
    await outbox.queue([queued('msg_a', ['hk_1', 'hk_2'], now), queued('msg_b', ['hk_1'], now)]);
    expect(outbox.failingSinceMs('hk_1')).toBeUndefined();
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_1', attempt: 1, result: 'retry', detail: 'HTTP 500', next_at: at(now + 60_000), at: at(now) });
    void outbox.recordAttempt({ id: 'msg_b', hook: 'hk_1', attempt: 1, result: 'failed', detail: 'HTTP 410', at: at(now + 5000) });
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_2', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(now + 6000) });
    expect(outbox.failingSinceMs('hk_1')).toBe(now);
    expect(outbox.failingSinceMs('hk_2')).toBeUndefined();
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_1', attempt: 2, result: 'delivered', detail: 'HTTP 204', at: at(now + 70_000) });
    expect(outbox.failingSinceMs('hk_1')).toBeUndefined();
    await outbox.close();
  });

  it('a redelivery to a hook the change was not queued for adds it to that change only', async () => {
    const path = outboxPath();
    const now = Date.now();
    const outbox = await Outbox.open(path);
    // The two events share one array of hooks in memory (LedgerKind.sharedValues).
    await outbox.queue([queued('msg_a', ['hk_1'], now), queued('msg_b', ['hk_1'], now)]);
    expect(outbox.get('msg_a:hk_1')!.event.hooks).toBe(outbox.get('msg_b:hk_1')!.event.hooks);
    await outbox.redeliver('msg_a', 'hk_new', new Date(now + 1000));
    expect(outbox.get('msg_a:hk_1')!.event.hooks).toEqual(['hk_1', 'hk_new']);
    expect(outbox.get('msg_b:hk_1')!.event.hooks).toEqual(['hk_1']);
    expect(outbox.ofEvent('msg_a').map((delivery) => `${delivery.key} ${delivery.last.type} ${delivery.dueMs}`)).toEqual(['msg_a:hk_1 event ' + String(Date.parse(at(now))), `msg_a:hk_new redeliver ${now + 1000}`]);
    expect(outbox.ofEvent('msg_b').map((delivery) => delivery.hook)).toEqual(['hk_1']);
    await outbox.close();
    expect(lines(path).at(-1)).toEqual({ type: 'redeliver', id: 'msg_a', hook: 'hk_new', at: at(now + 1000) });
  });

  it('a change delivered exactly 7 days ago is still kept', async () => {
    const path = outboxPath();
    const now = Date.parse('2026-11-25T12:00:00Z');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    try {
      const outbox = await Outbox.open(path);
      await outbox.queue([queued('msg_edge', ['hk_1'], now - 10 * DAY_MS), queued('msg_busy', ['hk_1'], now - 10 * DAY_MS)]);
      void outbox.recordAttempt({ id: 'msg_edge', hook: 'hk_1', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(now - 7 * DAY_MS) });
      for (let attempt = 1; attempt <= 120; attempt += 1) {
        void outbox.recordAttempt({ id: 'msg_busy', hook: 'hk_1', attempt, result: 'retry', detail: 'HTTP 500', next_at: at(now + HOUR_MS), at: at(now) });
      }
      await outbox.close();
      const reopened = await Outbox.open(path);
      expect(lines(path)).toHaveLength(4);
      expect(reopened.get('msg_edge:hk_1')?.status).toBe('delivered');
      await reopened.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('compaction leaves no file open: a watch that opens its outbox again every pass does not run out of descriptors', async () => {
    const path = outboxPath();
    const now = Date.now();
    const openFiles = () => readdirSync('/proc/self/fd').length;
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_busy', ['hk_1'], now)]);
    // Superseded lines enough for the next open to compact, which reads each kept body from the old file.
    for (let attempt = 1; attempt <= 120; attempt += 1) {
      void outbox.recordAttempt({ id: 'msg_busy', hook: 'hk_1', attempt, result: 'retry', detail: 'HTTP 500', next_at: at(now + HOUR_MS), at: at(now) });
    }
    await outbox.close();
    const before = openFiles();
    const reopened = await Outbox.open(path);
    expect(lines(path)).toHaveLength(2);
    await reopened.close();
    expect(openFiles()).toBe(before);
  });

  it('compaction keeps delivered changes for 7 days, then drops them; anything not delivered stays', async () => {
    const path = outboxPath();
    const now = Date.now();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_recent', ['hk_1'], now - 10 * DAY_MS), queued('msg_old', ['hk_1', 'hk_2'], now - 10 * DAY_MS), queued('msg_half', ['hk_1', 'hk_2'], now - 10 * DAY_MS), queued('msg_failed', ['hk_1'], now - 10 * DAY_MS)]);
    const delivered = (id: string, hook: string, ms: number) => outbox.recordAttempt({ id, hook, attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(ms) });
    void delivered('msg_recent', 'hk_1', now - 6 * DAY_MS);
    void delivered('msg_old', 'hk_1', now - 8 * DAY_MS);
    void delivered('msg_old', 'hk_2', now - 9 * DAY_MS);
    void delivered('msg_half', 'hk_1', now - 9 * DAY_MS);
    void outbox.recordAttempt({ id: 'msg_failed', hook: 'hk_1', attempt: 5, result: 'failed', detail: 'HTTP 500', at: at(now - 9 * DAY_MS) });
    // Superseded lines enough for the next open to compact.
    for (let attempt = 1; attempt <= 120; attempt += 1) {
      void outbox.recordAttempt({ id: 'msg_half', hook: 'hk_2', attempt, result: 'retry', detail: 'HTTP 500', next_at: at(now + HOUR_MS), at: at(now - 9 * DAY_MS) });
    }
    await outbox.close();

    const reopened = await Outbox.open(path);
    expect(lines(path).map((line) => (line.type === 'event' ? `event ${line.id}` : `${line.type} ${line.id} ${line.hook} ${line.attempt}`))).toEqual([
      'event msg_recent',
      'attempt msg_recent hk_1 1',
      'event msg_half',
      'attempt msg_half hk_1 1',
      'attempt msg_half hk_2 120',
      'event msg_failed',
      'attempt msg_failed hk_1 5',
    ]);
    expect(reopened.hasEvent('msg_old')).toBe(false);
    expect(reopened.get('msg_half:hk_2')!.attempts).toBe(120);
    await reopened.close();
  });
});

describe('webhook outbox deliveries moved to another outbox (state import, export)', () => {
  const at = (ms: number) => new Date(ms).toISOString();
  const queued = (id: string, hooks: string[], seenMs: number): Omit<EventLine, 'type'> => ({ ...event(id, { id }, new Date(seenMs)), hooks });

  it('a moved delivery is settled here: never due, listed as moved with its attempts; redeliver brings it back', async () => {
    const path = outboxPath();
    const now = Date.parse('2026-11-25T12:00:00Z');
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_a', ['hk_1', 'hk_2'], now)]);
    void outbox.recordAttempt({ id: 'msg_a', hook: 'hk_1', attempt: 2, result: 'retry', detail: 'HTTP 500', next_at: at(now + 60_000), at: at(now + 1000) });
    await outbox.markMoved([outbox.get('msg_a:hk_1')!], 'the shared store postgres://db/taxprep', new Date(now + 2000));
    const moved = outbox.get('msg_a:hk_1')!;
    expect([moved.status, moved.attempts, moved.dueMs, moved.detail, moved.updated_at]).toEqual(['moved', 2, Number.POSITIVE_INFINITY, 'moved to the shared store postgres://db/taxprep', at(now + 2000)]);
    expect(outbox.get('msg_a:hk_2')!.status).toBe('pending');
    await outbox.close();
    const view = await readOutbox(path);
    expect([...view.all()].map((delivery) => `${delivery.key} ${delivery.status}`)).toEqual(['msg_a:hk_1 moved', 'msg_a:hk_2 pending']);
    await view.close();
    const reopened = await Outbox.open(path);
    await reopened.redeliver('msg_a', 'hk_1', new Date(now + 3000));
    expect([reopened.get('msg_a:hk_1')!.status, reopened.get('msg_a:hk_1')!.dueMs]).toEqual(['pending', now + 3000]);
    await reopened.close();
  });

  it('compaction keeps a moved delivery for 7 days, as a delivered one, then drops it', async () => {
    const path = outboxPath();
    const now = Date.now();
    const outbox = await Outbox.open(path);
    await outbox.queue([queued('msg_recent', ['hk_1'], now - 10 * DAY_MS), queued('msg_old', ['hk_1'], now - 10 * DAY_MS), queued('msg_filler', ['hk_1'], now - 10 * DAY_MS)]);
    await outbox.markMoved([outbox.get('msg_recent:hk_1')!], 'outbox.ndjson', new Date(now - 6 * DAY_MS));
    await outbox.markMoved([outbox.get('msg_old:hk_1')!], 'outbox.ndjson', new Date(now - 8 * DAY_MS));
    // Superseded lines enough for the next open to compact.
    for (let attempt = 1; attempt <= 120; attempt += 1) {
      void outbox.recordAttempt({ id: 'msg_filler', hook: 'hk_1', attempt, result: 'retry', detail: 'HTTP 500', next_at: at(now + DAY_MS), at: at(now) });
    }
    await outbox.close();
    const reopened = await Outbox.open(path);
    expect(lines(path).map((line) => `${line.type} ${line.id}`)).toEqual(['event msg_recent', 'moved msg_recent', 'event msg_filler', 'attempt msg_filler']);
    expect(reopened.get('msg_recent:hk_1')!.status).toBe('moved');
    await reopened.close();
  });
});

describe('where the outbox lives', () => {
  it('one file per profile and base URL in the data directory, the profile made safe for a file name', () => {
    const env = { XDG_DATA_HOME: '/data' };
    const digest = (url: string) => createHash('sha256').update(url).digest('hex').slice(0, 12);
    expect(defaultOutboxPath(env, 'acme', 'http://127.0.0.1:4010/v1')).toBe(`/data/taxprep/outbox/acme-${digest('http://127.0.0.1:4010/v1')}.ndjson`);
    expect(defaultOutboxPath(env, 'acme', 'http://127.0.0.1:4011/v1')).toBe(`/data/taxprep/outbox/acme-${digest('http://127.0.0.1:4011/v1')}.ndjson`);
    expect(defaultOutboxPath(env, null, 'http://x')).toBe(`/data/taxprep/outbox/no-profile-${digest('http://x')}.ndjson`);
    expect(defaultOutboxPath(env, 'a b/../c.d_e-f', 'http://x')).toBe(`/data/taxprep/outbox/a_b_.._c.d_e-f-${digest('http://x')}.ndjson`);
  });

  it('a damaged line is refused, naming the outbox, the line and what moving it aside costs', async () => {
    const path = outboxPath();
    const seen = new Date().toISOString();
    const lines = [
      { type: 'event', id: 'msg_a', event: 'project.progress', hooks: ['hk_1'], body: '{}', seen_at: seen, at: seen },
      { type: 'attempt', id: 'msg_a', hook: 'hk_1', attempt: 1, result: 'retry', detail: 'HTTP 500', next_at: seen, at: seen },
      { type: 'redeliver', id: 'msg_a', hook: 'hk_1', at: seen },
      { type: 'pass', pass: 'p', result: 'dropped', at: seen },
    ];
    writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    expect([...(await readOutbox(path)).all()].map((delivery) => `${delivery.key} ${delivery.last.type}`)).toEqual(['msg_a:hk_1 redeliver']);
    writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n{"type":"run"}\n`);
    const error = await readOutbox(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`the webhook outbox ledger ${path} is damaged at line 5`);
    expect((error as UsageError).hint).toBe('Move the file aside to start a new ledger (deliveries it held that were not sent are lost; `taxprep hooks recover` can send again what watch saw since a time).');
  });
});
