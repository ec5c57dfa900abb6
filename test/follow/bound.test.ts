import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, type WatchOptions } from '../../src/commands/watch/watch';
import { parseFixture } from '../../src/mock/fixture';
import type { Clock } from '../../src/types';
import { createTestContext } from '../helpers/context';
import { startMock, type RunningMock } from '../helpers/mock';

/**
 * Issue 23's bound: every change is reported within 1.25 x (requests of a full look / budget) of
 * happening, plus one request, whatever the statuses and however the budget falls across runs.
 * The real `watch` command runs in-process against the real mock on 127.0.0.1, on a clock of the
 * test's own: waits take no time, so a watch of many minutes runs in a moment, and the changes are
 * made (through the `/_mock` controls) at known moments of that clock.
 */

const KEY = 'tpk_boundTestKey000000000000001';
const ACCOUNTS = Array.from({ length: 20 }, (_, index) => 3001 + index);
/** Per account: two projects waiting on the client (an item each) and one in review. */
const projectIds = (account: number) => [account * 10, account * 10 + 1, account * 10 + 2];

function fixture() {
  const item = (description: string) => ({ type: 'missing_document', description, priority: 'high' });
  return parseFixture({
    partners: [{ id: 1, name: 'Bound Partners', api_keys: [{ key: KEY, label: 'bound' }] }],
    accounts: ACCOUNTS.map((id) => ({ id, partner_id: 1, email: `client.${id}@example.com`, first_name: 'Bound', last_name: 'Client' })),
    documents: [{ id: 90_001, account_id: 3001, filename: 'plan.txt', tax_year: 2025 }],
    projects: ACCOUNTS.flatMap((account) => {
      const [first, second, third] = projectIds(account) as [number, number, number];
      return [
        { id: first, account_id: account, type: 'tax_return', tax_year: 2025, status: 'waiting_on_client', progress_percentage: 20, outstanding_items: [item('W-2 from the employer')] },
        { id: second, account_id: account, type: 'quarterly_estimate', tax_year: 2025, status: 'waiting_on_client', progress_percentage: 10, outstanding_items: [item('Form 1099-DIV')] },
        {
          id: third, account_id: account, type: 'tax_planning', tax_year: 2025, status: 'in_review', progress_percentage: 90,
          ...(account === 3001 ? { deliverable: { id: 95_001, document_id: 90_001, title: '2025 plan', status: 'draft' } } : {}),
        },
      ];
    }),
  });
}

let mock: RunningMock;
let home: string;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [], fixture: fixture() });
});
afterAll(() => mock.close());
afterEach(() => mock.deps.store.reset());

/** The test's clock: waits move it forward at once, after `onWait` has made what falls due in between. */
function virtualClock(startMs: number, onWait: (fromMs: number, toMs: number) => Promise<void> = async () => {}) {
  const clock = {
    nowMs: startMs,
    now: () => new Date(clock.nowMs),
    async sleep(ms: number, signal?: AbortSignal) {
      if (signal?.aborted) throw signal.reason;
      const to = clock.nowMs + ms;
      await onWait(clock.nowMs, to);
      clock.nowMs = to;
      if (signal?.aborted) throw signal.reason;
    },
  };
  return clock satisfies Clock;
}

/** A home of the test's own, with `clients.txt` listing `accounts`; its path. */
function freshHome(accounts: readonly number[]): string {
  home = mkdtempSync(join(tmpdir(), 'taxprep-bound-'));
  const path = join(home, 'clients.txt');
  writeFileSync(path, `${accounts.join('\n')}\n`);
  return path;
}

function options(overrides: Partial<WatchOptions>): WatchOptions {
  return { once: true, budget: { requests: 20, windowMs: 60_000 }, accountsFile: undefined, ledgerPath: undefined, statePath: join(home, 'state.json'), resetState: false, initial: false, leaseMs: 30_000, ...overrides };
}

/** One `taxprep watch --json` run (or, with `tty`, a run on a terminal 160 columns wide); its printed changes. */
async function watch(
  clock: Clock,
  watchOptions: WatchOptions,
  signal?: AbortSignal,
  tty = false,
): Promise<{ exitCode: number; changes: Array<Record<string, unknown>>; stdout: string; stderr: string }> {
  const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY, XDG_STATE_HOME: join(home, 'state') };
  const t = createTestContext({ env, globals: { json: !tty, color: false }, clock, tty, columns: 160 });
  if (signal !== undefined) t.ctx.interrupted = () => signal;
  const exitCode = await run(t.ctx, watchOptions).finally(() => t.ctx.close());
  const changes = tty ? [] : t.stdout().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { exitCode, changes, stdout: t.stdout(), stderr: t.stderr() };
}

async function control(path: string, body?: unknown, method = 'POST'): Promise<any> {
  const response = await mock.request(`/_mock${path}`, { method, body });
  expect(response.status).toBeLessThan(300);
  return response.json;
}

/** The id of a project's open item whose description starts with `text`. */
const itemId = (project: number, text: string) => mock.deps.store.state.outstandingItems.find((item) => item.project_id === project && item.description.startsWith(text))!.id;

/** A change of every kind, on projects of every status and accounts all over the round: `[event, project]` as the watch must report it. */
const MOVES: Array<{ event: string; project: number; make: () => Promise<unknown> }> = [
  { event: 'project.status', project: 30_052, make: () => control('/projects/30052', { status: 'completed' }) },
  { event: 'project.progress', project: 30_192, make: () => control('/projects/30192', { progress_percentage: 93 }) },
  { event: 'project.estimated_completion', project: 30_112, make: () => control('/projects/30112', { estimated_completion: '2026-12-24T00:00:00Z' }) },
  { event: 'project.progress', project: 30_150, make: () => control('/projects/30150', { progress_percentage: 35 }) },
  { event: 'item.appeared', project: 30_162, make: () => control('/projects/30162/outstanding-items', { type: 'client_request', description: 'Confirm the filing status', priority: 'high' }) },
  { event: 'item.resolved', project: 30_081, make: () => control(`/projects/30081/outstanding-items/${itemId(30_081, 'Form 1099-DIV')}`, undefined, 'DELETE') },
  { event: 'item.resolved', project: 30_200, make: () => control(`/projects/30200/outstanding-items/${itemId(30_200, 'W-2')}`, undefined, 'DELETE') },
  { event: 'deliverable.status', project: 30_012, make: () => control('/deliverables/95001', { status: 'completed' }) },
  { event: 'deliverable.appeared', project: 30_132, make: () => control('/projects/30132/deliverable', { title: '2025 plan' }) },
];

/** Requests of a full look over the fixture: one deliverable page, 20 project lists, 60 statuses (and the deliverable's account is one of the 20). */
const FULL_LOOK = 1 + ACCOUNTS.length + 3 * ACCOUNTS.length;

describe('the bound over --once runs', () => {
  it('reports every change of every rank within 1.25 full looks at the budget, when each run can afford an eighth of a look', async () => {
    const accountsFile = freshHome(ACCOUNTS);
    // 10 a minute, runs a minute apart: each reads 10 of the 81 requests of a full look.
    const budget = { requests: 10, windowMs: 60_000 };
    const boundMs = (1.25 * FULL_LOOK * budget.windowMs) / budget.requests;
    const clock = virtualClock(Date.parse('2026-11-25T08:00:00Z'));
    const once = options({ budget, accountsFile });

    // A baseline over 9 runs (the first look), then moves made half-way between runs, spread over the round.
    for (let run = 0; run < 9; run += 1, clock.nowMs += 60_000) expect(await watch(clock, once)).toMatchObject({ exitCode: 0, changes: [] });
    const made = new Map<string, number>();
    const reported = new Map<string, number>();
    for (let run = 0; run < 46; run += 1) {
      const move = MOVES[run % 4 === 1 ? (run - 1) / 4 : -1];
      if (move !== undefined) {
        clock.nowMs += 30_000;
        await move.make();
        made.set(`${move.event} ${move.project}`, clock.nowMs);
        clock.nowMs += 30_000;
      } else clock.nowMs += 60_000;
      const result = await watch(clock, once);
      expect(result.exitCode).toBe(0);
      for (const change of result.changes) {
        const key = `${String(change.event)} ${String(change.project_id)}`;
        expect(reported.has(key), `${key} reported twice`).toBe(false);
        reported.set(key, Date.parse(String(change.seen_at)));
      }
    }
    expect([...reported.keys()].sort()).toEqual([...made.keys()].sort());
    for (const [key, at] of made) expect(reported.get(key)! - at, key).toBeLessThanOrEqual(boundMs);
  });
});

describe('the bound of a long watch', () => {
  it('at 100/min over 5 accounts, reports each change within 1.25 full looks at the budget', async () => {
    const accountsFile = freshHome(ACCOUNTS.slice(0, 5));
    const budget = { requests: 100, windowMs: 60_000 };
    // One deliverable page, 5 project lists and 15 statuses.
    const boundMs = (1.25 * (1 + 5 + 15) * budget.windowMs) / budget.requests;
    const startMs = Date.parse('2026-11-25T08:00:00Z');
    // Changes at odd moments of the watch's clock, once its baseline (the first 21 requests, 12.6 s) is done.
    const moves = [
      { atMs: startMs + 20_100, event: 'project.status', project: 30_012, make: () => control('/projects/30012', { status: 'completed' }) },
      { atMs: startMs + 27_700, event: 'project.progress', project: 30_030, make: () => control('/projects/30030', { progress_percentage: 45 }) },
      { atMs: startMs + 31_300, event: 'project.estimated_completion', project: 30_012, make: () => control('/projects/30012', { estimated_completion: '2026-12-31T00:00:00Z' }) },
      { atMs: startMs + 40_900, event: 'item.resolved', project: 30_041, make: () => control(`/projects/30041/outstanding-items/${itemId(30_041, 'Form 1099-DIV')}`, undefined, 'DELETE') },
      { atMs: startMs + 52_300, event: 'item.appeared', project: 30_052, make: () => control('/projects/30052/outstanding-items', { type: 'client_request', description: 'Confirm the filing status', priority: 'high' }) },
    ];
    const endMs = startMs + 52_300 + 2 * boundMs;
    const stop = new AbortController();
    const clock = virtualClock(startMs, async (fromMs, toMs) => {
      for (const move of moves) if (move.atMs > fromMs && move.atMs <= toMs) await move.make();
      if (toMs >= endMs) stop.abort(new Error('the test is over'));
    });
    const result = await watch(clock, options({ once: false, budget, accountsFile }), stop.signal);
    expect(result.exitCode).toBe(130);
    expect(result.changes.map((change) => `${String(change.event)} ${String(change.project_id)}`).sort()).toEqual(
      moves.map((move) => `${move.event} ${move.project}`).sort(),
    );
    for (const move of moves) {
      const change = result.changes.find((one) => one.event === move.event && one.project_id === move.project)!;
      expect(Date.parse(String(change.seen_at)) - move.atMs, move.event).toBeLessThanOrEqual(boundMs);
    }
  });
});

describe('watch on a terminal', () => {
  it('says what it does at start, dates a change as of its print, and says a coverage whose counts add up', async () => {
    const accountsFile = freshHome(ACCOUNTS.slice(0, 5));
    const budget = { requests: 20, windowMs: 60_000 };
    const startMs = Date.parse('2026-11-25T08:00:00Z');
    // A change ten minutes into the watch: printed then, it was seen "just now", not "in 10 minutes".
    const stop = new AbortController();
    let moved = false;
    const clock = virtualClock(startMs, async (_fromMs, toMs) => {
      if (!moved && toMs >= startMs + 600_000) {
        moved = true;
        await control('/projects/30030', { progress_percentage: 45 });
      }
      if (toMs >= startMs + 700_000) stop.abort(new Error('the test is over'));
    });
    const result = await watch(clock, options({ once: false, budget, accountsFile }), stop.signal, true);
    expect(result.exitCode).toBe(130);
    // 1 deliverable page, 5 lists, 15 statuses: 21 requests, 63 s at 20/min, 78.75 s with the slack.
    const opening = result.stderr.split('\r')[0]!.replace(/\s+/g, ' ');
    expect(opening).toMatch(
      /^watch: recording a baseline \(what is read for the first time is recorded, not reported; then changes\), over 5 accounts \(0 from the deliverable list, 5 from \S+clients\.txt, 0 from the ledgers\), and those the deliverable list names; budget 20\/min; a full look is 6 requests and one per project, /,
    );
    expect(result.stderr).toContain('Ctrl-C stops it.');
    expect(result.stdout).toMatch(/Changes seen 2026-11-25 08:1\d UTC \(just now\)\n/);
    expect(result.stdout).toMatch(/\nproject\.progress\nACCOUNT +PROJECT +WAS +NOW\n3003 +30030 +20 +45\n/);
    expect(result.stdout).not.toMatch(/\(in \d/);
    // The coverage, rewritten in place: every count of the full look is read or not yet, and they add up.
    const coverage = result.stderr.split(/\r\u001b\[2K|\n/).filter((line) => line.startsWith('watch: full look'));
    expect(coverage.length).toBeGreaterThan(5);
    for (const line of coverage) {
      const match = /^watch: full look (\d+) requests, (?:all read|(\d+) read, (\d+) not yet)/.exec(line);
      expect(match, line).not.toBeNull();
      if (match![2] !== undefined) expect(Number(match![2]) + Number(match![3])).toBe(Number(match![1]));
    }
    expect(coverage.at(-1)).toMatch(/^watch: full look 21 requests, all read, oldest \S+ old \([^)]+\); changes within 1m 19s at 20\/min; this pass read 5 requests/);
  });
});
