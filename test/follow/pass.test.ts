import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/types';
import { ApiError } from '../../src/errors';
import { applyObservations, emptySnapshot } from '../../src/follow/changes';
import { runPass } from '../../src/follow/pass';

/**
 * One pass against a fake service that answers by path: what it reads first, what the budget
 * lets it read, and what a 429 or an unknown account does to it.
 */

const ITEM = { type: 'missing_document', description: 'W-2', priority: 'high', requested_at: '2026-11-20T00:00:00Z' };
const PROJECT = { type: 'tax_return', tax_year: 2025, status: 'waiting_on_client', progress_percentage: 20, estimated_completion: null, created_at: '2026-11-01T00:00:00Z' };

function fakeService(options: { rateLimitAfter?: number; unknownAccounts?: number[] } = {}) {
  const asked: string[] = [];
  const answer = (data: unknown) => ({ status: 200, data, json: data, headers: {} });
  const api = {
    async call(name: string, input: { params?: Record<string, number>; query?: Record<string, number> } = {}) {
      asked.push(`${name} ${JSON.stringify(input.params ?? input.query ?? {})}`);
      if (options.rateLimitAfter !== undefined && asked.length > options.rateLimitAfter) {
        throw new ApiError(429, { error: { code: 'RATE_LIMIT_EXCEEDED', message: 'Rate limit exceeded.' } });
      }
      if (name === 'listDeliverables') {
        return answer({ deliverables: [{ id: 9001, project_id: 5002, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null }], total_count: 1, has_more: false });
      }
      if (name === 'listProjects') {
        const account = input.params!.account_id!;
        if (options.unknownAccounts?.includes(account)) throw new ApiError(404, { error: { code: 'ACCOUNT_NOT_FOUND', message: 'No account.' } });
        return answer({ projects: [{ id: account * 10, ...PROJECT }, { id: account * 10 + 1, ...PROJECT, status: 'completed' }], total_count: 2 });
      }
      const projectId = input.params!.project_id!;
      const status = projectId % 2 === 0 ? PROJECT.status : 'completed';
      return answer({ id: projectId, account_id: Math.floor(projectId / 10), ...PROJECT, status, last_updated: PROJECT.created_at, outstanding_items: [ITEM] });
    },
  } as unknown as ApiClient;
  return { api, asked };
}

const clock = { now: () => new Date('2026-11-25T00:00:00Z'), sleep: async () => {} };
const budget = (requests: number) => ({ requests, windowMs: 60_000 });
type Overrides = Partial<Parameters<typeof runPass>[0]> & { api: ApiClient };
const pass = (overrides: Overrides) =>
  runPass({ clock, snapshot: emptySnapshot(), accounts: [], budget: budget(20), sentAt: [], waitForSlots: false, maxRequests: 20, signal: new AbortController().signal, ...overrides });

describe('runPass', () => {
  it('reads the deliverable list first, then each new account with the status of each of its projects', async () => {
    const { api, asked } = fakeService();
    const result = await pass({ api, accounts: [1002] });
    expect(asked).toEqual([
      'listDeliverables {"limit":100,"offset":0}',
      'listProjects {"account_id":1001}',
      'getProjectStatus {"project_id":10010}',
      'getProjectStatus {"project_id":10011}',
      'listProjects {"account_id":1002}',
      'getProjectStatus {"project_id":10020}',
      'getProjectStatus {"project_id":10021}',
    ]);
    expect(result.deliverableAccounts).toEqual([1001]);
    expect(result.observations.deliverablePagesRead).toEqual([0]);
    expect(result.requests).toBe(7);
  });

  it('sends no more than the budget leaves after the last window\'s requests, nor more than its share', async () => {
    const { api, asked } = fakeService();
    const sentAt = [Date.parse('2026-11-24T23:59:30Z'), Date.parse('2026-11-24T23:58:30Z')];
    await pass({ api, accounts: [1002], budget: budget(4), sentAt });
    // One of the two earlier requests is still inside the window: 3 of 4 are left.
    expect(asked).toHaveLength(3);
    expect(sentAt).toHaveLength(5);
    asked.length = 0;
    await pass({ api, accounts: [1002], maxRequests: 2 });
    expect(asked).toHaveLength(2);
  });

  it('stops at a 429 and keeps what it read, for the watch to lower its pace and go on', async () => {
    const { api } = fakeService({ rateLimitAfter: 2 });
    const result = await pass({ api });
    expect(result.rateLimited?.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(result.observations.deliverables).toHaveLength(1);
    expect(result.observations.projectLists).toHaveLength(1);
  });

  it('reports an account the service does not know, and reads the others', async () => {
    const { api } = fakeService({ unknownAccounts: [1002] });
    const result = await pass({ api, accounts: [1002, 1003] });
    expect([...result.unknownAccounts]).toEqual([[1002, 'ACCOUNT_NOT_FOUND']]);
    expect(result.observations.projectLists.map((list) => list.account_id)).toEqual([1001, 1003]);
  });

  it('goes round a full look oldest reading first, whatever the status: no reading waits for another rank', async () => {
    const { api, asked } = fakeService();
    let snapshot = emptySnapshot();
    const look = async (at: string, maxRequests: number) => {
      asked.length = 0;
      const now = { now: () => new Date(at), sleep: async () => {} };
      const result = await pass({ api, clock: now, snapshot, accounts: [1002], maxRequests });
      snapshot = applyObservations(snapshot, result.observations, at, { baseline: false }).after;
      return [...asked];
    };
    const full = await look('2026-11-25T00:00:00Z', 20);
    expect(full).toHaveLength(7);
    // Three passes of 3 requests: the first two take 6 different readings, the third the last one and starts again.
    const passes = [await look('2026-11-25T00:01:00Z', 3), await look('2026-11-25T00:02:00Z', 3), await look('2026-11-25T00:03:00Z', 3)];
    expect(new Set(passes.flat().slice(0, 7))).toEqual(new Set(full));
    expect(passes[0]).toEqual(['listDeliverables {"limit":100,"offset":0}', 'listProjects {"account_id":1001}', 'listProjects {"account_id":1002}']);
    expect(passes[2]).toEqual(['getProjectStatus {"project_id":10021}', 'listDeliverables {"limit":100,"offset":0}', 'listProjects {"account_id":1001}']);
  });

  it('counts a request at its start, and spaces starts evenly: a slow answer does not slow the round', async () => {
    const { api: service } = fakeService();
    let nowMs = Date.parse('2026-11-25T00:00:00Z');
    const starts: number[] = [];
    // Every answer takes 5 s; the budget spaces starts 6 s apart (10 a minute).
    const api = {
      async call(...args: Parameters<ApiClient['call']>) {
        starts.push(nowMs);
        nowMs += 5_000;
        return service.call(...args);
      },
    } as unknown as ApiClient;
    const slowClock = { now: () => new Date(nowMs), sleep: async (ms: number) => void (nowMs += ms) };
    await pass({ api, clock: slowClock, accounts: [1002], budget: budget(10), waitForSlots: true, maxRequests: 5 });
    expect(starts.map((at) => at - starts[0]!)).toEqual([0, 6_000, 12_000, 18_000, 24_000]);
  });
});
