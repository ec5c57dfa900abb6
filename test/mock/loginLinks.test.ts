import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LINK_PURPOSES, NOTIFICATION_DEFAULTS } from '../../src/contract';
import { openLoginLink } from '../../src/mock/loginLinks';
import { SERVICE_SENDER } from '../../src/mock/outbox';
import { startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock;
let acmeName: string;
let permittedDomain: string;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
  const acme = mock.deps.store.state.partners.find((partner) => partner.id === 1)!;
  acmeName = acme.name;
  permittedDomain = acme.permitted_redirect_domains[0]!;
});
afterAll(() => mock.close());

let serial = 0;
interface Created {
  id: number;
  email: string;
  spouseEmail: string;
}

/** A fresh account of the acme partner with an invited spouse. */
async function createAccount(spouse: { send_invitation?: boolean } = {}): Promise<Created> {
  serial += 1;
  const email = `holder.${serial}@links-test.example`;
  const spouseEmail = `spouse.${serial}@links-test.example`;
  const response = await mock.request('/accounts', {
    key: mock.keys.acme,
    body: { email, first_name: 'Hana', last_name: 'Holder', spouse: { email: spouseEmail, first_name: 'Sol', last_name: 'Holder', ...spouse } },
  });
  expect(response.status).toBe(201);
  return { id: response.json.id, email, spouseEmail };
}

const generate = (accountId: number | string, body?: unknown, key: string = mock.keys.acme) =>
  mock.request(`/accounts/${accountId}/login-link`, { method: 'POST', key, ...(body === undefined ? {} : { body }) });

const tokenOf = (link: string) => link.split('/').at(-1)!;

describe('POST /accounts/{account_id}/login-link', () => {
  it('defaults to the primary holder, 168 hours, expired_link and a notification', async () => {
    const account = await createAccount();
    const response = await generate(account.id, {});
    expect(response.status).toBe(201);
    expect(response.json).toEqual({
      login_link: expect.stringMatching(new RegExp(`^${mock.appUrl}/auth/partner-login/[A-Za-z0-9_-]{32,}$`)),
      user_email: account.email,
      expires_at: expect.any(String),
      expires_in_hours: 168,
      purpose: 'expired_link',
      redirect_url: null,
      notification_sent: true,
      // The link made at account creation was still valid.
      previous_links_invalidated: 1,
      created_at: expect.any(String),
      account_id: account.id,
    });
    expect(Date.parse(response.json.expires_at) - Date.parse(response.json.created_at)).toBe(168 * 3_600_000);
  });

  it('counts only the earlier links that were still valid', async () => {
    const account = await createAccount();
    await generate(account.id, { send_notification: false });
    expect((await generate(account.id, { send_notification: false })).json.previous_links_invalidated).toBe(1);

    const spouse = await generate(account.id, { user_email: account.spouseEmail, expiry_hours: 1, send_notification: false });
    expect(spouse.json.previous_links_invalidated).toBe(1);
    await mock.deps.clock.advance(2 * 3_600_000);
    // The spouse's one-hour link has expired since: nothing left to invalidate.
    expect((await generate(account.id, { user_email: account.spouseEmail, send_notification: false })).json.previous_links_invalidated).toBe(0);
    // The primary's links are separate and still valid.
    expect((await generate(account.id, { send_notification: false })).json.previous_links_invalidated).toBe(1);
  });

  it("issues a spouse a user-login link, matching the email whatever its case", async () => {
    const account = await createAccount({ send_invitation: false });
    const response = await generate(account.id, { user_email: account.spouseEmail.toUpperCase(), purpose: 'additional_user' });
    expect(response.status).toBe(201);
    expect(response.json.login_link).toContain('/auth/user-login/');
    expect(response.json.user_email).toBe(account.spouseEmail);
    expect(response.json.purpose).toBe('additional_user');
    expect(response.json.previous_links_invalidated).toBe(0);
  });

  it('answers 404 USER_NOT_FOUND for an email that is not on the account', async () => {
    const account = await createAccount();
    const other = await createAccount();
    const response = await generate(account.id, { user_email: other.email });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'USER_NOT_FOUND', details: { user_email: other.email, account_id: account.id } });
  });

  it.each([0, 169, 1.5, -1])('answers 400 INVALID_EXPIRY for expiry_hours %s', async (hours) => {
    const account = await createAccount();
    const response = await generate(account.id, { expiry_hours: hours });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'INVALID_EXPIRY', details: { provided_hours: hours, min_hours: 1, max_hours: 168 } });
  });

  it.each([1, 168])('accepts expiry_hours %s', async (hours) => {
    const account = await createAccount();
    const response = await generate(account.id, { expiry_hours: hours, send_notification: false });
    expect(response.status).toBe(201);
    expect(response.json.expires_in_hours).toBe(hours);
    expect(Date.parse(response.json.expires_at) - Date.parse(response.json.created_at)).toBe(hours * 3_600_000);
  });

  it('answers VALIDATION_ERROR for an expiry_hours that is not a number', async () => {
    const account = await createAccount();
    const response = await generate(account.id, { expiry_hours: '24' });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { expiry_hours: ['must be an integer'] } });
  });

  it('refuses an unknown purpose, listing the allowed ones', async () => {
    const account = await createAccount();
    const response = await generate(account.id, { purpose: 'marketing' });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    expect(response.json.error.details.purpose[0]).toContain(LOGIN_LINK_PURPOSES.join(', '));
  });

  it('refuses unknown fields and wrongly typed notification settings', async () => {
    const account = await createAccount();
    const response = await generate(account.id, { send_notification: 'no', notification_settings: { colour: 'red' }, extra: 1 });
    expect(response.status).toBe(400);
    expect(response.json.error.details).toEqual({
      send_notification: ['must be true or false'],
      'notification_settings.colour': ['is not a field of this request'],
      extra: ['is not a field of this request'],
    });
  });

  it('accepts an HTTPS redirect on a permitted domain or its subdomain', async () => {
    const account = await createAccount();
    const url = `https://portal.${permittedDomain}/welcome?step=1`;
    const response = await generate(account.id, { redirect_url: url, send_notification: false });
    expect(response.status).toBe(201);
    expect(response.json.redirect_url).toBe(url);
  });

  it.each([
    ['plain http', (domain: string) => `http://${domain}/`],
    ['a look-alike host', (domain: string) => `https://${domain}.evil.test/`],
    ['a user-info trick', (domain: string) => `https://${domain}@evil.test/`],
    ['a backslash trick', (domain: string) => `https://evil.test\\@${domain}/`],
    ['a suffix without a dot', (domain: string) => `https://evil${domain}/`],
    ['not a URL', () => 'portal'],
  ])('answers 400 INVALID_REDIRECT_URL for %s', async (_label, makeUrl) => {
    const account = await createAccount();
    const url = makeUrl(permittedDomain);
    const response = await generate(account.id, { redirect_url: url });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({
      code: 'INVALID_REDIRECT_URL',
      details: { provided_url: url, permitted_domains: mock.deps.store.state.partners.find((partner) => partner.id === 1)!.permitted_redirect_domains },
    });
  });

  it('answers 403 ACCOUNT_SUSPENDED for a suspended account, before looking at the user', async () => {
    const account = await createAccount();
    mock.deps.store.state.accounts.find((record) => record.id === account.id)!.status = 'suspended';
    const response = await generate(account.id, { user_email: 'nobody@example.com' });
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({
      code: 'ACCOUNT_SUSPENDED',
      details: { account_id: account.id, status: 'suspended', contact_support: true },
    });
  });

  it('answers ACCOUNT_NOT_FOUND, ACCESS_DENIED and INVALID_PARAMETERS for the account id', async () => {
    const account = await createAccount();
    expect((await generate(999_999, {})).json.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', details: { account_id: 999_999 } });
    const denied = await generate(account.id, {}, mock.keys.beacon);
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { account_id: account.id } });
    expect((await generate('x1', {})).json.error.code).toBe('INVALID_PARAMETERS');
  });
});

describe('notification emails', () => {
  const lastEmail = () => mock.deps.store.state.outbox.at(-1)!;

  it('sends nothing when send_notification is false', async () => {
    const account = await createAccount({ send_invitation: false });
    const before = mock.deps.store.state.outbox.length;
    const response = await generate(account.id, { send_notification: false });
    expect(response.json.notification_sent).toBe(false);
    expect(mock.deps.store.state.outbox).toHaveLength(before);
  });

  it('sends the default email from the service, with instructions', async () => {
    const account = await createAccount();
    const response = await generate(account.id, {});
    expect(lastEmail()).toMatchObject({
      to: account.email,
      from: SERVICE_SENDER,
      subject: NOTIFICATION_DEFAULTS.custom_subject,
      kind: 'login_link',
      account_id: account.id,
      partner_branded: false,
    });
    expect(lastEmail().body).toContain(response.json.login_link);
    expect(lastEmail().body).toContain('How to use this link');
  });

  it('applies every notification setting', async () => {
    const account = await createAccount();
    await generate(account.id, {
      user_email: account.spouseEmail,
      notification_settings: {
        partner_branded: true,
        custom_subject: 'Your documents are ready',
        custom_message: 'Please sign in before Friday.',
        include_instructions: false,
      },
    });
    const email = lastEmail();
    expect(email).toMatchObject({ to: account.spouseEmail, from: acmeName, subject: 'Your documents are ready', partner_branded: true });
    expect(email.body).toContain('Please sign in before Friday.');
    expect(email.body).toContain(acmeName);
    expect(email.body).not.toContain('How to use this link');
  });
});

describe('opening a link (the app landing route)', () => {
  it('opens a link once, then reports it used', async () => {
    const account = await createAccount();
    const link = await generate(account.id, { send_notification: false, redirect_url: `https://${permittedDomain}/home` });
    const token = tokenOf(link.json.login_link);
    expect(await openLoginLink(mock.deps, 'partner-login', token)).toEqual({
      status: 'ok',
      account_id: account.id,
      user_email: account.email,
      redirect_url: `https://${permittedDomain}/home`,
    });
    expect(await openLoginLink(mock.deps, 'partner-login', token)).toEqual({ status: 'used' });
  });

  it('refuses a replaced link, an expired link, an unknown token, and a token on the other kind of path', async () => {
    const account = await createAccount();
    const first = tokenOf((await generate(account.id, { send_notification: false })).json.login_link);
    const second = tokenOf((await generate(account.id, { send_notification: false, expiry_hours: 1 })).json.login_link);
    expect(await openLoginLink(mock.deps, 'partner-login', first)).toEqual({ status: 'replaced' });
    expect(await openLoginLink(mock.deps, 'user-login', second)).toEqual({ status: 'unknown' });
    expect(await openLoginLink(mock.deps, 'partner-login', 'A'.repeat(32))).toEqual({ status: 'unknown' });
    await mock.deps.clock.advance(3_600_000);
    expect(await openLoginLink(mock.deps, 'partner-login', second)).toEqual({ status: 'expired' });
  });

  it('stores only a digest of the token', async () => {
    const account = await createAccount();
    const token = tokenOf((await generate(account.id, { send_notification: false })).json.login_link);
    expect(JSON.stringify(mock.deps.store.state)).not.toContain(token);
  });
});
