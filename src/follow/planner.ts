import { UsageError } from '../errors';
import { parseDuration } from '../lib/duration';
import type { Snapshot } from './changes';

/**
 * Planning the passes of `taxprep watch` to fit a budget of requests: pure functions, tested
 * without a service.
 *
 * A full look is every reading that can show a change: each page of the partner-wide deliverable
 * list (every deliverable, and the accounts they name), each account's project list (every
 * project's status, progress and estimated completion, and new projects, in one request), and each
 * project's status (its outstanding items). A pass takes them oldest reading first, whatever the
 * project's status: a round, so that every reading comes back after one full look's worth of
 * requests, and a change is reported within a bound set by the budget (`changeBoundMs`), never
 * left behind readings ranked before it.
 */

/** `--budget`: at most `requests` in any `windowMs`. */
export interface Budget {
  requests: number;
  windowMs: number;
}

export const DEFAULT_BUDGET: Budget = { requests: 20, windowMs: 60_000 };
/** More than the contract's 100 a minute makes no sense; the key's own limit lowers it further. */
export const MAX_BUDGET_PER_MINUTE = 100;
const BUDGET_RULE = `must be <requests>/min (or /<duration>), such as 20/min or 5/10s: at most ${MAX_BUDGET_PER_MINUTE} a minute, a window from 1s to 1h`;

/** `20/min`, `20/m`, `5/10s`, `300/1h`. */
export function parseBudget(text: string): Budget {
  const match = /^\s*(\d{1,6})\s*\/\s*(\S+)\s*$/.exec(text);
  const unit = match?.[2]?.toLowerCase();
  const windowMs = unit === undefined ? undefined : unit === 'min' || unit === 'm' ? 60_000 : unit === 's' ? 1000 : unit === 'h' ? 3_600_000 : parseDuration(unit);
  const requests = Number(match?.[1]);
  if (windowMs === undefined || !(windowMs >= 1000 && windowMs <= 3_600_000) || !(requests >= 1) || (requests * 60_000) / windowMs > MAX_BUDGET_PER_MINUTE) {
    throw new UsageError(`--budget ${BUDGET_RULE}`, { details: { '--budget': [BUDGET_RULE] } });
  }
  return { requests, windowMs };
}

export function formatBudget(budget: Budget): string {
  return budget.windowMs === 60_000 ? `${budget.requests}/min` : `${budget.requests}/${Math.round(budget.windowMs / 1000)}s`;
}

/** How many requests may start now without more than the budget in any window: the times of the last ones are known. */
export function allowance(budget: Budget, sentAt: readonly number[], nowMs: number): number {
  const recent = sentAt.filter((at) => at > nowMs - budget.windowMs).length;
  return Math.max(0, budget.requests - recent);
}

/** When the budget next allows a request (ms since the epoch): now, or when enough of the window's requests have left it. */
export function allowedAgainAt(budget: Budget, sentAt: readonly number[], nowMs: number): number {
  const recent = sentAt.filter((at) => at > nowMs - budget.windowMs).sort((a, b) => a - b);
  return recent.length < budget.requests ? nowMs : recent[recent.length - budget.requests]! + budget.windowMs;
}

/**
 * When the next request of a long watch may start (ms since the epoch): no more than the budget in
 * any window, and evenly spaced (one every window / requests), so that a full look takes the same
 * time at every point of the round instead of a burst and then a window of silence.
 */
export function nextSlot(budget: Budget, sentAt: readonly number[], nowMs: number): number {
  const recent = sentAt.filter((at) => at > nowMs - budget.windowMs).sort((a, b) => a - b);
  const spaced = recent.length === 0 ? nowMs : Math.max(nowMs, recent[recent.length - 1]! + budget.windowMs / budget.requests);
  if (recent.length < budget.requests) return spaced;
  return Math.max(spaced, recent[recent.length - budget.requests]! + budget.windowMs);
}

export type Task =
  | { kind: 'deliverables'; page: number }
  | { kind: 'projects'; account_id: number }
  | { kind: 'status'; project_id: number; account_id: number | null };

/** Between readings of the same age (all those never made, or one pass's): the deliverable list, the lists, the statuses. */
const KIND_ORDER: Record<Task['kind'], number> = { deliverables: 0, projects: 1, status: 2 };

/**
 * Every task of a full look, oldest reading first (those never made first of all). `accounts`
 * are the accounts to cover besides those the known deliverables name; projects are those the
 * snapshot knows of them.
 */
export function planTasks(snapshot: Snapshot, accounts: readonly number[]): Array<Task & { readAt: string }> {
  const covered = coveredAccounts(snapshot, accounts);
  const tasks: Array<Task & { readAt: string }> = [];
  for (let page = 0; page < deliverablePages(Object.keys(snapshot.deliverables).length); page += 1) {
    tasks.push({ kind: 'deliverables', page, readAt: snapshot.deliverable_pages_read_at?.[page] ?? '' });
  }
  for (const account of covered) tasks.push({ kind: 'projects', account_id: account, readAt: snapshot.accounts[account]?.listed_at ?? '' });
  for (const [id, project] of Object.entries(snapshot.projects)) {
    if (project.account_id !== null && !covered.has(project.account_id)) continue;
    tasks.push({ kind: 'status', project_id: Number(id), account_id: project.account_id, readAt: project.checked_at ?? '' });
  }
  // ISO times of one format: compared as plain strings (localeCompare is many times slower over thousands).
  return tasks.sort((a, b) => compareText(a.readAt, b.readAt) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || idOf(a) - idOf(b));
}

/** The accounts a full look covers: those given, and those the known deliverables name (in no order: planTasks sorts). */
function coveredAccounts(snapshot: Snapshot, accounts: readonly number[]): Set<number> {
  const covered = new Set(accounts);
  for (const deliverable of Object.values(snapshot.deliverables)) if (deliverable.account_id !== null) covered.add(deliverable.account_id);
  return covered;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function idOf(task: Task): number {
  return task.kind === 'deliverables' ? task.page : task.kind === 'projects' ? task.account_id : task.project_id;
}

/** Requests the deliverable list takes: one per 100 deliverables, at least one. */
export function deliverablePages(knownDeliverables: number): number {
  return Math.max(1, Math.ceil(knownDeliverables / 100));
}

/**
 * The requests of one full look. Accounts whose list was never read have projects not known yet:
 * counted as many as the listed accounts have on average (none when none was listed).
 */
export function fullLookRequests(snapshot: Snapshot, accounts: readonly number[]): number {
  const tasks = planTasks(snapshot, accounts);
  const listed = Object.values(snapshot.accounts).filter((account) => account.listed_at !== undefined).length;
  const neverListed = tasks.filter((task) => task.kind === 'projects' && task.readAt === '').length;
  const perAccount = listed === 0 ? 0 : Object.keys(snapshot.projects).length / listed;
  return tasks.length + Math.round(neverListed * perAccount);
}

/** The slack of the bound over one full look: what a pass reads before it prints (a quarter of a look at most). */
export const BOUND_FACTOR = 1.25;

/**
 * Within how long of happening a change is reported (ms), plus the time of one request: the
 * change is read again at most one full look after the reading before it, and printed at the end
 * of its pass, which is at most a quarter of a look long (`passRequests`).
 */
export function changeBoundMs(fullLook: number, budget: Budget): number {
  return (BOUND_FACTOR * fullLook * budget.windowMs) / budget.requests;
}

/** How many requests a pass of a long watch reads before it prints: a quarter of a full look, within one window's budget. */
export function passRequests(fullLook: number, budget: Budget): number {
  return Math.max(1, Math.min(budget.requests, Math.floor((BOUND_FACTOR - 1) * fullLook)));
}
