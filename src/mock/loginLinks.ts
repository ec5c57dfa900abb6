import type { LoginLinkPurpose } from '../contract';
import { newToken, sha256Hex } from './crypto';
import type { MockDeps } from './deps';
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
 * Issues a single-use link for `user`, replacing every earlier link of that user that could still
 * be opened. Only the token's SHA-256 is stored. The caller commits the store.
 */
export function issueLoginLink(
  deps: MockDeps,
  user: UserRecord,
  options: { purpose: LoginLinkPurpose; expiryHours: number; redirectUrl: string | null },
): IssuedLoginLink {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  let previousLinksInvalidated = 0;
  for (const link of deps.store.state.loginLinks) {
    if (link.user_id === user.id && isOpenable(link, now)) {
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

export type OpenedLoginLink =
  | { status: 'ok'; account_id: number; user_email: string; redirect_url: string | null }
  | { status: 'unknown' | 'expired' | 'used' | 'replaced' };

/**
 * What the app's landing route does with a link: the first opening of a valid link succeeds and
 * marks it used; every later opening, and any opening after it expired or was replaced, fails.
 * A token presented on the other kind of path (a spouse's token as a partner login) is unknown.
 */
export async function openLoginLink(deps: MockDeps, kind: LoginLinkKind, token: string): Promise<OpenedLoginLink> {
  const digest = sha256Hex(token);
  const link = deps.store.state.loginLinks.find((candidate) => candidate.token_sha256 === digest);
  const user = link && deps.store.state.users.find((candidate) => candidate.id === link.user_id);
  if (!link || !user || loginLinkKind(user) !== kind) return { status: 'unknown' };
  if (link.used_at !== null) return { status: 'used' };
  if (link.invalidated_at !== null) return { status: 'replaced' };
  const now = deps.clock.now();
  if (Date.parse(link.expires_at) <= now.getTime()) return { status: 'expired' };

  link.used_at = now.toISOString();
  await deps.store.commit();
  return { status: 'ok', account_id: link.account_id, user_email: user.email, redirect_url: link.redirect_url };
}

function isOpenable(link: LoginLinkRecordStored, now: Date): boolean {
  return link.used_at === null && link.invalidated_at === null && Date.parse(link.expires_at) > now.getTime();
}
