import { UsageError } from '../errors';
import { parseDuration } from '../lib/duration';
import type { Snapshot } from './changes';

/**
 * Planning a pass to fit a budget of requests: pure functions, tested without a service.
 *
 * The order of a pass: the partner-wide deliverable list first (one request per 100 deliverables,
 * and it names accounts too), then accounts never looked at, then the status of the projects most
 * likely to change (`waiting_on_client` and `in_progress`), then the others, a new look at each
 * account's project list (new projects, and status and progress of every project in one request),
 * and `completed` projects last. Within a rank, what was read longest ago goes first, so whatever a
 * pass cannot reach comes first in a later one.
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

/** When the next request may start (ms since the epoch): now, or when the oldest of the window leaves it. */
export function nextSlot(budget: Budget, sentAt: readonly number[], nowMs: number): number {
  const recent = sentAt.filter((at) => at > nowMs - budget.windowMs).sort((a, b) => a - b);
  if (recent.length < budget.requests) return nowMs;
  return recent[recent.length - budget.requests]! + budget.windowMs;
}

export type Task = { kind: 'projects'; account_id: number } | { kind: 'status'; project_id: number; account_id: number | null };

/** Lower ranks go first. */
const STATUS_RANK: Record<string, number> = { waiting_on_client: 2, in_progress: 2, in_review: 3, completed: 5 };
const RANK = { newAccount: 1, otherStatus: 3, listAgain: 4 } as const;

/**
 * Every task of a full look, in the order a pass takes them (the deliverable list aside: it always
 * comes first). `accounts` are the accounts to cover; projects are those the snapshot knows of them.
 */
export function planTasks(snapshot: Snapshot, accounts: readonly number[]): Task[] {
  const covered = new Set(accounts);
  const ranked: Array<{ task: Task; rank: number; readAt: string }> = [];
  for (const account of accounts) {
    const listedAt = snapshot.accounts[account]?.listed_at;
    ranked.push({ task: { kind: 'projects', account_id: account }, rank: listedAt === undefined ? RANK.newAccount : RANK.listAgain, readAt: listedAt ?? '' });
  }
  for (const [id, project] of Object.entries(snapshot.projects)) {
    if (project.account_id !== null && !covered.has(project.account_id)) continue;
    const rank = STATUS_RANK[project.status ?? ''] ?? RANK.otherStatus;
    ranked.push({ task: { kind: 'status', project_id: Number(id), account_id: project.account_id }, rank, readAt: project.checked_at ?? '' });
  }
  ranked.sort((a, b) => a.rank - b.rank || a.readAt.localeCompare(b.readAt) || idOf(a.task) - idOf(b.task));
  return ranked.map(({ task }) => task);
}

function idOf(task: Task): number {
  return task.kind === 'projects' ? task.account_id : task.project_id;
}

/** Requests the deliverable list takes: one per 100 deliverables, at least one. */
export function deliverablePages(knownDeliverables: number): number {
  return Math.max(1, Math.ceil(knownDeliverables / 100));
}

/**
 * How fresh what the snapshot knows of an account is: the oldest of its project list's reading and
 * the status readings of its projects not completed; undefined when it was never read.
 */
export function accountReadAt(snapshot: Snapshot, account: number): string | undefined {
  const listedAt = snapshot.accounts[account]?.listed_at;
  if (listedAt === undefined) return undefined;
  let oldest = listedAt;
  for (const project of Object.values(snapshot.projects)) {
    if (project.account_id !== account || project.status === 'completed') continue;
    const checkedAt = project.checked_at;
    if (checkedAt === undefined) return undefined;
    if (checkedAt < oldest) oldest = checkedAt;
  }
  return oldest;
}
