import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { inProcess, makeHome, runCli, startCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * `taxprep accounts import` as staff run it: the real CLI against a real mock on 127.0.0.1, with
 * spreadsheet exports, resumes after SIGKILL and Ctrl-C, overlapping runs and a spent quota.
 */

let mock: RunningMock;
let home: string;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 2 })), rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.settings.faults.latencyMs = 0;
  mock.deps.settings.rateLimits = [];
  home = makeHome();
});

const env = (key: string = BATCH_KEYS.acme) => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: key });
const taxprep = (args: string[], options: { key?: string; input?: string } = {}) => runCli(args, { home, env: env(options.key), input: options.input });
const file = (name: string, content: string) => {
  const path = join(home, name);
  writeFileSync(path, content);
  return path;
};
const ledgerPath = () => join(home, '.local', 'share', 'taxprep', 'accounts.ndjson');
const ndjson = (text: string) => text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
/** Accounts at the mock per primary email (any case): the duplicate counter of every test here. */
const accountsByEmail = () => {
  const counts = new Map<string, number>();
  for (const account of mock.deps.store.state.accounts) counts.set(account.email.toLowerCase(), (counts.get(account.email.toLowerCase()) ?? 0) + 1);
  return counts;
};
const emails = (count: number) => Array.from({ length: count }, (_, index) => `client.new${index}@example.com`);
const csvOf = (list: string[]) => `email,first_name,last_name\n${list.map((email, index) => `${email},New,Client ${index}`).join('\n')}\n`;

describe('accounts import', () => {
  it('reads a spreadsheet export (BOM, CRLF, quotes, commas and newlines in quotes), resolves its own 409 as exists, and writes links and results', async () => {
    const csv = file(
      'clients.csv',
      '\uFEFFemail,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\r\n' +
        'jane@example.com,Jane,"Doe, Jr",,,,\r\n' +
        '"john@example.com","John ""JJ""",Smith,mary@example.com,Mary,Smith,false\r\n' +
        `client.${FIRST_ACCOUNT_ID}@example.com,Client,Old,,,,\r\n` +
        '"ann@example.com",Ann,"Lee\r\nAnn",,,,\r\n',
    );
    const first = await taxprep(['accounts', 'import', csv, '--links', join(home, 'links.csv'), '--results', join(home, 'results.csv')]);
    expect(first.stderr).toContain('line 5: last_name: must not contain control characters');
    expect(first.exitCode).toBe(2);
    expect(accountsByEmail().get('jane@example.com')).toBeUndefined();
    expect(existsSync(join(home, 'results.csv'))).toBe(false);

    writeFileSync(csv, readFileSync(csv, 'utf8').replace('"Lee\r\nAnn"', '"Lee"'));
    const run = await taxprep(['accounts', 'import', csv, '--links', join(home, 'links.csv'), '--results', join(home, 'results.csv')]);
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.trim().split('\n').map((line) => line.split('\t'));
    const jane = mock.deps.store.state.accounts.find((account) => account.email === 'jane@example.com')!;
    expect(jane.last_name).toBe('Doe, Jr');
    expect(mock.deps.store.state.accounts.find((account) => account.email === 'john@example.com')!.first_name).toBe('John "JJ"');
    expect(lines).toContainEqual(['created', 'line 2', 'jane@example.com', String(jane.id)]);
    expect(lines).toContainEqual(['exists', 'line 4', `client.${FIRST_ACCOUNT_ID}@example.com`, String(FIRST_ACCOUNT_ID)]);
    expect(run.stderr).toMatch(/^accounts: 3 created, 1 already there, 0 failed, 0 skipped in /);
    // send_invitation false: the spouse got no email.
    expect(mock.deps.store.state.outbox.filter((mail) => mail.to === 'mary@example.com')).toEqual([]);

    const links = readFileSync(join(home, 'links.csv'), 'utf8');
    expect(statSync(join(home, 'links.csv')).mode & 0o777).toBe(0o600);
    expect(links.split('\r\n')[0]).toBe('line,email,account_id,login_link,login_link_expires_at,spouse_email,spouse_login_link,spouse_login_link_expires_at');
    expect(links).toMatch(new RegExp(`\\r\\n2,jane@example.com,${jane.id},http[^,]+,20`));
    expect(readFileSync(ledgerPath(), 'utf8')).not.toMatch(/login_link|\/auth\//);

    const results = readFileSync(join(home, 'results.csv'), 'utf8').trim().split('\r\n');
    expect(results[0]).toBe('line,email,status,account_id,spouse_email,error_code,error_message');
    expect(results.slice(1).sort()).toEqual(
      [`2,jane@example.com,created,${jane.id},,,`, `4,client.${FIRST_ACCOUNT_ID}@example.com,exists,${FIRST_ACCOUNT_ID},,,`].concat(
        mock.deps.store.state.accounts.filter((account) => ['john@example.com', 'ann@example.com'].includes(account.email)).map((account) => `${account.email === 'john@example.com' ? 3 : 5},${account.email},created,${account.id},,,`),
      ).sort(),
    );

    // Run again: every row is skipped from the ledger, nothing is sent, the links file keeps its links.
    const requestsBefore = mock.deps.store.state.accounts.length;
    const again = await taxprep(['--json', 'accounts', 'import', csv, '--links', join(home, 'links.csv')]);
    expect(again.exitCode).toBe(0);
    expect(ndjson(again.stdout).map((line) => line.status)).toEqual(['skipped', 'skipped', 'skipped', 'skipped']);
    expect(ndjson(again.stdout)[0]).toEqual({ line: 2, email: 'jane@example.com', status: 'skipped', account_id: jane.id, spouse_email: null, error_code: null, error_message: null });
    expect(mock.deps.store.state.accounts.length).toBe(requestsBefore);
    expect(readFileSync(join(home, 'links.csv'), 'utf8')).toBe(links);
  });

  it('lists all 10 faults of a CSV with their line numbers, and sends nothing', async () => {
    const csv = file(
      'faults.csv',
      [
        'email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation',
        'not-an-email,A,B,,,,', // 2: email format
        `a@example.com,${'x'.repeat(51)},B,,,,`, // 3: name too long
        'b@example.com,"",B,,,,', // 4: first name missing
        'c@example.com,C,"Tab\tName",,,,', // 5: control character
        'd@example.com,D,D,spouse@example.com,,,', // 6: spouse incomplete
        'e@example.com,E,E,,,,true', // 7: send_invitation without a spouse
        'f@example.com,F,F,f@example.com,F,F,', // 8: spouse with the holder's email
        'A@EXAMPLE.COM,G,G,,,,', // 9: repeats line 3's email
        'h@example.com,H,H,i@example.com,I,I,maybe', // 10: send_invitation not a boolean
        'j@example.com,J', // 11: too few fields
        'k@example.com,K,K,,,,', // good
      ].join('\n') + '\n',
    );
    const result = await taxprep(['accounts', 'import', csv]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${csv} has 10 bad lines; nothing was sent:`);
    const expected = [
      'line 2: email: must be a valid email address',
      'line 3: first_name: must be at most 50 characters',
      'line 4: first_name: is required',
      'line 5: last_name: must not contain control characters',
      'line 6: spouse_first_name: is required',
      'line 7: send_invitation: applies to a spouse',
      "line 8: spouse_email: must differ from the primary account holder's email",
      "line 9: email: A@EXAMPLE.COM is already used on line 3",
      'line 10: send_invitation: must be true or false',
      'line 11: has 2 fields; the header has 7',
    ];
    for (const problem of expected) expect(result.stderr).toContain(problem);
    expect(accountsByEmail().get('k@example.com')).toBeUndefined();
    expect(existsSync(ledgerPath())).toBe(false);

    // --skip-invalid sends the good row and reports the 10 others as failed: exit 9.
    const skipping = await taxprep(['--json', 'accounts', 'import', csv, '--skip-invalid']);
    expect(skipping.exitCode).toBe(9);
    const outcomes = ndjson(skipping.stdout);
    expect(outcomes.filter((line) => line.status === 'failed').map((line) => [line.line, line.error_code])).toEqual(
      [2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((line) => [line, 'INVALID_ROW']),
    );
    expect(outcomes.find((line) => line.line === 12)).toMatchObject({ email: 'k@example.com', status: 'created' });
    expect(accountsByEmail().get('k@example.com')).toBe(1);
  });

  it("fails another partner's duplicate with its code, and prints a dry run without sending or locking", async () => {
    const input = `{"email":"beacon.client@example.com","first_name":"B","last_name":"C"}\n{"email":"fresh@example.com","first_name":"F","last_name":"R","spouse_email":"sp@example.com","spouse_first_name":"S","spouse_last_name":"P"}\n`;
    // A live lock on the ledger: a dry run does not wait for it.
    const lock = `${ledgerPath()}.lock`;
    mkdirSync(dirname(lock), { recursive: true });
    writeFileSync(lock, JSON.stringify({ pid: process.pid, hostname: hostname(), started_at: '2026-11-23T00:00:00Z' }));
    const dry = await taxprep(['--json', 'accounts', 'import', '-', '--dry-run'], { input });
    expect(dry.exitCode).toBe(0);
    expect(ndjson(dry.stdout)[1]).toEqual({
      line: 2,
      email: 'fresh@example.com',
      plan: 'create',
      body: { email: 'fresh@example.com', first_name: 'F', last_name: 'R', spouse: { email: 'sp@example.com', first_name: 'S', last_name: 'P' } },
    });
    expect(dry.stderr).toContain('dry run: 2 to create, 0 already in the ledger, 0 invalid; nothing was sent');
    expect(accountsByEmail().get('fresh@example.com')).toBeUndefined();

    // A second run while one holds the ledger: exit 10 after --lock-wait, nothing sent.
    const locked = await taxprep(['accounts', 'import', '-', '--lock-wait', '0'], { input });
    expect(locked.exitCode).toBe(10);
    expect(locked.stderr).toContain(`the accounts ledger ${ledgerPath()} is in use by taxprep (pid ${process.pid} on `);
    expect(accountsByEmail().get('fresh@example.com')).toBeUndefined();

    writeFileSync(lock, JSON.stringify({ pid: 2 ** 22 + 1, hostname: hostname(), started_at: '2026-11-23T00:00:00Z' }));
    const run = await taxprep(['--json', 'accounts', 'import', '-'], { input });
    expect(run.exitCode).toBe(9);
    const [beacon, fresh] = ndjson(run.stdout).sort((a, b) => a.line - b.line);
    expect(beacon).toMatchObject({ line: 1, status: 'failed', account_id: null, error_code: 'DUPLICATE_EMAIL' });
    expect(fresh).toMatchObject({ line: 2, status: 'created' });
    expect(run.stderr).toContain('failed: line 1 DUPLICATE_EMAIL');

    // An account made by `accounts create` is in the ledger (without its link): an import skips it.
    const made = await taxprep(['--json', 'accounts', 'create', '--email', 'solo@example.com', '--first-name', 'S', '--last-name', 'O']);
    expect(made.exitCode).toBe(0);
    const reimport = await taxprep(['--json', 'accounts', 'import', '-'], { input: '{"email":"SOLO@example.com","first_name":"S","last_name":"O"}\n' });
    expect(ndjson(reimport.stdout)).toEqual([{ line: 1, email: 'SOLO@example.com', status: 'skipped', account_id: JSON.parse(made.stdout).id, spouse_email: null, error_code: null, error_message: null }]);
    expect(readFileSync(ledgerPath(), 'utf8')).not.toMatch(/login_link|\/auth\//);
  });

  it('stops at the day quota with every row in the results, and resumes after the reset', async () => {
    mock.deps.settings.rateLimits = [{ limit: 3, windowSeconds: 86_400 }];
    const list = emails(6);
    const csv = file('clients.csv', csvOf(list));
    const results = join(home, 'results.ndjson');
    const stopped = await taxprep(['accounts', 'import', csv, '--results', results, '--concurrency', '1']);
    expect(stopped.exitCode).toBe(6);
    expect(stopped.stderr).toMatch(/accounts: 3 created, 0 already there, 0 failed, 0 skipped, 3 not sent in /);
    expect(stopped.stderr).toMatch(/allows no more until \d{4}-\d\d-\d\dT/);
    const lines = ndjson(readFileSync(results, 'utf8'));
    expect(lines.map((line) => line.line).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(lines.filter((line) => line.error_code === 'NOT_SENT').map((line) => line.status)).toEqual(['failed', 'failed', 'failed']);

    mock.deps.settings.rateLimits = [];
    const resumed = await taxprep(['accounts', 'import', csv, '--results', results]);
    expect(resumed.exitCode).toBe(0);
    expect(ndjson(readFileSync(results, 'utf8')).map((line) => line.status).sort()).toEqual(['created', 'created', 'created', 'skipped', 'skipped', 'skipped']);
    expect(list.map((email) => accountsByEmail().get(email))).toEqual([1, 1, 1, 1, 1, 1]);
  });
});

/** The CLI as a process this test can kill. */
function spawnImport(args: string[]) {
  return startCli(args, { home, env: env(), stdin: 'ignore' });
}

/** Intents in the ledger with no line settling them: requests a killed run left in flight. */
function openIntentsIn(entries: Array<{ type: string; id?: string; intent?: string }>): number {
  const settled = new Set(entries.map((entry) => entry.intent));
  return entries.filter((entry) => entry.type === 'intent' && !settled.has(entry.id)).length;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('accounts import, interrupted', () => {
  it.skipIf(inProcess)('survives a chain of SIGKILLs at random moments, mid-request included: every account created exactly once, every row in the results', async () => {
    const list = emails(40);
    const csv = file('clients.csv', csvOf(list));
    const results = join(home, 'results.csv');
    const args = ['accounts', 'import', csv, '--results', results, '--concurrency', '4', '--lock-wait', '10'];
    // Latency keeps requests in flight at the mock when the CLI dies.
    mock.deps.settings.faults.latencyMs = 30;
    const created = () => list.filter((email) => accountsByEmail().has(email)).length;
    let kills = 0;
    let openIntents = 0;
    for (let round = 0; round < 6 && created() < list.length - 4; round += 1) {
      const before = created();
      const { child, result } = spawnImport(args);
      // Some rounds die as soon as a request is at the mock, others a random while later.
      const extra = 1 + Math.floor(Math.random() * 4);
      await until(() => created() >= Math.min(before + extra, list.length) || child.exitCode !== null, 'a creation');
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 25)));
      child.kill('SIGKILL');
      const ended = await result;
      if (ended.signal === 'SIGKILL') kills += 1;
      openIntents += openIntentsIn(ndjson(readFileSync(ledgerPath(), 'utf8')));
    }
    expect(kills).toBeGreaterThanOrEqual(5);
    // Some kills came mid-request: their intents were left without an answer.
    expect(openIntents).toBeGreaterThan(0);
    // Requests already at the mock finish there: wait them out.
    await new Promise((resolve) => setTimeout(resolve, 100));
    mock.deps.settings.faults.latencyMs = 0;

    const clean = await runCli(args, { home, env: env() });
    expect(clean.exitCode).toBe(0);
    expect(list.map((email) => accountsByEmail().get(email))).toEqual(list.map(() => 1));
    const rows = readFileSync(results, 'utf8').trim().split('\r\n').slice(1).map((line) => line.split(','));
    expect(rows.map((row) => Number(row[0])).sort((a, b) => a - b)).toEqual(list.map((_, index) => index + 2));
    for (const row of rows) expect(['created', 'exists', 'skipped']).toContain(row[2]);
    const ids = new Map(mock.deps.store.state.accounts.map((account) => [account.email, account.id]));
    for (const row of rows) expect(Number(row[3])).toBe(ids.get(row[1]!));
  });

  it.skipIf(inProcess)('stops on Ctrl-C after the rows in flight, writes the ledger and exits 130; the next run finishes', async () => {
    const list = emails(30);
    const csv = file('clients.csv', csvOf(list));
    mock.deps.settings.faults.latencyMs = 30;
    const { child, result } = spawnImport(['accounts', 'import', csv, '--concurrency', '2']);
    await until(() => list.some((email) => accountsByEmail().has(email)), 'a creation');
    child.kill('SIGINT');
    const stopped = await result;
    expect(stopped.exitCode).toBe(130);
    expect(String(stopped.stderr)).toMatch(/interrupted: accounts: \d+ created, 0 already there, 0 failed, 0 skipped, \d+ not sent in /);
    const made = list.filter((email) => accountsByEmail().has(email));
    // Nothing in flight was abandoned: every account made is in the ledger.
    const ledger = ndjson(readFileSync(ledgerPath(), 'utf8'));
    expect(ledger.filter((entry) => entry.type === 'created').map((entry) => entry.email).sort()).toEqual(made.sort());
    expect(existsSync(`${ledgerPath()}.lock`)).toBe(false);

    mock.deps.settings.faults.latencyMs = 0;
    const rest = await runCli(['--json', 'accounts', 'import', csv], { home, env: env() });
    expect(rest.exitCode).toBe(0);
    expect(ndjson(rest.stdout).filter((line) => line.status === 'skipped')).toHaveLength(made.length);
    expect(list.map((email) => accountsByEmail().get(email))).toEqual(list.map(() => 1));
  });
});
