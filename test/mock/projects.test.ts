import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startMock, type RunningMock } from '../helpers/mock';

/**
 * Demo data: account 1001 (Acme) has projects 5001 (tax_return 2025 waiting_on_client, three
 * outstanding items), 5002 (quarterly_estimate 2025 in_progress) and 5003 (tax_return 2024
 * completed); 1005 has none; project 6001 is Beacon's.
 */
const ACME_ACCOUNT = 1001;
const BEACON_ACCOUNT = 2001;
const BEACON_PROJECT = 6001;

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(async () => {
  await mock.close();
});

const ids = (list: Array<{ id: number }>) => list.map((item) => item.id);

describe('GET /accounts/:id/projects', () => {
  const list = (query = '', key: string = mock.keys.acme) => mock.request(`/accounts/${ACME_ACCOUNT}/projects${query}`, { key });

  test('lists the account projects newest first, each with the seven list fields', async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(ids(response.json.projects)).toEqual([5001, 5002, 5003]);
    expect(response.json.total_count).toBe(3);
    expect(response.json.projects[0]).toEqual({
      id: 5001,
      type: 'tax_return',
      tax_year: 2025,
      status: 'waiting_on_client',
      progress_percentage: 20,
      created_at: expect.any(String),
      estimated_completion: expect.any(String),
    });
  });

  test.each([
    ['?tax_year=2024', [5003]],
    ['?type=tax_return', [5001, 5003]],
    ['?status=in_progress', [5002]],
    ['?type=tax_return&tax_year=2025', [5001]],
    ['?type=equity_planning', []],
    ['?unknown_parameter=1', [5001, 5002, 5003]],
  ])('%s -> %j with total_count', async (query, expected) => {
    const response = await list(query);
    expect(ids(response.json.projects)).toEqual(expected);
    expect(response.json.total_count).toBe(expected.length);
  });

  test.each([
    ['?type=tax_plan', 'type', 'must be one of: tax_return, quarterly_estimate, tax_planning, equity_planning'],
    ['?status=done', 'status', 'must be one of: waiting_on_client, in_progress, in_review, completed'],
    ['?tax_year=next', 'tax_year', 'must be a year from 1900 to 2100'],
  ])('%s: 400 INVALID_PARAMETERS naming %s', async (query, name, message) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'INVALID_PARAMETERS', details: { [name]: [message] } });
  });

  test("another partner's account: 403 ACCESS_DENIED; an unknown one: 404 ACCOUNT_NOT_FOUND", async () => {
    const denied = await mock.request(`/accounts/${BEACON_ACCOUNT}/projects`, { key: mock.keys.acme });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { account_id: BEACON_ACCOUNT } });
    const unknown = await mock.request('/accounts/424242/projects', { key: mock.keys.acme });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', details: { account_id: 424242 } });
  });
});

describe('GET /projects/:id/status', () => {
  test('answers the project with account_id, last_updated and its outstanding items, most urgent first', async () => {
    const response = await mock.request('/projects/5001/status', { key: mock.keys.acme });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      id: 5001,
      account_id: ACME_ACCOUNT,
      type: 'tax_return',
      tax_year: 2025,
      status: 'waiting_on_client',
      progress_percentage: 20,
      estimated_completion: expect.any(String),
      last_updated: expect.any(String),
    });
    expect(response.json.outstanding_items.map((item: { priority: string }) => item.priority)).toEqual(['high', 'medium', 'low']);
    expect(Object.keys(response.json.outstanding_items[0]).sort()).toEqual(['description', 'priority', 'requested_at', 'type']);
    expect(response.json.outstanding_items.map((item: { type: string }) => item.type)).toEqual(['missing_document', 'client_request', 'missing_document']);
  });

  test('a project without items has an empty list', async () => {
    const response = await mock.request('/projects/5003/status', { key: mock.keys.acme });
    expect(response.json.outstanding_items).toEqual([]);
  });

  test('an unknown project: 404 PROJECT_NOT_FOUND with project_id', async () => {
    const response = await mock.request('/projects/777777/status', { key: mock.keys.acme });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'PROJECT_NOT_FOUND', details: { project_id: 777_777 } });
  });

  test("another partner's project: 403 ACCESS_DENIED with project_id, both ways", async () => {
    const denied = await mock.request(`/projects/${BEACON_PROJECT}/status`, { key: mock.keys.acme });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { project_id: BEACON_PROJECT } });
    const deniedBack = await mock.request('/projects/5001/status', { key: mock.keys.beacon });
    expect(deniedBack.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { project_id: 5001 } });
  });
});
