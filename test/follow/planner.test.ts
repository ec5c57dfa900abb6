import { describe, expect, it } from 'vitest';
import { emptySnapshot, type Snapshot } from '../../src/follow/changes';
import { allowance, changeBoundMs, deliverablePages, fullLookRequests, nextSlot, parseBudget, passRequests, planTasks } from '../../src/follow/planner';

describe('parseBudget', () => {
  it.each([
    ['20/min', { requests: 20, windowMs: 60_000 }],
    ['20/m', { requests: 20, windowMs: 60_000 }],
    ['5/10s', { requests: 5, windowMs: 10_000 }],
    ['100/1h', { requests: 100, windowMs: 3_600_000 }],
  ])('reads %s', (text, budget) => expect(parseBudget(text)).toEqual(budget));

  it.each(['0/min', '101/min', '20', '20/fortnight', '20/500ms', '2/2h', 'x/min'])('refuses %s naming the flag and its rule', (text) => {
    expect(() => parseBudget(text)).toThrow(/^--budget must be <requests>\/min/);
  });
});

describe('allowance and nextSlot', () => {
  const budget = { requests: 3, windowMs: 60_000 };
  it('counts only the requests inside the window', () => {
    expect(allowance(budget, [0, 10_000, 50_000], 70_000)).toBe(2);
    expect(allowance(budget, [20_000, 30_000, 40_000], 70_000)).toBe(0);
  });
  it('gives the moment the oldest request of a full window leaves it, and spaces requests evenly', () => {
    expect(nextSlot(budget, [20_000, 30_000, 40_000], 70_000)).toBe(80_000);
    expect(nextSlot(budget, [30_000, 40_000], 70_000)).toBe(70_000);
    // One every 20 s at 3 a minute, even with room in the window.
    expect(nextSlot(budget, [65_000], 70_000)).toBe(85_000);
  });
  it('never lets more than the budget into any window, whatever the order of waits', () => {
    const sent: number[] = [];
    let now = 0;
    for (let request = 0; request < 50; request += 1) {
      now = Math.max(now, nextSlot(budget, sent, now));
      sent.push(now);
      now += 7_000;
    }
    for (const start of sent) expect(sent.filter((at) => at >= start && at < start + budget.windowMs).length).toBeLessThanOrEqual(3);
  });
});

describe('planTasks', () => {
  function snapshot(): Snapshot {
    const state = emptySnapshot();
    state.deliverable_pages_read_at = ['2026-11-24T12:00:00Z'];
    state.deliverables = { 9001: { project_id: 5006, account_id: 1004, status: 'draft', title: null, expires_at: null } };
    state.accounts = { 1001: { listed_at: '2026-11-25T00:00:00Z' }, 1002: { listed_at: '2026-11-24T00:00:00Z' } };
    state.projects = {
      5001: { account_id: 1001, status: 'completed', progress_percentage: 100, estimated_completion: null, checked_at: '2026-11-20T00:00:00Z' },
      5002: { account_id: 1001, status: 'in_progress', progress_percentage: 50, estimated_completion: null, checked_at: '2026-11-25T00:00:00Z' },
      5003: { account_id: 1002, status: 'waiting_on_client', progress_percentage: 10, estimated_completion: null, checked_at: '2026-11-24T00:00:00Z' },
      5004: { account_id: 1002, status: 'in_review', progress_percentage: 90, estimated_completion: null },
      5005: { account_id: 1009, status: 'in_progress', progress_percentage: 90, estimated_completion: null },
    };
    return state;
  }

  it('takes every reading of a full look, never made first, then oldest first, whatever the status; accounts the deliverables name too', () => {
    expect(planTasks(snapshot(), [1001, 1002, 1003]).map(({ readAt: _readAt, ...task }) => task)).toEqual([
      { kind: 'projects', account_id: 1003 },
      { kind: 'projects', account_id: 1004 },
      { kind: 'status', project_id: 5004, account_id: 1002 },
      { kind: 'status', project_id: 5001, account_id: 1001 },
      { kind: 'projects', account_id: 1002 },
      { kind: 'status', project_id: 5003, account_id: 1002 },
      { kind: 'deliverables', page: 0 },
      { kind: 'projects', account_id: 1001 },
      { kind: 'status', project_id: 5002, account_id: 1001 },
    ]);
  });

  it('counts a full look, guessing the projects of accounts never listed from the others', () => {
    // 9 readings, and 2 accounts never listed with 5 projects over 2 listed accounts: 2.5 each.
    expect(fullLookRequests(snapshot(), [1001, 1002, 1003])).toBe(14);
  });

  it('reads one page of deliverables per 100', () => {
    expect([0, 1, 100, 101, 250].map(deliverablePages)).toEqual([1, 1, 1, 2, 3]);
  });
});

describe('the bound', () => {
  it('is 1.25 full looks at the budget, and a pass a quarter of a look at most', () => {
    expect(changeBoundMs(16, { requests: 100, windowMs: 60_000 })).toBe(12_000);
    expect(changeBoundMs(81, { requests: 10, windowMs: 60_000 })).toBe(607_500);
    expect(passRequests(16, { requests: 100, windowMs: 60_000 })).toBe(4);
    expect(passRequests(3, { requests: 100, windowMs: 60_000 })).toBe(1);
    expect(passRequests(3000, { requests: 20, windowMs: 60_000 })).toBe(20);
  });
});
