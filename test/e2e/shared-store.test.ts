import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors';
import { CRASH_AT_VARIABLE } from '../../src/lib/crashPoints';
import { parseFixture } from '../../src/mock/fixture';
import { connectionConfig } from '../../src/state/connection';
import { cliCommandLine, makeHome, runCli, runScanned, startCli, type CliResult } from '../helpers/cli';
import { renewalRecipe } from '../helpers/cronRecipe';
import { startMock, type RunningMock } from '../helpers/mock';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * Issue 34: a partner's state in PostgreSQL, shared by every operator's machine. "Machines" are
 * home directories of their own (each its own profile file and data directory) on one key and one
 * store: the onboarding-then-renewal scenario of the issue, two batches at once on one ledger, a
 * bulk command killed on one machine and run again on another. Each test has a database of its own.
 */

const skipped = postgresUnavailable();
if (skipped !== undefined) console.warn(`test/e2e/shared-store.test.ts skipped: ${skipped}`);

let postgres: TestPostgres;
let mock: RunningMock;
let store: string;

beforeAll(async () => {
  if (skipped !== undefined) return;
  postgres = await startTestPostgres();
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 3 })), rateLimits: [] });
});
afterAll(async () => {
  await mock?.close();
  await postgres?.stop();
});
beforeEach(async () => {
  if (skipped !== undefined) return;
  await mock.deps.store.reset();
  mock.deps.requestLog.clear();
  store = await postgres.freshDatabase();
});

/** A machine: a home of its own with a profile `team` on the shared store (its password in the machine's ~/.pgpass). */
async function machine(): Promise<{ home: string; run: (args: string[], env?: Record<string, string>) => Promise<CliResult> }> {
  const home = makeHome();
  if (process.env.PGPASSFILE !== undefined) writeFileSync(join(home, '.pgpass'), readFileSync(process.env.PGPASSFILE), { mode: 0o600 });
  const env = { PGPASSFILE: '' };
  const added = await runCli(['profiles', 'add', 'team', '--insecure-storage', '--base-url', mock.baseUrl, '--api-key-stdin', '--no-verify', '--state-url', store], { home, input: `${BATCH_KEYS.acme}\n`, env });
  expect(added.exitCode).toBe(0);
  return { home, run: (args, extra = {}) => runCli(args, { home, env: { TAXPREP_PROFILE: 'team', ...env, ...extra } }) };
}

async function rows(sql: string, parameters: unknown[] = []): Promise<Array<Record<string, any>>> {
  const client = new pg.Client(connectionConfig(store, process.env));
  await client.connect();
  try {
    return (await client.query(sql, parameters)).rows;
  } finally {
    await client.end();
  }
}

const requests = (method: string, pattern: RegExp) => mock.deps.requestLog.entries().filter((entry) => entry.method === method && pattern.test(entry.path.split('?')[0]!));
const linksOf = (id: string) => mock.deps.store.state.loginLinks.filter((link) => link.account_id === Number(id)).length;
const linkEmails = () => mock.deps.store.state.outbox.filter((email) => email.kind === 'login_link').length;
const ndjson = (text: string): Array<Record<string, any>> => text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));

describe.skipIf(skipped !== undefined)('a shared store on two and three machines', () => {
  it('machine A imports 10 clients; machine B runs the renewal recipe of docs/cron.md: 0 emails, 0 failures, exit 0', async () => {
    const a = await machine();
    const b = await machine();
    const clients = join(a.home, 'clients.csv');
    writeFileSync(clients, `email,first_name,last_name\n${Array.from({ length: 10 }, (_, index) => `team${index}@onboard.example.com,Team,Client${index}`).join('\n')}\n`);
    const imported = await a.run(['accounts', 'import', clients, '--links', join(a.home, 'links.csv')]);
    expect(imported.exitCode).toBe(0);
    expect(imported.stderr).toContain('accounts: 10 created');
    const emails = linkEmails();

    // B knows A's clients, and the links they were sent.
    const listed = await b.run(['--json', 'login-link', 'ledger']);
    expect(listed.exitCode).toBe(0);
    expect(JSON.parse(listed.stdout).links).toHaveLength(10);
    expect(JSON.parse(listed.stdout).ledger).toBe(`${store} (namespace "default")`);

    // The cron server's clients file, and its recipe as cron runs it: a bare environment, the profile in the recipe.
    const ownClients = join(b.home, 'clients.csv');
    writeFileSync(ownClients, readFileSync(clients));
    const recipe = renewalRecipe(cliCommandLine(), ownClients)!.replace('TAXPREP_PROFILE=cron', 'TAXPREP_PROFILE=team');
    const script = join(b.home, 'taxprep-renew');
    writeFileSync(script, recipe, { mode: 0o755 });
    const renewed = await runScanned(script, [], { env: { PATH: '/usr/bin:/bin', HOME: b.home }, extendEnv: false, stdin: 'ignore' });
    expect([renewed.exitCode, renewed.stdout, renewed.stderr]).toEqual([0, '', '']);
    expect(linkEmails()).toBe(emails);
    expect(requests('POST', /\/login-links?$/)).toEqual([]);
  });

  it('two batches on one ledger from two machines: one works, the other waits --lock-wait and exits 10 naming the holder', async () => {
    const a = await machine();
    const b = await machine();
    // A's writes held back a second each: it holds the ledger's lock for a few seconds.
    const slow = startCli(['--json', 'login-link', String(FIRST_ACCOUNT_ID), String(FIRST_ACCOUNT_ID + 1)], { home: a.home, env: { TAXPREP_PROFILE: 'team', PGPASSFILE: '', TAXPREP_TEST_HOLD_WRITES: '1000' } });
    let holder: Array<Record<string, any>> = [];
    while (holder.length === 0) holder = await rows("SELECT pid, hostname FROM taxprep_state.lock_holders WHERE name = 'ledger:login-links'").catch(() => []);
    const waited = await b.run(['login-link', String(FIRST_ACCOUNT_ID + 2), '--lock-wait', '1']).finally(() => slow.result.catch(() => undefined));
    expect(waited.exitCode).toBe(EXIT.LOCKED);
    expect(waited.stderr).toMatch(
      new RegExp(`^error: the login-link ledger postgres://postgres@127\\.0\\.0\\.1:\\d+/taxprep_test_[0-9a-f]+ \\(namespace "default"\\) is in use by taxprep \\(pid ${holder[0]!.pid} on ${holder[0]!.hostname}, started [0-9T:.-]+Z\\); nothing was sent`),
    );
    expect((await slow.result).exitCode).toBe(0);
    expect(requests('POST', /\/login-links?$/)).toHaveLength(2);
    // Released with its connection: B now works.
    expect((await b.run(['login-link', String(FIRST_ACCOUNT_ID + 2)])).exitCode).toBe(0);
  });

  it('state import, run twice: a dry run first, the newer link per user wins, nothing copied twice; export writes files back', async () => {
    const a = await machine();
    const b = await machine();
    const ids = [FIRST_ACCOUNT_ID, FIRST_ACCOUNT_ID + 1].map(String);
    // A worked on files before the team had a store; B made a newer link for the first account in the store.
    const local = await runCli(['login-link', ...ids], { home: a.home, env: { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme } });
    expect(local.exitCode).toBe(0);
    expect((await b.run(['login-link', ids[0]!])).exitCode).toBe(0);
    const newest = mock.deps.store.state.loginLinks.filter((link) => link.account_id === FIRST_ACCOUNT_ID).at(-1)!;

    const move = (args: string[]) => a.run(['--json', 'state', ...args]);
    const dryRun = await move(['import', '--dry-run']);
    expect(dryRun.exitCode).toBe(0);
    expect(JSON.parse(dryRun.stdout).ledgers).toEqual([
      { ledger: 'accounts', copied: 0, already_there: 0 },
      { ledger: 'login-link', copied: 1, already_there: 1 },
      { ledger: 'documents', copied: 0, already_there: 0 },
      // This machine has no hooks, no watch state and no outbox (test/e2e/team-watch.test.ts moves them).
      { ledger: 'hooks', copied: 0, already_there: 0 },
      { ledger: 'watch state', copied: 0, already_there: 0 },
      { ledger: 'webhook outbox', copied: 0, already_there: 0 },
      { ledger: 'learned rules', copied: 0, already_there: 0 },
    ]);
    expect(await rows("SELECT 1 FROM taxprep_state.ledger_lines WHERE kind = 'login-links'")).toHaveLength(2);
    expect(JSON.parse((await move(['import'])).stdout).ledgers[1]).toEqual({ ledger: 'login-link', copied: 1, already_there: 1 });
    expect(JSON.parse((await move(['import'])).stdout).ledgers[1]).toEqual({ ledger: 'login-link', copied: 0, already_there: 2 });
    const shared = JSON.parse((await b.run(['--json', 'login-link', 'ledger'])).stdout).links;
    expect(shared).toHaveLength(2);
    expect(shared.find((link: { account_id: number }) => link.account_id === FIRST_ACCOUNT_ID).created_at).toBe(newest.created_at);

    const exported = join(b.home, 'exported');
    expect(JSON.parse((await b.run(['--json', 'state', 'export', '--to', exported])).stdout).ledgers[1]).toEqual({ ledger: 'login-link', copied: 2, already_there: 0 });
    const fromFiles = await runCli(['--json', 'login-link', 'ledger', '--ledger', join(exported, 'login-links.ndjson')], { home: b.home });
    expect(JSON.parse(fromFiles.stdout).links.map((link: { created_at: string }) => link.created_at).sort()).toEqual(shared.map((link: { created_at: string }) => link.created_at).sort());
  });

  it('the database down: exit 13 naming the store without its password and what to do; nothing sent', async () => {
    const a = await machine();
    const down = 'postgres://postgres:secret-pw@127.0.0.1:1/nowhere';
    const result = await a.run(['login-link', String(FIRST_ACCOUNT_ID)], { TAXPREP_STATE_URL: down });
    expect(result.exitCode).toBe(EXIT.STATE_STORE);
    expect(result.stderr).toContain('error: the shared state store postgres://postgres@127.0.0.1:1/nowhere could not be reached (ECONNREFUSED)');
    expect(result.stderr).toContain('run again when it is back');
    expect(result.stderr).not.toContain('secret-pw');
    expect(requests('POST', /\/login-links?$/)).toEqual([]);
  });

  it('a schema newer than this taxprep knows is refused, never written to', async () => {
    const a = await machine();
    expect((await a.run(['login-link', 'ledger'])).exitCode).toBe(0);
    await rows("UPDATE taxprep_state.schema_versions SET version = 99 WHERE area = 'core'");
    const result = await a.run(['login-link', String(FIRST_ACCOUNT_ID)]);
    expect(result.exitCode).toBe(EXIT.STATE_STORE);
    expect(result.stderr).toMatch(/has schema core version 99, newer than this taxprep knows \(1\); nothing was written/);
    expect(requests('POST', /\/login-links?$/)).toEqual([]);
    expect(await rows('SELECT 1 FROM taxprep_state.ledger_lines')).toEqual([]);
  });

  it('doctor checks the store; a role with DML only works (its password from PGPASSWORD), one without INSERT is named', async () => {
    const a = await machine();
    const doctor = async (env: Record<string, string> = {}) => {
      const result = await a.run(['--json', 'doctor', '--offline'], env);
      return { exitCode: result.exitCode, state: JSON.parse(result.stdout).checks.filter((check: { group: string }) => check.group === 'state').map((check: { name: string; status: string }) => `${check.name} ${check.status}`) };
    };
    // A new database: the schema is made by the first command that uses it (or `state migrate`).
    expect(await doctor()).toEqual({ exitCode: 0, state: ['reachable ok', 'schema warn', 'clock ok'] });
    expect((await a.run(['state', 'migrate'])).exitCode).toBe(0);
    expect(await doctor()).toEqual({ exitCode: 0, state: ['reachable ok', 'schema ok', 'permissions ok', 'clock ok'] });

    const database = new URL(store).pathname.slice(1);
    await rows(`CREATE ROLE operator_${database} LOGIN PASSWORD 'op-secret'`);
    await rows(`GRANT USAGE ON SCHEMA taxprep_state TO operator_${database}`);
    await rows(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA taxprep_state TO operator_${database}`);
    await rows(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA taxprep_state TO operator_${database}`);
    const asOperator = { TAXPREP_STATE_URL: store.replace('postgres@', `operator_${database}@`), PGPASSWORD: 'op-secret' };
    expect(await doctor(asOperator)).toEqual({ exitCode: 0, state: ['reachable ok', 'schema ok', 'permissions ok', 'clock ok'] });
    const linked = await a.run(['login-link', String(FIRST_ACCOUNT_ID)], asOperator);
    expect(linked.exitCode).toBe(0);
    expect(linked.stderr).not.toContain('op-secret');

    await rows(`REVOKE INSERT ON taxprep_state.ledger_lines FROM operator_${database}`);
    expect(await doctor(asOperator)).toEqual({ exitCode: EXIT.STATE_STORE, state: ['reachable ok', 'schema ok', 'permissions fail', 'clock ok'] });
    const refused = await a.run(['login-link', String(FIRST_ACCOUNT_ID + 1)], asOperator);
    expect(refused.exitCode).toBe(EXIT.STATE_STORE);
    expect(refused.stderr).toContain('refused the role a permission');
    expect(requests('POST', /\/login-links?$/)).toHaveLength(1);
  });

  it("doctor checks the role's rights on every table the migrations make, the watch's too: one without watch_lease is named", async () => {
    const a = await machine();
    expect((await a.run(['state', 'migrate'])).exitCode).toBe(0);
    const role = `watchless_${new URL(store).pathname.slice(1)}`;
    await rows(`CREATE ROLE ${role} LOGIN PASSWORD 'op-secret'`);
    await rows(`GRANT USAGE ON SCHEMA taxprep_state TO ${role}`);
    await rows(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA taxprep_state TO ${role}`);
    const tables = (await rows(`SELECT tablename FROM pg_tables WHERE schemaname = 'taxprep_state' AND tablename <> 'watch_lease'`)).map((row) => row.tablename as string);
    expect(tables).toContain('outbox_claims');
    for (const table of tables) await rows(`GRANT SELECT, INSERT, UPDATE, DELETE ON taxprep_state.${table} TO ${role}`);
    const doctor = async () => {
      const result = await a.run(['--json', 'doctor', '--offline'], { TAXPREP_STATE_URL: store.replace('postgres@', `${role}@`), PGPASSWORD: 'op-secret' });
      const permissions = (JSON.parse(result.stdout).checks as Array<{ group: string; name: string; status: string; detail: string }>).find((check) => check.group === 'state' && check.name === 'permissions')!;
      return { exitCode: result.exitCode, status: permissions.status, detail: permissions.detail };
    };
    expect(await doctor()).toEqual({ exitCode: EXIT.STATE_STORE, status: 'fail', detail: 'the role lacks SELECT, INSERT, UPDATE, DELETE on taxprep_state.watch_lease' });

    // The hooks kept from a role that only onboards clients, as docs/team.md advises: not a failure; half granted: what is missing.
    await rows(`GRANT SELECT, INSERT, UPDATE, DELETE ON taxprep_state.watch_lease TO ${role}`);
    await rows(`REVOKE ALL ON taxprep_state.hooks FROM ${role}`);
    expect(await doctor()).toEqual({ exitCode: 0, status: 'ok', detail: 'the role may read and write every table of the schema but taxprep_state.hooks (kept from this role: its watch and hooks commands are refused)' });
    await rows(`GRANT SELECT ON taxprep_state.hooks TO ${role}`);
    expect(await doctor()).toEqual({ exitCode: EXIT.STATE_STORE, status: 'fail', detail: 'the role lacks INSERT, UPDATE on taxprep_state.hooks' });
  });

  it('the database restarted mid-batch (the lock holder\'s connection cut): exit 13, then a rerun finishes with nothing made twice', async () => {
    const a = await machine();
    const ids = [0, 1, 2].map((offset) => String(FIRST_ACCOUNT_ID + offset));
    const run = startCli(['--json', 'login-link', ...ids, '--concurrency', '1'], { home: a.home, env: { TAXPREP_PROFILE: 'team', PGPASSFILE: '', TAXPREP_TEST_HOLD_WRITES: '300' } });
    while (requests('POST', /\/login-links?$/).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'taxprep' AND datname = current_database() AND pid <> pg_backend_pid()");
    const cut = await run.result;
    expect(cut.exitCode).toBe(EXIT.STATE_STORE);
    // The item whose record failed is reported; the batch stops: the others are not sent.
    expect(ndjson(cut.stdout).map((line) => line.error?.code)).toEqual(['STATE_STORE']);
    expect(cut.stderr).toMatch(/, 2 not sent in /);
    expect(cut.stderr).toMatch(/the shared state store postgres:\/\/postgres@127\.0\.0\.1:\d+\/taxprep_test_[0-9a-f]+ closed the connection/);
    const sentBeforeCut = ids.map(linksOf);
    const again = await a.run(['--json', 'login-link', ...ids, '--concurrency', '1']);
    expect([EXIT.OK, EXIT.PARTIAL]).toContain(again.exitCode);
    // No account got a second link: one made before the cut is not made again.
    expect(ids.map(linksOf).every((count) => count <= 1)).toBe(true);
    expect(sentBeforeCut.every((count, index) => count <= linksOf(ids[index]!))).toBe(true);
  });

  describe.each(['batch.after-intent', 'batch.after-request', 'batch.after-record'] as const)('killed at %s on machine A, run again on machine B', (point) => {
    const sent = point !== 'batch.after-intent';

    /** B's run after A was killed at the second account: no account got two links; one A may have made is held back, unless A recorded it. */
    function expectEachLinkOnce(again: CliResult, ids: readonly string[]): void {
      const second = ndjson(again.stdout).find((line) => (line.account_id ?? line.input?.account_id) === FIRST_ACCOUNT_ID + 1);
      if (point === 'batch.after-record') {
        expect(again.exitCode).toBe(EXIT.OK);
        expect(ids.map(linksOf)).toEqual([1, 1, 1]);
      } else {
        expect(again.exitCode).toBe(EXIT.PARTIAL);
        expect(second?.error?.code).toBe('LINK_STATE_UNCERTAIN');
        expect(ids.map(linksOf)).toEqual([1, sent ? 1 : 0, 1]);
      }
    }

    it('login-link: no link made twice; one that may have been made is held back as LINK_STATE_UNCERTAIN', async () => {
      const a = await machine();
      const b = await machine();
      const ids = [FIRST_ACCOUNT_ID, FIRST_ACCOUNT_ID + 1, FIRST_ACCOUNT_ID + 2].map(String);
      const killed = await a.run(['--json', 'login-link', ...ids, '--concurrency', '1'], { [CRASH_AT_VARIABLE]: `${point}@2` });
      expect(killed.signal).toBe('SIGKILL');
      const again = await b.run(['--json', 'login-link', ...ids, '--concurrency', '1']);
      expectEachLinkOnce(again, ids);
    });

    it('login-link renew: no link made twice; the renewal on B skips what A renewed and holds back what A may have', async () => {
      const a = await machine();
      const b = await machine();
      const ids = [FIRST_ACCOUNT_ID, FIRST_ACCOUNT_ID + 1, FIRST_ACCOUNT_ID + 2].map(String);
      const list = join(a.home, 'ids.txt');
      writeFileSync(list, `${ids.join('\n')}\n`);
      // The accounts come from the mock's data: their links are unknown to the store until A renews them. --verbose prints the skipped.
      const renew = ['--json', '--verbose', 'login-link', 'renew', '--from', list, '--concurrency', '1', '--no-notify', '--renew-unknown'];
      const killed = await a.run(renew, { [CRASH_AT_VARIABLE]: `${point}@2` });
      expect(killed.signal).toBe('SIGKILL');
      const again = await b.run(renew);
      expect(ndjson(again.stdout).find((line) => (line.account_id ?? line.input?.account_id) === FIRST_ACCOUNT_ID)?.skipped?.reason).toBe('fresh');
      expectEachLinkOnce(again, ids);
    });

    it('docs sync: each file stored once, by machine A or B', async () => {
      const a = await machine();
      const b = await machine();
      const folder = (home: string) => {
        const dir = join(home, 'clients');
        for (const offset of [0, 1, 2]) {
          mkdirSync(join(dir, String(FIRST_ACCOUNT_ID + offset), '2025'), { recursive: true });
          writeFileSync(join(dir, String(FIRST_ACCOUNT_ID + offset), '2025', 'w2.pdf'), `%PDF-1.4 kill chain ${offset}\n`);
        }
        return dir;
      };
      const killed = await a.run(['--json', 'docs', 'sync', folder(a.home), '--concurrency', '1'], { [CRASH_AT_VARIABLE]: `${point}@2` });
      expect(killed.signal).toBe('SIGKILL');
      const again = await b.run(['--json', 'docs', 'sync', folder(b.home), '--concurrency', '1']);
      expect(again.exitCode).toBe(EXIT.OK);
      for (const offset of [0, 1, 2]) {
        expect(mock.deps.store.state.documents.filter((document) => document.account_id === FIRST_ACCOUNT_ID + offset && document.filename === 'w2.pdf')).toHaveLength(1);
      }
    });

    it('accounts import: each account made once, by machine A or B', async () => {
      const a = await machine();
      const b = await machine();
      const csv = join(a.home, 'clients.csv');
      const emails = ['kill.one@example.com', 'kill.two@example.com', 'kill.three@example.com'];
      writeFileSync(csv, `email,first_name,last_name\n${emails.map((email, index) => `${email},Kill,Client ${index}`).join('\n')}\n`);
      const killed = await a.run(['--json', 'accounts', 'import', csv, '--concurrency', '1'], { [CRASH_AT_VARIABLE]: `${point}@2` });
      expect(killed.signal).toBe('SIGKILL');
      const again = await b.run(['--json', 'accounts', 'import', csv, '--concurrency', '1']);
      expect(again.exitCode).toBe(EXIT.OK);
      for (const email of emails) expect(mock.deps.store.state.accounts.filter((account) => account.email === email)).toHaveLength(1);
      expect(requests('POST', /\/accounts$/).filter((entry) => entry.status === 201)).toHaveLength(3);
      // A third machine finds every row on record and sends nothing.
      const c = await machine();
      expect(ndjson((await c.run(['--json', 'accounts', 'import', csv])).stdout).map((row) => row.status)).toEqual(['skipped', 'skipped', 'skipped']);
    });
  });
});
