import { EXPIRY_HOURS, isPermittedRedirectUrl, isValidExpiryHours, type LoginLinkPurpose } from '../../contract';
import { ownedAccount } from '../access';
import { MockError } from '../errors';
import type { Handlers } from '../handler';
import { indexesOf } from '../indexes';
import { issueLoginLink } from '../loginLinks';
import { sendLoginLinkEmail } from '../outbox';
import { sameEmail } from './accounts';

/**
 * Checks run in this order (docs/contract-notes.md): the account exists and is the partner's,
 * it is not suspended, the user is on it, then `expiry_hours`, then `redirect_url`. Field types
 * and `purpose` were already checked by the router against the contract's schema.
 */
export const loginLinkHandlers: Pick<Handlers, 'createLoginLink'> = {
  async createLoginLink({ params, body, partner }, deps) {
    const { state } = deps.store;
    const account = ownedAccount(state, partner, params.account_id);
    if (account.status === 'suspended') {
      throw new MockError('ACCOUNT_SUSPENDED', `Account ${account.id} is suspended; login links cannot be generated. Contact support.`, {
        account_id: account.id,
        status: account.status,
        contact_support: true,
      });
    }

    const users = indexesOf(state).usersOfAccount(account.id);
    const user =
      body.user_email === undefined
        ? users.find((candidate) => candidate.role === 'primary')
        : users.find((candidate) => sameEmail(candidate.email, body.user_email!));
    if (!user) {
      const userEmail = body.user_email ?? account.email;
      throw new MockError('USER_NOT_FOUND', `No user with email ${userEmail} is on account ${account.id}.`, {
        user_email: userEmail,
        account_id: account.id,
      });
    }

    const expiryHours = body.expiry_hours ?? EXPIRY_HOURS.default;
    if (!isValidExpiryHours(expiryHours)) {
      throw new MockError('INVALID_EXPIRY', `expiry_hours must be a whole number from ${EXPIRY_HOURS.min} to ${EXPIRY_HOURS.max}.`, {
        provided_hours: expiryHours,
        min_hours: EXPIRY_HOURS.min,
        max_hours: EXPIRY_HOURS.max,
      });
    }

    const redirectUrl = body.redirect_url ?? null;
    if (redirectUrl !== null && !isPermittedRedirectUrl(redirectUrl, partner.permitted_redirect_domains)) {
      throw new MockError('INVALID_REDIRECT_URL', 'redirect_url must be an HTTPS URL on a domain permitted for this partner.', {
        provided_url: redirectUrl,
        permitted_domains: partner.permitted_redirect_domains,
      });
    }

    // The router parsed the body with MockLoginLinkRequest: only a listed purpose gets here.
    const purpose = (body.purpose ?? 'expired_link') as LoginLinkPurpose;
    const issued = issueLoginLink(deps, user, { purpose, expiryHours, redirectUrl, now: deps.clock.now() });
    const notify = body.send_notification ?? true;
    if (notify) {
      sendLoginLinkEmail(deps, { user, partner, loginLink: issued.url, expiresAt: issued.record.expires_at }, body.notification_settings);
    }
    await deps.store.commit();

    return {
      login_link: issued.url,
      user_email: user.email,
      expires_at: issued.record.expires_at,
      expires_in_hours: expiryHours,
      purpose,
      redirect_url: redirectUrl,
      notification_sent: notify,
      previous_links_invalidated: issued.previousLinksInvalidated,
      created_at: issued.record.created_at,
      account_id: account.id,
    };
  },
};
