import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors';
import { CRASH_AT_VARIABLE } from '../../src/lib/crashPoints';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runCli, type CliResult } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * Every bulk job killed by SIGKILL at each of the batch engine's named points (src/batch/send.ts),
 * on the second of three items (`--concurrency 1`, so the arrival count names the item), then run
 * again: what the kill left is checked exactly, and the run again must make each thing once,
 * hold back what may have been made, and make it on `--reissue-uncertain`. No timed kill: each
 * test lands where it says, every run.
 */

const POINTS = ['batch.before-intent', 'batch.after-intent', 'batch.after-request', 'batch.after-record'] as const;
type Point = (typeof POINTS)[number];
/** Whether the kill at the point leaves the second item's request made at the service. */
const SENT: Record<Point, boolean> = { 'batch.before-intent': false, 'batch.after-intent': false, 'batch.after-request': true, 'batch.after-record': true };
/** Whether the kill at the point leaves the second item's intent open (written, unanswered) in the ledger. */
const OPEN: Record<Point, boolean> = { 'batch.before-intent': false, 'batch.after-intent': true, 'batch.after-request': true, 'batch.after-record': false };

const A = FIRST_ACCOUNT_ID;
const IDS = [A, A + 1, A + 2];
let mock: RunningMock;
let home: string;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 3 })), rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.requestLog.clear();
  home = makeHome();
});

const taxprep = (args: string[], crashAt?: string): Promise<CliResult> =>
  runCli(args, { home, env: { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme, ...(crashAt === undefined ? {} : { [CRASH_AT_VARIABLE]: crashAt }) } });
const file = (name: string, content: string) => {
  const path = join(home, name);
  writeFileSync(path, content);
  return path;
};
const ledger = (name: string): Array<Record<string, unknown>> => {
  const text = readFileSync(join(home, '.local', 'share', 'taxprep', name), 'utf8');
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
};
const ndjson = (text: string): Array<Record<string, any>> => text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
/** Requests of the method whose path matches, with the status they were answered (from the mock's own log). */
const requests = (method: string, pattern: RegExp) => mock.deps.requestLog.entries().filter((entry) => entry.method === method && pattern.test(entry.path.split('?')[0]!));

/** Killed where it was told: by SIGKILL, nothing more printed after the first item. */
function expectKilled(result: CliResult): void {
  expect(result.signal).toBe('SIGKILL');
  expect(result.exitCode).toBe(-1);
}

describe.each(POINTS)('killed at %s on the second item', (point) => {
  const crashAt = `${point}@2`;

  it('accounts import: each account created by exactly one request, a row on record never sent again', async () => {
    const emails = ['crash.one@example.com', 'crash.two@example.com', 'crash.three@example.com'];
    const csv = file('clients.csv', `email,first_name,last_name\n${emails.map((email, index) => `${email},Crash,Client ${index}`).join('\n')}\n`);
    const creates = () => requests('POST', /\/accounts$/);
    const args = ['--json', 'accounts', 'import', csv, '--concurrency', '1'];

    expectKilled(await taxprep(args, crashAt));
    expect(creates().map((entry) => entry.status)).toEqual(SENT[point] ? [201, 201] : [201]);
    const killed = ledger('accounts.ndjson');
    const linesOf = (email: string) => killed.filter((entry) => entry.email === email).map((entry) => entry.type);
    // `created` is appended without waiting (`wait: false`): a kill right after may or may not find it on
    // disk. Lines reach the file in order, so once the second item's intent is written (every point but
    // the first), the first item's `created` is written with it.
    const recorded = (email: string) => linesOf(email).includes('created');
    const firstRecorded = recorded(emails[0]!);
    if (point !== 'batch.before-intent') expect(firstRecorded).toBe(true);
    expect(linesOf(emails[0]!)).toEqual(firstRecorded ? ['intent', 'created'] : ['intent']);
    expect(linesOf(emails[2]!)).toEqual([]);
    const secondRecorded = recorded(emails[1]!);
    if (point === 'batch.after-record') expect(linesOf(emails[1]!)).toEqual(secondRecorded ? ['intent', 'created'] : ['intent']);
    else expect(linesOf(emails[1]!)).toEqual(OPEN[point] ? ['intent'] : []);

    const again = await taxprep(args);
    expect(again.exitCode).toBe(EXIT.OK);
    const status = Object.fromEntries(ndjson(again.stdout).map((row) => [row.email, row.status]));
    // An account the service made but the ledger has no answer for is asked for again: the service
    // refuses the duplicate (409) and the row reads `exists`, never a second account.
    const secondUnrecorded = SENT[point] && !secondRecorded;
    const askedAgain = (firstRecorded ? 0 : 1) + (secondUnrecorded ? 1 : 0);
    expect(status).toEqual({
      [emails[0]!]: firstRecorded ? 'skipped' : 'exists',
      [emails[1]!]: secondUnrecorded ? 'exists' : secondRecorded ? 'skipped' : 'created',
      [emails[2]!]: 'created',
    });
    // Counted by the requests the service answered, not by the accounts it holds (it refuses a second one anyway).
    expect(creates().filter((entry) => entry.status === 201)).toHaveLength(3);
    expect(creates()).toHaveLength(3 + askedAgain);
    for (const email of emails) expect(mock.deps.store.state.accounts.filter((account) => account.email === email)).toHaveLength(1);
    // A third run sends nothing: every row is on record.
    expect(ndjson((await taxprep(args)).stdout).map((row) => row.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(creates()).toHaveLength(3 + askedAgain);
  });

  const linksOf = (id: number) => mock.deps.store.state.loginLinks.filter((link) => link.account_id === id).length;
  const linkRequests = () => requests('POST', /\/login-links?$/);

  /** What the kill left: the second account's link made or not at the service, its intent open or not. */
  function expectLinkKill(result: CliResult): void {
    expectKilled(result);
    expect(IDS.map(linksOf)).toEqual([1, SENT[point] ? 1 : 0, 0]);
    const lines = ledger('login-links.ndjson').filter((entry) => entry.account_id === A + 1);
    const intents = lines.filter((entry) => entry.type === 'intent').length;
    const issued = lines.filter((entry) => entry.type === 'issued').length;
    expect({ intents, issued }).toEqual({ intents: point === 'batch.before-intent' ? 0 : 1, issued: point === 'batch.after-record' ? 1 : 0 });
  }

  /** Run again: a link on record is not made again; an open intent is held back (exit 9) until `--reissue-uncertain`. */
  async function expectResumed(args: string[], settledFirst: string): Promise<void> {
    const again = await taxprep(args);
    const outcomes = ndjson(again.stdout);
    const byAccount = (id: number) => outcomes.find((outcome) => (outcome.account_id ?? outcome.input?.account_id) === id);
    expect(byAccount(A)?.skipped?.reason).toBe(settledFirst);
    expect(byAccount(A + 2)?.account_id).toBe(A + 2);
    if (OPEN[point]) {
      expect(again.exitCode).toBe(EXIT.PARTIAL);
      expect(byAccount(A + 1)?.error?.code).toBe('LINK_STATE_UNCERTAIN');
      expect(IDS.map(linksOf)).toEqual([1, SENT[point] ? 1 : 0, 1]);
    } else {
      expect(again.exitCode).toBe(EXIT.OK);
      expect(IDS.map(linksOf)).toEqual([1, 1, 1]);
    }
    // A batch that got every link has ended: the same command again is a new batch, so --from is checked
    // with --reissue-uncertain only where one is held back; renewal (which skips fresh links) on every point.
    if (!OPEN[point] && settledFirst === 'done_in_interrupted_run') return;
    // The operator's way out makes the held link, and only it.
    const requestsBefore = linkRequests().length;
    const reissued = await taxprep([...args, '--reissue-uncertain']);
    expect(reissued.exitCode).toBe(EXIT.OK);
    expect(linkRequests().length - requestsBefore).toBe(OPEN[point] ? 1 : 0);
    expect(IDS.map(linksOf)).toEqual([1, OPEN[point] && SENT[point] ? 2 : 1, 1]);
  }

  it('login-link --from: each link made once; an unanswered intent held back until --reissue-uncertain', async () => {
    const ids = file('ids.txt', `${IDS.join('\n')}\n`);
    const args = ['--json', 'login-link', '--from', ids, '--concurrency', '1', '--no-notify'];
    expectLinkKill(await taxprep(args, crashAt));
    await expectResumed(args, 'done_in_interrupted_run');
  });

  it('login-link renew: each link made once; an unanswered intent held back until --reissue-uncertain', async () => {
    const ids = file('ids.txt', `${IDS.join('\n')}\n`);
    // The accounts come from the mock's data, not from an import: their links are unknown to the ledgers.
    const args = ['--json', '--verbose', 'login-link', 'renew', '--from', ids, '--concurrency', '1', '--no-notify', '--renew-unknown'];
    expectLinkKill(await taxprep(args, crashAt));
    await expectResumed(args, 'fresh');
  });

  it('docs sync: each file stored once; an upload the kill left unrecorded is found, recorded, and its content never sent again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-crash-sync-'));
    const put = (path: string, content: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), content);
    };
    for (const name of ['a', 'b', 'c']) put(`${A}/2025/${name}.pdf`, `content of ${name}`);
    const uploads = () => requests('POST', /\/documents$/);
    const stored = () => mock.deps.store.state.documents.filter((document) => document.account_id === A).map((document) => document.filename).sort();
    const args = ['--json', 'docs', 'sync', dir, '--concurrency', '1'];

    expectKilled(await taxprep(args, crashAt));
    expect(stored()).toEqual(SENT[point] ? ['a.pdf', 'b.pdf'] : ['a.pdf']);
    const secondLines = () => ledger('documents.ndjson').filter((entry) => entry.filename === 'b.pdf').map((entry) => entry.type);
    expect(secondLines()).toEqual(point === 'batch.before-intent' ? [] : point === 'batch.after-record' ? ['intent', 'uploaded'] : ['intent']);

    const again = await taxprep([...args, '--verbose']);
    expect(again.exitCode).toBe(EXIT.OK);
    expect(stored()).toEqual(['a.pdf', 'b.pdf', 'c.pdf']);
    expect(uploads()).toHaveLength(3);
    // The upload the kill left unanswered is on record now, whichever run made it.
    expect(secondLines().filter((type) => type === 'uploaded')).toHaveLength(1);
    expect(ndjson(again.stdout).find((outcome) => outcome.path === `${A}/2025/b.pdf`)?.result).toBe(SENT[point] ? 'skipped' : 'uploaded');

    // The same content under another name is known by its content: not sent again.
    put(`${A}/2025/b copy.pdf`, 'content of b');
    const copy = await taxprep([...args, '--verbose']);
    expect(copy.exitCode).toBe(EXIT.OK);
    expect(ndjson(copy.stdout).find((outcome) => outcome.path === `${A}/2025/b copy.pdf`)).toMatchObject({ result: 'skipped', reason: 'uploaded_before' });
    expect(uploads()).toHaveLength(3);
  });
});
