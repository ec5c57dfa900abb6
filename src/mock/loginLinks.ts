import type { LoginLinkPurpose } from '../contract';
import { newToken, sha256Hex } from './crypto';
import type { MockDeps } from './deps';
import { indexesOf } from './indexes';
import type { LoginLinkRecordStored, UserRecord } from './state';

/** Primary holders log in through `/auth/partner-login/`, spouses through `/auth/user-login/` (contract). */
export type LoginLinkKind = 'partner-login' | 'user-login';

export interface IssuedLoginLink {
  url: string;
  record: LoginLinkRecordStored;
  /** How many of the user's earlier links were still valid and are now replaced. */
  previousLinksInvalidated: number;
}

function loginLinkKind(user: UserRecord): LoginLinkKind {
  return user.role === 'primary' ? 'partner-login' : 'user-login';
}

/**
 * Issues a single-use link for `user` at `now`, replacing every earlier link of that user that
 * could still be opened. Only the token's SHA-256 is stored. The caller commits the store, and
 * passes the instant of its request so that every timestamp of one answer agrees.
 */
export function issueLoginLink(
  deps: MockDeps,
  user: UserRecord,
  options: { purpose: LoginLinkPurpose; expiryHours: number; redirectUrl: string | null; now: Date },
): IssuedLoginLink {
  const { now } = options;
  const nowIso = now.toISOString();
  let previousLinksInvalidated = 0;
  for (const link of indexesOf(deps.store.state).loginLinksOfUser(user.id)) {
    if (loginLinkState(link, now.getTime()) === 'valid') {
      link.invalidated_at = nowIso;
      previousLinksInvalidated += 1;
    }
  }
  const token = newToken();
  const record: LoginLinkRecordStored = {
    id: deps.store.nextId('loginLink'),
    token_sha256: sha256Hex(token),
    account_id: user.account_id,
    user_id: user.id,
    purpose: options.purpose,
    redirect_url: options.redirectUrl,
    created_at: nowIso,
    expires_at: new Date(now.getTime() + options.expiryHours * 3_600_000).toISOString(),
    invalidated_at: null,
    used_at: null,
  };
  deps.store.state.loginLinks.push(record);
  return { url: loginLinkUrl(deps.settings.appUrl, loginLinkKind(user), token), record, previousLinksInvalidated };
}

function loginLinkUrl(appUrl: string, kind: LoginLinkKind, token: string): string {
  return `${appUrl}/auth/${kind}/${token}`;
}

export type LoginLinkState = 'valid' | 'expired' | 'used' | 'replaced';

/**
 * Whether a link can still be opened at `nowMs`, and if not, why: used, then replaced, then
 * expired, so that a link used before it expired is reported as used. The landing route, the
 * replacement of earlier links and the `/_mock/login-links` control all go by this.
 */
export function loginLinkState(link: LoginLinkRecordStored, nowMs: number): LoginLinkState {
  if (link.used_at !== null) return 'used';
  if (link.invalidated_at !== null) return 'replaced';
  return Date.parse(link.expires_at) <= nowMs ? 'expired' : 'valid';
}

export type OpenedLoginLink =
  | { status: 'ok'; account_id: number; user_email: string; redirect_url: string | null }
  | { status: 'unknown' | Exclude<LoginLinkState, 'valid'> };

/**
 * What the app's landing route does with a link: the first opening of a valid link succeeds and
 * marks it used; every later opening, and any opening after it expired or was replaced, fails.
 * A token presented on the other kind of path (a spouse's token as a partner login) is unknown.
 */
export async function openLoginLink(deps: MockDeps, kind: LoginLinkKind, token: string): Promise<OpenedLoginLink> {
  const digest = sha256Hex(token);
  const indexes = indexesOf(deps.store.state);
  const link = indexes.loginLinkWithToken(digest);
  const user = link && indexes.user(link.user_id);
  if (!link || !user || loginLinkKind(user) !== kind) return { status: 'unknown' };
  const now = deps.clock.now();
  const state = loginLinkState(link, now.getTime());
  if (state !== 'valid') return { status: state };

  link.used_at = now.toISOString();
  await deps.store.commit();
  return { status: 'ok', account_id: link.account_id, user_email: user.email, redirect_url: link.redirect_url };
}
