import { describe, expect, it } from 'vitest';
import { emptySnapshot, type Snapshot } from '../../src/follow/changes';
import { UsageError } from '../../src/errors';
import { allowance, changeBoundMs, DEFAULT_BUDGET, deliverablePages, formatBudget, fullLookRequests, nextSlot, parseBudget, passRequests, planTasks } from '../../src/follow/planner';

describe('parseBudget', () => {
  it.each([
    ['20/min', { requests: 20, windowMs: 60_000 }],
    ['20/m', { requests: 20, windowMs: 60_000 }],
    ['5/10s', { requests: 5, windowMs: 10_000 }],
    ['100/1h', { requests: 100, windowMs: 3_600_000 }],
    ['1/s', { requests: 1, windowMs: 1000 }],
    ['60/h', { requests: 60, windowMs: 3_600_000 }],
    ['1/1s', { requests: 1, windowMs: 1000 }],
    ['1/MIN', { requests: 1, windowMs: 60_000 }],
    [' 20 / min ', { requests: 20, windowMs: 60_000 }],
  ])('reads %s', (text, budget) => expect(parseBudget(text)).toEqual(budget));

  // 1/999ms is 60 a minute, within the rate: refused for its window alone.
  it.each(['0/min', '101/min', '20', '20/fortnight', '20/500ms', '1/999ms', '2/2h', 'x/min', 'x20/min', '20/min x', '20x/min'])('refuses %s naming the flag and its rule', (text) => {
    expect(() => parseBudget(text)).toThrow(/^--budget must be <requests>\/min/);
  });

  it('says the rule in full, and under the flag\'s name in --json', () => {
    const rule = 'must be <requests>/min (or /<duration>), such as 20/min or 5/10s: at most 100 a minute, a window from 1s to 1h';
    const error = (() => {
      try {
        return parseBudget('500/min');
      } catch (caught) {
        return caught;
      }
    })() as UsageError;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.toBody()).toEqual({ error: { code: 'USAGE_ERROR', message: `--budget ${rule}`, details: { '--budget': [rule] } } });
  });

  it('writes a budget back as it is given: per minute, else per window in seconds; 20 a minute when none is given', () => {
    expect(formatBudget({ requests: 20, windowMs: 60_000 })).toBe('20/min');
    expect(formatBudget({ requests: 5, windowMs: 10_000 })).toBe('5/10s');
    expect(formatBudget({ requests: 60, windowMs: 3_600_000 })).toBe('60/3600s');
    expect(formatBudget(DEFAULT_BUDGET)).toBe('20/min');
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
  it('lets the first request start at once', () => {
    expect(nextSlot(budget, [], 70_000)).toBe(70_000);
  });
  it('takes the send times in any order (a clock set back leaves them so)', () => {
    expect(nextSlot(budget, [40_000, 20_000, 30_000], 70_000)).toBe(80_000);
    expect(nextSlot(budget, [65_000, 30_000], 70_000)).toBe(85_000);
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

  it('takes readings of the same age the deliverable list first, then the lists, then the statuses, each by id, whatever order the accounts come in', () => {
    const state = emptySnapshot();
    state.deliverables = {
      9001: { project_id: 5006, account_id: 1002, status: 'draft', title: null, expires_at: null },
      // A deliverable that names no account adds no account to read.
      9002: { project_id: 5007, account_id: null, status: 'draft', title: null, expires_at: null },
    };
    state.projects = {
      5009: { account_id: 1001, status: 'in_progress', progress_percentage: 50, estimated_completion: null },
      5003: { account_id: 1003, status: 'in_progress', progress_percentage: 50, estimated_completion: null },
      // A project whose account the service did not say is still read.
      5005: { account_id: null, status: 'in_progress', progress_percentage: 50, estimated_completion: null },
    };
    expect(planTasks(state, [1003, 1001]).map(({ readAt: _readAt, ...task }) => task)).toEqual([
      { kind: 'deliverables', page: 0 },
      { kind: 'projects', account_id: 1001 },
      { kind: 'projects', account_id: 1002 },
      { kind: 'projects', account_id: 1003 },
      { kind: 'status', project_id: 5003, account_id: 1003 },
      { kind: 'status', project_id: 5005, account_id: null },
      { kind: 'status', project_id: 5009, account_id: 1001 },
    ]);
  });

  it('takes the oldest reading first across kinds, the ties in kind order', () => {
    const state = emptySnapshot();
    state.deliverable_pages_read_at = ['2026-11-25T00:03:00Z', '2026-11-25T00:01:00Z'];
    state.deliverables = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [9000 + index, { project_id: null, account_id: null, status: 'draft', title: null, expires_at: null }]));
    state.accounts = { 1001: { listed_at: '2026-11-25T00:02:00Z' }, 1002: { listed_at: '2026-11-25T00:01:00Z' } };
    state.projects = {
      5001: { account_id: 1001, status: 'completed', progress_percentage: 100, estimated_completion: null, checked_at: '2026-11-25T00:00:00Z' },
      5002: { account_id: 1002, status: 'completed', progress_percentage: 100, estimated_completion: null, checked_at: '2026-11-25T00:04:00Z' },
      5003: { account_id: 1002, status: 'completed', progress_percentage: 100, estimated_completion: null, checked_at: '2026-11-25T00:02:00Z' },
    };
    expect(planTasks(state, [1002, 1001]).map((task) => `${task.kind} ${task.kind === 'deliverables' ? task.page : task.kind === 'projects' ? task.account_id : task.project_id} ${task.readAt.slice(11, 16)}`)).toEqual([
      'status 5001 00:00',
      'deliverables 1 00:01',
      'projects 1002 00:01',
      'projects 1001 00:02',
      'status 5003 00:02',
      'deliverables 0 00:03',
      'status 5002 00:04',
    ]);
  });

  it('counts a full look, guessing the projects of accounts never listed from the others', () => {
    // 9 readings, and 2 accounts never listed with 5 projects over 2 listed accounts: 2.5 each.
    expect(fullLookRequests(snapshot(), [1001, 1002, 1003])).toBe(14);
  });

  it('guesses from listed accounts only: one a state file knows without a listing time is not one', () => {
    const state = snapshot();
    state.accounts['1003'] = {};
    // Still 2 listed accounts with 5 projects, and 2 never listed (1003 and 1004): 9 readings and 5 more.
    expect(fullLookRequests(state, [1001, 1002, 1003])).toBe(14);
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
