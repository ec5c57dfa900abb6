import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/types';

// Values a module makes when it loads (limits, escape sequences), read as a user meets them. Each
// module is imported inside its test, not above: its top-level values are then made while a test
// runs, which is what lets the mutation run (test/mutation) try each of them against these tests.

describe('values made when a module loads', () => {
  it('the ledger files are named by their kind, as the docs and --help name them', async () => {
    // Loaded afresh (other modules of this file load it too): its names are made while this test runs.
    vi.resetModules();
    const names = await import('../../src/batch/ledgers/fileNames');
    expect([names.LOGIN_LINKS_FILE_NAME, names.ACCOUNTS_FILE_NAME, names.DOCUMENTS_FILE_NAME]).toEqual(['login-links.ndjson', 'accounts.ndjson', 'documents.ndjson']);
  });

  it('--ledger completes file names in the shells, and --lock-wait is named lock_wait in a refusal under --json', async () => {
    vi.resetModules();
    const { CONCURRENCY_FLAG, ledgerFlag, LOCK_WAIT_FLAG } = await import('../../src/batch/flags');
    // Each flag as `--help` shows it and as its range refuses a value.
    expect(CONCURRENCY_FLAG).toEqual({ flag: '--concurrency <n>', field: 'concurrency', help: 'requests at a time in a batch', range: { min: 1, max: 16 }, default: '4' });
    expect(ledgerFlag('accounts.ndjson')).toEqual({ flag: '--ledger <path>', help: 'ledger file (default: accounts.ndjson in the user data directory)', complete: 'files' });
    expect(LOCK_WAIT_FLAG).toEqual({ flag: '--lock-wait <seconds>', field: 'lock_wait', help: 'how long to wait for another run holding the ledger', range: { min: 0, max: 3600 }, default: '5' });
  });

  it('the pacer waits up to two minutes for a reset, and stops when it is further away', async () => {
    const { QuotaExhaustedError, RateLimitPacer } = await import('../../src/batch/pacer');
    // A reset exactly two minutes away, its 20 ms of slack included: whole seconds for the header.
    const startMs = 1_800_000_000_020;
    const pacerAt = (resetSeconds: number) => {
      let nowMs = startMs;
      const sleeps: number[] = [];
      const clock: Clock = {
        now: () => new Date(nowMs),
        sleep: async (ms) => {
          sleeps.push(ms);
          nowMs += ms;
        },
      };
      const pacer = new RateLimitPacer(clock);
      return { pacer, sleeps, headers: { 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetSeconds) } };
    };
    const waiting = pacerAt(1_800_000_120);
    waiting.pacer.record(await waiting.pacer.acquire(), waiting.headers, startMs);
    await waiting.pacer.acquire();
    expect(waiting.sleeps).toEqual([120_000]);
    const stopping = pacerAt(1_800_000_121);
    stopping.pacer.record(await stopping.pacer.acquire(), stopping.headers, startMs);
    await expect(stopping.pacer.acquire()).rejects.toBeInstanceOf(QuotaExhaustedError);
  });

  it('a file-set progress on a terminal wipes its lines with a carriage return, an erase and a line up each', async () => {
    const { createFileSetProgress } = await import('../../src/batch/fileSetProgress');
    let written = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written += chunk.toString('utf8');
        callback();
      },
    });
    const clock: Clock = { now: () => new Date(0), sleep: async () => undefined };
    const progress = createFileSetProgress({ stream, mode: 'terminal', columns: 80, width: (text) => [...text].length, clock, files: 2, bytes: 20, keepFinished: false });
    progress.start('a.pdf', 10);
    progress.finish();
    expect(written.endsWith('0 of 2 files ░░░░░░░░░░   0%  0 B of 20 B  -/s\r\u001b[K\u001b[1A\r\u001b[K')).toBe(true);
  });

  it('the webhook outbox keeps a change delivered 6 days ago when it compacts', async () => {
    const { Outbox } = await import('../../src/batch/ledgers/outbox');
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-loaded-')), 'outbox.ndjson');
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const event = (id: string) => ({ id, event: 'project.progress', hooks: ['hk_1'], body: '{}', seen_at: at(now - 10 * 86_400_000), at: at(now - 10 * 86_400_000) });
    const outbox = await Outbox.open(path);
    await outbox.queue([event('msg_recent'), event('msg_busy')]);
    void outbox.recordAttempt({ id: 'msg_recent', hook: 'hk_1', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: at(now - 6 * 86_400_000) });
    for (let attempt = 1; attempt <= 120; attempt += 1) {
      void outbox.recordAttempt({ id: 'msg_busy', hook: 'hk_1', attempt, result: 'retry', detail: 'HTTP 500', next_at: at(now + 3_600_000), at: at(now) });
    }
    await outbox.close();
    await (await Outbox.open(path)).close();
    const kept = readFileSync(path, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; id: string });
    expect(kept.map((line) => `${line.type} ${line.id}`)).toEqual(['event msg_recent', 'attempt msg_recent', 'event msg_busy', 'attempt msg_busy']);
  });
});
