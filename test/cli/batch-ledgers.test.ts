import { appendFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types';
import { LedgerLockedError, UsageError } from '../../src/errors';
import { defaultPathOf, withLedger } from '../../src/batch/ledger';
import { ACCOUNTS, AccountsLedger, readAccountsLedger } from '../../src/batch/ledgers/accounts';
import { LOGIN_LINKS, Ledger } from '../../src/batch/ledgers/loginLinks';
import { knownAccounts } from '../../src/batch/knownAccounts';
import { fileBackend } from '../../src/state/backend';

import { openRecordFile } from '../../src/batch/records';

/** A context whose state is the files of `env`'s home, as a command without a state URL has. */
const filesOf = (env: Record<string, string>) => ({ env, state: async () => fileBackend(env) });

const realClock: Clock = { now: () => new Date(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
const origin = 'http://127.0.0.1:4010';
const at = new Date('2026-11-23T10:00:00Z');
const who = { origin, profile: 'acme' };

function dataHome(): Record<string, string> {
  return { XDG_DATA_HOME: mkdtempSync(join(tmpdir(), 'taxprep-batch-')) };
}

describe('accounts ledger', () => {
  it('settles only the intent a line names: refusing an older one leaves the newer open, whatever the case of the email', async () => {
    const path = defaultPathOf(ACCOUNTS, dataHome());
    const ledger = await AccountsLedger.open(path);
    const older = await ledger.recordIntent({ ...who, email: 'Jane@Example.com', at });
    const newer = await ledger.recordIntent({ ...who, email: 'jane@example.com', at });
    await ledger.recordRefused(older, { ...who, email: 'jane@example.com', at, code: 'SERVICE_UNAVAILABLE' });
    expect(ledger.uncertainIntent(origin, 'JANE@example.com')?.id).toBe(newer);
    await ledger.recordAccount('created', { ...who, email: 'jane@example.com', at, account_id: 1001, source: 'import', intent: newer });
    expect(ledger.uncertainIntent(origin, 'jane@example.com')).toBeUndefined();
    expect(ledger.findAccount(origin, 'JANE@EXAMPLE.COM')?.account_id).toBe(1001);
    await ledger.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.at(-1)).toMatchObject({ type: 'created', intent: newer, account_id: 1001 });
  });

  it('settles intents by created, exists or refused; finds accounts by email whatever its case', async () => {
    const path = defaultPathOf(ACCOUNTS, dataHome());
    const ledger = await AccountsLedger.open(path);
    const jane = await ledger.recordIntent({ ...who, email: 'Jane@Example.com', at });
    await ledger.recordAccount('created', { ...who, email: 'Jane@Example.com', at, account_id: 1001, source: 'import', intent: jane });
    const john = await ledger.recordIntent({ ...who, email: 'john@example.com', at });
    await ledger.recordAccount('exists', { ...who, email: 'john@example.com', at, account_id: 1002, source: 'import', intent: john });
    const ann = await ledger.recordIntent({ ...who, email: 'ann@example.com', at });
    await ledger.recordRefused(ann, { ...who, email: 'ann@example.com', at, code: 'VALIDATION_ERROR' });
    await ledger.recordIntent({ ...who, email: 'bob@example.com', at });
    await ledger.close();

    expect(statSync(path).mode & 0o777).toBe(0o600);
    const view = await readAccountsLedger(path);
    expect(view.findAccount(origin, 'jane@example.com')?.account_id).toBe(1001);
    expect(view.findAccount(origin, 'JOHN@example.com')).toMatchObject({ type: 'exists', account_id: 1002 });
    expect(view.findAccount(origin, 'ann@example.com')).toBeUndefined();
    expect(view.findAccount('https://other.example', 'jane@example.com')).toBeUndefined();
    expect(view.uncertainIntents().map((entry) => entry.email)).toEqual(['bob@example.com']);
  });

  it('compacts settled intents and refusals away on open, keeping every account and every open intent', async () => {
    const path = defaultPathOf(ACCOUNTS, dataHome());
    const ledger = await AccountsLedger.open(path);
    for (let index = 0; index < 150; index += 1) {
      const email = `c${index}@example.com`;
      const intent = await ledger.recordIntent({ ...who, email, at });
      await ledger.recordAccount('created', { ...who, email, at, account_id: 3000 + index, source: 'import', intent }, { wait: false });
      const refused = await ledger.recordIntent({ ...who, email: `r${index}@example.com`, at });
      await ledger.recordRefused(refused, { ...who, email: `r${index}@example.com`, at, code: 'VALIDATION_ERROR' });
    }
    await ledger.recordIntent({ ...who, email: 'open@example.com', at });
    await ledger.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(601);

    await (await AccountsLedger.open(path)).close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(151);
    const view = await readAccountsLedger(path);
    expect(view.findAccount(origin, 'c149@example.com')?.account_id).toBe(3149);
    expect(view.accounts()).toHaveLength(150);
    expect(view.uncertainIntents().map((entry) => entry.email)).toEqual(['open@example.com']);
  });

  it('drops a line torn by a kill, and names the ledger and line of a damaged one', async () => {
    const path = defaultPathOf(ACCOUNTS, dataHome());
    const ledger = await AccountsLedger.open(path);
    await ledger.recordAccount('created', { ...who, email: 'jane@example.com', at, account_id: 1001, source: 'create' });
    await ledger.close();
    appendFileSync(path, '{"type":"intent","id":"x');
    const reopened = await AccountsLedger.open(path);
    await reopened.recordAccount('created', { ...who, email: 'john@example.com', at, account_id: 1002, source: 'create' });
    await reopened.close();
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).account_id)).toEqual([1001, 1002]);

    appendFileSync(path, 'not json\n');
    const error = await readAccountsLedger(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`the accounts ledger ${path} is damaged at line 3`);
  });

  it('has a lock of its own: a running login-link batch does not block it, a second holder waits then exits 10', async () => {
    const env = dataHome();
    const options = { waitMs: 0, clock: realClock };
    const result = await withLedger(defaultPathOf(LOGIN_LINKS, env), LOGIN_LINKS, { ...options, open: (path) => Ledger.open(path) }, () =>
      withLedger(defaultPathOf(ACCOUNTS, env), ACCOUNTS, { ...options, open: (path) => AccountsLedger.open(path) }, async () => {
        const second = await withLedger(defaultPathOf(ACCOUNTS, env), ACCOUNTS, { ...options, open: (path) => AccountsLedger.open(path) }, async () => 'ran').catch(
          (caught: unknown) => caught,
        );
        expect(second).toBeInstanceOf(LedgerLockedError);
        expect((second as LedgerLockedError).exitCode).toBe(10);
        expect((second as LedgerLockedError).message).toContain('the accounts ledger ');
        return 'both held';
      }),
    );
    expect(result).toBe('both held');
  });
});

describe('login-link ledger', () => {
  const link = (email: string, expires: string) => ({ user_email: email, purpose: 'expired_link', expires_at: expires, created_at: '2026-11-23T11:00:00Z' });
  const meta = { profile: 'acme', at };

  it('lists every user\'s last link, expiring soonest first, links made with new accounts included', async () => {
    const path = defaultPathOf(LOGIN_LINKS, dataHome());
    const ledger = await Ledger.open(path);
    for (const [accountId, expires] of [[1001, '2026-12-03T00:00:00Z'], [1002, '2026-12-01T00:00:00Z']] as const) {
      const target = { origin, account_id: accountId, user_email: null };
      await ledger.recordIssued(await ledger.recordIntent(target, meta), target, link(`c${accountId}@example.com`, expires), meta);
    }
    await ledger.recordCreationLinks([{ target: { origin, account_id: 1003, user_email: null }, link: link('c1003@example.com', '2026-12-02T00:00:00Z') }], meta);
    expect(ledger.links().map((entry) => entry.account_id)).toEqual([1002, 1003, 1001]);
    await ledger.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.at(-1)).toMatchObject({ type: 'issued', at_creation: true, account_id: 1003 });
  });

  it('settles only the intent a line names; finds the latest unfinished run of a batch and what it got', async () => {
    const ledger = await Ledger.open(defaultPathOf(LOGIN_LINKS, dataHome()));
    const target = { origin, account_id: 1001, user_email: null };
    const older = await ledger.recordIntent(target, meta);
    const newer = await ledger.recordIntent(target, meta);
    await ledger.recordRefused(older, target, 'SERVICE_UNAVAILABLE', meta);
    expect(ledger.uncertainIntent(target)?.id).toBe(newer);

    const first = await ledger.startRun('digest', 2, at);
    const second = await ledger.startRun('digest', 2, at);
    await ledger.recordIssued(newer, target, link('c1001@example.com', '2026-12-03T00:00:00Z'), { ...meta, run: second });
    const other = await ledger.startRun('other', 1, at);
    await ledger.endRun(other, at);
    const run = ledger.unfinishedRun('digest');
    expect(run?.entry.run).toBe(second);
    expect([run?.issuedFor(target), run?.issuedFor({ ...target, account_id: 1002 })]).toEqual([true, false]);
    expect(ledger.unfinishedRun('other')).toBeUndefined();
    expect(first).not.toBe(second);
    await ledger.close();
  });
});

describe('knownAccounts', () => {
  it('merges the accounts and login-link ledgers, naming where each account came from', async () => {
    const env = dataHome();
    const accounts = await AccountsLedger.open(defaultPathOf(ACCOUNTS, env));
    await accounts.recordAccount('created', { ...who, email: 'jane@example.com', at, account_id: 1001, source: 'create' });
    await accounts.recordAccount('exists', { ...who, email: 'john@example.com', at, account_id: 1002, source: 'import' });
    await accounts.close();
    const links = await Ledger.open(defaultPathOf(LOGIN_LINKS, env));
    const link = { user_email: 'jane@example.com', purpose: 'expired_link', expires_at: '2026-11-30T10:00:00Z', created_at: '2026-11-23T11:00:00Z' };
    const meta = { profile: 'acme', at: new Date('2026-11-23T11:00:00Z') };
    for (const accountId of [1001, 1003]) {
      const target = { origin, account_id: accountId, user_email: null };
      await links.recordIssued(await links.recordIntent(target, meta), target, link, meta);
    }
    const elsewhere = { origin: 'https://other.example', account_id: 1004, user_email: null };
    await links.recordIssued(await links.recordIntent(elsewhere, meta), elsewhere, link, meta);
    await links.close();

    const known = await knownAccounts(filesOf(env), { origin });
    expect(known.map(({ account_id, email, sources }) => ({ account_id, email, sources }))).toEqual([
      { account_id: 1001, email: 'jane@example.com', sources: ['accounts create', 'login-link'] },
      { account_id: 1002, email: 'john@example.com', sources: ['accounts import'] },
      { account_id: 1003, email: undefined, sources: ['login-link'] },
    ]);
    expect(known[0]!.at).toBe('2026-11-23T11:00:00.000Z');
    expect((await knownAccounts(filesOf(env))).map((account) => account.account_id)).toEqual([1001, 1002, 1003, 1004]);
  });

  it('names each command once per account, keeps the profile and time of the latest, and gives no email to an account the links alone know', async () => {
    const env = dataHome();
    const accounts = await AccountsLedger.open(defaultPathOf(ACCOUNTS, env));
    await accounts.recordAccount('created', { ...who, email: 'jane@example.com', at: new Date('2026-11-23T09:00:00Z'), account_id: 1001, source: 'create' });
    await accounts.close();
    const links = await Ledger.open(defaultPathOf(LOGIN_LINKS, env));
    const link = { user_email: 'jane@example.com', purpose: 'expired_link', expires_at: '2026-11-30T10:00:00Z', created_at: '2026-11-23T11:00:00Z' };
    // Account 1005: a link for each of its two holders, the spouse's the later.
    const times: Array<[number, string | null, string, string]> = [
      [1001, null, 'day', '2026-11-24T02:00:00Z'],
      [1005, 'sam@example.com', 'night', '2026-11-25T02:00:00Z'],
      [1005, null, 'day', '2026-11-23T12:00:00Z'],
    ];
    for (const [accountId, userEmail, profile, time] of times) {
      const target = { origin, account_id: accountId, user_email: userEmail };
      const meta = { profile, at: new Date(time) };
      await links.recordIssued(await links.recordIntent(target, meta), target, { ...link, user_email: userEmail ?? 'pat@example.com' }, meta);
    }
    await links.close();
    expect(await knownAccounts(filesOf(env), { origin })).toStrictEqual([
      { origin, account_id: 1001, email: 'jane@example.com', sources: ['accounts create', 'login-link'], profile: 'day', at: '2026-11-24T02:00:00.000Z' },
      { origin, account_id: 1005, sources: ['login-link'], profile: 'night', at: '2026-11-25T02:00:00.000Z' },
    ]);
  });

  it('keeps the first seen at a tie: a link made the same instant as the account does not take over its profile; one email per account', async () => {
    const env = dataHome();
    const accounts = await AccountsLedger.open(defaultPathOf(ACCOUNTS, env));
    await accounts.recordAccount('created', { ...who, email: 'jane@example.com', at, account_id: 1001, source: 'create' });
    // The same account found again by import under its spouse's email: the email first seen stays.
    await accounts.recordAccount('exists', { ...who, profile: 'other', email: 'sam@example.com', at, account_id: 1001, source: 'import' });
    await accounts.close();
    const links = await Ledger.open(defaultPathOf(LOGIN_LINKS, env));
    const target = { origin, account_id: 1001, user_email: null };
    const meta = { profile: 'night', at };
    const link = { user_email: 'jane@example.com', purpose: 'expired_link', expires_at: '2026-11-30T10:00:00Z', created_at: at.toISOString() };
    await links.recordIssued(await links.recordIntent(target, meta), target, link, meta);
    await links.close();
    expect(await knownAccounts(filesOf(env), { origin })).toStrictEqual([
      { origin, account_id: 1001, email: 'jane@example.com', sources: ['accounts create', 'accounts import', 'login-link'], profile: 'acme', at: at.toISOString() },
    ]);
  });

  it('is empty when no ledger exists yet', async () => {
    expect(await knownAccounts(filesOf(dataHome()))).toEqual([]);
  });
});

describe('record files', () => {
  it('writes CSV with a header when the name ends in .csv, quoting what needs it, else NDJSON; always 0600', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'taxprep-records-'));
    const csv = await openRecordFile(join(directory, 'results.CSV'), ['line', 'email', 'message'], { append: false, flag: '--results' });
    await csv.write({ line: 2, email: 'jane@example.com', message: 'a "quoted", multi\nline text' });
    await csv.write({ line: 3, email: 'john@example.com' });
    await csv.close();
    expect(readFileSync(join(directory, 'results.CSV'), 'utf8')).toBe('line,email,message\r\n2,jane@example.com,"a ""quoted"", multi\nline text"\r\n3,john@example.com,\r\n');
    expect(statSync(join(directory, 'results.CSV')).mode & 0o777).toBe(0o600);

    const ndjson = join(directory, 'links.ndjson');
    for (const email of ['a@example.com', 'b@example.com']) {
      const file = await openRecordFile(ndjson, ['email', 'login_link'], { append: true, flag: '--links' });
      await file.write({ email });
      await file.close();
    }
    expect(readFileSync(ndjson, 'utf8')).toBe('{"email":"a@example.com","login_link":null}\n{"email":"b@example.com","login_link":null}\n');
    const error = await openRecordFile(directory, ['email'], { append: false, flag: '--results' }).catch((caught: unknown) => caught);
    expect((error as UsageError).message).toBe(`--results ${directory}: cannot be written (is a directory); nothing was sent`);
  });
});
