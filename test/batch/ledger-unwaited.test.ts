import { mkdtempSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LedgerAppender } from '../../src/batch/ledger';
import { OUTBOX } from '../../src/batch/ledgers/outbox';

// A line appended without waiting (`wait: false`, a webhook outcome) has no promise of its own:
// these prove a failure to write it is still reported, by `close`, and never lost.

async function appender(gatherMs?: number) {
  const path = join(mkdtempSync(join(tmpdir(), 'taxprep-unwaited-')), 'outbox.ndjson');
  const kind = gatherMs === undefined ? { ...OUTBOX, gatherMs: undefined } : { ...OUTBOX, gatherMs };
  return { path, appender: (await LedgerAppender.open(path, kind, { lines: 0, completeLength: 0 }, { count: 0, lines: async function* () {} })).appender };
}

const line = (attempt: number) => ({ type: 'attempt', id: 'msg_one', hook: 'hk_a', attempt, result: 'retry', detail: 'HTTP 500', at: '2026-11-25T10:00:00.000Z' });

async function failingWrites<T>(work: () => Promise<T>): Promise<T> {
  const probe = await open(join(tmpdir(), 'taxprep-unwaited-probe'), 'w');
  const write = vi.spyOn(Object.getPrototypeOf(probe) as { write: () => Promise<unknown> }, 'write').mockRejectedValue(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
  await probe.close();
  try {
    return await work();
  } finally {
    write.mockRestore();
  }
}

describe('lines appended without waiting', () => {
  it('resolve at once and are written in order with the rest', async () => {
    const { path, appender: ledger } = await appender(25);
    await ledger.append(line(1), { wait: false });
    await ledger.append(line(2), { wait: false });
    await ledger.append(line(3));
    await ledger.close();
    expect(readFileSync(path, 'utf8').trimEnd().split('\n').map((text) => (JSON.parse(text) as { attempt: number }).attempt)).toEqual([1, 2, 3]);
  });

  it('that fail to be written make `close` fail, with or without gathering; a waited line fails itself', async () => {
    for (const gatherMs of [25, undefined]) {
      const { appender: ledger } = await appender(gatherMs);
      await failingWrites(async () => {
        await expect(ledger.append(line(1), { wait: false })).resolves.toBeUndefined();
        await expect(ledger.append(line(2))).rejects.toThrow('no space left on device');
        await expect(ledger.close()).rejects.toThrow('no space left on device');
      });
    }
  });

  it('that fail alone, nobody waiting, still make `close` fail', async () => {
    const { appender: ledger } = await appender(1);
    await failingWrites(async () => {
      void ledger.append(line(1), { wait: false });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(ledger.close()).rejects.toMatchObject({ code: 'ENOSPC' });
    });
  });
});
