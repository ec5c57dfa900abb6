import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types';
import { LedgerLockedError, UsageError } from '../../src/errors';
import { Ledger, readLedger, type LinkTarget } from '../../src/batch/ledgers/loginLinks';
import { acquireLedgerLock, lockPathOf } from '../../src/batch/lock';
import { defaultLedgerPath } from '../../src/batch/ledgers/loginLinks';

const realClock: Clock = { now: () => new Date(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
const origin = 'http://127.0.0.1:4010';
const meta = { profile: 'acme', at: new Date('2026-11-23T10:00:00Z') };

function tempLedger(): string {
  return join(mkdtempSync(join(tmpdir(), 'taxprep-ledger-')), 'nested', 'login-links.ndjson');
}

function link(userEmail: string, expiresAt: string) {
  return { user_email: userEmail, purpose: 'expired_link', expires_at: expiresAt, created_at: '2026-11-23T10:00:00Z' };
}

describe('ledger', () => {
  it('records intents and answers durably, never the link itself, in a 0600 file', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    const primary: LinkTarget = { origin, account_id: 1001, user_email: null };
    const intent = await ledger.recordIntent(primary, meta);
    expect(ledger.uncertainIntent(primary)?.id).toBe(intent);
    await ledger.recordIssued(intent, primary, link('jane@example.com', '2026-11-30T10:00:00Z'), meta);
    await ledger.close();

    const content = readFileSync(path, 'utf8');
    expect(content).not.toContain('login_link');
    expect(content).not.toContain('/auth/');
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const view = await readLedger(path);
    expect(view.uncertainIntent(primary)).toBeUndefined();
    expect(view.findLink(primary)?.link.expires_at).toBe('2026-11-30T10:00:00Z');
    // The primary holder's link is found by their email too, and only for that service.
    expect(view.findLink({ origin, account_id: 1001, user_email: 'JANE@example.com' })?.link.user_email).toBe('jane@example.com');
    expect(view.findLink({ origin: 'https://other.example', account_id: 1001, user_email: null })).toBeUndefined();
  });

  it('keeps an intent without an answer as uncertain, and settles it on a refusal', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    const spouse: LinkTarget = { origin, account_id: 1002, user_email: 'john@example.com' };
    const other: LinkTarget = { origin, account_id: 1003, user_email: null };
    await ledger.recordIntent(spouse, meta);
    const refused = await ledger.recordIntent(other, meta);
    await ledger.recordRefused(refused, other, 'ACCOUNT_SUSPENDED', meta);
    await ledger.close();
    const view = await readLedger(path);
    expect(view.uncertainIntents().map((entry) => entry.account_id)).toEqual([1002]);
    expect(view.uncertainIntent(other)).toBeUndefined();
  });

  it('lists the last link per user, expiring soonest first', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    for (const [account, expires] of [[1, '2026-12-01T00:00:00Z'], [2, '2026-11-25T00:00:00Z'], [1, '2026-11-24T00:00:00Z']] as const) {
      const target = { origin, account_id: account, user_email: null };
      await ledger.recordIssued(await ledger.recordIntent(target, meta), target, link(`user${account}@example.com`, expires), meta);
    }
    await ledger.close();
    expect((await readLedger(path)).links().map((entry) => [entry.account_id, entry.link.expires_at])).toEqual([
      [1, '2026-11-24T00:00:00Z'],
      [2, '2026-11-25T00:00:00Z'],
    ]);
  });

  it('ignores a line torn by a kill, and drops it before appending', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    const target = { origin, account_id: 7, user_email: null };
    await ledger.recordIssued(await ledger.recordIntent(target, meta), target, link('a@example.com', '2026-12-01T00:00:00Z'), meta);
    await ledger.close();
    appendFileSync(path, '{"type":"intent","id":"x","orig');
    expect((await readLedger(path)).uncertainIntents()).toEqual([]);

    const reopened = await Ledger.open(path);
    await reopened.recordIntent({ origin, account_id: 8, user_email: null }, meta);
    await reopened.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(['intent', 'issued', 'intent']);
  });

  it('refuses a damaged line in the middle with a usage error naming the file and line', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    await ledger.close();
    writeFileSync(path, '{"type":"run_end","run":"r","at":"x"}\nnot json\n{"type":"run_end","run":"r","at":"x"}\n');
    const error = await readLedger(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`the login-link ledger ${path} is damaged at line 2`);
  });

  it('compacts superseded lines atomically, keeping what renewal and resumption need', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    const target = { origin, account_id: 1, user_email: null };
    for (let round = 0; round < 120; round += 1) {
      await ledger.recordIssued(await ledger.recordIntent(target, meta), target, link('a@example.com', `2026-12-01T00:00:${String(round % 60).padStart(2, '0')}Z`), meta);
    }
    const open = { origin, account_id: 2, user_email: null };
    await ledger.recordIntent(open, meta);
    const run = await ledger.startRun('digest', 1, meta.at);
    const inRun = { origin, account_id: 3, user_email: null };
    await ledger.recordIssued(await ledger.recordIntent(inRun, { ...meta, run }), inRun, link('c@example.com', '2026-12-02T00:00:00Z'), { ...meta, run });
    await ledger.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(240 + 1 + 1 + 2);

    await (await Ledger.open(path)).close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line).type);
    expect(lines).toEqual(['issued', 'intent', 'run', 'issued']);
    const view = await readLedger(path);
    expect(view.findLink(target)?.link.expires_at).toBe('2026-12-01T00:00:59Z');
    expect(view.uncertainIntent(open)).toBeDefined();
    expect(view.unfinishedRun('digest')?.issuedFor(inRun)).toBe(true);
  });

  it('tells users apart by their email in any letter case, and only by the whole email', async () => {
    const ledger = await Ledger.open(tempLedger());
    // 'ß' upper-cases to 'SS': folded the other way, these two users would be one.
    const targets = ['strasse@example.com', 'Straße@example.com', 'jane@example.com', 'john@example.com'].map((email) => ({ origin, account_id: 1001, user_email: email }));
    for (const target of targets) await ledger.recordIntent(target, meta);
    await ledger.recordIntent({ origin, account_id: 1001, user_email: null }, meta);
    expect(ledger.uncertainIntents().map((entry) => entry.user_email)).toEqual(['strasse@example.com', 'Straße@example.com', 'jane@example.com', 'john@example.com', null]);
    expect(ledger.uncertainIntent({ origin, account_id: 1001, user_email: 'JANE@EXAMPLE.COM' })?.user_email).toBe('jane@example.com');
    for (const target of targets.slice(0, 2)) await ledger.recordIssued(ledger.uncertainIntent(target)!.id, target, link(target.user_email, '2026-12-01T00:00:00Z'), meta);
    expect(ledger.links().map((entry) => entry.link.user_email)).toEqual(['strasse@example.com', 'Straße@example.com']);
    expect(ledger.uncertainIntents().map((entry) => entry.user_email)).toEqual(['jane@example.com', 'john@example.com', null]);
    await ledger.close();
  });

  it("knows the primary holder only from links asked without user_email, not from a spouse's", async () => {
    const ledger = await Ledger.open(tempLedger());
    const primary: LinkTarget = { origin, account_id: 1001, user_email: null };
    const spouse: LinkTarget = { origin, account_id: 1001, user_email: 'john@example.com' };
    await ledger.recordIssued(await ledger.recordIntent(primary, meta), primary, link('jane@example.com', '2026-12-01T00:00:00Z'), meta);
    await ledger.recordIssued(await ledger.recordIntent(spouse, meta), spouse, link('john@example.com', '2026-12-02T00:00:00Z'), meta);
    expect(ledger.findLink(primary)?.link.user_email).toBe('jane@example.com');
    expect(ledger.findLink(spouse)?.link.user_email).toBe('john@example.com');
    await ledger.close();
  });

  it('names the batch run on every line made for it', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    const run = await ledger.startRun('digest', 2, meta.at);
    const issued = { origin, account_id: 1, user_email: null };
    const refused = { origin, account_id: 2, user_email: null };
    await ledger.recordIssued(await ledger.recordIntent(issued, { ...meta, run }), issued, link('a@example.com', '2026-12-01T00:00:00Z'), { ...meta, run });
    await ledger.recordRefused(await ledger.recordIntent(refused, { ...meta, run }), refused, 'ACCOUNT_SUSPENDED', { ...meta, run });
    await ledger.endRun(run, meta.at);
    await ledger.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string; run?: string });
    expect(lines.map((line) => [line.type, line.run])).toEqual([
      ['run', run],
      ['intent', run],
      ['issued', run],
      ['intent', run],
      ['refused', run],
      ['run_end', run],
    ]);
  });

  it('compaction drops a finished run with its superseded links, and keeps an unfinished one whole', async () => {
    const path = tempLedger();
    const ledger = await Ledger.open(path);
    const churn = { origin, account_id: 1, user_email: null };
    for (let round = 0; round < 120; round += 1) {
      await ledger.recordIssued(await ledger.recordIntent(churn, meta), churn, link('a@example.com', '2026-12-01T00:00:00Z'), meta);
    }
    // Each run's link is superseded by a later one made outside it.
    const linkIn = async (run: string, account: number) => {
      const target = { origin, account_id: account, user_email: null };
      await ledger.recordIssued(await ledger.recordIntent(target, { ...meta, run }), target, link(`u${account}@example.com`, '2026-12-01T00:00:00Z'), { ...meta, run });
      await ledger.recordIssued(await ledger.recordIntent(target, meta), target, link(`u${account}@example.com`, '2026-12-03T00:00:00Z'), meta);
    };
    const finished = await ledger.startRun('finished', 1, meta.at);
    await linkIn(finished, 2);
    await ledger.endRun(finished, meta.at);
    const unfinished = await ledger.startRun('unfinished', 1, meta.at);
    await linkIn(unfinished, 3);
    await ledger.close();

    await (await Ledger.open(path)).close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string; run?: string; account_id?: number });
    expect(lines.map((line) => `${line.type} ${line.account_id ?? ''} ${line.run === undefined ? '' : line.run === finished ? 'finished' : 'unfinished'}`.trim())).toEqual([
      'issued 1',
      'issued 2',
      'run  unfinished',
      'issued 3 unfinished',
      'issued 3',
    ]);
    const view = await readLedger(path);
    expect(view.unfinishedRun('finished')).toBeUndefined();
    expect(view.unfinishedRun('unfinished')?.issuedFor({ origin, account_id: 3, user_email: null })).toBe(true);
  });

  it('lives in the user data directory by default', () => {
    expect(defaultLedgerPath({ XDG_DATA_HOME: '/data' }, 'linux')).toBe('/data/taxprep/login-links.ndjson');
    expect(defaultLedgerPath({ HOME: '/home/u' }, 'linux')).toBe('/home/u/.local/share/taxprep/login-links.ndjson');
    expect(defaultLedgerPath({ HOME: '/Users/u' }, 'darwin')).toBe('/Users/u/Library/Application Support/taxprep/login-links.ndjson');
  });
});

describe('ledger lock', () => {
  it('stops a second holder with exit 10 naming the first, and frees on release', async () => {
    const path = tempLedger();
    const first = await acquireLedgerLock(path, { waitMs: 0, clock: realClock });
    const owner = JSON.parse(readFileSync(lockPathOf(path), 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, hostname: hostname() });

    const error = await acquireLedgerLock(path, { waitMs: 300, clock: realClock }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LedgerLockedError);
    expect((error as LedgerLockedError).exitCode).toBe(10);
    // Without a kind the message names no kind: `the ledger <path> is in use by taxprep (pid ...`.
    expect((error as LedgerLockedError).message.startsWith(`the ledger ${path} is in use by taxprep (pid ${process.pid} on ${hostname()}, started `)).toBe(true);

    await first.release();
    expect(existsSync(lockPathOf(path))).toBe(false);
    await (await acquireLedgerLock(path, { waitMs: 0, clock: realClock })).release();
  });

  it('takes over a lock whose process is gone from this host, but not one from another host', async () => {
    const path = tempLedger();
    const finished = await execa(process.execPath, ['-e', 'console.log(process.pid)']);
    const deadPid = Number(finished.stdout);
    (await acquireLedgerLock(path, { waitMs: 0, clock: realClock })).release();
    writeFileSync(lockPathOf(path), JSON.stringify({ pid: deadPid, hostname: hostname(), started_at: '2026-11-23T00:00:00Z' }));
    const lock = await acquireLedgerLock(path, { waitMs: 0, clock: realClock });
    expect(JSON.parse(readFileSync(lockPathOf(path), 'utf8')).pid).toBe(process.pid);
    await lock.release();

    writeFileSync(lockPathOf(path), JSON.stringify({ pid: deadPid, hostname: 'elsewhere.example', started_at: '2026-11-23T00:00:00Z' }));
    await expect(acquireLedgerLock(path, { waitMs: 0, clock: realClock })).rejects.toBeInstanceOf(LedgerLockedError);
  });
});
