import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli, startCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { connectionConfig } from '../../src/state/connection';
import { startReceiver, type Received } from '../helpers/webhookReceiver';

/**
 * `taxprep watch` on two and three "machines" (a home directory each, one key of one partner
 * each) sharing one PostgreSQL store and one mock: one looks at a time, a killed holder is taken
 * over, a paused one writes nothing when it wakes, and every change reaches a receiver (checked by
 * the `standardwebhooks` reference library) once per hook under one id. Each watch runs with
 * `--lease 3s`, so a takeover comes within 3.5 s.
 */

const unavailable = postgresUnavailable();
let postgres: TestPostgres | undefined;
/** A database of this file's own on the run's PostgreSQL (test/helpers/postgres.ts). */
let stateUrl: string;

let mock: RunningMock;
let database: pg.Client;
const servers: Server[] = [];
const running: RunningWatch[] = [];

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
  if (unavailable !== undefined) return;
  postgres = await startTestPostgres();
  stateUrl = await postgres.freshDatabase();
  database = new pg.Client(connectionConfig(stateUrl, process.env));
  await database.connect();
});
afterAll(async () => {
  await database?.end();
  await postgres?.stop();
  await mock.close();
});
afterEach(async () => {
  for (const watch of running.splice(0)) {
    watch.child.kill('SIGKILL');
    await watch.result;
  }
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await mock.deps.store.reset();
});

interface Machine {
  name: string;
  home: string;
  env: Record<string, string>;
}

/** A machine of the team: a home of its own, a key of the partner's, the shared store under the test's namespace. */
function machine(name: string, key: string, namespace: string): Machine {
  return { name, home: makeHome(), env: { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: key, TAXPREP_STATE_URL: stateUrl, TAXPREP_STATE_NAMESPACE: namespace, PGPASSFILE: process.env.PGPASSFILE ?? '' } };
}

const freshNamespace = () => `watch-${randomBytes(4).toString('hex')}`;

function accountsFile(on: Machine): string {
  const path = join(on.home, 'clients.txt');
  writeFileSync(path, '1001\n1002\n');
  return path;
}

interface RunningWatch {
  machine: Machine;
  child: ReturnType<typeof startCli>['child'];
  result: ReturnType<typeof startCli>['result'];
  output: { stdout: string; stderr: string };
  /** The lease events it told on stderr (`{"watch": ...}` lines), in order. */
  told(): Array<{ watch: string; fence?: number }>;
  changes(): Array<Record<string, unknown>>;
}

/** A running `watch --json --lease 3s` on `on`, its stdout and stderr gathered as they come. */
function startWatch(on: Machine): RunningWatch {
  const { child, result } = startCli(['watch', '--json', '--budget', '100/min', '--lease', '3s', '--accounts', accountsFile(on)], { env: on.env, home: on.home, stdin: 'ignore' });
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  const watch: RunningWatch = {
    machine: on,
    child,
    result,
    output,
    told: () => output.stderr.split('\n').filter((line) => line.startsWith('{"watch"')).map((line) => JSON.parse(line) as { watch: string; fence?: number }),
    changes: () => output.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
  };
  running.push(watch);
  return watch;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 100) {
    if (waited > limitMs) throw new Error(`timed out waiting for ${what}; the watches said:\n${running.map((watch) => `${watch.machine.name} (pid ${watch.child.pid}):\n${watch.output.stdout}${watch.output.stderr}`).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A receiver that answers 204 to everything, each request verified with the hook's secret once it is pushed. */
const receiver = () => startReceiver(servers, () => ({ status: 204 }));

async function control(path: string, body?: unknown, method = 'POST'): Promise<any> {
  const response = await mock.request(`/_mock${path}`, { method, body });
  expect(response.status).toBeLessThan(300);
  return response.json;
}

/** A new outstanding item on project 5001 (account 1001): one `item.appeared` change. */
const addItem = (description: string) => control('/projects/5001/outstanding-items', { type: 'client_request', description, priority: 'low' });

/** The `item.appeared` descriptions a receiver got, each with the ids it came under. */
function itemsReceived(received: Received[]): Map<string, Set<string>> {
  const items = new Map<string, Set<string>>();
  for (const request of received) {
    const body = JSON.parse(request.body) as { type: string; data: { new?: { description?: string } } };
    if (body.type !== 'item.appeared') continue;
    const description = body.data.new!.description!;
    items.set(description, (items.get(description) ?? new Set()).add(request.id));
  }
  return items;
}

const itemsPrinted = (watch: RunningWatch) => watch.changes().filter((change) => change.event === 'item.appeared').map((change) => (change.new as { description: string }).description);

/** Requests the mock logged per key (redacted, as its log shows them). */
async function requestsByKey(): Promise<Map<string, number>> {
  const log = (await control('/requests', undefined, 'GET')).requests as Array<{ api_key: string | null }>;
  const counts = new Map<string, number>();
  for (const entry of log) counts.set(entry.api_key ?? '', (counts.get(entry.api_key ?? '') ?? 0) + 1);
  return counts;
}

/** Whether the recorded look has read project 5001's items: a change made before is part of the baseline, not reported. */
const baselineHasProject5001 = async (namespace: string) =>
  (await database.query('SELECT 1 FROM taxprep_state.watch_state WHERE namespace = $1 AND base_url = $2 AND state #> \'{snapshot,projects,5001,items}\' IS NOT NULL', [namespace, mock.baseUrl])).rowCount === 1;

const stateSavedAt = async (namespace: string) =>
  (await database.query<{ saved_at: Date }>('SELECT saved_at FROM taxprep_state.watch_state WHERE namespace = $1 AND base_url = $2', [namespace, mock.baseUrl])).rows[0]?.saved_at;

describe.skipIf(unavailable !== undefined)('watch on a team of machines with a shared store', () => {
  it('two machines: one looks, the other stands by; the holder SIGKILLed, the other takes over from the last look; every change delivered once under one id', async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    const b = machine('b', mock.keys.readOnly, namespace);
    const target = await receiver();
    const added = await runCli(['hooks', 'add', target.url, '--events', 'item.*', '--retry-schedule', '100ms,200ms,300ms', '--json'], { env: a.env, home: a.home });
    expect(added.exitCode, added.stderr).toBe(0);
    const hook = JSON.parse(added.stdout) as { id: string; secret: string };
    target.secrets.push(hook.secret);

    const watchA = startWatch(a);
    await until(() => watchA.told().some((event) => event.watch === 'holding'), 'A to hold the lease');
    const watchB = startWatch(b);
    await until(() => watchB.told().some((event) => event.watch === 'standby'), 'B to stand by');
    const standby = watchB.told().find((event) => event.watch === 'standby') as unknown as { holder: { pid: number }; takeover_within_ms: number };
    expect(standby.holder.pid).toBe(watchA.child.pid);
    expect(standby.takeover_within_ms).toBe(3_500);
    await until(() => baselineHasProject5001(namespace), 'the baseline recorded');

    await control('/requests', undefined, 'DELETE');
    await addItem('before the kill');
    await until(() => itemsReceived(target.received).has('before the kill'), 'the first change delivered');
    // Only A looked: the mock saw A's key and never B's.
    const byKey = await requestsByKey();
    expect([...byKey.keys()].every((key) => key.endsWith(mock.keys.acme.slice(-4)))).toBe(true);
    expect(itemsPrinted(watchA)).toEqual(['before the kill']);

    watchA.child.kill('SIGKILL');
    await watchA.result;
    await addItem('after the kill');
    await until(() => watchB.told().some((event) => event.watch === 'holding'), 'B to take over');
    await until(() => itemsReceived(target.received).has('after the kill'), 'the second change delivered');
    // No new baseline, nothing reported twice, nothing missed.
    expect(itemsPrinted(watchB)).toEqual(['after the kill']);
    watchB.child.kill('SIGINT');
    expect((await watchB.result).exitCode).toBe(130);
    // A lease renewed every second for the whole run leaks nothing (Node warns of piled-up listeners).
    expect(watchA.output.stderr + watchB.output.stderr).not.toContain('Warning');

    expect(target.received.every((request) => request.verified)).toBe(true);
    const items = itemsReceived(target.received);
    expect([...items.keys()].sort()).toEqual(['after the kill', 'before the kill']);
    for (const ids of items.values()) expect(ids.size).toBe(1);
  }, 120_000);

  it('three machines: the holder paused past its lease is taken over, and when it wakes it writes and prints nothing', async () => {
    const namespace = freshNamespace();
    const machines = [machine('a', mock.keys.acme, namespace), machine('b', mock.keys.acme, namespace), machine('c', mock.keys.readOnly, namespace)];
    const target = await receiver();
    const added = await runCli(['hooks', 'add', target.url, '--events', 'item.*', '--json'], { env: machines[1]!.env, home: machines[1]!.home });
    target.secrets.push((JSON.parse(added.stdout) as { secret: string }).secret);
    const [watchA, ...standbys] = machines.map((on, index) => {
      const watch = startWatch(on);
      return { watch, index };
    }).map(({ watch }) => watch);
    await until(() => [watchA!, ...standbys].filter((watch) => watch.told().some((event) => event.watch === 'holding')).length === 1, 'one of the three to hold the lease');
    const holder = [watchA!, ...standbys].find((watch) => watch.told().some((event) => event.watch === 'holding'))!;
    const others = [watchA!, ...standbys].filter((watch) => watch !== holder);
    await until(() => others.every((watch) => watch.told().some((event) => event.watch === 'standby')), 'the two others to stand by');
    await until(() => baselineHasProject5001(namespace), 'the baseline recorded');
    await addItem('seen by the first holder');
    await until(() => itemsReceived(target.received).has('seen by the first holder'), 'the first change delivered');

    holder.child.kill('SIGSTOP');
    const printedBefore = holder.output.stdout;
    await until(() => others.some((watch) => watch.told().some((event) => event.watch === 'holding')), 'a standby to take over');
    const successor = others.find((watch) => watch.told().some((event) => event.watch === 'holding'))!;
    await addItem('seen by the successor');
    await until(() => itemsReceived(target.received).has('seen by the successor'), 'the second change delivered');
    const savedBySuccessor = await stateSavedAt(namespace);

    holder.child.kill('SIGCONT');
    await until(() => holder.told().some((event) => event.watch === 'lost' || event.watch === 'standby'), 'the woken holder to stand by');
    await addItem('after the wake');
    await until(() => itemsReceived(target.received).has('after the wake'), 'the third change delivered');
    // The woken holder printed nothing, and the successor reported everything after its takeover.
    expect(holder.output.stdout).toBe(printedBefore);
    expect(itemsPrinted(successor)).toEqual(['seen by the successor', 'after the wake']);
    expect((await stateSavedAt(namespace))!.getTime()).toBeGreaterThanOrEqual(savedBySuccessor!.getTime());
    expect(target.received.every((request) => request.verified)).toBe(true);
    const items = itemsReceived(target.received);
    expect([...items.keys()].sort()).toEqual(['after the wake', 'seen by the first holder', 'seen by the successor']);
    for (const ids of items.values()) expect(ids.size).toBe(1);
  }, 120_000);
});

describe.skipIf(unavailable !== undefined)('hooks with a shared store', () => {
  it("machine B sees, disables and removes machine A's hooks; A sees B's changes", async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    const b = machine('b', mock.keys.readOnly, namespace);
    const added = await runCli(['hooks', 'add', 'https://crm.example.com/in', '--events', 'deliverable.*', '--json'], { env: a.env, home: a.home });
    expect(added.exitCode, added.stderr).toBe(0);
    const hook = JSON.parse(added.stdout) as { id: string; secret: string };
    const listed = await runCli(['hooks', 'list', '--json'], { env: b.env, home: b.home });
    expect(JSON.parse(listed.stdout).hooks.map((listedHook: { id: string }) => listedHook.id)).toEqual([hook.id]);
    expect(listed.stdout).not.toContain(hook.secret);
    expect((await runCli(['hooks', 'disable', hook.id], { env: b.env, home: b.home })).exitCode).toBe(0);
    const shown = await runCli(['hooks', 'show', hook.id, '--json'], { env: a.env, home: a.home });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: hook.id, enabled: false });
    expect(await runCli(['hooks', 'show', hook.id, '--secret'], { env: b.env, home: b.home })).toEqual({ exitCode: 0, stdout: `${hook.secret}\n`, stderr: '' });
    expect((await runCli(['hooks', 'remove', hook.id], { env: b.env, home: b.home })).exitCode).toBe(0);
    expect(JSON.parse((await runCli(['hooks', 'list', '--json'], { env: a.env, home: a.home })).stdout).hooks).toEqual([]);
    // Another namespace on the same database sees none of them.
    const other = machine('other', mock.keys.acme, freshNamespace());
    await runCli(['hooks', 'add', 'https://crm.example.com/in'], { env: a.env, home: a.home });
    expect(JSON.parse((await runCli(['hooks', 'list', '--json'], { env: other.env, home: other.home })).stdout).hooks).toEqual([]);
  }, 60_000);
});

/** The requests waiting in the namespace's inbox (taxprep_state.hooks_requests). */
const requestsWaiting = async (namespace: string) =>
  (await database.query<{ id: string }>('SELECT id FROM taxprep_state.hooks_requests WHERE namespace = $1 AND base_url = $2', [namespace, mock.baseUrl])).rows.map((row) => row.id);

/** The outbox's redeliver lines that name `request`: a request applied once has its lines once. */
const redeliverLinesOf = async (namespace: string, request: string) =>
  (await database.query("SELECT 1 FROM taxprep_state.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = 'outbox' AND entry->>'type' = 'redeliver' AND entry->>'request' = $3", [namespace, mock.baseUrl, request])).rowCount;

/** The lease as another machine's process would hold it for a minute (a watch hung, or `hooks deliver --wait`), or given up. */
async function holdLease(namespace: string, holder: { kind: 'watch' | 'hooks' } | undefined): Promise<void> {
  await database.query(
    `INSERT INTO taxprep_state.watch_lease (namespace, base_url, holder, fence, expires_at, taken_at) VALUES ($1, $2, $3, 1, now() + $4::interval, now())
     ON CONFLICT (namespace, base_url) DO UPDATE SET holder = EXCLUDED.holder, fence = watch_lease.fence + 1, expires_at = EXCLUDED.expires_at, taken_at = EXCLUDED.taken_at`,
    [namespace, mock.baseUrl, JSON.stringify({ host: 'machine-c', pid: 4242, token: 'test', ...holder }), holder === undefined ? '0 seconds' : '1 minute'],
  );
}

describe.skipIf(unavailable !== undefined)('hooks redeliver, recover and deliver on one machine, the watch on another', () => {
  it("hand the team's watch their work, which sends it at once under the same webhook-id; without a watch the command applies it itself", async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    const b = machine('b', mock.keys.readOnly, namespace);
    let up = false;
    const target = await startReceiver(servers, () => ({ status: up ? 204 : 500 }));
    // A retry an hour away: what a receiver back after failures would otherwise wait for.
    const added = await runCli(['hooks', 'add', target.url, '--events', 'item.*', '--retry-schedule', '1h,1h', '--timeout', '1s', '--json'], { env: a.env, home: a.home });
    expect(added.exitCode, added.stderr).toBe(0);
    const hook = JSON.parse(added.stdout) as { id: string; secret: string };
    target.secrets.push(hook.secret);
    const watchA = startWatch(a);
    await until(() => watchA.told().some((event) => event.watch === 'holding'), 'A to hold the lease');
    await until(() => baselineHasProject5001(namespace), 'the baseline recorded');
    await addItem('Sign the engagement letter');
    await until(() => target.received.length === 1, 'the first attempt (answered 500)');
    const onA = `a watch is running \\(on ${hostname()}, pid ${watchA.child.pid}, since \\d{4}-\\d\\d-\\d\\dT[^)]+\\)`;

    up = true;
    const retried = await runCli(['--verbose', 'hooks', 'deliver', '--retry-now'], { env: b.env, home: b.home });
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(retried.stderr).toMatch(new RegExp(`^hooks deliver: 1 delivered, 0 to retry, 0 failed; ${onA} and sent them\\.\\n$`));
    expect(target.received).toHaveLength(2);
    const id = target.received[0]!.id;

    const redelivered = await runCli(['hooks', 'redeliver', id], { env: b.env, home: b.home });
    expect(redelivered.exitCode, redelivered.stderr).toBe(0);
    expect(redelivered.stderr).toMatch(new RegExp(`^1 delivery is due again; ${onA} and sends it now\\.\\n$`));
    await until(() => target.received.length === 3, 'the redelivery');

    const recovered = await runCli(['hooks', 'recover', hook.id, '--since', '1h'], { env: b.env, home: b.home });
    expect(recovered.exitCode, recovered.stderr).toBe(0);
    expect(recovered.stderr).toMatch(new RegExp(`^1 change is due again for ${hook.id}; ${onA} and sends it now\\.\\n$`));
    await until(() => target.received.length === 4, 'the recovery');

    // Nothing more: each request was applied once, and none is left waiting.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(target.received.map((request) => request.id)).toEqual([id, id, id, id]);
    expect(target.received.every((request) => request.verified)).toBe(true);
    expect(await requestsWaiting(namespace)).toEqual([]);
    // The watch was woken by each request's NOTIFY: it never fell back to taking them at each pass.
    expect(watchA.output.stderr).not.toContain('taken at each pass only');
    watchA.child.kill('SIGINT');
    expect((await watchA.result).exitCode).toBe(130);

    // No watch: B applies the request itself under the lease, and hooks deliver sends it.
    const alone = await runCli(['hooks', 'redeliver', id], { env: b.env, home: b.home });
    expect(alone.exitCode, alone.stderr).toBe(0);
    expect(alone.stderr).toBe('1 delivery is due again; taxprep hooks deliver (or the next watch) sends it.\n');
    expect(await requestsWaiting(namespace)).toEqual([]);
    const sent = await runCli(['hooks', 'deliver', '--json'], { env: b.env, home: b.home });
    expect(JSON.parse(sent.stdout)).toMatchObject({ delivered: 1, retried: 0, failed: 0 });
    expect(target.received.map((request) => request.id)).toEqual([id, id, id, id, id]);
  }, 120_000);

  it('a request left waiting (Ctrl-C, the watch hung) is applied once by the next watch to hold the lease; a hooks command holding it is no watch: exit 10, the request taken back', async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    const b = machine('b', mock.keys.readOnly, namespace);
    const target = await receiver();
    const added = await runCli(['hooks', 'add', target.url, '--events', 'item.*', '--json'], { env: a.env, home: a.home });
    target.secrets.push((JSON.parse(added.stdout) as { secret: string }).secret);
    const once = () => runCli(['watch', '--once', '--budget', '100/min', '--accounts', accountsFile(a)], { env: a.env, home: a.home });
    expect((await once()).exitCode).toBe(0);
    await addItem('Upload the W-2');
    expect((await once()).exitCode).toBe(0);
    expect(target.received).toHaveLength(1);
    const id = target.received[0]!.id;

    // Another machine's hooks deliver --wait holds the lease: not a watch to hand work to.
    await holdLease(namespace, { kind: 'hooks' });
    const refused = await runCli(['hooks', 'redeliver', id], { env: b.env, home: b.home });
    expect(refused.exitCode).toBe(10);
    expect(refused.stderr).toContain('is in use by taxprep hooks on machine-c (pid 4242); nothing was sent');
    expect(await requestsWaiting(namespace)).toEqual([]);

    // A watch on machine-c holds the lease and hangs: the request waits for it until Ctrl-C.
    await holdLease(namespace, { kind: 'watch' });
    const waiting = startCli(['hooks', 'redeliver', id], { env: b.env, home: b.home, stdin: 'ignore' });
    await until(async () => (await requestsWaiting(namespace)).length === 1, 'the request in the inbox');
    waiting.child.kill('SIGINT');
    const interrupted = await waiting.result;
    expect(interrupted.exitCode).toBe(130);
    expect(interrupted.stderr).toMatch(/interrupted: a watch is running \(on machine-c, pid 4242, since \d{4}-\d\d-\d\dT[^)]+\) and has not taken the request yet; it stays in the outbox's inbox, and the watch \(or the next run to open the outbox\) applies it/);
    const [left] = await requestsWaiting(namespace);

    // machine-c's watch died: the next to hold the lease applies the request, once.
    await holdLease(namespace, undefined);
    expect((await once()).exitCode).toBe(0);
    expect(await requestsWaiting(namespace)).toEqual([]);
    expect(await redeliverLinesOf(namespace, left!)).toBe(1);
    expect(target.received.map((request) => request.id)).toEqual([id, id]);
    expect(JSON.parse((await runCli(['hooks', 'deliver', '--json'], { env: b.env, home: b.home })).stdout)).toMatchObject({ delivered: 0, retried: 0, failed: 0 });
    expect(target.received).toHaveLength(2);
  }, 120_000);
});

describe.skipIf(unavailable !== undefined)('state import and export of the hooks and the watch state', () => {
  it("copies a machine's hooks and last look into the store once, and the store's back into files", async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    const { TAXPREP_STATE_URL: _url, ...filesOnly } = a.env;
    const onFiles = (args: string[]) => runCli(args, { env: filesOnly, home: a.home });
    const added = JSON.parse((await onFiles(['hooks', 'add', 'https://crm.example.com/in', '--insecure-storage', '--json'])).stdout) as { id: string; secret: string };
    expect((await onFiles(['watch', '--once', '--budget', '100/min', '--accounts', accountsFile(a)])).exitCode).toBe(0);

    const dryRun = await runCli(['state', 'import', '--dry-run', '--json'], { env: a.env, home: a.home });
    expect(JSON.parse(dryRun.stdout).ledgers.filter((row: { ledger: string }) => ['hooks', 'watch state'].includes(row.ledger))).toEqual([
      { ledger: 'hooks', copied: 1, already_there: 0 },
      { ledger: 'watch state', copied: 1, already_there: 0 },
    ]);
    expect(await stateSavedAt(namespace)).toBeUndefined();
    expect((await runCli(['state', 'import'], { env: a.env, home: a.home })).exitCode).toBe(0);
    const again = await runCli(['state', 'import', '--json'], { env: a.env, home: a.home });
    expect(JSON.parse(again.stdout).ledgers.filter((row: { ledger: string }) => ['hooks', 'watch state'].includes(row.ledger))).toEqual([
      { ledger: 'hooks', copied: 0, already_there: 1 },
      { ledger: 'watch state', copied: 0, already_there: 1 },
    ]);
    expect(await stateSavedAt(namespace)).toBeDefined();

    const b = machine('b', mock.keys.readOnly, namespace);
    expect(JSON.parse((await runCli(['hooks', 'list', '--json'], { env: b.env, home: b.home })).stdout).hooks.map((hook: { id: string }) => hook.id)).toEqual([added.id]);
    const backup = join(b.home, 'backup');
    expect((await runCli(['state', 'export', '--to', backup], { env: b.env, home: b.home })).exitCode).toBe(0);
    const exported = JSON.parse(readFileSync(join(backup, 'hooks.json'), 'utf8')) as { hooks: Array<{ id: string; secrets: Array<{ secret: string }> }> };
    expect(exported.hooks.map((hook) => [hook.id, hook.secrets[0]!.secret])).toEqual([[added.id, added.secret]]);
    expect(JSON.parse(readFileSync(join(backup, 'watch-state.json'), 'utf8'))).toMatchObject({ format: 'taxprep-watch-state', base_url: mock.baseUrl });
  }, 60_000);
});


describe.skipIf(unavailable !== undefined)('state import and export of the webhook outbox', () => {
  /** Machine `on` without the shared store: its own files. */
  const onFiles = (on: Machine) => {
    const { TAXPREP_STATE_URL: _url, ...filesOnly } = on.env;
    return (args: string[]) => runCli(args, { env: filesOnly, home: on.home });
  };
  const withStore = (on: Machine) => (args: string[]) => runCli(args, { env: on.env, home: on.home });
  const outboxRow = (stdout: string) => (JSON.parse(stdout).ledgers as Array<{ ledger: string }>).find((row) => row.ledger === 'webhook outbox');
  const deliveries = async (run: (args: string[]) => ReturnType<typeof runCli>) =>
    JSON.parse((await run(['hooks', 'deliveries', '--json'])).stdout).deliveries as Array<{ webhook_id: string; status: string; attempts: number; type: string }>;
  const sharedOutboxRows = async (namespace: string) =>
    Number((await database.query(`SELECT count(*) AS n FROM taxprep_state.ledger_lines WHERE namespace = $1 AND kind = 'outbox'`, [namespace])).rows[0].n);

  /** A hook on `on`'s files to a receiver answering 500 until `answering.ok`, and one watch pass that records the baseline. */
  async function machineWithHook(on: Machine, answering: { ok: boolean }) {
    const target = await startReceiver(servers, () => ({ status: answering.ok ? 204 : 500 }));
    const added = await onFiles(on)(['hooks', 'add', target.url, '--events', 'item.*', '--retry-schedule', '1h,1h', '--insecure-storage', '--json']);
    expect(added.exitCode, added.stderr).toBe(0);
    target.secrets.push((JSON.parse(added.stdout) as { secret: string }).secret);
    expect((await onFiles(on)(['watch', '--once', '--budget', '100/min', '--accounts', accountsFile(on)])).exitCode).toBe(0);
    return target;
  }

  /** Two changes queued on `on`'s files, each tried once (HTTP 500) and waiting an hour for its retry. */
  async function queueTwo(on: Machine, prefix: string) {
    await addItem(`${prefix} one`);
    await addItem(`${prefix} two`);
    expect((await onFiles(on)(['watch', '--once', '--budget', '100/min', '--accounts', accountsFile(on)])).exitCode).not.toBe(10);
    const pending = (await deliveries(onFiles(on))).filter((delivery) => delivery.status === 'pending');
    expect(pending.map((delivery) => delivery.attempts)).toEqual([1, 1]);
    return pending.map((delivery) => delivery.webhook_id);
  }

  it('moves pending deliveries into the store once, with their ids and bodies; the machine never sends them again; export moves them back out', async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    const answering = { ok: false };
    const target = await machineWithHook(a, answering);
    const ids = await queueTwo(a, 'queued on A');
    const bodiesSentByA = new Map(target.received.map((request) => [request.id, request.body]));
    expect([...bodiesSentByA.keys()].sort()).toEqual([...ids].sort());

    const dryRun = await withStore(a)(['state', 'import', '--dry-run', '--json']);
    expect(dryRun.exitCode, dryRun.stderr).toBe(0);
    expect(outboxRow(dryRun.stdout)).toEqual({ ledger: 'webhook outbox', copied: 2, already_there: 0 });
    expect(await sharedOutboxRows(namespace)).toBe(0);

    const imported = await withStore(a)(['state', 'import']);
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(imported.stderr).toContain('webhook outbox: copied 2, 0 already there');
    expect((await deliveries(withStore(a))).map(({ webhook_id, status, attempts }) => ({ webhook_id, status, attempts })).sort((x, y) => (x.webhook_id < y.webhook_id ? -1 : 1))).toEqual(
      [...ids].sort().map((webhook_id) => ({ webhook_id, status: 'pending', attempts: 1 })),
    );
    expect((await deliveries(onFiles(a))).map((delivery) => delivery.status)).toEqual(['moved', 'moved']);

    answering.ok = true;
    const before = target.received.length;
    expect((await onFiles(a)(['hooks', 'deliver', '--retry-now'])).exitCode).toBe(0);
    expect(target.received.length).toBe(before);
    const sent = await withStore(a)(['hooks', 'deliver', '--retry-now']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    const sentByStore = target.received.slice(before);
    expect(sentByStore.map((request) => request.id).sort()).toEqual([...ids].sort());
    for (const request of sentByStore) {
      expect(request.verified).toBe(true);
      expect(request.body).toBe(bodiesSentByA.get(request.id));
    }

    const again = await withStore(a)(['state', 'import', '--json']);
    expect(outboxRow(again.stdout)).toEqual({ ledger: 'webhook outbox', copied: 0, already_there: 2 });

    // Out again: two more changes moved in, then exported to machine B's files, which sends them; the store does not.
    answering.ok = false;
    const later = await queueTwo(a, 'queued later on A');
    expect(outboxRow((await withStore(a)(['state', 'import', '--json'])).stdout)).toEqual({ ledger: 'webhook outbox', copied: 2, already_there: 2 });
    const b = machine('b', mock.keys.readOnly, namespace);
    const exported = await withStore(b)(['state', 'export', '--json']);
    expect(exported.exitCode, exported.stderr).toBe(0);
    // The delivered history goes too (hooks deliveries and recover there know it), counted with the pending.
    expect(outboxRow(exported.stdout)).toEqual({ ledger: 'webhook outbox', copied: 4, already_there: 0 });
    answering.ok = true;
    const beforeExport = target.received.length;
    expect((await withStore(b)(['hooks', 'deliver', '--retry-now'])).exitCode).toBe(0);
    expect(target.received.length).toBe(beforeExport);
    expect((await onFiles(b)(['hooks', 'deliver', '--retry-now'])).exitCode).toBe(0);
    expect(target.received.slice(beforeExport).map((request) => request.id).sort()).toEqual([...later].sort());
    expect(outboxRow((await withStore(b)(['state', 'export', '--json'])).stdout)).toEqual({ ledger: 'webhook outbox', copied: 0, already_there: 4 });
  }, 120_000);

  it('beside a watch holding the lease, or one on the machine holding its outbox, import exits 10 naming it and copies nothing', async () => {
    const namespace = freshNamespace();
    const a = machine('a', mock.keys.acme, namespace);
    await machineWithHook(a, { ok: false });
    await queueTwo(a, 'queued beside a watch');
    const watch = startWatch(machine('b', mock.keys.readOnly, namespace));
    await until(() => watch.told().some((event) => event.watch === 'holding'), 'B to hold the lease');

    const imported = await withStore(a)(['state', 'import']);
    expect(imported.exitCode).toBe(10);
    expect(imported.stderr).toContain(`(pid ${watch.child.pid})`);
    expect(await sharedOutboxRows(namespace)).toBe(0);
    expect(JSON.parse((await withStore(a)(['hooks', 'list', '--json'])).stdout).hooks).toEqual([]);
    expect((await deliveries(onFiles(a))).map((delivery) => delivery.status)).toEqual(['pending', 'pending']);

    // The source's outbox too: a watch on A's files holds it, so nothing leaves A while it could send.
    watch.child.kill('SIGKILL');
    await watch.result;
    const { TAXPREP_STATE_URL: _url, ...filesOnly } = a.env;
    const { child, result } = startCli(['watch', '--budget', '100/min', '--accounts', accountsFile(a)], { env: filesOnly, home: a.home, stdin: 'ignore' });
    running.push({ machine: a, child, result, output: { stdout: '', stderr: '' }, told: () => [], changes: () => [] });
    const outboxLocked = () => (readdirSync(a.home, { recursive: true }) as string[]).some((file) => /outbox[\\/].*\.ndjson\.lock$/.test(file));
    await until(outboxLocked, "A's watch to hold its outbox");
    const besideLocalWatch = await withStore(a)(['state', 'import']);
    expect(besideLocalWatch.exitCode).toBe(10);
    expect(besideLocalWatch.stderr).toContain(`pid ${child.pid}`);
    expect(await sharedOutboxRows(namespace)).toBe(0);
    expect(JSON.parse((await withStore(a)(['hooks', 'list', '--json'])).stdout).hooks).toEqual([]);
  }, 120_000);
});
