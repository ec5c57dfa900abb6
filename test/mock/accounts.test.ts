import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(() => mock.close());

let serial = 0;
/** A fresh address for each use, so tests never collide on the uniqueness rule. */
const uniqueEmail = (name: string) => `${name}.${(serial += 1)}@accounts-test.example`;

const create = (body: unknown, key: string = mock.keys.acme) => mock.request('/accounts', { key, body });
const person = (name: string) => ({ email: uniqueEmail(name), first_name: 'Pat', last_name: 'Doe' });
const TOKEN = '[A-Za-z0-9_-]{32,}';

describe('POST /accounts', () => {
  it('creates an active account with exactly the creation fields and a 7-day partner-login link', async () => {
    const body = person('primary');
    const response = await create(body);
    expect(response.status).toBe(201);
    expect(Object.keys(response.json).sort()).toEqual(
      ['created_at', 'email', 'first_name', 'id', 'last_name', 'login_link', 'login_link_expires_at', 'status'],
    );
    expect(response.json).toMatchObject({ ...body, status: 'active', id: expect.any(Number) });
    expect(response.json.login_link).toMatch(new RegExp(`^${mock.appUrl}/auth/partner-login/${TOKEN}$`));
    expect(Date.parse(response.json.login_link_expires_at) - Date.parse(response.json.created_at)).toBe(7 * 86_400_000);
  });

  it('retrieves only id, email, first_name, last_name and status', async () => {
    const created = await create(person('retrieve'));
    const response = await mock.request(`/accounts/${created.json.id}`, { key: mock.keys.acme });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      id: created.json.id,
      email: created.json.email,
      first_name: 'Pat',
      last_name: 'Doe',
      status: 'active',
    });
  });

  it('invites a spouse with a user-login link and an invitation email', async () => {
    const spouse = { ...person('spouse'), first_name: 'Sky' };
    const response = await create({ ...person('with-spouse'), spouse });
    expect(response.status).toBe(201);
    expect(Object.keys(response.json.spouse).sort()).toEqual(
      ['email', 'first_name', 'id', 'last_name', 'login_link', 'login_link_expires_at', 'status'],
    );
    expect(response.json.spouse).toMatchObject({ ...spouse, status: 'invited' });
    expect(response.json.spouse.login_link).toMatch(new RegExp(`^${mock.appUrl}/auth/user-login/${TOKEN}$`));
    const email = mock.deps.store.state.outbox.at(-1)!;
    expect(email).toMatchObject({ to: spouse.email, kind: 'spouse_invitation', account_id: response.json.id });
    expect(email.body).toContain(response.json.spouse.login_link);
  });

  it('adds a pending spouse without a link or an email when send_invitation is false', async () => {
    const outboxBefore = mock.deps.store.state.outbox.length;
    const spouse = { ...person('pending'), send_invitation: false };
    const response = await create({ ...person('pending-primary'), spouse });
    expect(response.status).toBe(201);
    expect(response.json.spouse).toEqual({
      id: expect.any(Number),
      email: spouse.email,
      first_name: spouse.first_name,
      last_name: spouse.last_name,
      status: 'pending',
    });
    expect(mock.deps.store.state.outbox).toHaveLength(outboxBefore);
  });

  it('does not retrieve the spouse with the account', async () => {
    const created = await create({ ...person('quiet'), spouse: person('quiet-spouse') });
    const response = await mock.request(`/accounts/${created.json.id}`, { key: mock.keys.acme });
    expect(response.json.spouse).toBeUndefined();
  });
});

describe('POST /accounts validation', () => {
  const expectFieldErrors = async (body: unknown, details: Record<string, string[]>) => {
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    expect(response.json.error.details).toEqual(details);
    for (const field of Object.keys(details)) expect(response.json.error.message).toContain(field);
  };

  it('reports every missing field', () =>
    expectFieldErrors({}, { email: ['is required'], first_name: ['is required'], last_name: ['is required'] }));

  it('reports a malformed email, wrong types and unknown fields', () =>
    expectFieldErrors(
      { email: 'not-an-email', first_name: 7, last_name: 'Doe', nickname: 'P' },
      { email: ['must be a valid email address'], first_name: ['must be a string'], nickname: ['is not a field of this request'] },
    ));

  it('refuses a body that is not an object', async () => {
    const response = await create([1, 2]);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
  });

  it.each([
    ['51 letters', 'a'.repeat(51)],
    ['51 emoji', '😀'.repeat(51)],
  ])('refuses a name of %s', (_label, name) =>
    expectFieldErrors({ ...person('long'), last_name: name }, { last_name: ['must be at most 50 characters'] }));

  it.each([
    ['50 letters', 'a'.repeat(50)],
    ['50 emoji (100 UTF-16 units)', '😀'.repeat(50)],
    ['50 accented letters written with combining marks', 'e\u0301'.repeat(50)],
  ])('accepts a name of %s', async (_label, name) => {
    const response = await create({ ...person('fifty'), first_name: name });
    expect(response.status).toBe(201);
  });

  it('refuses a blank name', () => expectFieldErrors({ ...person('blank'), first_name: '   ' }, { first_name: ['must not be blank'] }));

  it('reports the spouse fields by their dotted names', () =>
    expectFieldErrors(
      { ...person('spouse-fields'), spouse: { email: 'nope', send_invitation: 'yes' } },
      {
        'spouse.email': ['must be a valid email address'],
        'spouse.first_name': ['is required'],
        'spouse.last_name': ['is required'],
        'spouse.send_invitation': ['must be true or false'],
      },
    ));

  it('refuses a spouse that is not an object', () => expectFieldErrors({ ...person('spouse-type'), spouse: 'Sky' }, { spouse: ['must be an object'] }));

  it("refuses a spouse email equal to the primary's, whatever the case", async () => {
    const primary = person('same');
    await expectFieldErrors(
      { ...primary, spouse: { ...person('x'), email: primary.email.toUpperCase() } },
      { 'spouse.email': ["must differ from the primary account holder's email"] },
    );
  });
});

describe('email uniqueness across the whole service', () => {
  const expectDuplicate = async (body: unknown, email: string, existingAccountId: number, key: string = mock.keys.acme) => {
    const response = await create(body, key);
    expect(response.status).toBe(409);
    expect(response.json.error).toMatchObject({ code: 'DUPLICATE_EMAIL', details: { email, existing_account_id: existingAccountId } });
  };

  it('refuses a primary email already used by a primary, in another case', async () => {
    const first = await create(person('dup'));
    const email = first.json.email.toUpperCase();
    await expectDuplicate({ ...person('ignored'), email }, email, first.json.id);
  });

  it("refuses a primary email already used by another account's spouse", async () => {
    const spouse = person('dup-spouse');
    const first = await create({ ...person('dup-holder'), spouse });
    await expectDuplicate({ ...person('ignored'), email: spouse.email }, spouse.email, first.json.id);
  });

  it('refuses a spouse email already used by a primary', async () => {
    const first = await create(person('dup-primary'));
    await expectDuplicate({ ...person('new'), spouse: { ...person('s'), email: first.json.email } }, first.json.email, first.json.id);
  });

  it("refuses an email used by another partner's client, without naming the account", async () => {
    const first = await create(person('cross-partner'));
    const response = await create({ ...person('x'), email: first.json.email }, mock.keys.beacon);
    expect(response.status).toBe(409);
    // Which account holds it is another partner's data: not named.
    expect(response.json.error).toEqual({
      code: 'DUPLICATE_EMAIL',
      message: `The email ${first.json.email} is already used by a client of the service.`,
      details: { email: first.json.email },
    });
  });

  it('stores the email as given', async () => {
    const email = uniqueEmail('Mixed.Case');
    const response = await create({ ...person('x'), email });
    expect(response.json.email).toBe(email);
  });
});

describe('GET /accounts/{account_id}', () => {
  it('answers 404 ACCOUNT_NOT_FOUND for an unknown id', async () => {
    const response = await mock.request('/accounts/999999', { key: mock.keys.acme });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', details: { account_id: 999999 } });
  });

  it.each(['abc', '0', '-3', '1.5'])('answers 400 INVALID_PARAMETERS for the id %s', async (id) => {
    const response = await mock.request(`/accounts/${id}`, { key: mock.keys.acme });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'INVALID_PARAMETERS', details: { account_id: ['must be a positive integer'] } });
  });

  it("answers 403 ACCESS_DENIED for another partner's account", async () => {
    const created = await create(person('isolated'));
    const response = await mock.request(`/accounts/${created.json.id}`, { key: mock.keys.beacon });
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { account_id: created.json.id } });
  });
});
