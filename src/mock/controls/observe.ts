import * as z from 'zod';
import { email, pathId } from '../../contract';
import { loginLinkState } from '../loginLinks';
import type { MockState } from '../state';
import { indexesOf } from '../indexes';
import { control } from './control';

/** Controls that show what the service received and what it would have sent. */

const listRequests = control({
  method: 'GET',
  path: '/requests',
  summary: 'The log of contract requests received, oldest first (controls are not logged).',
  handle: (_input, deps) => ({ requests: deps.requestLog.entries() }),
});

const clearRequests = control({
  method: 'DELETE',
  path: '/requests',
  summary: 'Empty the request log.',
  handle(_input, deps) {
    const cleared = deps.requestLog.entries().length;
    deps.requestLog.clear();
    return { cleared };
  },
});

const listOutbox = control({
  method: 'GET',
  path: '/outbox',
  summary: 'Emails the service would have sent, oldest first; filters: to, account_id.',
  query: z.object({ to: z.string().optional(), account_id: pathId.optional() }),
  handle({ query }, deps) {
    const to = query.to?.toLowerCase();
    const emails = deps.store.state.outbox
      .filter((sent) => to === undefined || sent.to.toLowerCase() === to)
      .filter((sent) => query.account_id === undefined || sent.account_id === query.account_id);
    return { emails };
  },
});

const clearOutbox = control({
  method: 'DELETE',
  path: '/outbox',
  summary: 'Empty the outbox.',
  async handle(_input, deps) {
    const { state } = deps.store;
    const cleared = state.outbox.length;
    state.outbox = [];
    await deps.store.commit();
    return { cleared };
  },
});

const listLoginLinks = control({
  method: 'GET',
  path: '/login-links',
  summary: 'Login links issued (never their tokens), oldest first, with their state; filters: account_id, user_email.',
  query: z.object({ account_id: pathId.optional(), user_email: email.optional() }),
  handle({ query }, deps) {
    const { state } = deps.store;
    const now = deps.clock.nowMs();
    const userEmail = query.user_email?.toLowerCase();
    const loginLinks = state.loginLinks
      .filter((link) => query.account_id === undefined || link.account_id === query.account_id)
      .map((link) => ({ link, userEmail: emailOfUser(state, link.user_id) }))
      .filter((entry) => userEmail === undefined || entry.userEmail.toLowerCase() === userEmail)
      .map(({ link, userEmail: user_email }) => ({
        id: link.id,
        account_id: link.account_id,
        user_email,
        purpose: link.purpose,
        redirect_url: link.redirect_url,
        created_at: link.created_at,
        expires_at: link.expires_at,
        invalidated_at: link.invalidated_at,
        used_at: link.used_at,
        state: loginLinkState(link, now),
      }));
    return { login_links: loginLinks };
  },
});

export const observeControls = [listRequests, clearRequests, listOutbox, clearOutbox, listLoginLinks];

function emailOfUser(state: MockState, userId: number): string {
  return indexesOf(state).user(userId)?.email ?? '';
}
