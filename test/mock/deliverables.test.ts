import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startMock, type RunningMock } from '../helpers/mock';

/**
 * Demo data, Acme's deliverables newest first: 9003 (project 5004, tax_planning, account 1002,
 * completed), 9001 (5002, quarterly_estimate, 1001, draft), 9005 (5008, equity_planning, 1006,
 * completed), 9002 (5003, tax_return, 1001, delivered), 9004 (5006, tax_return, 1004, delivered).
 * Beacon has 9501 (project 6001). Project 5001 has no deliverable.
 */
const ACME_NEWEST_FIRST = [9003, 9001, 9005, 9002, 9004];
const VIEW_LINK_HOURS = 72;

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(async () => {
  await mock.close();
});

const ids = (list: Array<{ id: number }>) => list.map((item) => item.id);

describe('GET /projects/:id/deliverable', () => {
  test('answers the single-project form with a view link and its expiry', async () => {
    const response = await mock.request('/projects/5002/deliverable', { key: mock.keys.acme });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      deliverable_id: 9001,
      project_id: 5002,
      document_id: 7101,
      title: 'Q3 2025 estimated tax payment',
      type: 'quarterly_estimate',
      status: 'draft',
      view_link: expect.stringMatching(new RegExp(`^${mock.appUrl}/deliverables/9001/view\\?token=\\d+\\.[A-Za-z0-9_-]{43}$`)),
      summary: expect.any(String),
      prepared_date: expect.any(String),
      expires_at: expect.any(String),
    });
    const hoursValid = (Date.parse(response.json.expires_at) - mock.deps.clock.now().getTime()) / 3_600_000;
    expect(Math.round(hoursValid)).toBe(VIEW_LINK_HOURS);
  });

  test.each([
    [5004, 'tax_plan'],
    [5008, 'equity_plan'],
    [5003, 'tax_return'],
  ])('project %i: type is the deliverable form %s', async (projectId, type) => {
    const response = await mock.request(`/projects/${projectId}/deliverable`, { key: mock.keys.acme });
    expect(response.json.type).toBe(type);
  });

  test('its document_id is readable by the same partner', async () => {
    const deliverable = await mock.request('/projects/5003/deliverable', { key: mock.keys.acme });
    const document = await mock.request(`/documents/${deliverable.json.document_id}`, { key: mock.keys.acme });
    expect(document.status).toBe(200);
    expect(document.json.account_id).toBe(1001);
  });

  test('reading does not grow the state', async () => {
    const before = JSON.stringify(mock.deps.store.state);
    await mock.request('/projects/5002/deliverable', { key: mock.keys.acme });
    await mock.request('/deliverables', { key: mock.keys.acme });
    expect(JSON.stringify(mock.deps.store.state)).toBe(before);
  });

  test('a project without a deliverable: 404 DELIVERABLE_NOT_FOUND with project_id', async () => {
    const response = await mock.request('/projects/5001/deliverable', { key: mock.keys.acme });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'DELIVERABLE_NOT_FOUND', details: { project_id: 5001 } });
  });

  test('an unknown project: 404 PROJECT_NOT_FOUND', async () => {
    const response = await mock.request('/projects/123456/deliverable', { key: mock.keys.acme });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'PROJECT_NOT_FOUND', details: { project_id: 123_456 } });
  });

  test("another partner's project: 403 ACCESS_DENIED with project_id", async () => {
    const response = await mock.request('/projects/6001/deliverable', { key: mock.keys.acme });
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { project_id: 6001 } });
  });
});

describe('GET /deliverables', () => {
  const list = (query = '', key: string = mock.keys.acme) => mock.request(`/deliverables${query}`, { key });

  test("lists the partner's deliverables newest first in the list form", async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(ids(response.json.deliverables)).toEqual(ACME_NEWEST_FIRST);
    expect(response.json).toMatchObject({ total_count: 5, has_more: false });
    expect(response.json.deliverables[0]).toEqual({
      id: 9003,
      project_id: 5004,
      account_id: 1002,
      document_id: 7103,
      title: '2025 tax plan',
      project_type: 'tax_planning',
      status: 'completed',
      view_link: expect.stringContaining('/deliverables/9003/view?token='),
      summary: expect.any(String),
      prepared_date: expect.any(String),
      expires_at: expect.any(String),
    });
  });

  test.each([
    ['?status=delivered', [9002, 9004]],
    ['?status=draft', [9001]],
    ['?project_type=tax_return', [9002, 9004]],
    ['?project_type=equity_planning', [9005]],
    ['?account_id=1001', [9001, 9002]],
    ['?account_id=1001&status=delivered', [9002]],
    ['?account_id=1005', []],
  ])('%s -> %j', async (query, expected) => {
    const response = await list(query);
    expect(ids(response.json.deliverables)).toEqual(expected);
    expect(response.json).toMatchObject({ total_count: expected.length, has_more: false });
  });

  test.each([
    ['?limit=1', [9003], true],
    ['?limit=2&offset=2', [9005, 9002], true],
    ['?limit=2&offset=3', [9002, 9004], false],
    ['?offset=4', [9004], false],
    ['?offset=5', [], false],
    ['?limit=100&offset=1000', [], false],
  ])('%s -> %j, has_more %s', async (query, expected, hasMore) => {
    const response = await list(query);
    expect(ids(response.json.deliverables)).toEqual(expected);
    expect(response.json).toMatchObject({ total_count: 5, has_more: hasMore });
  });

  test.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?status=sent', 'status'],
    ['?project_type=tax_plan', 'project_type'],
    ['?account_id=me', 'account_id'],
  ])('%s: 400 INVALID_PARAMETERS naming %s', async (query, name) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('INVALID_PARAMETERS');
    expect(Object.keys(response.json.error.details)).toEqual([name]);
  });

  test("nothing of another partner: Beacon sees only its own; an account filter on Acme's account is 403", async () => {
    const beacon = await list('', mock.keys.beacon);
    expect(ids(beacon.json.deliverables)).toEqual([9501]);
    expect(beacon.json.total_count).toBe(1);
    const denied = await list('?account_id=1001', mock.keys.beacon);
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { account_id: 1001 } });
    const unknown = await list('?account_id=31337');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', details: { account_id: 31337 } });
  });
});
