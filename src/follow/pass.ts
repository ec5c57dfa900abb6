import type { TolerantResponseOf } from '../api/tolerant';
import type { ApiClient } from '../api/types';
import { ApiError, CliError, EXIT } from '../errors';
import { readRateLimit } from '../batch/pacer';
import type { Clock } from '../types';
import { itemKey, type ItemFacts, type Observations, type Snapshot } from './changes';
import { allowance, deliverablePages, nextSlot, planTasks, type Budget, type Task } from './planner';

/**
 * One pass of `taxprep watch`: reads, within the budget, what the planner ranks first, and returns
 * what it read. Nothing is compared or written here (see ./changes.ts and ./state.ts), so a pass
 * cut short by Ctrl-C or a kill changes nothing.
 */

/** Deliverables per request: the contract's largest page. */
const PAGE_SIZE = 100;

export interface PassInput {
  api: ApiClient;
  clock: Clock;
  snapshot: Snapshot;
  /** Accounts to cover besides those the deliverable list names; unknown ones are left out by the caller. */
  accounts: readonly number[];
  budget: Budget;
  /** Send times of recent requests (ms since the epoch), updated as requests start. */
  sentAt: number[];
  /** `--once`: spend only what the budget allows now; otherwise wait for each slot. */
  waitForSlots: boolean;
  signal: AbortSignal;
}

export interface PassResult {
  observations: Observations;
  /** Accounts the deliverable list named. */
  deliverableAccounts: number[];
  /** Accounts the service refused to show (`ACCOUNT_NOT_FOUND`, `ACCESS_DENIED`), with the code. */
  unknownAccounts: Map<number, string>;
  /** Projects the service no longer knows. */
  goneProjects: number[];
  requests: number;
  /** Tasks of the full look that this pass did not reach. */
  tasksLeft: number;
  /** The key's limit per window as its answers said, when they did. */
  keyLimit?: number;
  /** Set when the service answered 429 even after retries: the pass stopped there. */
  rateLimited?: ApiError;
}

/** Errors that end a pass (kept for the next one in a long watch), not the command. */
export function isPassingTrouble(error: unknown): error is CliError {
  return error instanceof CliError && (error.exitCode === EXIT.RATE_LIMITED || error.exitCode === EXIT.NETWORK || error.exitCode === EXIT.SERVER);
}

export async function runPass(input: PassInput): Promise<PassResult> {
  const { api, clock, budget, sentAt, signal } = input;
  const result: PassResult = {
    observations: { deliverables: [], projectLists: [], projectStatuses: [] },
    deliverableAccounts: [],
    unknownAccounts: new Map(),
    goneProjects: [],
    requests: 0,
    tasksLeft: 0,
  };

  /** Waits for (or, with --once, checks) a slot of the budget; false when the pass has spent its share. */
  const takeSlot = async (): Promise<boolean> => {
    // A pass is at most one window's worth, so that changes print at least once a window.
    if (result.requests >= budget.requests) return false;
    const nowMs = clock.now().getTime();
    if (!input.waitForSlots) {
      if (allowance(budget, sentAt, nowMs) === 0) return false;
    } else {
      const waitMs = nextSlot(budget, sentAt, nowMs) - nowMs;
      if (waitMs > 0) await clock.sleep(waitMs, signal);
    }
    sentAt.push(clock.now().getTime());
    result.requests += 1;
    return true;
  };
  /**
   * A request occupies the window from its answer, not from when it left: the service counts it
   * somewhere in between, and the next window must not begin before that (requests go one at a time).
   */
  const answered = () => {
    sentAt[sentAt.length - 1] = clock.now().getTime();
  };
  const learn = (headers: Record<string, string>) => {
    const reading = readRateLimit(headers, clock.now().getTime());
    if (reading !== undefined) result.keyLimit = reading.limit;
  };

  const accounts = new Set<number>();
  try {
    for (let page = 0, pages = deliverablePages(Object.keys(input.snapshot.deliverables).length); page < pages; page += 1) {
      if (!(await takeSlot())) break;
      const response = await api.call('listDeliverables', { query: { limit: PAGE_SIZE, offset: page * PAGE_SIZE }, signal }).finally(answered);
      learn(response.headers);
      result.observations.deliverablesRead = true;
      for (const deliverable of response.data.deliverables) {
        const id = numberOrNull(deliverable.id);
        const accountId = numberOrNull(deliverable.account_id);
        if (id === null) continue;
        if (accountId !== null) accounts.add(accountId);
        result.observations.deliverables.push({
          id,
          project_id: numberOrNull(deliverable.project_id),
          account_id: accountId,
          status: stringOrNull(deliverable.status),
          title: stringOrNull(deliverable.title),
          expires_at: stringOrNull(deliverable.expires_at),
        });
      }
      // What the first page says decides how many pages this pass reads.
      const total = response.data.total_count ?? 0;
      pages = response.data.has_more === true ? Math.max(pages, page + 2, Math.ceil(total / PAGE_SIZE)) : page + 1;
    }
    result.deliverableAccounts = [...accounts];
    for (const account of input.accounts) accounts.add(account);

    const tasks = planTasks(input.snapshot, [...accounts].sort((a, b) => a - b));
    let done = 0;
    for (; done < tasks.length; done += 1) {
      if (!(await takeSlot())) break;
      const task = tasks[done]!;
      const listed = result.observations.projectLists.length;
      await runTask(api, task, result, signal, learn).finally(answered);
      // A project seen for the first time has its status read next, so that its items are part
      // of its first look: an item resolved before its project's first status read would be lost.
      const found = result.observations.projectLists.slice(listed).flatMap((list) => list.projects.map((project) => ({ id: project.id, account: list.account_id })));
      const unread = found.filter((project) => input.snapshot.projects[project.id]?.items === undefined);
      if (unread.length === 0) continue;
      const moved = new Set(unread.map((project) => project.id));
      const rest = tasks.splice(done + 1).filter((later) => later.kind !== 'status' || !moved.has(later.project_id));
      tasks.push(...unread.map((project): Task => ({ kind: 'status', project_id: project.id, account_id: project.account })), ...rest);
    }
    result.tasksLeft = tasks.length - done;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'RATE_LIMIT_EXCEEDED') result.rateLimited = error;
    else throw error;
  }
  return result;
}

async function runTask(api: ApiClient, task: Task, result: PassResult, signal: AbortSignal, learn: (headers: Record<string, string>) => void): Promise<void> {
  try {
    if (task.kind === 'projects') {
      const response = await api.call('listProjects', { params: { account_id: task.account_id }, signal });
      learn(response.headers);
      result.observations.projectLists.push({
        read: readingsSoFar(result),
        account_id: task.account_id,
        projects: response.data.projects.flatMap((project) => {
          const id = numberOrNull(project.id);
          if (id === null) return [];
          return [{ id, status: stringOrNull(project.status), progress_percentage: numberOrNull(project.progress_percentage), estimated_completion: stringOrNull(project.estimated_completion) }];
        }),
      });
      return;
    }
    const response = await api.call('getProjectStatus', { params: { project_id: task.project_id }, signal });
    learn(response.headers);
    result.observations.projectStatuses.push({ ...observeStatus(task.project_id, response.data, task.account_id), read: readingsSoFar(result) });
  } catch (error) {
    // A record that is gone or not this partner's: said once by the caller, then left out.
    if (!(error instanceof ApiError) || (error.exitCode !== EXIT.NOT_FOUND && error.code !== 'ACCESS_DENIED')) throw error;
    if (task.kind === 'projects') result.unknownAccounts.set(task.account_id, error.code);
    else result.goneProjects.push(task.project_id);
  }
}

/** Numbers the project readings in the order they were made (a pass reads one thing at a time). */
function readingsSoFar(result: PassResult): number {
  return result.observations.projectLists.length + result.observations.projectStatuses.length;
}

/** What the status endpoint says of a project, as the change model holds it. */
export function observeStatus(projectId: number, project: TolerantResponseOf<'getProjectStatus'>, accountId: number | null = null): Observations['projectStatuses'][number] {
  const items: Record<string, ItemFacts> = {};
  for (const raw of Array.isArray(project.outstanding_items) ? project.outstanding_items : []) {
    const item: ItemFacts = { type: String(raw.type ?? ''), description: String(raw.description ?? ''), priority: String(raw.priority ?? ''), requested_at: stringOrNull(raw.requested_at) };
    items[itemKey(item)] = item;
  }
  return {
    id: projectId,
    account_id: numberOrNull(project.account_id) ?? accountId,
    status: stringOrNull(project.status),
    progress_percentage: numberOrNull(project.progress_percentage),
    estimated_completion: stringOrNull(project.estimated_completion),
    items,
  };
}

export function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : null;
}

export function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
