import { ACCOUNT_LOGIN_LINK_DAYS, describeFieldErrors, type FieldErrors } from '../../contract';
import { ownedAccount } from '../access';
import type { MockDeps } from '../deps';
import { MockError } from '../errors';
import type { Handlers } from '../handler';
import { indexesOf } from '../indexes';
import { issueLoginLink } from '../loginLinks';
import { sendSpouseInvitation } from '../outbox';
import type { AccountRecord, MockState, PartnerRecord, UserRecord } from '../state';

/** Emails are stored as given and compared without regard to case, everywhere in the service. */
export function sameEmail(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The account already using `email`, as a primary holder or a spouse, under any partner. */
function accountUsingEmail(state: MockState, email: string): number | undefined {
  const indexes = indexesOf(state);
  return indexes.usersWithEmail(email)[0]?.account_id ?? indexes.accountsWithEmail(email)[0]?.id;
}

/**
 * 409 when `email` is taken. The existing account is named only to its own partner: another
 * partner learns that the email is taken (it must choose another) but not which account holds it.
 */
function rejectDuplicate(state: MockState, partner: PartnerRecord, email: string): void {
  const existing = accountUsingEmail(state, email);
  if (existing === undefined) return;
  if (indexesOf(state).account(existing)?.partner_id === partner.id) {
    throw new MockError('DUPLICATE_EMAIL', `The email ${email} is already used by account ${existing}.`, { email, existing_account_id: existing });
  }
  throw new MockError('DUPLICATE_EMAIL', `The email ${email} is already used by a client of the service.`, { email });
}

function validationError(details: FieldErrors): MockError<'VALIDATION_ERROR'> {
  return new MockError('VALIDATION_ERROR', `The request body is invalid: ${describeFieldErrors(details)}.`, details);
}

const ACCOUNT_LINK_HOURS = ACCOUNT_LOGIN_LINK_DAYS * 24;

interface Person {
  email: string;
  first_name: string;
  last_name: string;
}

function newUser(deps: MockDeps, account: AccountRecord, role: UserRecord['role'], person: Person, spouseStatus: UserRecord['spouse_status']): UserRecord {
  const user: UserRecord = {
    id: deps.store.nextId('user'),
    account_id: account.id,
    role,
    email: person.email,
    first_name: person.first_name,
    last_name: person.last_name,
    spouse_status: spouseStatus,
    created_at: account.created_at,
  };
  deps.store.state.users.push(user);
  return user;
}

/** Adds the spouse: invited (a 7-day link, in the answer and by email) unless `send_invitation` is false. */
function addSpouse(
  deps: MockDeps,
  now: Date,
  account: AccountRecord,
  primary: UserRecord,
  partner: PartnerRecord,
  person: Person & { send_invitation?: boolean | undefined },
) {
  const invite = person.send_invitation ?? true;
  const spouse = newUser(deps, account, 'spouse', person, invite ? 'invited' : 'pending');
  const created = { id: spouse.id, email: spouse.email, first_name: spouse.first_name, last_name: spouse.last_name, status: spouse.spouse_status! };
  if (!invite) return created;
  const link = issueLoginLink(deps, spouse, { purpose: 'additional_user', expiryHours: ACCOUNT_LINK_HOURS, redirectUrl: null, now });
  sendSpouseInvitation(deps, { spouse, primary, partner, loginLink: link.url, expiresAt: link.record.expires_at });
  return { ...created, login_link: link.url, login_link_expires_at: link.record.expires_at };
}

export const accountHandlers: Pick<Handlers, 'createAccount' | 'getAccount'> = {
  async createAccount({ body, partner }, deps: MockDeps) {
    const { state } = deps.store;
    if (body.spouse && sameEmail(body.spouse.email, body.email)) {
      throw validationError({ 'spouse.email': ["must differ from the primary account holder's email"] });
    }
    rejectDuplicate(state, partner, body.email);
    if (body.spouse) rejectDuplicate(state, partner, body.spouse.email);

    // One instant for the whole creation: the links' expiry is exactly 7 days after created_at.
    const now = deps.clock.now();
    const account: AccountRecord = {
      id: deps.store.nextId('account'),
      partner_id: partner.id,
      email: body.email,
      first_name: body.first_name,
      last_name: body.last_name,
      status: 'active',
      created_at: now.toISOString(),
    };
    state.accounts.push(account);
    const primary = newUser(deps, account, 'primary', body, null);
    // The primary's link is handed to the partner in the answer, not emailed (docs/contract-notes.md).
    const primaryLink = issueLoginLink(deps, primary, { purpose: 'initial_access', expiryHours: ACCOUNT_LINK_HOURS, redirectUrl: null, now });
    const spouse = body.spouse ? addSpouse(deps, now, account, primary, partner, body.spouse) : undefined;
    await deps.store.commit();

    return {
      id: account.id,
      email: account.email,
      first_name: account.first_name,
      last_name: account.last_name,
      status: account.status,
      login_link: primaryLink.url,
      login_link_expires_at: primaryLink.record.expires_at,
      ...(spouse ? { spouse } : {}),
      created_at: account.created_at,
    };
  },

  getAccount({ params, partner }, deps) {
    const account = ownedAccount(deps.store.state, partner, params.account_id);
    return { id: account.id, email: account.email, first_name: account.first_name, last_name: account.last_name, status: account.status };
  },
};
