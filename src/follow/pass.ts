import type { TolerantResponseOf } from '../api/tolerant';
import type { ApiClient } from '../api/types';
import { ApiError, CliError, EXIT } from '../errors';
import { readRateLimit } from '../batch/pacer';
import type { Clock } from '../types';
import { itemKey, type ItemFacts, type Observations, type Snapshot } from './changes';
import { allowance, nextSlot, planTasks, type Budget, type Task } from './planner';

/**
 * One pass of `taxprep watch`: reads, within the budget, the oldest readings of a full look (see
 * ./planner.ts), and returns what it read. Nothing is compared or written here (see ./changes.ts
 * and ./state.ts), so a pass cut short by Ctrl-C or a kill changes nothing.
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
  /** Start times of recent requests (ms since the epoch), added to as requests start. */
  sentAt: number[];
  /** `--once`: spend only what the budget allows now; otherwise wait for each slot. */
  waitForSlots: boolean;
  /** The most requests this pass sends before its changes are printed. */
  maxRequests: number;
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
    observations: { deliverables: [], deliverablePagesRead: [], projectLists: [], projectStatuses: [] },
    deliverableAccounts: [],
    unknownAccounts: new Map(),
    goneProjects: [],
    requests: 0,
  };

  /** Waits for (or, with --once, checks) a slot of the budget; false when the pass has spent its share. */
  const takeSlot = async (): Promise<boolean> => {
    if (result.requests >= input.maxRequests) return false;
    const nowMs = clock.now().getTime();
    if (!input.waitForSlots) {
      if (allowance(budget, sentAt, nowMs) === 0) return false;
    } else {
      const waitMs = nextSlot(budget, sentAt, nowMs) - nowMs;
      if (waitMs > 0) await clock.sleep(waitMs, signal);
    }
    // A request counts from its start: the service counts it when it arrives, before it answers.
    sentAt.push(clock.now().getTime());
    result.requests += 1;
    return true;
  };
  const learn = (headers: Record<string, string>) => {
    const reading = readRateLimit(headers, clock.now().getTime());
    if (reading !== undefined) result.keyLimit = reading.limit;
  };

  const tasks: Task[] = planTasks(input.snapshot, input.accounts);
  const planned = new Set(tasks.map(taskKey));
  /** The readings this pass made: none is made twice. */
  const done = new Set<string>();
  try {
    while (tasks.length > 0 && (await takeSlot())) {
      const task = tasks.shift()!;
      done.add(taskKey(task));
      const found = await runTask(api, task, result, signal, learn);
      // What a reading finds for the first time is read next, so that it is part of this look: the
      // next page of deliverables, the projects of an account the list named, the status (items)
      // of a project never read (an item resolved before its project's first status read would be lost),
      // unless this pass read it already (a status never read is planned first of all).
      const next = found.filter((follow) => {
        const key = taskKey(follow);
        const fresh = follow.kind === 'status' ? !done.has(key) && input.snapshot.projects[follow.project_id]?.items === undefined : !planned.has(key);
        planned.add(key);
        return fresh;
      });
      if (next.length === 0) continue;
      const moved = new Set(next.map(taskKey));
      tasks.splice(0, tasks.length, ...next, ...tasks.filter((later) => !moved.has(taskKey(later))));
    }
  } catch (error) {
    if (error instanceof ApiError && error.code === 'RATE_LIMIT_EXCEEDED') result.rateLimited = error;
    else throw error;
  }
  return result;
}

function taskKey(task: Task): string {
  return task.kind === 'deliverables' ? `d${task.page}` : task.kind === 'projects' ? `a${task.account_id}` : `p${task.project_id}`;
}

/** Reads one task into the result; returns the readings it makes known (see `runPass`). */
async function runTask(api: ApiClient, task: Task, result: PassResult, signal: AbortSignal, learn: (headers: Record<string, string>) => void): Promise<Task[]> {
  try {
    if (task.kind === 'deliverables') {
      const response = await api.call('listDeliverables', { query: { limit: PAGE_SIZE, offset: task.page * PAGE_SIZE }, signal });
      learn(response.headers);
      result.observations.deliverablePagesRead!.push(task.page);
      const found: Task[] = [];
      for (const deliverable of response.data.deliverables) {
        const id = numberOrNull(deliverable.id);
        const accountId = numberOrNull(deliverable.account_id);
        if (id === null) continue;
        if (accountId !== null) {
          if (!result.deliverableAccounts.includes(accountId)) result.deliverableAccounts.push(accountId);
          found.push({ kind: 'projects', account_id: accountId });
        }
        result.observations.deliverables.push({
          id,
          project_id: numberOrNull(deliverable.project_id),
          account_id: accountId,
          status: stringOrNull(deliverable.status),
          title: stringOrNull(deliverable.title),
          expires_at: stringOrNull(deliverable.expires_at),
        });
      }
      return response.data.has_more === true ? [{ kind: 'deliverables', page: task.page + 1 }, ...found] : found;
    }
    if (task.kind === 'projects') {
      const response = await api.call('listProjects', { params: { account_id: task.account_id }, signal });
      learn(response.headers);
      const projects = response.data.projects.flatMap((project) => {
        const id = numberOrNull(project.id);
        if (id === null) return [];
        return [{ id, status: stringOrNull(project.status), progress_percentage: numberOrNull(project.progress_percentage), estimated_completion: stringOrNull(project.estimated_completion) }];
      });
      result.observations.projectLists.push({ read: readingsSoFar(result), account_id: task.account_id, projects });
      return projects.map((project): Task => ({ kind: 'status', project_id: project.id, account_id: task.account_id }));
    }
    const response = await api.call('getProjectStatus', { params: { project_id: task.project_id }, signal });
    learn(response.headers);
    result.observations.projectStatuses.push({ ...observeStatus(task.project_id, response.data, task.account_id), read: readingsSoFar(result) });
    return [];
  } catch (error) {
    // A record that is gone or not this partner's: said once by the caller, then left out.
    if (task.kind === 'deliverables' || !(error instanceof ApiError) || (error.exitCode !== EXIT.NOT_FOUND && error.code !== 'ACCESS_DENIED')) throw error;
    if (task.kind === 'projects') result.unknownAccounts.set(task.account_id, error.code);
    else result.goneProjects.push(task.project_id);
    return [];
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
