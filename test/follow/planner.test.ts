import { describe, expect, it } from 'vitest';
import { emptySnapshot, type Snapshot } from '../../src/follow/changes';
import { accountReadAt, allowance, deliverablePages, nextSlot, parseBudget, planTasks } from '../../src/follow/planner';

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
  it('gives the moment the oldest request of a full window leaves it', () => {
    expect(nextSlot(budget, [20_000, 30_000, 40_000], 70_000)).toBe(80_000);
    expect(nextSlot(budget, [30_000, 40_000], 70_000)).toBe(70_000);
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

  it('takes new accounts, then the projects most likely to change (oldest read first), the others, the lists again, and completed projects last', () => {
    expect(planTasks(snapshot(), [1001, 1002, 1003])).toEqual([
      { kind: 'projects', account_id: 1003 },
      { kind: 'status', project_id: 5003, account_id: 1002 },
      { kind: 'status', project_id: 5002, account_id: 1001 },
      { kind: 'status', project_id: 5004, account_id: 1002 },
      { kind: 'projects', account_id: 1002 },
      { kind: 'projects', account_id: 1001 },
      { kind: 'status', project_id: 5001, account_id: 1001 },
    ]);
  });

  it('says how fresh an account is: its oldest reading of anything not completed, none before all was read', () => {
    const state = snapshot();
    expect(accountReadAt(state, 1001)).toBe('2026-11-25T00:00:00Z');
    expect(accountReadAt(state, 1002)).toBeUndefined();
    state.projects[5004]!.checked_at = '2026-11-23T00:00:00Z';
    expect(accountReadAt(state, 1002)).toBe('2026-11-23T00:00:00Z');
  });

  it('reads one page of deliverables per 100', () => {
    expect([0, 1, 100, 101, 250].map(deliverablePages)).toEqual([1, 1, 1, 2, 3]);
  });
});
