import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inProcess, makeHome, runCli, startCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';

/**
 * `taxprep watch`, `taxprep status` and `projects status --watch`, the real CLI against the mock
 * with its demo data, moved between runs through the `/_mock` controls.
 */

let mock: RunningMock;
let home: string;

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.settings.faults.latencyMs = 0;
  home = makeHome();
});

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme });
const taxprep = (args: string[]) => runCli(args, { env: env(), home });
const stateDirectory = () => join(home, '.local', 'state', 'taxprep', 'watch');
const stateFile = () => join(stateDirectory(), readdirSync(stateDirectory())[0]!);
/** Every account of the demo data (the deliverable list names only some). */
function accountsFile(extra: number[] = []): string {
  const path = join(home, 'clients.txt');
  writeFileSync(path, `${[1001, 1002, 1003, 1004, 1005, 1006, ...extra].join('\n')}\n`);
  return path;
}
const ndjson = (text: string) => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
/** A change without the time it was seen: what the tests compare. */
const withoutTime = ({ seen_at: _seenAt, ...change }: Record<string, unknown>) => change;

async function control(path: string, body?: unknown, method = 'POST'): Promise<any> {
  const response = await mock.request(`/_mock${path}`, { method, body });
  expect(response.status).toBeLessThan(300);
  return response.json;
}

/** Moves a project, an item each way and two deliverables; returns the changes a watch must report, in no order. */
async function moveThings(): Promise<Array<Record<string, unknown>>> {
  await control('/projects/5001', { status: 'in_progress', progress_percentage: 45 });
  const added = await control('/projects/5002/outstanding-items', { type: 'client_request', description: 'Confirm the Q4 payment date', priority: 'high' });
  const status = (await mock.request('/projects/5001/status', { key: mock.keys.acme })).json;
  const resolved = status.outstanding_items.find((item: { description: string }) => item.description.startsWith('Confirm the dependents'));
  const record = mock.deps.store.state.outstandingItems.find((item) => item.project_id === 5001 && item.description === resolved.description)!;
  await control(`/projects/5001/outstanding-items/${record.id}`, undefined, 'DELETE');
  await control('/deliverables/9001', { status: 'completed' });
  const created = await control('/projects/5001/deliverable', { title: '2025 Form 1040' });
  const item = (raw: { type: string; description: string; priority: string; requested_at: string }) => ({ type: raw.type, description: raw.description, priority: raw.priority, requested_at: raw.requested_at });
  return [
    { event: 'deliverable.status', account_id: 1001, project_id: 5002, deliverable_id: 9001, old: 'draft', new: 'completed' },
    { event: 'deliverable.appeared', account_id: 1001, project_id: 5001, deliverable_id: created.deliverable.id, old: null, new: 'draft' },
    { event: 'project.status', account_id: 1001, project_id: 5001, old: 'waiting_on_client', new: 'in_progress' },
    { event: 'project.progress', account_id: 1001, project_id: 5001, old: 20, new: 45 },
    { event: 'item.resolved', account_id: 1001, project_id: 5001, item: item(resolved), old: item(resolved), new: null },
    { event: 'item.appeared', account_id: 1001, project_id: 5002, item: item(added), old: null, new: item(added) },
  ];
}

const sortChanges = (changes: Array<Record<string, unknown>>) => [...changes].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('taxprep watch --once', () => {
  it('records a baseline quietly, then reports exactly what moved, then nothing', async () => {
    const clients = accountsFile();
    const once = ['watch', '--once', '--budget', '100/min', '--accounts', clients];
    const first = await taxprep([...once, '--json']);
    expect(first).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    expect(statSync(stateFile()).mode & 0o777).toBe(0o600);

    const expected = await moveThings();
    const second = await taxprep([...once, '--json']);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toBe('');
    const changes = ndjson(second.stdout);
    expect(sortChanges(changes.map(withoutTime))).toEqual(sortChanges(expected));
    for (const change of changes) expect(Date.parse(String(change.seen_at))).not.toBeNaN();

    expect(await taxprep([...once, '--json'])).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    await control('/projects/5004', { progress_percentage: 95 });
    const piped = await taxprep(once);
    expect(piped.stdout).toMatch(/^\S+\tproject\.progress\t1002\t5004\t-\t90\t95\n$/);
  });

  it('with --initial, reports what the first look finds as having appeared', async () => {
    const result = await taxprep(['watch', '--once', '--budget', '100/min', '--initial', '--json', '--accounts', accountsFile()]);
    const events = ndjson(result.stdout).map((change) => change.event);
    expect(events.filter((event) => event === 'deliverable.appeared')).toHaveLength(5);
    expect(events).toContain('project.appeared');
    expect(events).toContain('item.appeared');
  });

  it('refuses a damaged state file with exit 2 naming it, leaves it as it was, and starts again with --reset-state', async () => {
    const once = ['watch', '--once', '--budget', '100/min'];
    await taxprep(once);
    const path = stateFile();
    writeFileSync(path, '{"format":"taxprep-watch-state","version":1,"snap');
    const refused = await taxprep(once);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`error: the watch state file ${path} is damaged: not valid JSON; it was left as it is`);
    expect(refused.stdout).toBe('');
    expect(readFileSync(path, 'utf8')).toBe('{"format":"taxprep-watch-state","version":1,"snap');

    await control('/deliverables/9001', { status: 'completed' });
    expect(await taxprep([...once, '--reset-state'])).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    expect(JSON.parse(readFileSync(path, 'utf8')).snapshot.deliverables['9001'].status).toBe('completed');
  });

  it('reports an unknown account of --accounts once, not on every run', async () => {
    const once = ['watch', '--once', '--budget', '100/min', '--accounts', accountsFile([999999])];
    const first = await taxprep(once);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toBe(`warning: account 999999 (${join(home, 'clients.txt')} line 7): ACCOUNT_NOT_FOUND; it is left out from now on (--reset-state to try it again)\n`);
    expect(await taxprep(once)).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });

  it('keeps to the budget across runs: a second run in the same minute reads only what is left, and in a pipe says it read nothing (exit 6)', async () => {
    const first = await taxprep(['watch', '--once', '--budget', '3/min']);
    expect(first.exitCode).toBe(0);
    mock.deps.requestLog.clear();
    const second = await taxprep(['watch', '--once', '--budget', '3/min']);
    expect(mock.deps.requestLog.entries()).toHaveLength(0);
    // In cron, "no change" (exit 0, silent) and "did not look" must differ.
    expect(second.exitCode).toBe(6);
    expect(second.stdout).toBe('');
    expect(second.stderr).toMatch(/^watch: nothing was read: the budget of 3\/min is spent by requests of the last 1m; it allows the next at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n$/);
  });
});

describe('watch and the rate limit', () => {
  it('takes the key\'s limit as its budget, and a 429 lowers the pace without ending the run', async () => {
    await control('/rate-limits', { windows: [{ limit: 5, window_seconds: 60 }] }, 'PUT');
    try {
      const result = await taxprep(['watch', '--once', '--no-retry', '--budget', '20/min', '--accounts', accountsFile()]);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('watch: the key allows 5 requests a minute; budget lowered to 5/min\n');
      expect(result.stderr).toContain('watch: the service answered 429 (RATE_LIMIT_EXCEEDED); pace lowered to 2/min\n');
    } finally {
      await control('/rate-limits', { windows: [] }, 'PUT');
    }
  });
});

// A crash point kills the process it is in: these spawn the build, even under the mutation config.
describe.skipIf(inProcess)('a watch killed at its named crash points (TAXPREP_TEST_CRASH_AT)', () => {
  /** A baseline, the moves, then a run killed at `point`: what it printed, and the expected changes. */
  async function killedAt(point: string) {
    const once = ['watch', '--once', '--budget', '100/min', '--json', '--accounts', accountsFile()];
    expect((await taxprep(once)).exitCode).toBe(0);
    const expected = sortChanges(await moveThings());
    const killed = await runCli(once, { env: { ...env(), TAXPREP_TEST_CRASH_AT: point }, home });
    // -1: ended by a signal (SIGKILL), not by an exit.
    expect(killed.exitCode).toBe(-1);
    return { once, expected, printed: sortChanges(ndjson(killed.stdout).map(withoutTime)) };
  }

  it('before the print: nothing printed, nothing recorded; the next run reports every change', async () => {
    const { once, expected, printed } = await killedAt('watch.before-print');
    expect(printed).toEqual([]);
    const next = await taxprep(once);
    expect(sortChanges(ndjson(next.stdout).map(withoutTime))).toEqual(expected);
    expect((await taxprep(once)).stdout).toBe('');
  });

  it('between the print and the commit: the changes printed are printed once more by the next run, then never', async () => {
    const { once, expected, printed } = await killedAt('watch.after-print');
    expect(printed).toEqual(expected);
    const next = await taxprep(once);
    expect(sortChanges(ndjson(next.stdout).map(withoutTime))).toEqual(expected);
    expect((await taxprep(once)).stdout).toBe('');
  });

  it('after the commit: the changes printed are recorded; the next run prints nothing', async () => {
    const { once, expected, printed } = await killedAt('watch.after-commit');
    expect(printed).toEqual(expected);
    expect(await taxprep(once)).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });
});

describe('a long watch', () => {
  it.skipIf(inProcess)('prints changes as they come and exits 130 on Ctrl-C, every printed change recorded', async () => {
    const { child, result: ended, printed } = await spawnWatch(['--json', 'watch', '--budget', '100/min']);
    await control('/deliverables/9001', { status: 'completed' });
    await until(() => printed().includes('"deliverable.status"'), 'the change');
    child.kill('SIGINT');
    const result = await ended;
    expect(result.exitCode).toBe(130);
    expect(String(result.stderr)).toContain('watch: stopped; every change printed is recorded in ');
    expect(ndjson(printed()).map(withoutTime)).toEqual([{ event: 'deliverable.status', account_id: 1001, project_id: 5002, deliverable_id: 9001, old: 'draft', new: 'completed' }]);
    expect(await taxprep(['watch', '--once', '--budget', '100/min', '--json'])).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });
});

/** A long `taxprep watch` this test can kill, once it has recorded its baseline; `printed()` is its stdout so far. */
async function spawnWatch(args: string[]) {
  const { child, result } = startCli(args, { home, env: env() });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  await until(() => existsSync(stateDirectory()) && readdirSync(stateDirectory()).some((name) => name.endsWith('.json')), 'the baseline');
  return { child, result, printed: () => stdout };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 15_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('taxprep status', () => {
  it('shows deliverables ready to send, waiting projects by priority, and says which accounts it looked at', async () => {
    const result = await taxprep(['status', '--json', '--accounts', accountsFile([999999])]);
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.deliverables_ready.map((row: { deliverable_id: number }) => row.deliverable_id).sort()).toEqual([9003, 9005]);
    expect(document.waiting_on_client.map((row: { project_id: number; priority: string }) => `${row.project_id} ${row.priority}`)).toEqual([
      '5001 high',
      '5005 high',
      '5005 high',
      '5001 medium',
      '5001 low',
    ]);
    expect(document.accounts).toEqual({ looked_at: 6, from_deliverables: 4, from_file: 7, from_ledgers: 0, not_covered: [{ account_id: 999999, code: 'ACCOUNT_NOT_FOUND' }] });
    // When each section read the service: the deliverable list first, then the accounts' projects.
    expect(Date.parse(document.read_at.deliverables_ready)).toBeLessThanOrEqual(Date.parse(document.read_at.waiting_on_client));
    expect(Date.now() - Date.parse(document.read_at.deliverables_ready)).toBeLessThan(60_000);

    const piped = await taxprep(['status', '--accounts', accountsFile()]);
    expect(piped.stdout.split('\n').filter(Boolean).map((line) => line.split('\t')[0])).toEqual(['deliverable', 'deliverable', 'waiting', 'waiting', 'waiting', 'waiting', 'waiting']);
    expect(piped.stderr).toMatch(
      /^status: looked at 6 of 6 accounts \(4 from the deliverable list, 6 from \S+clients\.txt, 0 from the ledgers\) in \S+\. Deliverables read \S+ ago, waiting projects read \S+ ago at the oldest, login links from the local ledger\. Accounts in none of these places are not shown\.\n$/,
    );
  });

  it('Ctrl-C while it reads the service: exit 130, one line saying so, nothing on stdout', async () => {
    // Every answer takes 5 s: the interrupt arrives while a request is out.
    mock.deps.settings.faults.latencyMs = 5000;
    const { child, result } = startCli(['status', '--verbose'], { home, env: env() });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await until(() => /^> GET /m.test(stderr), 'the first request');
    child.kill('SIGINT');
    const ended = await result;
    expect([ended.exitCode, ended.stdout]).toEqual([130, '']);
    expect(ended.stderr).toContain('error: interrupted while reading the service; nothing was printed\nRun taxprep status again.\n');
    expect(ended.stderr).not.toContain('unexpected failure');
  });

  it('lists the ledger\'s login links expiring within --within', async () => {
    expect((await taxprep(['login-link', '1002', '--expiry-hours', '5', '--no-notify'])).exitCode).toBe(0);
    const soon = JSON.parse((await taxprep(['status', '--json'])).stdout);
    expect(soon.login_links_expiring).toEqual([expect.objectContaining({ account_id: 1002, user_email: 'james.okafor@example.com' })]);
    expect(soon.accounts.from_ledgers).toBe(1);
    const none = JSON.parse((await taxprep(['status', '--json', '--within', '2h'])).stdout);
    expect(none.login_links_expiring).toEqual([]);
  });

  it('draws its sections on a terminal', async () => {
    const result = await runCli(['status', '--no-color'], { env: env(), home, tty: true });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/Deliverables ready to send\nDELIVERABLE +PROJECT +ACCOUNT +TYPE +TITLE +LINK EXPIRES\n/);
    expect(result.stdout).toMatch(/Waiting on the client\nACCOUNT +PROJECT +PRIORITY +TYPE +OUTSTANDING ITEM +REQUESTED\n1001 +5001 +high /);
    expect(result.stdout).toContain('Login links expiring: none\n');
    // The tables fit the terminal's 80 columns; the summary on stderr is a message, free to wrap.
    for (const line of result.stdout.split('\n').filter((text) => !text.startsWith('status: '))) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('writes one CSV for a spreadsheet', async () => {
    const result = await taxprep(['status', '--csv']);
    expect(result.stdout.split('\r\n')[0]).toBe('section,account_id,project_id,deliverable_id,user_email,priority,type,text,at');
    expect(result.stdout).toContain('\r\ndeliverable,1002,5004,9003,,,tax_planning,2025 tax plan,');
  });
});

describe('status and watch tables at 60, 80 and 120 columns', () => {
  // TAXPREP_FORCE_TTY=N prints stdout as on a terminal N columns wide: the same fitting as under a pseudo-terminal.
  const wide = (columns: number, args: string[]) => runCli(args, { env: { ...env(), TAXPREP_FORCE_TTY: String(columns) }, home });
  const fitted = (stdout: string, columns: number) => {
    for (const line of stdout.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(columns);
  };

  it.each([60, 80, 120])('status at %i columns keeps ids, priorities and dates readable', async (columns) => {
    expect((await taxprep(['login-link', '1002', '--expiry-hours', '5', '--no-notify'])).exitCode).toBe(0);
    const result = await wide(columns, ['status', '--accounts', accountsFile()]);
    expect(result.exitCode).toBe(0);
    fitted(result.stdout, columns);
    expect(result.stdout).toMatch(/^1001 +5001 +high /m);
    for (const id of ['9003', '5004', '1002']) expect(result.stdout).toMatch(new RegExp(`(^|\\s)${id}(\\s|$)`, 'm'));
    // A date keeps at least its day, whatever the width.
    expect(result.stdout).toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  it.each([60, 80, 120])('watch at %i columns keeps event names and ids whole', async (columns) => {
    const once = ['watch', '--once', '--budget', '100/min', '--accounts', accountsFile()];
    expect((await taxprep(once)).exitCode).toBe(0);
    await moveThings();
    const result = await wide(columns, once);
    expect(result.exitCode).toBe(0);
    fitted(result.stdout, columns);
    for (const event of ['deliverable.status', 'project.status', 'item.appeared', 'item.resolved']) expect(result.stdout).toContain(event);
    // A table per kind of change, under its event's name: no id is left out at any width.
    expect(result.stdout).toMatch(/^deliverable\.status\nACCOUNT +PROJECT +DELIVERABLE +WAS +NOW\n1001 +5002 +9001 /m);
  });
});

describe('projects status --watch', () => {
  it('exits 0 at once for a completed project, and 8 with --exit-status when --timeout ends the watch while it is pending', async () => {
    const done = await taxprep(['projects', 'status', '5003', '--watch', '--exit-status']);
    expect(done).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    const pending = await taxprep(['projects', 'status', '5001', '--watch', '--interval', '3s', '--timeout', '500ms', '--exit-status']);
    expect(pending.exitCode).toBe(8);
    expect(pending.stdout).toBe('');
    expect(pending.stderr).toMatch(/project 5001 is still waiting_on_client\n$/);
    expect((await taxprep(['projects', 'status', '5001', '--watch', '--interval', '3s', '--timeout', '500ms'])).exitCode).toBe(0);
  });

  it('draws the card on a terminal with when it looked', async () => {
    const result = await runCli(['projects', 'status', '5003', '--watch', '--no-color'], { env: env(), home, tty: true });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Project 5003\n');
    // The note wraps at word boundaries to the 80 columns.
    expect(result.stdout.replace(/\s+/g, ' ')).toMatch(/Looked .*; every 30s until completed\. Ctrl-C to stop\./);
  });

  it('refuses an interval below the floor, and the watch flags without --watch', async () => {
    const fast = await taxprep(['projects', 'status', '5001', '--watch', '--interval', '1s']);
    expect(fast.exitCode).toBe(2);
    expect(fast.stderr).toContain('--interval must be a duration of at least 3s');
    expect((await taxprep(['projects', 'status', '5001', '--exit-status'])).exitCode).toBe(2);
  });
});
