import { describe, expect, it } from 'vitest';
import { applyObservations, emptySnapshot, itemKey, type ItemFacts, type Observations, type Snapshot } from '../../src/follow/changes';

const T0 = '2026-11-25T00:00:00.000Z';
const T1 = '2026-11-25T00:01:00.000Z';

const item = (description: string, priority = 'high'): ItemFacts => ({ type: 'missing_document', description, priority, requested_at: '2026-11-20T00:00:00.000Z' });
const itemsOf = (...items: ItemFacts[]) => Object.fromEntries(items.map((one) => [itemKey(one), one]));

function seen(parts: Partial<Observations>): Observations {
  return { deliverables: [], projectLists: [], projectStatuses: [], ...parts };
}

const project = { status: 'waiting_on_client', progress_percentage: 20, estimated_completion: '2026-12-07T00:00:00.000Z' };

/** A first look: account 1001 listed with project 5001, its status read with one item, and deliverable 9001 drafted. */
const firstLook = () =>
  seen({
    deliverables: [{ id: 9001, project_id: 5002, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null }],
    projectLists: [{ account_id: 1001, projects: [{ id: 5001, ...project }] }],
    projectStatuses: [{ id: 5001, account_id: 1001, ...project, items: itemsOf(item('W-2')) }],
  });

function baseline(): Snapshot {
  return applyObservations(emptySnapshot(), firstLook(), T0, { baseline: true }).after;
}

describe('applyObservations', () => {
  it('records a baseline and reports nothing', () => {
    const { after, changes } = applyObservations(
      emptySnapshot(),
      seen({ projectLists: [{ account_id: 1001, projects: [{ id: 5001, ...project }] }] }),
      T0,
      { baseline: true },
    );
    expect(changes).toEqual([]);
    expect(after.projects['5001']).toMatchObject({ account_id: 1001, status: 'waiting_on_client' });
    expect(after.accounts['1001']).toEqual({ listed_at: T0 });
  });

  it('reports nothing when nothing moved', () => {
    expect(applyObservations(baseline(), firstLook(), T1, { baseline: false }).changes).toEqual([]);
  });

  it('reports each moved field once, with its old and new value and when it was seen', () => {
    const moved = { status: 'in_progress', progress_percentage: 40, estimated_completion: null };
    const { changes } = applyObservations(
      baseline(),
      seen({
        projectLists: [{ account_id: 1001, projects: [{ id: 5001, ...moved }] }],
        // The status read of the same pass agrees with the list: nothing more to report.
        projectStatuses: [{ id: 5001, account_id: 1001, ...moved, items: itemsOf(item('W-2')) }],
      }),
      T1,
      { baseline: false },
    );
    expect(changes).toEqual([
      { event: 'project.status', account_id: 1001, project_id: 5001, old: 'waiting_on_client', new: 'in_progress', seen_at: T1 },
      { event: 'project.progress', account_id: 1001, project_id: 5001, old: 20, new: 40, seen_at: T1 },
      { event: 'project.estimated_completion', account_id: 1001, project_id: 5001, old: '2026-12-07T00:00:00.000Z', new: null, seen_at: T1 },
    ]);
  });

  it('applies a list and a status read of one project in the order they were made: one move, reported once', () => {
    const moved = { status: 'in_progress', progress_percentage: 45, estimated_completion: project.estimated_completion };
    const { changes, after } = applyObservations(
      baseline(),
      seen({
        projectLists: [{ account_id: 1001, projects: [{ id: 5001, ...moved }], read: 1 }],
        projectStatuses: [{ id: 5001, account_id: 1001, ...project, items: itemsOf(item('W-2')), read: 0 }],
      }),
      T1,
      { baseline: false },
    );
    expect(changes.map((change) => `${change.event} ${String(change.old)} -> ${String(change.new)}`)).toEqual(['project.status waiting_on_client -> in_progress', 'project.progress 20 -> 45']);
    expect(after.projects['5001']).toMatchObject({ status: 'in_progress', progress_percentage: 45 });
  });

  it('reports an item that appeared and one that was resolved', () => {
    const { changes, after } = applyObservations(baseline(), seen({ projectStatuses: [{ id: 5001, account_id: 1001, ...project, items: itemsOf(item('1099-INT', 'urgent')) }] }), T1, { baseline: false });
    expect(changes).toEqual([
      { event: 'item.appeared', account_id: 1001, project_id: 5001, item: item('1099-INT', 'urgent'), old: null, new: item('1099-INT', 'urgent'), seen_at: T1 },
      { event: 'item.resolved', account_id: 1001, project_id: 5001, item: item('W-2'), old: item('W-2'), new: null, seen_at: T1 },
    ]);
    expect(Object.values(after.projects['5001']!.items!)).toEqual([item('1099-INT', 'urgent')]);
  });

  it('reports a deliverable that appeared and one that changed status', () => {
    const { changes } = applyObservations(
      baseline(),
      seen({
        deliverables: [
          { id: 9001, project_id: 5002, account_id: 1001, status: 'completed', title: 'Q3', expires_at: null },
          { id: 9010, project_id: 5001, account_id: 1001, status: 'draft', title: '1040', expires_at: null },
        ],
      }),
      T1,
      { baseline: false },
    );
    expect(changes).toEqual([
      { event: 'deliverable.status', account_id: 1001, project_id: 5002, deliverable_id: 9001, old: 'draft', new: 'completed', seen_at: T1 },
      { event: 'deliverable.appeared', account_id: 1001, project_id: 5001, deliverable_id: 9010, old: null, new: 'draft', seen_at: T1 },
    ]);
  });

  it('takes the first reading of the deliverable list as a baseline, even after a first run that did not reach it', () => {
    const { after } = applyObservations(emptySnapshot(), seen({ projectLists: [{ account_id: 1001, projects: [] }] }), T0, { baseline: true });
    const deliverable = { id: 9001, project_id: 5002, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null };
    const first = applyObservations(after, seen({ deliverables: [deliverable] }), T1, { baseline: false });
    expect(first.changes).toEqual([]);
    const second = applyObservations(first.after, seen({ deliverables: [deliverable, { ...deliverable, id: 9002 }] }), T1, { baseline: false });
    expect(second.changes.map((change) => change.deliverable_id)).toEqual([9002]);
  });

  it('hears of the first deliverable of a partner whose deliverable list was empty at the first look', () => {
    const { after } = applyObservations(emptySnapshot(), seen({ deliverablePagesRead: [0] }), T0, { baseline: true });
    expect(after.deliverable_pages_read_at).toEqual([T0]);
    const deliverable = { id: 9001, project_id: 5002, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null };
    const { changes } = applyObservations(after, seen({ deliverables: [deliverable], deliverablePagesRead: [0] }), T1, { baseline: false });
    expect(changes).toEqual([{ event: 'deliverable.appeared', account_id: 1001, project_id: 5002, deliverable_id: 9001, old: null, new: 'draft', seen_at: T1 }]);
  });

  it('compares only what a pass read: what it did not reach keeps its facts and reports nothing', () => {
    const before = baseline();
    const { after, changes } = applyObservations(before, seen({}), T1, { baseline: false });
    expect(changes).toEqual([]);
    expect(after).toEqual(before);
  });

  it('takes an account listed for the first time as its own baseline, and reports a new project of a known one', () => {
    const { changes } = applyObservations(
      baseline(),
      seen({
        projectLists: [
          { account_id: 1002, projects: [{ id: 5004, ...project }] },
          { account_id: 1001, projects: [{ id: 5001, ...project }, { id: 5009, ...project }] },
        ],
      }),
      T1,
      { baseline: false },
    );
    expect(changes).toEqual([{ event: 'project.appeared', account_id: 1001, project_id: 5009, old: null, new: 'waiting_on_client', seen_at: T1 }]);
  });

  it('does not report the items of a project whose status is read for the first time', () => {
    const { changes } = applyObservations(baseline(), seen({ projectStatuses: [{ id: 5002, account_id: 1001, ...project, items: itemsOf(item('Receipts')) }] }), T1, { baseline: false });
    expect(changes).toEqual([]);
  });

  it('leaves the snapshot it was given as it was', () => {
    const before = baseline();
    const copy = structuredClone(before);
    applyObservations(before, seen({ projectStatuses: [{ id: 5001, account_id: 1001, ...project, status: 'completed', items: {} }] }), T1, { baseline: false });
    expect(before).toEqual(copy);
  });
});

describe('applyObservations with --initial', () => {
  it('reports what is read for the first time as having appeared', () => {
    const { changes } = applyObservations(emptySnapshot(), firstLook(), T0, { baseline: false, initial: true });
    expect(changes.map((change) => change.event)).toEqual(['deliverable.appeared', 'project.appeared', 'item.appeared']);
  });
});

describe('applyObservations, what the state keeps', () => {
  const deliverable = { id: 9001, project_id: 5002, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null };

  it('keeps when the deliverable list was first read, and when each page was last read', () => {
    const first = applyObservations(emptySnapshot(), seen({ deliverables: [deliverable], deliverablePagesRead: [0, 1] }), T0, { baseline: true }).after;
    expect([first.deliverables_read_at, first.deliverable_pages_read_at]).toEqual([T0, [T0, T0]]);
    // A pass that reads only the second page: the first keeps its time, the list its first reading.
    const second = applyObservations(first, seen({ deliverables: [], deliverablePagesRead: [1] }), T1, { baseline: false }).after;
    expect([second.deliverables_read_at, second.deliverable_pages_read_at]).toEqual([T0, [T0, T1]]);
  });

  it('writes a page never read as an empty time, so that the list holds no gap', () => {
    const { after } = applyObservations(emptySnapshot(), seen({ deliverablePagesRead: [2] }), T0, { baseline: true });
    expect(after.deliverable_pages_read_at).toStrictEqual(['', '', T0]);
  });

  it('applies status reads without an order after the lists, in the order given', () => {
    const three = [5001, 5002, 5003].map((id) => ({ id, ...project }));
    const before = applyObservations(emptySnapshot(), seen({ projectLists: [{ account_id: 1001, projects: three }] }), T0, { baseline: true }).after;
    const { changes } = applyObservations(
      before,
      seen({
        projectStatuses: [
          { id: 5002, account_id: 1001, ...project, status: 'in_review', items: {} },
          { id: 5003, account_id: 1001, ...project, status: 'in_review', items: {} },
          { id: 5001, account_id: 1001, ...project, status: 'completed', items: {} },
        ],
        projectLists: [{ account_id: 1001, projects: [{ id: 5001, ...project, status: 'in_progress' }, { id: 5002, ...project }, { id: 5003, ...project }] }],
      }),
      T1,
      { baseline: false },
    );
    expect(changes.map((change) => `${change.project_id} ${String(change.old)} -> ${String(change.new)}`)).toEqual([
      '5001 waiting_on_client -> in_progress',
      '5002 waiting_on_client -> in_review',
      '5003 waiting_on_client -> in_review',
      '5001 in_progress -> completed',
    ]);
  });

  it('gives the changes in the order their readings were made', () => {
    const two = [5001, 5002].map((id) => ({ id, ...project }));
    const before = applyObservations(emptySnapshot(), seen({ projectLists: [{ account_id: 1001, projects: two }] }), T0, { baseline: true }).after;
    const { changes } = applyObservations(
      before,
      seen({
        projectLists: [{ account_id: 1001, projects: two, read: 0 }],
        projectStatuses: [
          { id: 5001, account_id: 1001, ...project, status: 'completed', items: {}, read: 2 },
          { id: 5002, account_id: 1001, ...project, status: 'in_review', items: {}, read: 1 },
        ],
      }),
      T1,
      { baseline: false },
    );
    expect(changes.map((change) => change.project_id)).toEqual([5002, 5001]);
  });

  it('reports nothing of a baseline, even a project that moved between its list and its status read in that first look', () => {
    const { changes, after } = applyObservations(
      emptySnapshot(),
      seen({
        projectLists: [{ account_id: 1001, projects: [{ id: 5001, ...project }], read: 0 }],
        projectStatuses: [{ id: 5001, account_id: 1001, ...project, status: 'in_progress', items: itemsOf(item('W-2')), read: 1 }],
      }),
      T0,
      { baseline: true },
    );
    expect(changes).toEqual([]);
    expect(after.projects['5001']!.status).toBe('in_progress');
  });

  it('keeps a project\'s account when a status read does not say it, and takes it from a list that does', () => {
    // Project 5007 first known from a status read that named no account.
    const before = applyObservations(emptySnapshot(), seen({ projectStatuses: [{ id: 5007, account_id: null, ...project, items: {} }] }), T0, { baseline: true }).after;
    expect(before.projects['5007']!.account_id).toBeNull();
    const listed = applyObservations(before, seen({ projectLists: [{ account_id: 1003, projects: [{ id: 5007, ...project, progress_percentage: 30 }] }] }), T1, { baseline: false });
    expect(listed.changes).toEqual([{ event: 'project.progress', account_id: 1003, project_id: 5007, old: 20, new: 30, seen_at: T1 }]);
    const quiet = applyObservations(listed.after, seen({ projectStatuses: [{ id: 5007, account_id: null, ...project, progress_percentage: 35, items: {} }] }), T1, { baseline: false });
    expect(quiet.changes).toEqual([{ event: 'project.progress', account_id: 1003, project_id: 5007, old: 30, new: 35, seen_at: T1 }]);
    expect(quiet.after.projects['5007']!.account_id).toBe(1003);
  });
});
