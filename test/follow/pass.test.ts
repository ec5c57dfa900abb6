import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/types';
import { ApiError, NetworkError, UsageError } from '../../src/errors';
import { applyObservations, emptySnapshot } from '../../src/follow/changes';
import { isPassingTrouble, numberOrNull, observeStatus, runPass, stringOrNull } from '../../src/follow/pass';

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

/** A service scripted per request name: each handler gets the request's params and query, and answers or throws. */
function scripted(handlers: Record<string, (input: { params?: Record<string, number>; query?: Record<string, number> }) => unknown>, headers: Record<string, string> = {}) {
  const asked: string[] = [];
  const api = {
    async call(name: string, input: { params?: Record<string, number>; query?: Record<string, number> } = {}) {
      asked.push(`${name} ${JSON.stringify(input.params ?? input.query ?? {})}`);
      return { status: 200, data: handlers[name]!(input), headers };
    },
  } as unknown as ApiClient;
  return { api, asked };
}

const deliverable = (id: unknown, accountId: unknown) => ({ id, project_id: 5001, account_id: accountId, status: 'draft', title: 'Q3', expires_at: null });
const noProjects = () => ({ projects: [], total_count: 0 });

describe('runPass, the deliverable list', () => {
  it('reads the next page when the service says there is more, before the accounts the first page named', async () => {
    const { api, asked } = scripted({
      listDeliverables: ({ query }) =>
        query!.offset === 0
          ? { deliverables: [deliverable(9001, 1001), deliverable(9002, 1001)], total_count: 3, has_more: true }
          : { deliverables: [deliverable(9101, 1002)], total_count: 3, has_more: false },
      listProjects: noProjects,
    });
    const result = await pass({ api });
    expect(asked).toEqual(['listDeliverables {"limit":100,"offset":0}', 'listDeliverables {"limit":100,"offset":100}', 'listProjects {"account_id":1002}', 'listProjects {"account_id":1001}']);
    expect(result.observations.deliverablePagesRead).toEqual([0, 1]);
    // Each account once, however many deliverables name it.
    expect(result.deliverableAccounts).toEqual([1001, 1002]);
  });

  it('leaves out a deliverable without an id, and reads no account for one that names none; ids in strings are numbers', async () => {
    const { api, asked } = scripted({
      listDeliverables: () => ({ deliverables: [deliverable(null, 1001), deliverable('x9002', 1001), deliverable(9003, null), deliverable('9004', '1002')], total_count: 4, has_more: false }),
      listProjects: noProjects,
    });
    const result = await pass({ api });
    expect(asked).toEqual(['listDeliverables {"limit":100,"offset":0}', 'listProjects {"account_id":1002}']);
    expect(result.observations.deliverables.map(({ id, account_id }) => [id, account_id])).toEqual([[9003, null], [9004, 1002]]);
    expect(result.deliverableAccounts).toEqual([1002]);
  });
});

describe('runPass, what the service refuses', () => {
  const failing = (error: Error, on: string) =>
    scripted({
      listDeliverables: () => {
        if (on === 'listDeliverables') throw error;
        return { deliverables: [], total_count: 0, has_more: false };
      },
      listProjects: ({ params }) => {
        if (on === 'listProjects') throw error;
        return { projects: [{ id: params!.account_id! * 10, ...PROJECT }], total_count: 1 };
      },
      getProjectStatus: ({ params }) => {
        if (on === 'getProjectStatus') throw error;
        return { id: params!.project_id, account_id: 1001, ...PROJECT, outstanding_items: [] };
      },
    });
  const notFound = new ApiError(404, { error: { code: 'PROJECT_NOT_FOUND', message: 'No project.' } });
  const denied = new ApiError(403, { error: { code: 'ACCESS_DENIED', message: 'Not yours.' } });

  it('leaves out a project that is gone or not this partner\'s, and says which', async () => {
    for (const error of [notFound, denied]) {
      const { api } = failing(error, 'getProjectStatus');
      const result = await pass({ api, accounts: [1001] });
      expect(result.goneProjects).toEqual([10010]);
      expect(result.unknownAccounts.size).toBe(0);
    }
    const { api } = failing(denied, 'listProjects');
    expect([...(await pass({ api, accounts: [1001] })).unknownAccounts]).toEqual([[1001, 'ACCESS_DENIED']]);
  });

  it.each([
    ['a deliverable list that is not found', new ApiError(404, { error: { code: 'NOT_FOUND', message: 'No route.' } }), 'listDeliverables'],
    ['a 500 on an account', new ApiError(500, { error: { code: 'INTERNAL_ERROR', message: 'Boom.' } }), 'listProjects'],
    ['a 500 on a status', new ApiError(500, { error: { code: 'INTERNAL_ERROR', message: 'Boom.' } }), 'getProjectStatus'],
    ['a network failure', new NetworkError('NETWORK_ERROR', 'connection refused'), 'getProjectStatus'],
  ])('ends the pass on %s, with the error', async (_, error, on) => {
    const { api } = failing(error, on);
    await expect(pass({ api, accounts: [1001] })).rejects.toBe(error);
  });

  it('takes the 429, the network and the 5xx for troubles of one pass, anything else for the end of the command', () => {
    expect(isPassingTrouble(new ApiError(429, { error: { code: 'RATE_LIMIT_EXCEEDED', message: 'Slow down.' } }))).toBe(true);
    expect(isPassingTrouble(new NetworkError('TIMEOUT', 'no answer'))).toBe(true);
    expect(isPassingTrouble(new ApiError(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'Later.' } }))).toBe(true);
    expect(isPassingTrouble(new ApiError(401, { error: { code: 'INVALID_API_KEY', message: 'No.' } }))).toBe(false);
    expect(isPassingTrouble(new UsageError('bad flag'))).toBe(false);
    expect(isPassingTrouble(new Error('a bug'))).toBe(false);
  });
});

describe('runPass, each reading once', () => {
  it('reads a project\'s status once a pass, even when its account\'s list, read later in the pass, names it as never read before', async () => {
    const { api, asked } = scripted({
      listDeliverables: () => ({ deliverables: [], total_count: 0, has_more: false }),
      listProjects: () => ({ projects: [{ id: 10010, ...PROJECT }], total_count: 1 }),
      getProjectStatus: () => ({ id: 10010, account_id: 1001, ...PROJECT, outstanding_items: [] }),
    });
    // A run cut short by its budget after the account's list: the project is known, its status never read.
    const snapshot = emptySnapshot();
    snapshot.deliverable_pages_read_at = ['2026-11-24T23:00:00Z'];
    snapshot.accounts = { 1001: { listed_at: '2026-11-24T23:00:00Z' } };
    snapshot.projects = { 10010: { account_id: 1001, status: 'waiting_on_client', progress_percentage: 20, estimated_completion: null } };
    const result = await pass({ api, snapshot, accounts: [1001] });
    expect(asked).toEqual(['getProjectStatus {"project_id":10010}', 'listDeliverables {"limit":100,"offset":0}', 'listProjects {"account_id":1001}']);
    expect(result.requests).toBe(3);
  });
});

describe('runPass, what a reading makes known', () => {
  it('reads next the status of a known project never read, named by its account\'s list, and only then what was planned after it', async () => {
    const { api, asked } = scripted({
      listDeliverables: () => ({ deliverables: [], total_count: 0, has_more: false }),
      listProjects: ({ params }) => ({ projects: params!.account_id === 1001 ? [{ id: 10010, ...PROJECT }, { ...PROJECT }] : [], total_count: 1 }),
      getProjectStatus: () => ({ id: 10010, account_id: 1001, ...PROJECT, outstanding_items: [] }),
    });
    // A state that knows the project but neither its items nor its account's list (a state file may hold that).
    const snapshot = emptySnapshot();
    snapshot.projects = { 10010: { account_id: 1001, status: 'waiting_on_client', progress_percentage: 20, estimated_completion: null } };
    const result = await pass({ api, snapshot, accounts: [1001, 1002] });
    // The project without an id in the list is left out.
    expect(asked).toEqual(['listDeliverables {"limit":100,"offset":0}', 'listProjects {"account_id":1001}', 'getProjectStatus {"project_id":10010}', 'listProjects {"account_id":1002}']);
    expect(result.observations.projectLists[0]!.projects.map((one) => one.id)).toEqual([10010]);
  });
});

describe('runPass, what it learns', () => {
  it('takes the key\'s limit from the rate-limit headers, and numbers the project readings in the order made', async () => {
    const { api } = scripted(
      {
        listDeliverables: () => ({ deliverables: [], total_count: 0, has_more: false }),
        listProjects: ({ params }) => ({ projects: [{ id: params!.account_id! * 10, ...PROJECT }], total_count: 1 }),
        getProjectStatus: ({ params }) => ({ id: params!.project_id, ...PROJECT, outstanding_items: [] }),
      },
      { 'X-RateLimit-Limit': '40', 'X-RateLimit-Remaining': '39', 'X-RateLimit-Reset': '30' },
    );
    const result = await pass({ api, accounts: [1001, 1002] });
    expect(result.keyLimit).toBe(40);
    expect(result.observations.projectLists.map(({ account_id, read }) => [account_id, read])).toEqual([[1001, 0], [1002, 2]]);
    expect(result.observations.projectStatuses.map(({ id, account_id, read }) => [id, account_id, read])).toEqual([[10010, 1001, 1], [10020, 1002, 3]]);
  });
});

describe('observeStatus', () => {
  it('reads a status as the change model holds it: missing item fields empty, ids in strings as numbers, the account of the task when the answer names none', () => {
    const answer = { id: 5001, status: 'waiting_on_client', progress_percentage: '45', estimated_completion: 20, outstanding_items: [{ description: 'W-2' }, { type: 'client_request', description: 'Call', priority: 'high', requested_at: '2026-11-20T00:00:00Z' }, { type: 'signature' }] };
    expect(observeStatus(5001, answer as never, 1001)).toStrictEqual({
      id: 5001,
      account_id: 1001,
      status: 'waiting_on_client',
      progress_percentage: 45,
      estimated_completion: null,
      items: {
        '["","W-2",null]': { type: '', description: 'W-2', priority: '', requested_at: null },
        '["client_request","Call","2026-11-20T00:00:00Z"]': { type: 'client_request', description: 'Call', priority: 'high', requested_at: '2026-11-20T00:00:00Z' },
        '["signature","",null]': { type: 'signature', description: '', priority: '', requested_at: null },
      },
    });
    const other = observeStatus(5001, { ...answer, account_id: '1002', outstanding_items: 'none' } as never, 1001);
    expect([other.account_id, other.items]).toStrictEqual([1002, {}]);
    expect(observeStatus(5001, answer as never)).toMatchObject({ account_id: null });
  });

  it('takes a number only from digits', () => {
    expect([numberOrNull(7), numberOrNull('42'), numberOrNull('4x2'), numberOrNull('x42'), numberOrNull('42x'), numberOrNull(''), numberOrNull(null), numberOrNull(['42']), numberOrNull(true)]).toEqual([7, 42, null, null, null, null, null, null, null]);
    expect([stringOrNull('a'), stringOrNull(1), stringOrNull(undefined)]).toEqual(['a', null, null]);
  });
});
