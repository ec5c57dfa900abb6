import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { cliCommandLine, makeHome, runCli, runScanned, startCli } from '../helpers/cli';
import { renewalRecipe } from '../helpers/cronRecipe';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * Cron-like runs of the real `bin/taxprep` processes against one mock: a run killed with SIGKILL
 * mid-batch and resumed without a duplicate link, and two overlapping runs on one ledger.
 */

const ACCOUNTS = 60;
let mock: RunningMock;
let home: string;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: ACCOUNTS })), rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.settings.faults.latencyMs = 0;
  home = makeHome();
});

function env(): Record<string, string> {
  return { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme };
}

/** The CLI as a process this test must be able to kill. */
function spawnTaxprep(args: string[]) {
  return startCli(args, { home, env: env(), stdin: 'ignore' });
}

const ledgerPath = () => join(home, '.local', 'share', 'taxprep', 'login-links.ndjson');
const linksByAccount = () => {
  const counts = new Map<number, number>();
  for (const link of mock.deps.store.state.loginLinks) counts.set(link.account_id, (counts.get(link.account_id) ?? 0) + 1);
  return counts;
};

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 15_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function writeIds(count: number): string {
  const path = join(home, 'clients.txt');
  writeFileSync(path, `${Array.from({ length: count }, (_, index) => FIRST_ACCOUNT_ID + index).join('\n')}\n`);
  return path;
}

describe('a run killed mid-batch', () => {
  it('resumes without generating any link twice, holding back the ones it cannot know about', async () => {
    const idsFile = writeIds(ACCOUNTS);
    mock.deps.settings.faults.latencyMs = 40;
    const args = ['--json', 'login-link', '--from', idsFile, '--concurrency', '3'];

    const killed = spawnTaxprep(args);
    await until(() => mock.deps.store.state.loginLinks.length >= 15, '15 links');
    killed.child.kill('SIGKILL');
    await killed.result;
    // Requests already at the mock finish there (the kill does not undo them): wait them out.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const issuedBeforeResume = mock.deps.store.state.loginLinks.length;
    expect(issuedBeforeResume).toBeLessThan(ACCOUNTS);
    expect(existsSync(`${ledgerPath()}.lock`)).toBe(true);

    // The dead run's lock is taken over; what it got links for is skipped, the rest sent once.
    const resumed = await runCli(args, { env: env(), home });
    expect(resumed.stderr).toContain('Resuming the unfinished run of this batch from');
    const lines = resumed.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(ACCOUNTS);
    const skipped = lines.filter((line) => line.skipped?.reason === 'done_in_interrupted_run');
    const uncertain = lines.filter((line) => line.error?.code === 'LINK_STATE_UNCERTAIN');
    const issued = lines.filter((line) => 'login_link' in line);
    expect(skipped.length + uncertain.length + issued.length).toBe(ACCOUNTS);
    expect(skipped.length).toBeGreaterThanOrEqual(10);
    expect(resumed.exitCode).toBe(uncertain.length > 0 ? 9 : 0);

    const counts = linksByAccount();
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    for (const line of issued) expect(counts.get(line.account_id)).toBe(1);
    for (const line of skipped) expect(counts.get(line.input.account_id)).toBe(1);

    if (uncertain.length > 0) {
      const settled = await runCli([...args, '--reissue-uncertain'], { env: env(), home });
      expect(settled.exitCode).toBe(0);
      const again = settled.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(again.filter((line) => 'login_link' in line).map((line) => line.account_id).sort()).toEqual(uncertain.map((line) => line.input.account_id).sort());
    }
    expect(existsSync(`${ledgerPath()}.lock`)).toBe(false);
    expect(readFileSync(ledgerPath(), 'utf8')).toContain('"type":"run_end"');
  });
});

describe('overlapping runs', () => {
  it('the second run exits 10 naming the first, sending nothing; after the first ends it finds every link fresh', async () => {
    const idsFile = writeIds(20);
    mock.deps.settings.faults.latencyMs = 100;
    const renew = ['login-link', 'renew', '--from', idsFile, '--within', '24h', '--concurrency', '1', '--renew-unknown'];

    const first = spawnTaxprep(renew);
    await until(() => existsSync(`${ledgerPath()}.lock`), 'the lock file');
    const second = await runCli([...renew, '--lock-wait', '0'], { env: env(), home });
    expect(second.exitCode).toBe(10);
    expect(second.stderr).toContain(`error: the login-link ledger ${ledgerPath()} is in use by taxprep (pid ${first.child.pid} on `);
    expect(second.stderr).toContain('nothing was sent');
    expect(second.stdout).toBe('');

    const firstResult = await first.result;
    expect(firstResult.exitCode).toBe(0);
    expect(mock.deps.store.state.loginLinks).toHaveLength(20);

    mock.deps.settings.faults.latencyMs = 0;
    const later = await runCli(renew, { env: env(), home });
    expect(later.exitCode).toBe(0);
    expect(later.stderr).toMatch(/login links: 0 generated, 0 failed, 20 skipped/);
    expect(mock.deps.store.state.loginLinks).toHaveLength(20);
  });
});

describe("the cron recipe of docs/cron.md, run as cron runs it", () => {
  function recipe(clients: string): string {
    const script = renewalRecipe(cliCommandLine(), clients);
    expect(script).toBeDefined();
    return script!;
  }

  it('is quiet while all is well, adds nothing for fresh clients, keeps the links private and mails what failed', async () => {
    await runCli(['profiles', 'add', '--insecure-storage', 'cron', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, input: `${BATCH_KEYS.acme}\n` });
    const clients = join(home, 'clients.csv');
    writeFileSync(clients, `account_id\n${FIRST_ACCOUNT_ID}\n${FIRST_ACCOUNT_ID + 1}\n`);
    const script = join(home, 'taxprep-renew');
    writeFileSync(script, recipe(clients), { mode: 0o755 });
    // cron: no terminal (a session of its own), no stdin, an environment of a few variables.
    const state = join(home, '.local', 'state', 'taxprep');
    const cron = () =>
      runScanned(script, [], { env: { PATH: '/usr/bin:/bin', HOME: home, SHELL: '/bin/sh', LOGNAME: 'cron' }, extendEnv: false, stdin: 'ignore', detached: true, files: [join(state, 'links.ndjson'), join(state, 'renew.log')] });
    const links = () => readFileSync(join(state, 'links.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));

    // Accounts the ledgers do not know are left alone (and mailed) until a person renews them once.
    const unknown = await cron();
    expect(unknown.exitCode).toBe(9);
    expect(String(unknown.stdout)).toContain(`failed: ${FIRST_ACCOUNT_ID} LINK_UNKNOWN`);
    expect(mock.deps.store.state.loginLinks).toHaveLength(0);
    const byHand = await runCli(['login-link', 'renew', '--from', clients, '--within', '24h', '--renew-unknown', '--json'], { env: { TAXPREP_PROFILE: 'cron' }, home });
    expect(byHand.exitCode).toBe(0);
    writeFileSync(join(state, 'links.ndjson'), byHand.stdout, { mode: 0o600 });

    const first = await cron();
    expect([first.exitCode, first.stdout, first.stderr]).toEqual([0, '', '']);
    expect(links().map((line) => line.account_id).sort()).toEqual([FIRST_ACCOUNT_ID, FIRST_ACCOUNT_ID + 1]);
    expect(statSync(join(state, 'links.ndjson')).mode & 0o777).toBe(0o600);

    const second = await cron();
    expect([second.exitCode, second.stdout, second.stderr]).toEqual([0, '', '']);
    expect(links()).toHaveLength(2);

    writeFileSync(clients, `account_id\n${FIRST_ACCOUNT_ID}\n${FIRST_ACCOUNT_ID + 1}\n99999\n`);
    const failing = await cron();
    expect(failing.exitCode).toBe(9);
    const mail = String(failing.stdout);
    expect(mail).toContain(`taxprep login-link renew exited 9 (see taxprep help exit-codes); this run, also in ${join(state, 'renew.log')}:`);
    expect(mail).toContain('failed: 99999 LINK_UNKNOWN');
    const log = readFileSync(join(state, 'renew.log'), 'utf8');
    expect(log.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ login links: /gm)).toHaveLength(4);
    expect(log).toContain('login links: 0 generated, 1 failed, 2 skipped');
    expect(log).toContain('failed: 99999 LINK_UNKNOWN');
    expect(links().at(-1)).toMatchObject({ input: { account_id: 99999 }, error: { code: 'LINK_UNKNOWN' } });
    const sent = await runCli(['login-link', 'renew', '--from', clients, '--within', '24h', '--renew-unknown'], { env: { TAXPREP_PROFILE: 'cron' }, home });
    expect(sent.stderr).toContain('failed: 99999 ACCOUNT_NOT_FOUND');
  });

  it('makes a links file that the shell just created for it private, whatever the umask', async () => {
    const out = join(home, 'links.ndjson');
    const command = `umask 022; exec ${cliCommandLine(['--json', 'login-link', String(FIRST_ACCOUNT_ID), String(FIRST_ACCOUNT_ID + 1)])} > ${out}`;
    const result = await runScanned('/bin/sh', ['-c', command], { env: { PATH: '/usr/bin:/bin', HOME: home, ...env() }, extendEnv: false, stdin: 'ignore', files: [out] });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('"login_link"');
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });
});
