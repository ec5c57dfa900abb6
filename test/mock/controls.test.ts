import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseRateLimits } from '../../src/commands/serve/serve';
import { startMock, type RunningMock } from '../helpers/mock';

/** Demo data: Acme accounts 1001 (with a spouse) and 1005 (no projects); project 5001 has three items and no deliverable. */
let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(async () => {
  await mock.close();
});

const control = (path: string, options: { method?: string; body?: unknown } = {}) => mock.request(`/_mock${path}`, options);
const api = (path: string, options: { method?: string; body?: unknown; key?: string } = {}) => mock.request(path, { key: mock.keys.acme, ...options });

describe('GET /_mock', () => {
  test('lists every control with its method, path and summary', async () => {
    const response = await control('');
    expect(response.status).toBe(200);
    const listed = response.json.controls.map((entry: { method: string; path: string }) => `${entry.method} ${entry.path}`);
    expect(listed).toEqual(
      expect.arrayContaining([
        'GET /_mock',
        'POST /_mock/reset',
        'GET /_mock/clock',
        'POST /_mock/clock',
        'POST /_mock/accounts/:account_id/status',
        'POST /_mock/projects/:project_id',
        'POST /_mock/projects/:project_id/outstanding-items',
        'DELETE /_mock/projects/:project_id/outstanding-items/:item_id',
        'POST /_mock/projects/:project_id/deliverable',
        'POST /_mock/deliverables/:deliverable_id',
        'GET /_mock/documents/:document_id/content',
        'GET /_mock/requests',
        'DELETE /_mock/requests',
        'GET /_mock/outbox',
        'DELETE /_mock/outbox',
        'GET /_mock/login-links',
        'GET /_mock/faults',
        'PUT /_mock/faults',
        'GET /_mock/rate-limits',
        'PUT /_mock/rate-limits',
      ]),
    );
    for (const entry of response.json.controls) expect(entry.summary.length).toBeGreaterThan(0);
  });
});

describe('clock', () => {
  test('GET answers now and offset_ms; POST advances by seconds or by a duration', async () => {
    const before = await control('/clock');
    expect(before.status).toBe(200);
    expect(before.json).toEqual({ now: expect.any(String), offset_ms: expect.any(Number) });

    const bySeconds = await control('/clock', { body: { advance_seconds: 3600 } });
    expect(bySeconds.status).toBe(200);
    expect(bySeconds.json.offset_ms - before.json.offset_ms).toBe(3_600_000);

    const byDuration = await control('/clock', { body: { advance: '1d2h30m' } });
    expect(byDuration.json.offset_ms - bySeconds.json.offset_ms).toBe((86_400 + 7200 + 1800) * 1000);
    expect(Date.parse(byDuration.json.now) - Date.parse(before.json.now)).toBeGreaterThanOrEqual((3600 + 95_400) * 1000);
  });

  test.each([
    [{ advance_seconds: 0 }, 'advance_seconds'],
    [{ advance_seconds: -60 }, 'advance_seconds'],
    [{ advance: '25x' }, 'advance'],
    [{ advance: '' }, 'advance'],
    [{ advance: '0s' }, 'advance'],
    [{ advance: '90' }, 'advance'],
    [{ advance: '3661d' }, 'advance'],
    [{ advance_seconds: 60, advance: '1m' }, 'body'],
    [{}, 'body'],
    [{ advance_hours: 1 }, 'advance_hours'],
  ])('%j: 400 VALIDATION_ERROR naming %s', async (body, field) => {
    const response = await control('/clock', { body });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.json.error.details)).toContain(field);
  });

  test('malformed JSON is 400 INVALID_JSON, not a 5xx', async () => {
    const response = await mock.request('/_mock/clock', { body: '{"advance":', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('INVALID_JSON');
  });
});

describe('records', () => {
  test('account status: the service sees it at once (a suspended account refuses login links)', async () => {
    const response = await control('/accounts/1005/status', { body: { status: 'suspended' } });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ id: 1005, status: 'suspended' });
    expect((await api('/accounts/1005')).json.status).toBe('suspended');
    const link = await api('/accounts/1005/login-link', { body: {} });
    expect(link.json.error.code).toBe('ACCOUNT_SUSPENDED');
    await control('/accounts/1005/status', { body: { status: 'active' } });
  });

  test.each([
    ['/accounts/1005/status', { status: 'closed' }, 400, 'VALIDATION_ERROR'],
    ['/accounts/1005/status', {}, 400, 'VALIDATION_ERROR'],
    ['/accounts/98765/status', { status: 'active' }, 404, 'ACCOUNT_NOT_FOUND'],
    ['/accounts/abc/status', { status: 'active' }, 400, 'VALIDATION_ERROR'],
    ['/projects/98765', { status: 'completed' }, 404, 'PROJECT_NOT_FOUND'],
    ['/projects/5001', {}, 400, 'VALIDATION_ERROR'],
    ['/projects/5001', { progress_percentage: 101 }, 400, 'VALIDATION_ERROR'],
    ['/projects/5001', { estimated_completion: 'next week' }, 400, 'VALIDATION_ERROR'],
    ['/projects/5001/outstanding-items', { type: 'reminder', description: 'x' }, 400, 'VALIDATION_ERROR'],
    ['/projects/5001/outstanding-items', { type: 'client_request', description: '  ' }, 400, 'VALIDATION_ERROR'],
    ['/projects/5001/deliverable', { summary: 'no title' }, 400, 'VALIDATION_ERROR'],
    ['/deliverables/98765', { status: 'delivered' }, 404, 'NOT_FOUND'],
  ])('POST %s %j: %i %s', async (path, body, status, code) => {
    const response = await control(path, { body });
    expect(response.status).toBe(status);
    expect(response.json.error.code).toBe(code);
  });

  test('project: status, progress and estimated completion change, and last_updated moves to now', async () => {
    await control('/clock', { body: { advance: '1h' } });
    const before = Date.parse((await control('/clock')).json.now);
    const response = await control('/projects/5001', {
      body: { status: 'in_review', progress_percentage: 85, estimated_completion: '2027-04-10T12:00:00+02:00' },
    });
    const after = Date.parse((await control('/clock')).json.now);
    expect(response.status).toBe(200);
    const status = await api('/projects/5001/status');
    expect(status.json).toMatchObject({ status: 'in_review', progress_percentage: 85, estimated_completion: '2027-04-10T10:00:00.000Z' });
    expect(Date.parse(status.json.last_updated)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(status.json.last_updated)).toBeLessThanOrEqual(after);
    expect(response.json).toEqual(status.json);

    const cleared = await control('/projects/5001', { body: { estimated_completion: null } });
    expect(cleared.json.estimated_completion).toBeNull();
  });

  test('outstanding items: added (201) with priority medium by default, then removed; removing twice is 404', async () => {
    const added = await control('/projects/5003/outstanding-items', { body: { type: 'client_request', description: 'Sign Form 8879' } });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ id: expect.any(Number), project_id: 5003, type: 'client_request', description: 'Sign Form 8879', priority: 'medium' });
    expect((await api('/projects/5003/status')).json.outstanding_items).toEqual([
      { type: 'client_request', description: 'Sign Form 8879', priority: 'medium', requested_at: added.json.requested_at },
    ]);

    const removed = await control(`/projects/5003/outstanding-items/${added.json.id}`, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect((await api('/projects/5003/status')).json.outstanding_items).toEqual([]);
    const again = await control(`/projects/5003/outstanding-items/${added.json.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(again.json.error.code).toBe('NOT_FOUND');
  });

  test('deliverable: created with its document (201), readable through the API, downloadable; a second one is 409', async () => {
    const created = await control('/projects/5001/deliverable', {
      body: { title: '2025 federal return', status: 'draft', summary: 'Refund of $800 expected.', filename: 'return-2025.txt', content: 'Form 1040\n' },
    });
    expect(created.status).toBe(201);
    const { deliverable, document } = created.json;
    expect(deliverable).toMatchObject({ project_id: 5001, account_id: 1001, project_type: 'tax_return', status: 'draft', title: '2025 federal return' });
    expect(document).toMatchObject({ id: deliverable.document_id, account_id: 1001, filename: 'return-2025.txt', tax_year: 2025, file_type: 'text/plain', file_size: 10 });

    const single = await api('/projects/5001/deliverable');
    expect(single.status).toBe(200);
    expect(single.json).toMatchObject({ deliverable_id: deliverable.id, type: 'tax_return', summary: 'Refund of $800 expected.' });
    expect((await api(`/documents/${document.id}`)).status).toBe(200);
    const content = await fetch(`${mock.appUrl}/_mock/documents/${document.id}/content`);
    expect(content.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await content.text()).toBe('Form 1040\n');

    const second = await control('/projects/5001/deliverable', { body: { title: 'Another' } });
    expect(second.status).toBe(409);
    expect(second.json.error).toMatchObject({ code: 'DELIVERABLE_EXISTS', details: { project_id: 5001, deliverable_id: deliverable.id } });

    const updated = await control(`/deliverables/${deliverable.id}`, { body: { status: 'delivered', summary: 'Filed.' } });
    expect(updated.status).toBe(200);
    expect((await api('/projects/5001/deliverable')).json).toMatchObject({ status: 'delivered', summary: 'Filed.' });
  });

  test('document content of a seeded document; an unknown document is 404 DOCUMENT_NOT_FOUND', async () => {
    const content = await fetch(`${mock.appUrl}/_mock/documents/7005/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(content.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''charitable-receipts-2025.csv");
    expect((await content.text()).length).toBe((await api('/documents/7005')).json.file_size);
    const unknown = await control('/documents/999999/content');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ code: 'DOCUMENT_NOT_FOUND', details: { document_id: 999_999 } });
  });
});

describe('observation', () => {
  test('the request log holds contract requests (redacted keys), never controls; DELETE empties it', async () => {
    await control('/requests', { method: 'DELETE' });
    await api('/accounts/1001');
    await control('/clock');
    const log = await control('/requests');
    expect(log.json.requests).toEqual([
      expect.objectContaining({ method: 'GET', path: '/v1beta/accounts/1001', status: 200, api_key: expect.stringMatching(/^tpk_…/), partner_id: 1 }),
    ]);
    expect(JSON.stringify(log.json)).not.toContain(mock.keys.acme);
    const cleared = await control('/requests', { method: 'DELETE' });
    expect(cleared.json).toEqual({ cleared: 1 });
    expect((await control('/requests')).json.requests).toEqual([]);
  });

  test('outbox: emails of login links, filtered by recipient; DELETE empties it', async () => {
    await control('/outbox', { method: 'DELETE' });
    await api('/accounts/1001/login-link', { body: { notification_settings: { custom_subject: 'Your link' } } });
    await api('/accounts/1002/login-link', { body: { send_notification: false } });
    const outbox = await control('/outbox?to=MARIA.gonzalez@example.com');
    expect(outbox.json.emails).toEqual([expect.objectContaining({ to: 'maria.gonzalez@example.com', subject: 'Your link', account_id: 1001 })]);
    expect((await control('/outbox?account_id=1002')).json.emails).toEqual([]);
    expect((await control('/outbox', { method: 'DELETE' })).json).toEqual({ cleared: 1 });
    expect((await control('/outbox')).json.emails).toEqual([]);
  });

  test('login links: every issued link with its state, never a token; filters by account and user', async () => {
    const first = await api('/accounts/1002/login-link', { body: { send_notification: false } });
    const second = await api('/accounts/1002/login-link', { body: { send_notification: false, expiry_hours: 1 } });
    const links = (await control('/login-links?account_id=1002&user_email=james.okafor@example.com')).json.login_links;
    const byExpiry = new Map(links.map((link: { expires_at: string; state: string }) => [link.expires_at, link.state]));
    expect(byExpiry.get(first.json.expires_at)).toBe('replaced');
    expect(byExpiry.get(second.json.expires_at)).toBe('valid');
    expect(Object.keys(links[0]).sort()).toEqual(
      ['account_id', 'created_at', 'expires_at', 'id', 'invalidated_at', 'purpose', 'redirect_url', 'state', 'used_at', 'user_email'].sort(),
    );
    const token = second.json.login_link.split('/').pop();
    expect(JSON.stringify(links)).not.toContain(token);

    await control('/clock', { body: { advance: '2h' } });
    const later = (await control('/login-links?account_id=1002')).json.login_links;
    expect(later.find((link: { expires_at: string }) => link.expires_at === second.json.expires_at).state).toBe('expired');
    expect((await control('/login-links?user_email=nobody@example.com')).json.login_links).toEqual([]);
    expect((await control('/login-links?user_email=not-an-email')).status).toBe(400);
  });
});

describe('settings', () => {
  test('faults: an error rate of 1 makes contract requests 503 while controls keep working', async () => {
    expect((await control('/faults')).json).toEqual({ latency_ms: 0, error_rate: 0, drop_rate: 0 });
    const set = await control('/faults', { method: 'PUT', body: { error_rate: 1 } });
    expect(set.json).toEqual({ latency_ms: 0, error_rate: 1, drop_rate: 0 });
    const failed = await api('/accounts/1001');
    expect(failed.status).toBe(503);
    expect(failed.json.error.code).toBe('SERVICE_UNAVAILABLE');
    expect((await control('/clock')).status).toBe(200);
    await control('/faults', { method: 'PUT', body: { error_rate: 0 } });
    expect((await api('/accounts/1001')).status).toBe(200);
  });

  test.each([[{ error_rate: 1.5 }, 'error_rate'], [{ drop_rate: -0.1 }, 'drop_rate'], [{ latency_ms: 60_001 }, 'latency_ms'], [{ latency: 5 }, 'latency']])(
    'PUT /_mock/faults %j: 400 naming %s',
    async (body, field) => {
      const response = await control('/faults', { method: 'PUT', body });
      expect(response.status).toBe(400);
      expect(Object.keys(response.json.error.details)).toEqual([field]);
    },
  );

  test('rate limits: new windows apply at once, controls are never limited, [] turns limiting off', async () => {
    const set = await control('/rate-limits', { method: 'PUT', body: { windows: [{ limit: 2, window_seconds: 3600 }] } });
    expect(set.json).toEqual({ windows: [{ limit: 2, window_seconds: 3600 }] });
    const statuses = [];
    for (let index = 0; index < 3; index += 1) statuses.push((await api('/accounts/1001')).status);
    expect(statuses).toEqual([200, 200, 429]);
    for (let index = 0; index < 5; index += 1) expect((await control('/rate-limits')).status).toBe(200);

    await control('/rate-limits', { method: 'PUT', body: { windows: [] } });
    expect((await control('/rate-limits')).json).toEqual({ windows: [] });
    expect((await api('/accounts/1001')).status).toBe(200);
  });

  test.each([[{ windows: [{ limit: 0, window_seconds: 60 }] }], [{ windows: 'off' }], [{}]])('PUT /_mock/rate-limits %j: 400', async (body) => {
    const response = await control('/rate-limits', { method: 'PUT', body });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
  });

  test('refuses a window of 400 days with the rule `serve --rate-limit 1/400d` reports too', async () => {
    const response = await control('/rate-limits', { method: 'PUT', body: { windows: [{ limit: 1, window_seconds: 400 * 86_400 }] } });
    expect(response.status).toBe(400);
    expect(response.json.error.details).toEqual({ 'windows.0.window_seconds': ['must be an integer from 1 to 31622400'] });
    expect(() => parseRateLimits('1/400d')).toThrow('window 1 (1/400d) must be an integer from 1 to 31622400');
  });
});

describe('POST /_mock/reset', () => {
  test('puts records, files, the clock and the request log back to the seed', async () => {
    await control('/accounts/1002/status', { body: { status: 'completed' } });
    await control('/clock', { body: { advance: '3d' } });
    await api('/accounts/1001');
    const documentsBeforeReset = mock.deps.store.state.documents.length;

    const reset = await control('/reset', { method: 'POST' });
    expect(reset.status).toBe(200);
    expect((await control('/requests')).json.requests).toEqual([]);
    expect((await control('/clock')).json.offset_ms).toBe(0);
    expect((await api('/accounts/1002')).json.status).toBe('onboarding');
    expect((await api('/projects/5001/deliverable')).status).toBe(404);
    expect(mock.deps.store.state.documents.length).toBeLessThan(documentsBeforeReset);
  });
});
