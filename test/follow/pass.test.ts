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

describe('runPass', () => {
  it('reads the deliverable list first, then each new account with the status of each of its projects', async () => {
    const { api, asked } = fakeService();
    const result = await runPass({ api, clock, snapshot: emptySnapshot(), accounts: [1002], budget: budget(20), sentAt: [], waitForSlots: false, signal: new AbortController().signal });
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
    expect(result.tasksLeft).toBe(0);
    expect(result.requests).toBe(7);
  });

  it('sends no more than the budget leaves after the last window\'s requests, and says how much is left', async () => {
    const { api, asked } = fakeService();
    const sentAt = [Date.parse('2026-11-24T23:59:30Z'), Date.parse('2026-11-24T23:58:30Z')];
    const result = await runPass({ api, clock, snapshot: emptySnapshot(), accounts: [1002], budget: budget(4), sentAt, waitForSlots: false, signal: new AbortController().signal });
    // One of the two earlier requests is still inside the window: 3 of 4 are left.
    expect(asked).toHaveLength(3);
    // The status of 1001's second project and 1002's list (whose projects are not known yet).
    expect(result.tasksLeft).toBe(2);
    expect(sentAt).toHaveLength(5);
  });

  it('stops at a 429 and keeps what it read, for the watch to lower its pace and go on', async () => {
    const { api } = fakeService({ rateLimitAfter: 2 });
    const result = await runPass({ api, clock, snapshot: emptySnapshot(), accounts: [], budget: budget(20), sentAt: [], waitForSlots: false, signal: new AbortController().signal });
    expect(result.rateLimited?.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(result.observations.deliverables).toHaveLength(1);
    expect(result.observations.projectLists).toHaveLength(1);
  });

  it('reports an account the service does not know, and reads the others', async () => {
    const { api } = fakeService({ unknownAccounts: [1002] });
    const result = await runPass({ api, clock, snapshot: emptySnapshot(), accounts: [1002, 1003], budget: budget(20), sentAt: [], waitForSlots: false, signal: new AbortController().signal });
    expect([...result.unknownAccounts]).toEqual([[1002, 'ACCOUNT_NOT_FOUND']]);
    expect(result.observations.projectLists.map((list) => list.account_id)).toEqual([1001, 1003]);
  });

  it('reads first, in a later pass, the projects most likely to change', async () => {
    const { api, asked } = fakeService();
    const first = await runPass({ api, clock, snapshot: emptySnapshot(), accounts: [], budget: budget(20), sentAt: [], waitForSlots: false, signal: new AbortController().signal });
    const { after } = applyObservations(emptySnapshot(), first.observations, clock.now().toISOString(), { baseline: true });
    asked.length = 0;
    await runPass({ api, clock, snapshot: after, accounts: [], budget: budget(3), sentAt: [], waitForSlots: false, signal: new AbortController().signal });
    expect(asked).toEqual(['listDeliverables {"limit":100,"offset":0}', 'getProjectStatus {"project_id":10010}', 'listProjects {"account_id":1001}']);
  });
});
