import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_HINT } from '../../src/contract';
import { startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock;
let accountPath: string;

beforeAll(async () => {
  mock = await startMock({ rateLimits: [{ limit: 2, windowSeconds: 60 }] });
  accountPath = `/accounts/${mock.deps.store.state.accounts.find((account) => account.partner_id === 1)!.id}`;
});
afterAll(() => mock.close());

describe('API key checks', () => {
  const expectInvalidKey = async (headers: Record<string, string>, hint: boolean) => {
    const response = await mock.request(accountPath, { headers });
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.json.error.code).toBe('INVALID_API_KEY');
    expect(response.json.error.details?.hint).toBe(hint ? API_KEY_HINT : undefined);
  };

  it('refuses a request without a key', () => expectInvalidKey({}, true));
  it('refuses an Authorization header that is not Bearer, with the hint', () => expectInvalidKey({ authorization: 'Basic dXNlcjpwYXNz' }, true));
  it('refuses a malformed key with the hint about the prefix', () => expectInvalidKey({ authorization: 'Bearer sk_live_1234' }, true));
  it('refuses a well-formed key that does not exist, without a hint', () =>
    expectInvalidKey({ authorization: `Bearer tpk_${'a'.repeat(32)}` }, false));

  it('refuses an expired key with EXPIRED_API_KEY', async () => {
    const response = await mock.request(accountPath, { key: mock.keys.expired });
    expect(response.status).toBe(401);
    expect(response.json.error.code).toBe('EXPIRED_API_KEY');
  });

  it('refuses a key without the permission with 403 naming the permission', async () => {
    const response = await mock.request('/accounts', {
      key: mock.keys.readOnly,
      body: { email: 'nobody@example.com', first_name: 'No', last_name: 'Body' },
    });
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', details: { required_permission: 'accounts:write' } });
  });

  it('checks the key before the body, so a keyless caller learns nothing from its body', async () => {
    const response = await mock.request('/accounts', { body: '{"broken', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(401);
  });

  it('lets a key that has not expired yet through, and refuses it once the virtual clock passes its expiry', async () => {
    const { apiKeys } = mock.deps.store.state;
    const readOnly = apiKeys.find((record) => record.redacted === `tpk_…${mock.keys.readOnly.slice(-4)}`)!;
    const saved = readOnly.expires_at;
    readOnly.expires_at = new Date(mock.deps.clock.now().getTime() + 3_600_000).toISOString();
    try {
      expect((await mock.request(accountPath, { key: mock.keys.readOnly })).status).toBe(200);
      await mock.deps.clock.advance(3_600_000);
      expect((await mock.request(accountPath, { key: mock.keys.readOnly })).json.error.code).toBe('EXPIRED_API_KEY');
    } finally {
      readOnly.expires_at = saved;
    }
  });
});

describe('health', () => {
  it('needs no key, ignores one that is sent, and is never rate limited', async () => {
    const variants: Array<Record<string, string>> = [{}, { authorization: 'Bearer nonsense' }, {}, {}];
    for (const headers of variants) {
      const response = await mock.request('/health', { headers });
      expect(response.status).toBe(200);
      expect(response.json.status).toBe('ok');
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
