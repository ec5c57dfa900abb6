import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Outbox, type EventLine } from '../../src/batch/ledgers/outbox';

// Bodies are read back from the outbox file a span at a time (LedgerState.readBack reads ahead of
// the line it needs): these prove each body read is its own, whatever the order, the size, and
// whether its line was written before or after the span around it was read.

function event(id: string, text: string, at = new Date()): Omit<EventLine, 'type'> {
  const seenAt = at.toISOString();
  return { id, event: 'project.progress', hooks: ['hk_a'], body: JSON.stringify({ type: 'project.progress', timestamp: seenAt, data: { id, text } }), seen_at: seenAt, at: seenAt };
}

const bodyOf = (outbox: Outbox, id: string) => outbox.bodyOf(outbox.get(`${id}:hk_a`)!.event);

describe('outbox bodies read back a span at a time', () => {
  it('in file order, backwards and at random: each its own, spans crossed, multi-byte text included', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-read-ahead-')), 'outbox.ndjson');
    // About 700 bytes a line: 1,000 lines are ten 64 KB spans and more.
    const queued = Array.from({ length: 1000 }, (_, index) => event(`msg_${index}`, `${index % 7 === 0 ? 'Zoë Ångström ✓ ' : ''}${'x'.repeat(600 + (index % 13))}`));
    let outbox = await Outbox.open(path);
    await outbox.queue(queued);
    await outbox.close();
    // A restart: positions from reading the file; nothing of the file read ahead yet.
    outbox = await Outbox.open(path);
    for (const line of queued) expect(await bodyOf(outbox, line.id)).toBe(line.body);
    for (const line of [...queued].reverse()) expect(await bodyOf(outbox, line.id)).toBe(line.body);
    let random = 11;
    for (let count = 0; count < 300; count += 1) {
      random = (random * 48271) % 2147483647;
      const line = queued[random % queued.length]!;
      expect(await bodyOf(outbox, line.id)).toBe(line.body);
    }
    await outbox.close();
  });

  it('a line appended after a span was read, and a line longer than a span', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-read-ahead-')), 'outbox.ndjson');
    const outbox = await Outbox.open(path);
    const first = event('msg_first', 'short');
    await outbox.queue([first]);
    // The span read now ends where the file does, after the first line.
    expect(await bodyOf(outbox, 'msg_first')).toBe(first.body);
    const second = event('msg_second', 'appended after the first was read back');
    const long = event('msg_long', 'ü'.repeat(100_000));
    const third = event('msg_third', 'after the long one');
    await outbox.queue([second, long, third]);
    // Lines not queued yet when the span was read are read from the file, not from the span.
    expect(await bodyOf(outbox, 'msg_second')).toBe(second.body);
    expect(await bodyOf(outbox, 'msg_long')).toBe(long.body);
    expect(await bodyOf(outbox, 'msg_third')).toBe(third.body);
    expect(await bodyOf(outbox, 'msg_first')).toBe(first.body);
    // A body queued without waiting for the disk: read back once it is written.
    const fourth = event('msg_fourth', 'gathered');
    void outbox.queue([fourth]);
    expect(await bodyOf(outbox, 'msg_fourth')).toBe(fourth.body);
    await outbox.close();
  });
});
