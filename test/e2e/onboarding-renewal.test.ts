import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommandLine, makeHome, registerSecret, runCli, runScanned } from '../helpers/cli';
import { renewalRecipe } from '../helpers/cronRecipe';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Issue 21, case 1: renewal right after onboarding must not email every client again and kill the
 * links just handed out. A real `serve --mock`, 15 clients imported (one with an invited spouse),
 * then the renewal recipe of docs/cron.md at once, after an `accounts create`, and 7 days later on the
 * mock's clock. Emails are counted in the mock's outbox, links in its login-link list.
 */

let mock: ServedMock;
let home: string;
const CLIENTS = 15;
const DAY = 24 * 3_600_000;

beforeAll(async () => {
  mock = await startServeMock();
  for (const key of Object.values(mock.keys)) registerSecret(key);
  home = makeHome();
  const added = await runCli(['profiles', 'add', '--insecure-storage', 'cron', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, input: `${mock.keys['Acme production key']}\n` });
  expect(added.exitCode).toBe(0);
});
afterAll(async () => {
  await mock?.stop();
});

async function control<T>(path: string, init?: { method: string; body: unknown }): Promise<T> {
  const response = await fetch(`${mock.appUrl}/_mock${path}`, init && { method: init.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

interface MockLink {
  account_id: number;
  user_email: string;
  created_at: string;
  state: string;
}

const loginLinkEmails = async () => (await control<{ emails: Array<{ kind: string }> }>('/outbox')).emails.filter((email) => email.kind === 'login_link').length;
const links = async () => (await control<{ login_links: MockLink[] }>('/login-links')).login_links;
const mockNow = async () => (await control<{ now: string }>('/clock')).now;
const advance = (by: string) => control('/clock', { method: 'POST', body: { advance: by } });

/** The recipe of docs/cron.md as cron runs it: no terminal, a bare environment, TAXPREP_NOW set to the mock's clock. */
async function recipe(clients: string, now: string) {
  const script = join(home, 'taxprep-renew');
  const text = renewalRecipe(cliCommandLine(), clients);
  expect(text).toBeDefined();
  writeFileSync(script, text!, { mode: 0o755 });
  return runScanned(script, [], { env: { PATH: '/usr/bin:/bin', HOME: home, TAXPREP_NOW: now }, extendEnv: false, stdin: 'ignore' });
}

describe('from onboarding to renewal', () => {
  it('renews nothing right after an import or an accounts create, and every link once 7 days later', async () => {
    const clients = join(home, 'clients.csv');
    const rows = Array.from({ length: CLIENTS }, (_, index) =>
      index === 2 ? `client${index}@onboard.example.com,Client,Number${index},spouse${index}@onboard.example.com,Spouse,Number${index},` : `client${index}@onboard.example.com,Client,Number${index},,,,`,
    );
    writeFileSync(clients, `email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\n${rows.join('\n')}\n`);
    const env = { TAXPREP_PROFILE: 'cron' };
    const imported = await runCli(['accounts', 'import', clients, '--links', join(home, 'links.csv'), '--results', join(home, 'results.csv')], { home, env });
    expect(imported.exitCode).toBe(0);
    expect(imported.stderr).toContain(`accounts: ${CLIENTS} created`);
    const emailsAfterImport = await loginLinkEmails();
    const handedOut = (await links()).filter((link) => link.user_email.endsWith('@onboard.example.com'));
    expect(handedOut).toHaveLength(CLIENTS + 1);

    // The dry run knows every link: the ones that came with the accounts.
    const dryRun = await runCli(['login-link', 'renew', '--from', clients, '--within', '24h', '--dry-run'], { home, env: { ...env, TAXPREP_NOW: await mockNow() } });
    expect(dryRun.exitCode).toBe(0);
    expect(dryRun.stderr).toContain(`dry run: 0 to generate, ${CLIENTS + 1} fresh, 0 uncertain; nothing was sent`);

    const atOnce = await recipe(clients, await mockNow());
    expect([atOnce.exitCode, atOnce.stdout, atOnce.stderr]).toEqual([0, '', '']);
    expect(await loginLinkEmails()).toBe(emailsAfterImport);
    expect((await links()).filter((link) => link.user_email.endsWith('@onboard.example.com') && link.state !== 'valid')).toEqual([]);

    // An account made by `accounts create` a minute before the recipe runs.
    const created = await runCli(['--json', 'accounts', 'create', '--email', 'late@onboard.example.com', '--first-name', 'Late', '--last-name', 'Comer'], { home, env });
    expect(created.exitCode).toBe(0);
    writeFileSync(clients, 'late@onboard.example.com,Late,Comer,,,,\n', { flag: 'a' });
    await advance('1m');
    const minuteLater = await recipe(clients, await mockNow());
    expect([minuteLater.exitCode, minuteLater.stdout, minuteLater.stderr]).toEqual([0, '', '']);
    expect(await loginLinkEmails()).toBe(emailsAfterImport);

    await advance('7d');
    const weekLater = await recipe(clients, await mockNow());
    expect([weekLater.exitCode, weekLater.stdout, weekLater.stderr]).toEqual([0, '', '']);
    const users = CLIENTS + 2;
    expect(await loginLinkEmails()).toBe(emailsAfterImport + users);
    const renewed = (await links()).filter((link) => link.user_email.endsWith('@onboard.example.com') && link.state === 'valid');
    expect(new Set(renewed.map((link) => link.user_email)).size).toBe(users);
    expect(renewed).toHaveLength(users);

    // Once: the next run finds every new link fresh.
    const again = await recipe(clients, await mockNow());
    expect([again.exitCode, again.stdout, again.stderr]).toEqual([0, '', '']);
    expect(await loginLinkEmails()).toBe(emailsAfterImport + users);
  });

  it('after an import with --skip-invalid: its results file names the invited spouse, and renew --skip-invalid reads its file as the import did', async () => {
    const own = makeHome();
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys['Acme production key']! };
    const clients = join(own, 'clients.csv');
    writeFileSync(
      clients,
      'email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\n' +
        'skip1@onboard.example.com,Ann,One,skipspouse@onboard.example.com,Sam,One,\n' +
        'not an email,Bad,Line,,,,\n' +
        'skip2@onboard.example.com,Bo,Two,,,,\n',
    );
    const results = join(own, 'results.csv');
    const imported = await runCli(['accounts', 'import', clients, '--skip-invalid', '--results', results], { home: own, env });
    expect(imported.exitCode).toBe(9);
    const now = await mockNow();
    const planOf = (stdout: string) => stdout.trim().split('\n').map((line) => JSON.parse(line) as { input: { user_email?: string }; plan: { action: string } });

    // The results file: both accounts and the invited spouse, whose link came with the account.
    const fromResults = await runCli(['--json', 'login-link', 'renew', '--from', results, '--dry-run'], { home: own, env: { ...env, TAXPREP_NOW: now } });
    expect(fromResults.exitCode, fromResults.stderr).toBe(0);
    expect(planOf(fromResults.stdout).map((line) => [line.input.user_email ?? 'holder', line.plan.action])).toEqual([
      ['holder', 'skip'],
      ['skipspouse@onboard.example.com', 'skip'],
      ['holder', 'skip'],
    ]);

    // The import's own file: refused as before without the flag, its bad line named.
    const refused = await runCli(['login-link', 'renew', '--from', clients], { home: own, env: { ...env, TAXPREP_NOW: now } });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`${clients} has 1 bad line; nothing was sent`);
    expect(refused.stderr).toContain('--skip-invalid');
    // With it: the bad line said on stderr and left out, the rest renewed as due (nothing is due yet).
    const skipped = await runCli(['login-link', 'renew', '--from', clients, '--skip-invalid'], { home: own, env: { ...env, TAXPREP_NOW: now } });
    expect(skipped.exitCode).toBe(9);
    expect(skipped.stdout).toBe('');
    expect(skipped.stderr).toContain(`warning: ${clients} has 1 bad line, left out (--skip-invalid):`);
    expect(skipped.stderr).toContain('line 3 names not an email, whose account the accounts ledger does not know');
    expect(skipped.stderr).toMatch(/login links: 0 generated, 0 failed, 3 skipped/);
    const dryRun = await runCli(['login-link', 'renew', '--from', clients, '--skip-invalid', '--dry-run'], { home: own, env: { ...env, TAXPREP_NOW: now } });
    expect(dryRun.exitCode).toBe(0);
    expect(dryRun.stderr).toContain('dry run: 0 to generate, 3 fresh, 0 uncertain; nothing was sent');
  });

  it('recognises an account created before creation links entered the ledger by its creation time, for 7 days', async () => {
    const own = makeHome();
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys['Acme production key']! };
    const created = await runCli(['--json', 'accounts', 'create', '--email', 'before@onboard.example.com', '--first-name', 'Be', '--last-name', 'Fore'], { home: own, env });
    expect(created.exitCode).toBe(0);
    const id = String(JSON.parse(created.stdout).id);
    // As before this change: the accounts ledger knows the account, the login-link ledger nothing.
    rmSync(join(own, '.local', 'share', 'taxprep', 'login-links.ndjson'));
    const now = Date.now();
    const plan = async (at: number) => runCli(['--json', 'login-link', 'renew', '--from', '-', '--within', '24h', '--dry-run'], { home: own, env: { ...env, TAXPREP_NOW: new Date(at).toISOString() }, input: `${id}\n` });
    expect(JSON.parse((await plan(now)).stdout).plan).toMatchObject({ action: 'skip', reason: 'fresh' });
    expect(JSON.parse((await plan(now + 6.5 * DAY)).stdout).plan).toMatchObject({ action: 'generate', reason: 'expiring' });
    expect(JSON.parse((await plan(now + 7.1 * DAY)).stdout).plan).toMatchObject({ action: 'generate', reason: 'expired' });
  });

  it('an account the ledgers do not know: the dry run names it, a pipe leaves it alone without --renew-unknown, a terminal asks', async () => {
    const own = makeHome();
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys['Acme production key']! };
    const dryRun = await runCli(['login-link', 'renew', '--from', '-', '--dry-run'], { home: own, env, input: '1001\n' });
    expect(dryRun.stderr).toContain('1 account unknown to the ledgers (1001): renewing would replace links taxprep cannot see; on a terminal it asks first, in a pipe it needs --renew-unknown.');
    // The dry run in a pipe plans what the run in a pipe does: leave the link alone.
    expect(dryRun.stdout).toBe('hold\t1001\t-\tunknown\n');
    expect(dryRun.stderr).toContain('dry run: 0 to generate, 0 fresh, 0 uncertain, 1 unknown left alone; nothing was sent');
    const dryJson = await runCli(['--json', 'login-link', 'renew', '--from', '-', '--dry-run'], { home: own, env, input: '1001\n' });
    expect(JSON.parse(dryJson.stdout).plan).toEqual({ action: 'hold', reason: 'unknown' });
    const forcedPlan = await runCli(['--json', 'login-link', 'renew', '--from', '-', '--dry-run', '--renew-unknown'], { home: own, env, input: '1001\n' });
    expect(JSON.parse(forcedPlan.stdout).plan).toEqual({ action: 'generate', reason: 'unknown' });
    const emails = await loginLinkEmails();

    const piped = await runCli(['--json', 'login-link', 'renew', '--from', '-'], { home: own, env, input: '1001\n' });
    expect(piped.exitCode).toBe(9);
    expect(JSON.parse(piped.stdout).error).toMatchObject({ code: 'LINK_UNKNOWN' });
    expect(piped.stderr).toContain('--renew-unknown');
    expect(await loginLinkEmails()).toBe(emails);

    const ids = join(own, 'ids.txt');
    writeFileSync(ids, '1001\n');
    const asked = await runCli(['login-link', 'renew', '--from', ids], { home: own, env, tty: true, input: 'y\n' });
    expect(asked.exitCode).toBe(0);
    expect(asked.stdout).toContain('  - replaces a link taxprep cannot see (made elsewhere or earlier)\n');
    expect(await loginLinkEmails()).toBe(emails + 1);

    const forced = await runCli(['login-link', 'renew', '--from', '-', '--renew-unknown', '--ledger', join(own, 'other.ndjson')], { home: own, env, input: '1001\n' });
    expect(forced.exitCode).toBe(0);
    expect(await loginLinkEmails()).toBe(emails + 2);
  });
});
