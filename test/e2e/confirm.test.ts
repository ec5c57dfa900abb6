import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * Commands that email people or stop their links from working say so on a terminal and ask first
 * (answered y or n at a pseudo-terminal); in a pipe they neither say nor ask, and never wait.
 */

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 6 })), rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(() => mock.deps.store.reset());

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme, NO_COLOR: '1' });
const linksOf = (accountId: number) => mock.deps.store.state.loginLinks.filter((link) => link.account_id === accountId).length;
const emailsTo = (address: string) => mock.deps.store.state.outbox.filter((email) => email.to === address).length;
const questions = (screen: string) => screen.split('Continue? [y/N]').length - 1;
const ID = FIRST_ACCOUNT_ID;
const EMAIL = `client.${ID}@example.com`;

describe('login-link on a terminal says what it will do and asks', () => {
  it('answered y: names the user emailed, then generates; answered n: names the working link, sends nothing, exit 2', async () => {
    const home = makeHome();
    const yes = await runCli(['login-link', String(ID)], { env: env(), tty: true, home, input: 'y\n' });
    expect(yes.exitCode).toBe(0);
    expect(yes.stdout).toContain(`This will generate a login link for account ${ID} (`);
    expect(yes.stdout).toContain(`  - emails it to ${EMAIL}\n`);
    expect(yes.stdout).toContain('  - stops every earlier link of this user from working:\n    none issued by taxprep is still valid; any made elsewhere stop too\n');
    expect(questions(yes.stdout)).toBe(1);
    expect(yes.stdout).toContain(`Login link for account ${ID}`);
    expect(linksOf(ID)).toBe(1);
    expect(emailsTo(EMAIL)).toBe(1);

    const no = await runCli(['login-link', String(ID)], { env: env(), tty: true, home, input: 'n\n' });
    expect(no.exitCode).toBe(2);
    expect(no.stdout).toMatch(/from working:\n {4}1 issued by taxprep, valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in 7 days\)\n {4}\(unless already used\), and any made elsewhere\n/);
    expect(no.stdout).toContain('cancelled at the prompt; nothing was sent');
    // The pseudo-terminal is 80 columns wide: the statement fits it.
    expect(Math.max(...no.stdout.split('Continue?')[0]!.split('\n').map((line) => line.length))).toBeLessThanOrEqual(80);
    expect(linksOf(ID)).toBe(1);
    expect(emailsTo(EMAIL)).toBe(1);
  });

  it('takes Enter alone or the end of input as no', async () => {
    for (const input of ['\n', undefined]) {
      const result = await runCli(['login-link', String(ID)], { env: env(), tty: true, ...(input === undefined ? {} : { input }) });
      expect(result.exitCode).toBe(2);
      expect(linksOf(ID)).toBe(0);
    }
  });

  it('says that no email is sent with --no-notify', async () => {
    const result = await runCli(['login-link', String(ID), '--no-notify'], { env: env(), tty: true, input: 'yes\n' });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('  - sends no email (--no-notify)\n');
    expect(emailsTo(EMAIL)).toBe(0);
  });

  it('asks once for a whole batch, with its counts', async () => {
    const ids = [0, 1, 2, 3].map((offset) => String(ID + offset));
    const result = await runCli(['login-link', ...ids], { env: env(), tty: true, input: 'y\n' });
    expect(result.exitCode).toBe(0);
    expect(questions(result.stdout)).toBe(1);
    expect(result.stdout).toContain(`This will generate up to 4 login links, for accounts ${ids[0]}, ${ids[1]} and 2 more:\n`);
    expect(result.stdout).toContain('  - emails each link to its user: up to 4 emails\n');
    expect(result.stdout).toContain('login links: 4 generated, 0 failed, 0 skipped');
  });

  it('renew asks once with what it renews and why; answered n it sends nothing', async () => {
    const home = makeHome();
    await runCli(['login-link', String(ID), '--expiry-hours', '2'], { env: env(), home });
    // stdin is the terminal here: the accounts come from a file.
    const file = join(home, 'accounts.txt');
    writeFileSync(file, `${[0, 1, 2].map((offset) => ID + offset).join('\n')}\n`);
    const before = mock.deps.store.state.loginLinks.length;
    const renew = await runCli(['login-link', 'renew', '--from', file], { env: env(), tty: true, home, input: 'n\n' });
    expect(renew.exitCode).toBe(2);
    expect(renew.stdout).toContain(
      'This will renew 3 login links:\n  - 1 expiring within the window, 2 unknown to the ledgers\n  - replaces 2 links taxprep cannot see (made elsewhere or earlier)\n  - emails each link to its user: 3 emails\n',
    );
    expect(renew.stdout).toMatch(/these users from working:\n {4}1 issued by taxprep, valid until .+ \(in 2 hours\)\n/);
    expect(questions(renew.stdout)).toBe(1);
    expect(mock.deps.store.state.loginLinks.length).toBe(before);
  });
});

describe('in a pipe nothing is said or asked', () => {
  it('login-link and renew act at once, without a word before', async () => {
    const home = makeHome();
    const single = await runCli(['login-link', String(ID)], { env: env(), home });
    expect(single.exitCode).toBe(0);
    expect(single.stderr).not.toContain('This will');
    expect(single.stderr).not.toContain('Continue?');
    const renew = await runCli(['login-link', 'renew', '--from', '-', '--within', '8d', '--renew-unknown'], { env: env(), home, input: `${ID}\n${ID + 1}\n` });
    expect(renew.exitCode).toBe(0);
    expect(renew.stderr).toMatch(/^login links: 2 generated, 0 failed, 0 skipped/);
    expect(linksOf(ID)).toBe(2);
  });

  it('--yes on a terminal acts without a word before', async () => {
    const result = await runCli(['login-link', String(ID), '-y'], { env: env(), tty: true });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain('This will');
    expect(linksOf(ID)).toBe(1);
  });
});

describe('accounts create with a spouse invitation', () => {
  const create = ['accounts', 'create', '--email', 'ana@example.com', '--first-name', 'Ana', '--last-name', 'Lima', '--spouse-email', 'rui@example.com', '--spouse-first-name', 'Rui', '--spouse-last-name', 'Lima'];
  const created = () => mock.deps.store.state.accounts.some((account) => account.email === 'ana@example.com');

  it('says who is invited and asks on a terminal: n creates nothing, y creates the account', async () => {
    const no = await runCli(create, { env: env(), tty: true, input: 'n\n' });
    expect(no.exitCode).toBe(2);
    expect(no.stdout).toContain('This will create the account of ana@example.com\nand email the spouse, rui@example.com, an invitation with a login link.\n');
    expect(created()).toBe(false);

    const yes = await runCli(create, { env: env(), tty: true, input: 'y\n' });
    expect(yes.exitCode).toBe(0);
    expect(created()).toBe(true);
    expect(emailsTo('rui@example.com')).toBe(1);
  });

  it('asks nothing without an invitation, in a pipe, or with --yes', async () => {
    const withoutInvitation = await runCli([...create, '--no-spouse-invitation'], { env: env(), tty: true });
    expect(withoutInvitation.exitCode).toBe(0);
    expect(withoutInvitation.stdout).not.toContain('Continue?');
    await mock.deps.store.reset();
    const piped = await runCli(create, { env: env() });
    expect(piped.exitCode).toBe(0);
    expect(piped.stderr).toBe('');
    await mock.deps.store.reset();
    expect((await runCli([...create, '--yes'], { env: env(), tty: true })).exitCode).toBe(0);
  });
});
