import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli';
import { Ledger } from '../../src/batch/ledgers/loginLinks';
import { parseFixture } from '../../src/mock/fixture';
import { CapturedStream } from '../helpers/context';
import { MINIMAL_KEY, startContractMinimalServer } from '../helpers/contractMinimalServer';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, BEACON_ACCOUNT_ID, FIRST_ACCOUNT_ID, SPOUSE_EMAIL, batchFixture } from '../e2e/login-link.fixture';

/**
 * The login-link command in-process (`main`, as bin/taxprep runs it) against one real mock with
 * 300 accounts; each test gets its own ledger, and the mock is reset between tests.
 */

const SUSPENDED = [FIRST_ACCOUNT_ID + 10, FIRST_ACCOUNT_ID + 20];
let mock: RunningMock;
let dataHome: string;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 300, suspended: SUSPENDED })), rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.settings.rateLimits = [];
  mock.deps.requestLog.clear();
  dataHome = mkdtempSync(join(tmpdir(), 'taxprep-login-link-'));
});

async function taxprep(args: string[], options: { stdin?: string; env?: Record<string, string>; tty?: boolean } = {}) {
  const stdout = new CapturedStream({ isTTY: options.tty === true });
  const stderr = new CapturedStream({ isTTY: options.tty === true });
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end(options.stdin ?? '');
  const env = {
    HOME: dataHome,
    XDG_CONFIG_HOME: join(dataHome, 'config'),
    XDG_DATA_HOME: join(dataHome, 'data'),
    TAXPREP_BASE_URL: mock.baseUrl,
    TAXPREP_API_KEY: BATCH_KEYS.acme,
    NO_COLOR: '1',
    ...options.env,
  };
  const exitCode = await main(args, { io: { stdout, stderr, stdin }, env });
  return { exitCode, stdout: stdout.text(), stderr: stderr.text() };
}

const ledgerFile = () => join(dataHome, 'data', 'taxprep', 'login-links.ndjson');
const issuedFor = (accountId: number) => mock.deps.store.state.loginLinks.filter((link) => link.account_id === accountId).length;
const ndjson = (text: string) => text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);

describe('a single link', () => {
  it('prints a card on a terminal and records the link (without its URL) in the ledger', async () => {
    const result = await taxprep(['login-link', String(FIRST_ACCOUNT_ID), '--expiry-hours', '48', '--purpose', 'support_request'], { tty: true });
    expect(result.exitCode).toBe(0);
    // On a terminal, what it is about to do first (stdin is no terminal here: nothing is asked).
    expect(result.stderr).toContain(`This will generate a login link for account ${FIRST_ACCOUNT_ID}:\n  - emails it to the primary holder of account ${FIRST_ACCOUNT_ID}\n`);
    expect(result.stdout).toContain(`Login link for account ${FIRST_ACCOUNT_ID}`);
    expect(result.stdout).toMatch(/Link:\s+http:\/\/127\.0\.0\.1:\d+\/auth\/partner-login\//);
    expect(result.stdout).toMatch(/Purpose:\s+support_request/);
    expect(result.stdout).toMatch(/Email sent:\s+yes/);
    const ledger = readFileSync(ledgerFile(), 'utf8');
    expect(ledger).toContain(`"account_id":${FIRST_ACCOUNT_ID}`);
    expect(ledger).not.toContain('/auth/');
  });

  it('shows every field of the card: no redirect row without one, the links replaced once there was one', async () => {
    const first = await taxprep(['login-link', String(FIRST_ACCOUNT_ID + 2), '--no-notify'], { tty: true });
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`User:\\s+client\\.${FIRST_ACCOUNT_ID + 2}@example\\.com`));
    expect(first.stdout).toMatch(/Expires:\s+\d{4}-\d\d-\d\d/);
    expect(first.stdout).toMatch(/Created:\s+\d{4}-\d\d-\d\d/);
    expect(first.stdout).toMatch(/Email sent:\s+no/);
    expect(first.stdout).not.toContain('Redirect');
    const second = await taxprep(['login-link', String(FIRST_ACCOUNT_ID + 2), '--redirect-url', 'https://acme-tax.example/welcome'], { tty: true });
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toMatch(/Redirect:\s+https:\/\/acme-tax\.example\/welcome/);
    expect(second.stdout).toMatch(/Links replaced:\s+1/);
  });

  it('refuses a command line without ids or with both ids and --from, and --user-email for several accounts (exit 2, nothing sent)', async () => {
    const none = await taxprep(['login-link']);
    expect([none.exitCode, none.stderr]).toEqual([2, 'error: give one or more account ids, or --from FILE (- for stdin)\nRun `taxprep login-link --help` for examples.\n']);
    const both = await taxprep(['login-link', String(FIRST_ACCOUNT_ID), '--from', '-'], { stdin: `${FIRST_ACCOUNT_ID}\n` });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('give account ids or --from FILE, not both');
    const several = await taxprep(['login-link', String(FIRST_ACCOUNT_ID), String(FIRST_ACCOUNT_ID + 1), '--user-email', SPOUSE_EMAIL]);
    expect(several.exitCode).toBe(2);
    expect(several.stderr).toContain('--user-email names a user of one account');
    expect(mock.deps.requestLog.entries()).toEqual([]);
  });

  it('shows only the rows a service answered: one that leaves the optional fields out gets no Email sent, Redirect or Links replaced', async () => {
    const minimal = await startContractMinimalServer();
    try {
      const result = await taxprep(['login-link', '2001'], { tty: true, env: { TAXPREP_BASE_URL: minimal.baseUrl(), TAXPREP_API_KEY: MINIMAL_KEY } });
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/^Login link for account 2001\nLink: +https:\/\/app\.example\/auth\/partner-login\/tokL\nUser: +ada@example\.com\n/);
      for (const row of ['Email sent', 'Redirect', 'Links replaced']) expect(result.stdout).not.toContain(row);
    } finally {
      await minimal.close();
    }
  });

  it('prints the service document with --json, for the spouse with --user-email', async () => {
    const result = await taxprep(['--json', 'login-link', String(FIRST_ACCOUNT_ID), '--user-email', SPOUSE_EMAIL, '--no-notify']);
    expect(result.exitCode).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record).toMatchObject({ user_email: SPOUSE_EMAIL, notification_sent: false, expires_in_hours: 168, purpose: 'expired_link', redirect_url: null });
    expect(record.login_link).toContain('/auth/user-login/');
    expect(result.stderr).toBe('');
  });

  it('fails with the class exit code and the service error', async () => {
    const suspended = await taxprep(['--json', 'login-link', String(SUSPENDED[0])]);
    expect(suspended.exitCode).toBe(5);
    expect(JSON.parse(suspended.stderr).error).toMatchObject({ code: 'ACCOUNT_SUSPENDED', details: { account_id: SUSPENDED[0], contact_support: true } });
    const denied = await taxprep(['login-link', String(BEACON_ACCOUNT_ID)]);
    expect(denied.exitCode).toBe(3);
    expect(denied.stderr).toContain('error: ');
  });
});

describe('a batch', () => {
  it('runs 300 items with mixed failures without stopping, paced under the rate limit: one line each, a summary, exit 9', async () => {
    mock.deps.settings.rateLimits = [{ limit: 100, windowSeconds: 2 }];
    // 297 of Acme's accounts (two of them suspended), one of Beacon's and two that do not exist.
    const ids = [...Array.from({ length: 297 }, (_, index) => FIRST_ACCOUNT_ID + index), BEACON_ACCOUNT_ID, 99_998, 99_999];
    const input = ids.join('\n');
    const result = await taxprep(['--json', 'login-link', '--from', '-', '--concurrency', '8'], { stdin: input });

    expect(result.exitCode).toBe(9);
    const lines = ndjson(result.stdout);
    expect(lines).toHaveLength(ids.length);
    const failures = lines.filter((line) => 'error' in line);
    expect(failures.map((line) => [line.input.account_id, line.error.code]).sort()).toEqual(
      [
        [BEACON_ACCOUNT_ID, 'ACCESS_DENIED'],
        [99_998, 'ACCOUNT_NOT_FOUND'],
        [99_999, 'ACCOUNT_NOT_FOUND'],
        [SUSPENDED[0], 'ACCOUNT_SUSPENDED'],
        [SUSPENDED[1], 'ACCOUNT_SUSPENDED'],
      ].sort(),
    );
    expect(failures[0]!.input.origin).toMatch(/^line \d+$/);
    expect(lines.filter((line) => 'login_link' in line)).toHaveLength(ids.length - 5);
    expect(result.stderr).toMatch(new RegExp(`login links: ${ids.length - 5} generated, 5 failed, 0 skipped in (\\d+ms|[\\d.]+s)`));
    // Paced to the window: the service never had to refuse a request.
    expect(mock.deps.requestLog.entries().filter((entry) => entry.status === 429)).toEqual([]);
  });

  it('waits out a 429 when another client spent the quota, and every item still succeeds', async () => {
    mock.deps.settings.rateLimits = [{ limit: 5, windowSeconds: 1 }];
    for (let index = 0; index < 5; index += 1) await mock.request(`/accounts/${FIRST_ACCOUNT_ID}`, { key: BATCH_KEYS.acme });
    const ids = [1, 2, 3, 4, 5, 6].map((offset) => String(FIRST_ACCOUNT_ID + offset));
    const result = await taxprep(['login-link', ...ids]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().split('\n').map((line) => line.split('\t')[0])).toEqual(Array(6).fill('issued'));
    expect(result.stderr).toMatch(/rate limited/i);
    expect(mock.deps.requestLog.entries().filter((entry) => entry.status === 429).length).toBeGreaterThan(0);
    for (const id of ids) expect(issuedFor(Number(id))).toBe(1);
  });

  it('stops with exit 6 instead of waiting hours when the daily quota is spent', async () => {
    // Just past a day boundary on the virtual clock, so the daily window resets a day away.
    const nowMs = mock.deps.clock.now().getTime();
    await mock.deps.clock.advance(86_400_000 - (nowMs % 86_400_000) + 60_000);
    mock.deps.settings.rateLimits = [{ limit: 100, windowSeconds: 60 }, { limit: 5, windowSeconds: 86_400 }];
    const ids = Array.from({ length: 8 }, (_, index) => String(FIRST_ACCOUNT_ID + index));
    const result = await taxprep(['login-link', ...ids]);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/login links: 5 generated, .* not sent/);
    expect(result.stderr).toContain('error: ');
    expect(mock.deps.store.state.loginLinks).toHaveLength(5);
  });

  it('stops at a global failure (refused key) with its exit code, sending nothing more', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => String(FIRST_ACCOUNT_ID + index));
    const result = await taxprep(['login-link', ...ids, '--concurrency', '2'], { env: { TAXPREP_API_KEY: BATCH_KEYS.expired } });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/login links: 0 generated, [12] failed, 0 skipped, 1[89] not sent/);
    expect(result.stderr).toContain('error: ');
    expect(mock.deps.requestLog.entries().length).toBeLessThanOrEqual(2);
  });

  it('reads a CSV with per-line users, purposes and expiries; tab-separated lines off a terminal', async () => {
    const csvPath = join(dataHome, 'clients.csv');
    const csv = `account_id,user_email,purpose,expiry_hours\n${FIRST_ACCOUNT_ID},"${SPOUSE_EMAIL}",additional_user,12\n${FIRST_ACCOUNT_ID + 1},,,\n`;
    await import('node:fs/promises').then((fs) => fs.writeFile(csvPath, csv));
    const result = await taxprep(['login-link', '--from', csvPath]);
    expect(result.exitCode).toBe(0);
    const [spouse, primary] = result.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(spouse!.slice(0, 3)).toEqual(['issued', String(FIRST_ACCOUNT_ID), SPOUSE_EMAIL]);
    expect(primary!.slice(0, 3)).toEqual(['issued', String(FIRST_ACCOUNT_ID + 1), `client.${FIRST_ACCOUNT_ID + 1}@example.com`]);
    const spouseLink = mock.deps.store.state.loginLinks.find((link) => link.account_id === FIRST_ACCOUNT_ID)!;
    expect(spouseLink.purpose).toBe('additional_user');
    expect(Date.parse(spouseLink.expires_at) - Date.parse(spouseLink.created_at)).toBe(12 * 3_600_000);
  });

  it('picks up an unfinished batch where it stopped when run again, and starts afresh once it finished', async () => {
    const ids = [String(FIRST_ACCOUNT_ID), String(SUSPENDED[0]), String(FIRST_ACCOUNT_ID + 1)];
    expect((await taxprep(['login-link', ...ids])).exitCode).toBe(9);

    const again = await taxprep(['--json', 'login-link', ...ids]);
    expect(again.stderr).toContain('Resuming the unfinished run of this batch from');
    expect(ndjson(again.stdout).map((line) => line.skipped?.reason ?? line.error?.code)).toEqual([
      'done_in_interrupted_run',
      'done_in_interrupted_run',
      'ACCOUNT_SUSPENDED',
    ]);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(1);

    await mock.request(`/_mock/accounts/${SUSPENDED[0]}/status`, { body: { status: 'active' } });
    const finished = await taxprep(['login-link', ...ids]);
    expect(finished.exitCode).toBe(0);
    expect(issuedFor(SUSPENDED[0]!)).toBe(1);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(1);

    const afresh = await taxprep(['login-link', ...ids]);
    expect(afresh.exitCode).toBe(0);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(2);
  });

  it('a resumed batch says what it settled, holds back an unanswered intent until --reissue-uncertain, and only the same batch resumes', async () => {
    const ids = [String(FIRST_ACCOUNT_ID), String(FIRST_ACCOUNT_ID + 1), String(SUSPENDED[0])];
    expect((await taxprep(['login-link', ...ids])).exitCode).toBe(9);
    // Another batch of as many items, or the same items with other flags, starts a run of its own.
    const other = await taxprep(['login-link', String(FIRST_ACCOUNT_ID + 2), String(FIRST_ACCOUNT_ID + 3), String(SUSPENDED[0])]);
    expect(other.stderr).not.toContain('Resuming');
    const otherFlags = await taxprep(['login-link', ...ids, '--purpose', 'support_request']);
    expect(otherFlags.stderr).not.toContain('Resuming');
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(2);

    // The run of the first batch is still unfinished: an intent without an answer for its suspended account.
    await mock.request(`/_mock/accounts/${SUSPENDED[0]}/status`, { body: { status: 'active' } });
    const ledger = await Ledger.open(ledgerFile());
    await ledger.recordIntent({ origin: new URL(mock.baseUrl).origin, account_id: SUSPENDED[0]!, user_email: null }, { profile: null, at: new Date() });
    await ledger.close();
    const held = await taxprep(['--json', 'login-link', ...ids]);
    expect(held.exitCode).toBe(9);
    expect(held.stderr).toMatch(/Resuming the unfinished run of this batch from \S+: 2 of 3 links already generated, 1 held back as uncertain, 0 to send \(--restart generates every link again\)\./);
    expect(ndjson(held.stdout).map((line) => line.skipped?.reason ?? line.error?.code)).toEqual(['done_in_interrupted_run', 'done_in_interrupted_run', 'LINK_STATE_UNCERTAIN']);
    expect(issuedFor(SUSPENDED[0]!)).toBe(0);

    const reissued = await taxprep(['--json', 'login-link', ...ids, '--reissue-uncertain']);
    expect(reissued.exitCode).toBe(0);
    expect(reissued.stderr).toMatch(/: 2 of 3 links already generated, 0 held back as uncertain, 1 to send /);
    expect(issuedFor(SUSPENDED[0]!)).toBe(1);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(2);
  });

  it('generates every link again with --restart, even when the batch is unfinished', async () => {
    const ids = [String(FIRST_ACCOUNT_ID), String(SUSPENDED[0])];
    expect((await taxprep(['login-link', ...ids])).exitCode).toBe(9);
    const restarted = await taxprep(['login-link', ...ids, '--restart']);
    expect(restarted.exitCode).toBe(9);
    expect(restarted.stderr).not.toContain('Resuming');
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(2);
  });

  it('says on a terminal what a batch is about to do, and names --from when its file cannot be read', async () => {
    const batch = await taxprep(['login-link', String(FIRST_ACCOUNT_ID), String(FIRST_ACCOUNT_ID + 1), '--no-notify'], { tty: true });
    expect(batch.exitCode).toBe(0);
    expect(batch.stderr).toContain(`This will generate up to 2 login links, for accounts ${FIRST_ACCOUNT_ID} and ${FIRST_ACCOUNT_ID + 1}:\n  - sends no email (--no-notify)\n`);
    const missing = join(dataHome, 'missing.csv');
    const unread = await taxprep(['login-link', '--from', missing]);
    expect(unread.exitCode).toBe(2);
    expect(unread.stderr).toContain(`error: --from ${missing}: `);
    expect(mock.deps.requestLog.entries()).toHaveLength(2);
  });

  it('takes the file given to accounts import: each row is the account that import created, found in its ledger for this service', async () => {
    const file = join(dataHome, 'clients.csv');
    writeFileSync(file, 'email,first_name,last_name\nnew.one@example.com,New,One\nnew.two@example.com,New,Two\n');
    const imported = await taxprep(['--json', 'accounts', 'import', file]);
    expect(imported.exitCode).toBe(0);
    const created = mock.deps.store.state.accounts.filter((account) => account.email.startsWith('new.')).map((account) => account.id);
    expect(created).toHaveLength(2);
    // Each account came with its first link; login-link makes one more each.
    expect(created.map(issuedFor)).toEqual([1, 1]);
    const links = await taxprep(['--json', 'login-link', '--from', file, '--no-notify']);
    expect(links.exitCode).toBe(0);
    expect(created.map(issuedFor)).toEqual([2, 2]);
  });

  it('refuses bad input lines before sending anything', async () => {
    const result = await taxprep(['login-link', '--from', '-'], { stdin: `${FIRST_ACCOUNT_ID}\nnot-an-id\n` });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('stdin has 1 bad line; nothing was sent:\n  line 2: account_id must be a positive integer');
    expect(mock.deps.requestLog.entries()).toEqual([]);
  });
});

describe('requests without an answer', () => {
  it('settles the intent when no connection was made, and holds it when a request timed out', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await taxprep(['--no-retry', 'login-link', String(FIRST_ACCOUNT_ID)], { env: { TAXPREP_BASE_URL: `http://127.0.0.1:${port}/v1beta` } });
    expect(refused.exitCode).toBe(7);

    mock.deps.settings.faults.latencyMs = 600;
    try {
      const timedOut = await taxprep(['--no-retry', '--timeout', '200ms', 'login-link', String(FIRST_ACCOUNT_ID + 1)]);
      expect(timedOut.exitCode).toBe(7);
    } finally {
      mock.deps.settings.faults.latencyMs = 0;
    }
    const listed = await taxprep(['--json', 'login-link', 'ledger']);
    expect(JSON.parse(listed.stdout).uncertain.map((entry: { account_id: number }) => entry.account_id)).toEqual([FIRST_ACCOUNT_ID + 1]);
  });
});

describe('renewal', () => {
  const csv = `account_id,expiry_hours\n${FIRST_ACCOUNT_ID},24\n${FIRST_ACCOUNT_ID + 1},168\n`;

  it('generates unknown links (--renew-unknown), skips fresh ones, and renews those expiring after the clock advances', async () => {
    const first = await taxprep(['--json', 'login-link', 'renew', '--from', '-', '--within', '2h', '--renew-unknown'], { stdin: csv });
    expect(first.exitCode).toBe(0);
    expect(ndjson(first.stdout).map((line) => line.account_id)).toEqual([FIRST_ACCOUNT_ID, FIRST_ACCOUNT_ID + 1]);

    // A cron run that finds every link fresh adds no line to the links file; --verbose lists them.
    const again = await taxprep(['--json', 'login-link', 'renew', '--from', '-', '--within', '2h'], { stdin: csv });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^login links: 0 generated, 0 failed, 2 skipped in (\d+ms|[\d.]+s)\n$/);
    const verbose = await taxprep(['--json', '--verbose', 'login-link', 'renew', '--from', '-', '--within', '2h'], { stdin: csv });
    expect(ndjson(verbose.stdout).map((line) => line.skipped?.reason)).toEqual(['fresh', 'fresh']);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(1);

    await mock.deps.clock.advance(23 * 3_600_000);
    const env = { TAXPREP_NOW: mock.deps.clock.nowIso() };
    const dryRun = await taxprep(['--json', 'login-link', 'renew', '--from', '-', '--within', '2h', '--dry-run'], { stdin: csv, env });
    expect(dryRun.exitCode).toBe(0);
    expect(ndjson(dryRun.stdout).map((line) => [line.input.account_id, line.plan.action, line.plan.reason])).toEqual([
      [FIRST_ACCOUNT_ID, 'generate', 'expiring'],
      [FIRST_ACCOUNT_ID + 1, 'skip', 'fresh'],
    ]);
    expect(dryRun.stderr).toContain('dry run: 1 to generate, 1 fresh, 0 uncertain; nothing was sent');
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(1);

    const renewed = await taxprep(['login-link', 'renew', '--from', '-', '--within', '2h'], { stdin: csv, env });
    expect(renewed.exitCode).toBe(0);
    expect(renewed.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 2))).toEqual([['issued', String(FIRST_ACCOUNT_ID)]]);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(2);
    expect(issuedFor(FIRST_ACCOUNT_ID + 1)).toBe(1);

    const listed = await taxprep(['--json', 'login-link', 'ledger'], { env });
    // Expiring soonest first: the renewed 24-hour link before the 168-hour one.
    expect(JSON.parse(listed.stdout).links.map((link: { account_id: number }) => link.account_id)).toEqual([FIRST_ACCOUNT_ID, FIRST_ACCOUNT_ID + 1]);
  });

  it('holds back a link an interrupted run may have generated, until --reissue-uncertain', async () => {
    const ledger = await Ledger.open(ledgerFile());
    await ledger.recordIntent({ origin: new URL(mock.baseUrl).origin, account_id: FIRST_ACCOUNT_ID, user_email: null }, { profile: null, at: new Date() });
    await ledger.close();

    const held = await taxprep(['--json', 'login-link', 'renew', '--from', '-', '--renew-unknown'], { stdin: `${FIRST_ACCOUNT_ID}\n${FIRST_ACCOUNT_ID + 1}\n` });
    expect(held.exitCode).toBe(9);
    const [heldLine, issuedLine] = ndjson(held.stdout);
    expect(heldLine!.error.code).toBe('LINK_STATE_UNCERTAIN');
    expect(issuedLine!.account_id).toBe(FIRST_ACCOUNT_ID + 1);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(0);

    const listed = await taxprep(['login-link', 'ledger']);
    expect(listed.stderr).toContain(`account ${FIRST_ACCOUNT_ID}, asked`);

    const reissued = await taxprep(['login-link', 'renew', '--from', '-', '--reissue-uncertain'], { stdin: `${FIRST_ACCOUNT_ID}\n` });
    expect(reissued.exitCode).toBe(0);
    expect(issuedFor(FIRST_ACCOUNT_ID)).toBe(1);
  });
});
