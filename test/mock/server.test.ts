import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { createMockServer, JSON_BODY_MAX_BYTES } from '../../src/mock/server';
import { send, startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock;
let accountId: number;

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
  const created = await mock.request('/accounts', {
    key: mock.keys.acme,
    body: { email: 'server-test@example.com', first_name: 'Sam', last_name: 'Server' },
  });
  accountId = created.json.id;
});
afterAll(() => mock.close());

describe('answers for requests that match no operation', () => {
  it('answers an unknown path with 404 NOT_FOUND naming the method and path', async () => {
    const response = await mock.request('/nothing/here?x=1', { key: mock.keys.acme });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'NOT_FOUND', details: { method: 'GET', path: '/v1beta/nothing/here' } });
  });

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    const response = await mock.request(`/accounts/${accountId}`, { method: 'DELETE', key: mock.keys.acme });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.json.error).toMatchObject({
      code: 'METHOD_NOT_ALLOWED',
      details: { method: 'DELETE', allowed_methods: ['GET', 'HEAD'] },
    });
  });

  it.each([
    ['QUERY', `/accounts/ID`, undefined],
    ['QUERY', '/deliverables', undefined],
    ['QUERY', '/accounts/ID/documents', 'application/json'],
    ['PATCH', '/accounts/ID', 'application/json'],
    ['PUT', '/accounts', 'text/plain'],
    ['DELETE', '/projects/5001/status', undefined],
  ])('%s %s (Content-Type %s): 401 without a key, 405 with Allow with one, before any body is judged', async (method, path, contentType) => {
    const url = `${mock.baseUrl}${path.replace('ID', String(accountId))}`;
    const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
    const body = contentType === undefined ? undefined : '{not json';
    const anonymous = await send(url, { method, headers, body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('INVALID_API_KEY');
    const keyed = await send(url, { method, headers, body, key: mock.keys.acme });
    expect(keyed.status).toBe(405);
    expect(keyed.json.error).toMatchObject({ code: 'METHOD_NOT_ALLOWED', details: { method } });
    expect(keyed.headers.allow?.split(', ')).toEqual(keyed.json.error.details.allowed_methods);
  });

  it('QUERY on /health, which needs no key, is 405 with Allow: GET, HEAD', async () => {
    const response = await send(`${mock.baseUrl}/health`, { method: 'QUERY' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  it('lists both methods of a path that has two', async () => {
    const response = await mock.request(`/accounts/${accountId}/documents`, { method: 'PUT', key: mock.keys.acme });
    expect(response.status).toBe(405);
    expect(response.json.error.details.allowed_methods.sort()).toEqual(['GET', 'HEAD', 'POST']);
  });

  it('answers HEAD on a GET route as GET would, without the body', async () => {
    const head = (path: string) => fetch(`${mock.baseUrl}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${mock.keys.acme}` } });
    const health = await head('/health');
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await health.text()).toBe('');

    const account = await head(`/accounts/${accountId}`);
    expect(account.status).toBe(200);
    expect(Number(account.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await account.text()).toBe('');
    expect((await head('/accounts/999999')).status).toBe(404);
    expect((await fetch(`${mock.baseUrl}/accounts/${accountId}`, { method: 'HEAD' })).status).toBe(401);
  });
});

describe('ids have one spelling', () => {
  it.each(['01001', '1001%20', '%201001', '+1001', '1e3', '1001.0', '0x3E9', '-1001'])('answers /accounts/%s with 400 INVALID_PARAMETERS', async (id) => {
    const response = await mock.request(`/accounts/${id}`, { key: mock.keys.acme });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('INVALID_PARAMETERS');
    expect(Object.keys(response.json.error.details)).toEqual(['account_id']);
  });

  it('applies the rule to every id in a path and in a query', async () => {
    for (const path of [`/accounts/0${accountId}/documents`, '/documents/01', '/projects/01/status', '/projects/01/deliverable', '/deliverables?account_id=01']) {
      const response = await mock.request(path, { key: mock.keys.acme });
      expect([path, response.status, response.json.error.code]).toEqual([path, 400, 'INVALID_PARAMETERS']);
      expect(Object.values(response.json.error.details)).toEqual([
        ['must be a positive integer written plainly, such as 1001 (no sign, leading zeros, spaces or exponent)'],
      ]);
    }
  });
});

describe('answers for bodies the service cannot read', () => {
  const post = (path: string, body: string, headers: Record<string, string>) =>
    mock.request(path, { method: 'POST', key: mock.keys.acme, body, headers });

  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const response = await post('/accounts', '{"email": ', { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('INVALID_JSON');
  });

  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])('refuses a body key named %s with 400 naming it, at any depth', async (name) => {
    const account = `{"email":"proto@example.com","first_name":"P","last_name":"Q","${name}":{"admin":true}}`;
    const top = await post('/accounts', account, { 'content-type': 'application/json' });
    expect(top.status).toBe(400);
    expect(top.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { [name]: ['is not a field of this request'] } });
    expect(Object.keys(top.json.error.details)).toEqual([name]);

    const nested = await post(`/accounts/${accountId}/login-link`, `{"notification_settings":{"${name}":1}}`, { 'content-type': 'application/json' });
    expect(nested.status).toBe(400);
    expect(nested.json.error.details).toEqual({ [`notification_settings.${name}`]: ['is not a field of this request'] });

    const control = await mock.request('/_mock/faults', { method: 'PUT', body: `{"${name}":0}`, headers: { 'content-type': 'application/json' } });
    expect(control.status).toBe(400);
    expect(control.json.error.details).toEqual({ [name]: ['is not a field of this request'] });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('refuses a query or form field named like a prototype member without failing', async () => {
    const query = await mock.request(`/accounts/${accountId}/documents?constructor=1&__proto__=2&toString=3`, { key: mock.keys.acme });
    expect(query.status).toBe(200);
    const form = new FormData();
    form.set('tax_year', '2024');
    form.set('hasOwnProperty', 'x');
    form.set('file', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
    const upload = await fetch(`${mock.baseUrl}/accounts/${accountId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${mock.keys.acme}` }, body: form });
    expect(upload.status).toBe(400);
    expect(((await upload.json()) as { error: { code: string; details: Record<string, string[]> } }).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { body: [expect.stringContaining('"constructor" or "__proto__"')] },
    });
  });

  it('refuses control characters and bidirectional overrides in text, naming the field', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['/accounts', { email: 'nul@example.com', first_name: 'A\u0000B', last_name: 'C' }, 'first_name'],
      ['/accounts', { email: 'del@example.com', first_name: 'A', last_name: 'C\u007F' }, 'last_name'],
      ['/accounts', { email: 'c1@example.com', first_name: 'A\u0085', last_name: 'C' }, 'first_name'],
      ['/accounts', { email: 'bidi@example.com', first_name: 'A\u202Egpj.exe', last_name: 'C' }, 'first_name'],
      ['/accounts', { email: 'tab@example.com', first_name: 'A\tB', last_name: 'C' }, 'first_name'],
      [`/accounts/${accountId}/login-link`, { notification_settings: { custom_subject: 'Hi\r\nBcc: x' } }, 'notification_settings.custom_subject'],
      [`/accounts/${accountId}/login-link`, { notification_settings: { custom_message: 'Line\u0000' } }, 'notification_settings.custom_message'],
    ];
    for (const [path, body, field] of cases) {
      const response = await mock.request(path, { key: mock.keys.acme, body });
      expect([field, response.status, response.json.error.code]).toEqual([field, 400, 'VALIDATION_ERROR']);
      expect(response.json.error.details[field]![0]).toMatch(/^must not contain control characters/);
    }
    const multiline = await mock.request(`/accounts/${accountId}/login-link`, {
      key: mock.keys.acme,
      body: { notification_settings: { custom_message: 'Dear client,\n\tplease log in.\r\n' } },
    });
    expect(multiline.status).toBe(201);
  });

  it('answers a JSON operation sent another media type with 415', async () => {
    const response = await post('/accounts', 'email=a@b.example', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(415);
    expect(response.json.error).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      details: { provided: 'application/x-www-form-urlencoded', expected: ['application/json'] },
    });
    expect(response.json.error.message).toBe(
      'This operation takes an application/json body; the request\'s Content-Type was "application/x-www-form-urlencoded".',
    );
  });

  it('answers a body without a Content-Type with 415', async () => {
    // fetch labels string bodies text/plain, but sends bytes without a Content-Type.
    const response = await fetch(`${mock.baseUrl}/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${mock.keys.acme}` },
      body: new TextEncoder().encode('{}'),
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { error: { details: unknown } }).error.details).toEqual({
      provided: '(none)',
      expected: ['application/json'],
    });
  });

  it('answers an upload sent as JSON with 415 expecting multipart/form-data', async () => {
    const response = await post(`/accounts/${accountId}/documents`, '{"tax_year": 2024}', { 'content-type': 'application/json' });
    expect(response.status).toBe(415);
    expect(response.json.error.details.expected).toEqual(['multipart/form-data']);
    expect(response.json.error.message).toMatch(/^This operation takes a multipart\/form-data body;/);
  });

  it('answers a JSON body over the limit with 413 PAYLOAD_TOO_LARGE and the limit', async () => {
    const body = JSON.stringify({ email: 'big@example.com', first_name: 'x'.repeat(JSON_BODY_MAX_BYTES), last_name: 'B' });
    const response = await post('/accounts', body, { 'content-type': 'application/json' });
    expect(response.status).toBe(413);
    expect(response.json.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { max_bytes: JSON_BODY_MAX_BYTES } });
  });

  it('refuses a JSON body that is not an object, even null', async () => {
    for (const path of [`/accounts/${accountId}/login-link`, '/accounts']) {
      for (const body of ['null', '[]', '"text"']) {
        const response = await post(path, body, { 'content-type': 'application/json' });
        expect([path, body, response.status]).toEqual([path, body, 400]);
        expect(response.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { body: ['must be a JSON object'] } });
      }
    }
  });

  it('takes an empty login-link body as {}', async () => {
    const response = await mock.request(`/accounts/${accountId}/login-link`, { method: 'POST', key: mock.keys.acme });
    expect(response.status).toBe(201);
    expect(response.json.purpose).toBe('expired_link');
  });

  it('takes an empty JSON body as {} and reports every required field', async () => {
    const response = await post('/accounts', '', { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    expect(response.json.error.details).toEqual({ email: ['is required'], first_name: ['is required'], last_name: ['is required'] });
  });
});

describe('requests that are not well-formed', () => {
  it('answers a path with malformed percent-encoding with 400 INVALID_PARAMETERS', async () => {
    const response = await mock.request('/accounts/%zz', { key: mock.keys.acme });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'INVALID_PARAMETERS', details: { path: ['has malformed percent-encoding'] } });
  });

  it('answers bytes that are not HTTP with 400 in the contract body', async () => {
    const { port } = new URL(mock.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    socket.end('NOT HTTP AT ALL\r\n\r\n');
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('VALIDATION_ERROR');
  });
});

describe('unexpected failures', () => {
  it('answers 500 INTERNAL_ERROR in the contract body, never a stack trace', async () => {
    const commit = mock.deps.store.commit;
    mock.deps.store.commit = () => Promise.reject(new Error('disk on fire'));
    try {
      const response = await mock.request(`/accounts/${accountId}/login-link`, { method: 'POST', key: mock.keys.acme, body: {} });
      expect(response.status).toBe(500);
      expect(response.json.error.code).toBe('INTERNAL_ERROR');
      expect(JSON.stringify(response.json)).not.toContain('disk on fire');
    } finally {
      mock.deps.store.commit = commit;
    }
  });
});

describe('fault injection', () => {
  it('answers 503 SERVICE_UNAVAILABLE at an error rate of 1, health included, and stops when set back', async () => {
    mock.deps.settings.faults.errorRate = 1;
    try {
      const response = await mock.request('/health');
      expect(response.status).toBe(503);
      expect(response.json.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(response.headers['retry-after']).toBe('1');
    } finally {
      mock.deps.settings.faults.errorRate = 0;
    }
    expect((await mock.request('/health')).status).toBe(200);
  });

  it('drops the connection without an answer at a drop rate of 1', async () => {
    mock.deps.settings.faults.dropRate = 1;
    try {
      await expect(send(`${mock.baseUrl}/accounts/${accountId}`, { key: mock.keys.acme })).rejects.toThrow();
    } finally {
      mock.deps.settings.faults.dropRate = 0;
    }
  });

  it('leaves the /_mock controls alone', async () => {
    mock.deps.settings.faults.errorRate = 1;
    try {
      expect((await mock.request('/_mock')).status).toBe(200);
    } finally {
      mock.deps.settings.faults.errorRate = 0;
    }
  });
});

describe('request log', () => {
  it('records contract requests with the key redacted and the partner, and not control requests', async () => {
    mock.deps.requestLog.clear();
    await mock.request(`/accounts/${accountId}?verbose=1`, { key: mock.keys.acme });
    await mock.request('/_mock');
    const entries = mock.deps.requestLog.entries();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      method: 'GET',
      path: `/v1beta/accounts/${accountId}?verbose=1`,
      status: 200,
      api_key: `tpk_…${mock.keys.acme.slice(-4)}`,
      partner_id: 1,
    });
    expect(JSON.stringify(entries)).not.toContain(mock.keys.acme);
  });

  it('records refusals with their status, and a connection dropped by a fault with status null', async () => {
    mock.deps.requestLog.clear();
    await mock.request('/accounts/999999', { key: mock.keys.acme });
    await mock.request('/no-such-route', { key: mock.keys.acme });
    mock.deps.settings.faults.dropRate = 1;
    try {
      await expect(send(`${mock.baseUrl}/accounts/${accountId}`, { key: mock.keys.acme })).rejects.toThrow();
    } finally {
      mock.deps.settings.faults.dropRate = 0;
    }
    expect(mock.deps.requestLog.entries().map(({ path, status, partner_id }) => ({ path, status, partner_id }))).toEqual([
      { path: '/v1beta/accounts/999999', status: 404, partner_id: 1 },
      { path: '/v1beta/no-such-route', status: 404, partner_id: null },
      { path: `/v1beta/accounts/${accountId}`, status: null, partner_id: null },
    ]);
  });

  it('records unauthenticated requests without a partner', async () => {
    mock.deps.requestLog.clear();
    await mock.request(`/accounts/${accountId}`, { key: 'not-a-key' });
    expect(mock.deps.requestLog.entries()[0]).toMatchObject({ status: 401, api_key: '(malformed key, hidden)', partner_id: null });
  });
});

describe('keys printed at start-up', () => {
  const DAY_MS = 86_400_000;
  const fixtureWithKey = (key: string, expiresAt: string) =>
    parseFixture({ partners: [{ id: 1, name: 'Solo', api_keys: [{ key, label: 'main', expires_at: expiresAt }] }] });
  const expectDaysFromNow = (printed: string | null, days: number) => {
    expect(printed).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(printed!) - (Date.now() + days * DAY_MS))).toBeLessThan(60_000);
  };

  it('gives a relative expiry of the fixture as the timestamp it resolved to', async () => {
    const server = await createMockServer({ fixture: fixtureWithKey('tpk_printedKeyRelative000001', '-30d'), port: 0 });
    try {
      expectDaysFromNow(server.keys[0]!.expires_at, -30);
    } finally {
      await server.close();
    }
  });

  it('resolves a relative expiry too when a saved state from another fixture holds other keys', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'taxprep-keys-'));
    const first = await createMockServer({ fixture: fixtureWithKey('tpk_printedKeyFirstRun0000001', '+1d'), dataDir, port: 0 });
    await first.close();
    const second = await createMockServer({ fixture: fixtureWithKey('tpk_printedKeySecondRun000001', '+14d'), dataDir, port: 0 });
    try {
      expectDaysFromNow(second.keys[0]!.expires_at, 14);
    } finally {
      await second.close();
    }
  });
});
