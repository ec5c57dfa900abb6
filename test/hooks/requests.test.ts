import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Outbox, readOutbox, type EventLine } from '../../src/batch/ledgers/outbox';
import { fileInbox } from '../../src/hooks/requests';

// The inbox through which hooks redeliver, recover and deliver hand their work to the holder of
// the outbox (a running watch): each request applied once, even after a crash that left its file.

function outboxPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'taxprep-requests-')), 'outbox.ndjson');
}

const AT = new Date('2026-11-27T10:00:00Z');

function event(id: string): Omit<EventLine, 'type'> {
  const seenAt = AT.toISOString();
  return { id, event: 'item.appeared', hooks: ['hk_a'], body: JSON.stringify({ type: 'item.appeared', timestamp: seenAt, data: {} }), seen_at: seenAt, at: seenAt };
}

const redeliverLines = (path: string) =>
  readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; request?: string })
    .filter((line) => line.type === 'redeliver');

describe('requests handed to the holder of the outbox', () => {
  it('are applied once, in order, tagged with their id; a file left by a crash after its lines is only removed', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    await outbox.queue([event('msg_1'), event('msg_2')]);
    await outbox.recordAttempt({ id: 'msg_2', hook: 'hk_a', attempt: 1, result: 'retry', detail: 'HTTP 500', next_at: '2026-11-27T10:30:00Z', at: AT.toISOString() });

    const inbox = fileInbox(path);
    const first = await inbox.submit({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false }, AT);
    const second = await inbox.submit({ marks: [], retry_waiting: true }, new Date(AT.getTime() + 1));
    expect(await inbox.applyAll(outbox, AT)).toBe(2);
    expect(redeliverLines(path).map((line) => line.request)).toEqual([first, second]);
    expect(readdirSync(`${path}.requests`)).toEqual([]);
    expect(outbox.get('msg_2:hk_a')).toMatchObject({ status: 'pending', attempts: 0 });

    // A crash between the lines and the file's removal: the next holder finds the file again.
    writeFileSync(join(`${path}.requests`, `${first}.json`), `${JSON.stringify({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false })}\n`);
    await outbox.close();
    const reopened = await Outbox.open(path);
    expect(await inbox.applyAll(reopened, AT)).toBe(0);
    expect(redeliverLines(path)).toHaveLength(2);
    expect(readdirSync(`${path}.requests`)).toEqual([]);
    await reopened.close();
    expect((await readOutbox(path)).applied(first)).toBe(true);
  });

  it('leaves a file that is not a request where it is, for a person to look at', async () => {
    const path = outboxPath();
    const outbox = await Outbox.open(path);
    const inbox = fileInbox(path);
    await inbox.submit({ marks: [], retry_waiting: false }, AT);
    writeFileSync(join(`${path}.requests`, 'stray.json'), 'not json');
    expect(await inbox.applyAll(outbox, AT)).toBe(0);
    expect(readdirSync(`${path}.requests`)).toEqual(['stray.json']);
    await outbox.close();
  });
});
