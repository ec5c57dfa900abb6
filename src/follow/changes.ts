/**
 * What `taxprep watch` knows of the partner's work, and the changes between two looks at it: pure
 * functions of plain data, so that the rules of "what changed" are tested without a service.
 *
 * The contract has no events, so changes are found by comparing what one pass read with what the
 * state file remembers. A pass reads only part of the work when the budget is short, so only what
 * it read is compared: a project not read in this pass keeps its old facts and produces nothing.
 */

/** An outstanding item as the status endpoint gives it. */
export interface ItemFacts {
  type: string;
  description: string;
  priority: string;
  requested_at: string | null;
}

export interface ProjectFacts {
  account_id: number | null;
  status: string | null;
  progress_percentage: number | null;
  estimated_completion: string | null;
  /** Open outstanding items by `itemKey`; undefined until the project's status was read once. */
  items?: Record<string, ItemFacts>;
  /** When the project's own status endpoint was last read (ISO), for planning. */
  checked_at?: string;
}

export interface DeliverableFacts {
  project_id: number | null;
  account_id: number | null;
  status: string | null;
  title: string | null;
  expires_at: string | null;
}

export interface AccountFacts {
  /** When the account's project list was last read (ISO): how fresh its data is. */
  listed_at?: string;
}

/** What the state file remembers between runs. Keys are ids as strings (JSON objects). */
export interface Snapshot {
  /** When the deliverable list was first read (ISO): before that, no deliverable is new. */
  deliverables_read_at?: string;
  /** When each page of the deliverable list (100 a page) was last read (ISO), for planning. */
  deliverable_pages_read_at?: string[];
  deliverables: Record<string, DeliverableFacts>;
  projects: Record<string, ProjectFacts>;
  accounts: Record<string, AccountFacts>;
}

export function emptySnapshot(): Snapshot {
  return { deliverables: {}, projects: {}, accounts: {} };
}

/**
 * What one pass read; each part may be empty when the budget did not reach it. `read` numbers the
 * readings of projects in the order they were made: a list and a status read of the same project
 * are applied in that order, so a project that moved between them is reported once, old to new
 * (without it, lists come before statuses).
 */
export interface Observations {
  /** Deliverables from `GET /deliverables` pages (as many pages as were read; none when none was). */
  deliverables: Array<DeliverableFacts & { id: number }>;
  /** The pages of the deliverable list that were read (from 0), even empty ones. */
  deliverablePagesRead?: number[];
  /** Accounts whose project list was read, with every project it held. */
  projectLists: Array<{ account_id: number; projects: Array<Omit<ProjectFacts, 'items' | 'checked_at' | 'account_id'> & { id: number }>; read?: number }>;
  /** Projects whose status endpoint was read. */
  projectStatuses: Array<Omit<ProjectFacts, 'checked_at'> & { id: number; items: Record<string, ItemFacts>; read?: number }>;
}

/**
 * The names of the changes, the `event` field of `watch --json`. Stable: a script may branch on
 * them. `old` and `new` are the values before and after (null when there was none).
 */
export const CHANGE_EVENTS = [
  'deliverable.appeared',
  'deliverable.status',
  'project.appeared',
  'project.status',
  'project.progress',
  'project.estimated_completion',
  'item.appeared',
  'item.resolved',
] as const;
export type ChangeEvent = (typeof CHANGE_EVENTS)[number];

/** One change, exactly as `watch --json` prints it (one object a line). */
export interface Change {
  event: ChangeEvent;
  account_id: number | null;
  project_id: number;
  /** Deliverable events only. */
  deliverable_id?: number;
  /** Item events only: the item (its description, type, priority, requested_at). */
  item?: ItemFacts;
  old: unknown;
  new: unknown;
  /** When taxprep read the new value (ISO 8601). */
  seen_at: string;
}

/** An outstanding item has no id in the contract: it is known by what it says and when it was asked. */
export function itemKey(item: ItemFacts): string {
  return JSON.stringify([item.type, item.description, item.requested_at]);
}

const PROJECT_FIELDS = [
  ['status', 'project.status'],
  ['progress_percentage', 'project.progress'],
  ['estimated_completion', 'project.estimated_completion'],
] as const;

/**
 * The changes between `before` and what a pass read, and the snapshot after it. `baseline` (the
 * first run) records everything and reports nothing. An account listed for the first time is a
 * baseline of its own: adding accounts to watch does not report each of their projects as new.
 * `initial` (`--initial`) reports instead what is read for the first time as having appeared.
 */
export function applyObservations(
  before: Snapshot,
  seen: Observations,
  seenAt: string,
  options: { baseline: boolean; initial?: boolean },
): { after: Snapshot; changes: Change[] } {
  const initial = options.initial === true;
  // Entries are replaced, never changed in place: copies of the records are enough (a deep copy
  // of thousands of projects on every pass was most of a long watch's time).
  const after: Snapshot = { ...before, deliverables: { ...before.deliverables }, projects: { ...before.projects }, accounts: { ...before.accounts } };
  const changes: Change[] = [];
  const report = (change: Omit<Change, 'seen_at'>) => {
    if (!options.baseline) changes.push({ ...change, seen_at: seenAt });
  };

  // A deliverable is new only against a list read before (a first run cut short before it is not).
  const knownList = initial || after.deliverables_read_at !== undefined;
  for (const deliverable of seen.deliverables) {
    const { id, ...facts } = deliverable;
    const previous = after.deliverables[id];
    const base = { account_id: facts.account_id, project_id: facts.project_id ?? 0, deliverable_id: id };
    if (previous === undefined) {
      if (knownList) report({ event: 'deliverable.appeared', ...base, old: null, new: facts.status });
    } else if (previous.status !== facts.status) report({ event: 'deliverable.status', ...base, old: previous.status, new: facts.status });
    after.deliverables[id] = facts;
  }
  // An empty list read is a list known: the partner's first deliverable is then reported.
  const pagesRead = seen.deliverablePagesRead ?? [];
  if ((pagesRead.length > 0 || seen.deliverables.length > 0) && after.deliverables_read_at === undefined) after.deliverables_read_at = seenAt;
  if (pagesRead.length > 0) {
    const readAt = after.deliverable_pages_read_at ?? [];
    // '' for a page never read, so that the list stays JSON without holes.
    after.deliverable_pages_read_at = Array.from({ length: Math.max(readAt.length, ...pagesRead.map((page) => page + 1)) }, (_, page) => (pagesRead.includes(page) ? seenAt : (readAt[page] ?? '')));
  }

  const readings = [
    ...seen.projectLists.map((list, index) => ({ order: list.read ?? index, list, status: undefined })),
    ...seen.projectStatuses.map((status, index) => ({ order: status.read ?? seen.projectLists.length + index, list: undefined, status })),
  ].sort((a, b) => a.order - b.order);
  for (const reading of readings) {
    if (reading.list !== undefined) applyList(reading.list);
    else applyStatus(reading.status!);
  }
  return { after, changes };

  function applyList(list: Observations['projectLists'][number]): void {
    const knownAccount = initial || after.accounts[list.account_id]?.listed_at !== undefined;
    for (const { id, ...facts } of list.projects) {
      const previous = after.projects[id];
      if (previous === undefined && knownAccount) report({ event: 'project.appeared', account_id: list.account_id, project_id: id, old: null, new: facts.status });
      after.projects[id] = mergeProject(previous, { ...facts, account_id: list.account_id }, report, id);
    }
    after.accounts[list.account_id] = { ...after.accounts[list.account_id], listed_at: seenAt };
  }

  function applyStatus(status: Observations['projectStatuses'][number]): void {
    const { id, items, read: _read, ...facts } = status;
    const previous = after.projects[id];
    const merged = mergeProject(previous, facts, report, id);
    const previousItems = previous?.items ?? (initial ? {} : undefined);
    if (previousItems !== undefined) {
      for (const [key, item] of Object.entries(items)) {
        if (!(key in previousItems)) report({ event: 'item.appeared', account_id: merged.account_id, project_id: id, item, old: null, new: item });
      }
      for (const [key, item] of Object.entries(previousItems)) {
        if (!(key in items)) report({ event: 'item.resolved', account_id: merged.account_id, project_id: id, item, old: item, new: null });
      }
    }
    after.projects[id] = { ...merged, items, checked_at: seenAt };
  }
}

/** A project's new facts over its old ones, reporting each field that moved. */
function mergeProject(
  previous: ProjectFacts | undefined,
  facts: Omit<ProjectFacts, 'items' | 'checked_at'>,
  report: (change: Omit<Change, 'seen_at'>) => void,
  id: number,
): ProjectFacts {
  if (previous !== undefined) {
    for (const [field, event] of PROJECT_FIELDS) {
      if (previous[field] !== facts[field]) report({ event, account_id: facts.account_id ?? previous.account_id, project_id: id, old: previous[field], new: facts[field] });
    }
  }
  return { ...previous, ...facts, account_id: facts.account_id ?? previous?.account_id ?? null };
}
