import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types';
import { batchMockPerFile } from '../helpers/batchMock';
import { runMain, withoutColor } from '../helpers/cli';
import { FIRST_ACCOUNT_ID } from '../e2e/login-link.fixture';

/**
 * The batch engine (src/batch/run.ts, its pacer and lock) as a user meets it, in process
 * against one mock: the count line on a terminal, the summary's list of failures, Ctrl-C while
 * the run waits for the key's rate limit, and a ledger another run holds.
 */

const batch = batchMockPerFile({ accounts: 2 });
const env = () => batch.env();
const emails = (count: number, tag: string) => Array.from({ length: count }, (_, index) => `client.${tag}${index}@example.com`);
function csvOf(list: string[]): string {
  const path = join(batch.home(), `clients-${list.length}.csv`);
  writeFileSync(path, `email,first_name,last_name\n${list.map((email, index) => `${email},New,Client ${index}`).join('\n')}\n`);
  return path;
}

describe('the count line of a batch on a terminal', () => {
  it('counts every item, those settled without sending too, redrawn in place, and is cleared before each line and the summary', async () => {
    const list = emails(3, 'count');
    expect((await runMain(['accounts', 'import', csvOf(list.slice(0, 1))], { env: env(), home: batch.home() })).exitCode).toBe(0);
    const result = await runMain(['accounts', 'import', csvOf(list), '--concurrency', '1'], { env: env(), home: batch.home(), tty: true });
    expect(result.exitCode).toBe(0);
    const frames = result.stderr.split('\r\x1b[K');
    expect(frames.slice(0, 2)).toEqual(['', expect.stringMatching(/^ {2}1\/3 {2}33% {2}\S+ {2}ETA \S+$/)]);
    expect(frames.filter((frame) => /^ {2}\d\/3 /.test(frame)).map((frame) => frame.split('  ')[1])).toEqual(['1/3', '2/3', '3/3']);
    // Each line and the summary start at the left margin: the count line was cleared before them.
    expect(frames.at(-1)).toMatch(/^accounts: 2 created, 0 already there, 0 failed, 1 skipped in \S+ \(\S+\/(s|min|h)\)\n$/);
    expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(3);
  });

  it('is not drawn with --json, or when stderr is not a terminal', async () => {
    const json = await runMain(['--json', 'accounts', 'import', csvOf(emails(2, 'json'))], { env: env(), home: batch.home(), tty: true });
    expect(json.exitCode).toBe(0);
    expect(json.stderr).toMatch(/^accounts: 2 created, 0 already there, 0 failed, 0 skipped in [^\n\r]+\n$/);
    const piped = await runMain(['accounts', 'import', csvOf(emails(3, 'pipe'))], { env: env(), home: batch.home() });
    expect(piped.stderr).toMatch(/^accounts: 3 created, 0 already there, 0 failed, 0 skipped in [^\n\r]+\n$/);
  });
});

describe('the lines of a batch on a terminal', () => {
  it('line up in colour as without: the colour codes take no width', async () => {
    const csv = join(batch.home(), 'mixed.csv');
    writeFileSync(csv, `email,first_name,last_name\nclient.colour@example.com,New,Client\nclient.${FIRST_ACCOUNT_ID}@example.com,Client,Old\n`);
    const coloured = await runMain(['accounts', 'import', csv, '--concurrency', '1'], { env: { ...env(), NO_COLOR: '' }, home: batch.home(), tty: true });
    expect(coloured.exitCode).toBe(0);
    expect(coloured.stdout).toContain('\u001b[');
    const lines = withoutColor(coloured.stdout).split('\n').filter(Boolean).sort();
    expect(lines.map((line) => line.replace(/\d+$/, 'ID'))).toEqual([`= exists   line 3  client.${FIRST_ACCOUNT_ID}@example.com    ID`, '✓ created  line 2  client.colour@example.com  ID']);
  });
});

describe("the summary's failures", () => {
  it('names the first 20 failures by label and code, then how many more', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-engine-'));
    for (let index = 10; index < 32; index += 1) mkdirSync(join(dir, `folder-${index}`));
    const result = await runMain(['docs', 'sync', dir, '--skip-invalid'], { env: env(), home: batch.home() });
    expect(result.exitCode).toBe(9);
    const listed = Array.from({ length: 20 }, (_, index) => `folder-${index + 10} INVALID_FILE`).join(', ');
    expect(result.stderr).toMatch(new RegExp(`^documents: 0 uploaded, 0 skipped, 22 failed in [^\\n]+\\nfailed: ${listed} and 2 more\\n$`));
  });
});

describe('a batch waiting for the rate limit, on a terminal', () => {
  it('says on its count line that it waits, and until when, instead of a rate and a time left that the wait makes untrue', async () => {
    batch.mock().deps.settings.rateLimits = [{ limit: 2, windowSeconds: 60 }];
    // The wait for the window's reset passes at once, on this clock and the mock's alike.
    let skippedMs = 0;
    const clock: Clock = {
      now: () => new Date(Date.now() + skippedMs),
      sleep: async (ms) => {
        if (ms < 10_000) return new Promise((resolve) => setTimeout(resolve, ms));
        skippedMs += ms;
        await batch.mock().deps.clock.advance(ms);
      },
    };
    const result = await runMain(['accounts', 'import', csvOf(emails(3, 'waits')), '--concurrency', '1'], { env: env(), home: batch.home(), tty: true, clock });
    expect(result.exitCode, result.stderr).toBe(0);
    const frames = result.stderr.split('\r\x1b[K').filter((frame) => frame.startsWith('  '));
    expect(frames).toEqual([
      expect.stringMatching(/^ {2}1\/3 {2}33% {2}\S+ {2}ETA \S+$/),
      expect.stringMatching(/^ {2}2\/3 {2}66% {2}\S+ {2}ETA \S+$/),
      expect.stringMatching(/^ {2}2\/3 {2}66% {2}waiting for the rate limit until \d\d:\d\d:\d\d UTC$/),
      expect.stringMatching(/^ {2}2\/3 {2}66% {2}\S+ {2}ETA \S+$/),
      expect.stringMatching(/^ {2}3\/3 {2}100% {2}\S+ {2}ETA \S+$/),
    ]);
  });
});

describe('Ctrl-C while a batch waits for the rate limit', () => {
  it('stops the wait at once: the waiting item is not sent, and counted so', async () => {
    batch.mock().deps.settings.rateLimits = [{ limit: 2, windowSeconds: 60 }];
    // Real time, but the wait for the window's reset presses Ctrl-C instead of passing.
    const clock: Clock = {
      now: () => new Date(),
      sleep: (ms, signal) =>
        new Promise((resolve, reject) => {
          if (ms < 10_000) return void setTimeout(resolve, ms);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
          process.emit('SIGINT');
        }),
    };
    const list = emails(4, 'wait');
    const results = join(batch.home(), 'results.ndjson');
    const stopped = await runMain(['accounts', 'import', csvOf(list), '--concurrency', '1', '--results', results], { env: env(), home: batch.home(), clock });
    expect(stopped.exitCode).toBe(130);
    expect(stopped.stderr).toMatch(/^error: interrupted: accounts: 2 created, 0 already there, 0 failed, 0 skipped, 2 not sent in /);
    expect(batch.mock().deps.store.state.accounts.filter((account) => list.includes(account.email))).toHaveLength(2);
  });
});

describe("the key's quota spent until a reset too far to wait for", () => {
  it('ends the batch with exit 6, RATE_LIMIT_EXCEEDED, the limit and the reset time, and what to do', async () => {
    batch.mock().deps.settings.rateLimits = [{ limit: 2, windowSeconds: 86_400 }];
    const text = await runMain(['accounts', 'import', csvOf(emails(3, 'quota')), '--concurrency', '1'], { env: env(), home: batch.home() });
    expect(text.exitCode).toBe(6);
    expect(text.stderr).toMatch(/\nerror: the key's rate limit of 2 requests allows no more until \d{4}-\d\d-\d\dT[\d:.]+Z; the batch stopped\nRun the same command again after that time: what was already done is not sent again\.\n$/);
    // The next run starts with a quota of its own.
    await batch.mock().deps.store.reset();
    batch.mock().deps.settings.rateLimits = [{ limit: 2, windowSeconds: 86_400 }];
    const json = await runMain(['--json', 'accounts', 'import', csvOf(emails(3, 'second')), '--concurrency', '1'], { env: env(), home: batch.home() });
    expect(json.exitCode).toBe(6);
    const { error } = JSON.parse(json.stderr.trim().split('\n').at(-1)!);
    expect(error).toEqual({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringMatching(/^the key's rate limit of 2 requests allows no more until /), details: { limit: 2, reset_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) } });
    expect(Date.parse(error.details.reset_at)).toBeGreaterThan(Date.now() + 3_600_000);
  });
});

describe('a ledger another run holds', () => {
  it('is named with its holder (exit 10), the details in JSON, and what to do', async () => {
    const ledger = join(batch.home(), 'accounts.ndjson');
    const owner = { pid: process.pid, hostname: hostname(), started_at: '2026-11-25T12:00:00.000Z' };
    writeFileSync(`${ledger}.lock`, JSON.stringify(owner));
    const held = await runMain(['accounts', 'import', csvOf(emails(1, 'held')), '--ledger', ledger, '--lock-wait', '0'], { env: env(), home: batch.home() });
    expect(held.exitCode).toBe(10);
    expect(held.stderr).toBe(
      `error: the accounts ledger ${ledger} is in use by taxprep (pid ${process.pid} on ${hostname()}, started 2026-11-25T12:00:00.000Z); nothing was sent\n` +
        `Let that run finish (or raise --lock-wait). If that process is gone, delete ${ledger}.lock.\n`,
    );
    const json = await runMain(['--json', 'accounts', 'import', csvOf(emails(1, 'held')), '--ledger', ledger, '--lock-wait', '0'], { env: env(), home: batch.home() });
    expect(JSON.parse(json.stderr).error.details).toEqual({ ledger, lock_file: `${ledger}.lock`, ...owner });

    // A lock file still being written (not yet readable, and new): its holder is unknown.
    writeFileSync(`${ledger}.lock`, '');
    const unknown = await runMain(['--json', 'accounts', 'import', csvOf(emails(1, 'held')), '--ledger', ledger, '--lock-wait', '0'], { env: env(), home: batch.home() });
    expect(unknown.exitCode).toBe(10);
    expect(JSON.parse(unknown.stderr).error).toMatchObject({ message: `the accounts ledger ${ledger} is in use by another taxprep run; nothing was sent`, details: { ledger, lock_file: `${ledger}.lock` } });
    expect(Object.keys(JSON.parse(unknown.stderr).error.details)).toEqual(['ledger', 'lock_file']);
    expect(batch.mock().deps.store.state.accounts.filter((account) => account.email.startsWith('client.held'))).toEqual([]);
  });
});
