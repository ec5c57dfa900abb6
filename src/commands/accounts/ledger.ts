import { ledgerPlaceOf } from '../../state/backend';
import type { Context } from '../../types';
import { CliError } from '../../errors';
import { createOutput } from '../../output';
import { withLedger } from '../../batch/ledger';
import { ACCOUNTS, AccountsLedger } from '../../batch/ledgers/accounts';
import { Ledger, LOGIN_LINKS, type IssuedLink, type LinkTarget } from '../../batch/ledgers/loginLinks';
import { DEFAULT_LOCK_WAIT_SECONDS } from '../../batch/flags';

/** Where accounts go and who asks: the service origin and profile, as the accounts ledger records them. */
export interface AccountsSession {
  origin: string;
  profile: string | null;
}

export async function accountsSession(ctx: Context): Promise<AccountsSession> {
  const settings = await ctx.settings();
  return { origin: new URL(settings.baseUrl).origin, profile: settings.profileName };
}

/** Runs `work` with the accounts ledger locked and open (`--ledger`, `--lock-wait` as in login-link). */
export async function withAccountsLedger<T>(ctx: Context, flags: { ledgerPath: string | undefined; lockWaitMs: number }, work: (ledger: AccountsLedger) => Promise<T>): Promise<T> {
  return withLedger(await ledgerPlaceOf(ACCOUNTS, ctx, flags), ACCOUNTS, { waitMs: flags.lockWaitMs, clock: ctx.clock, open: (lines) => AccountsLedger.open(lines) }, work);
}

/**
 * Records an account `accounts create` made, so that `status` and a later import know it. The
 * account exists whatever happens here: a ledger that is busy (an import holding it longer than
 * the usual lock wait) or unwritable costs a warning, never the command's success.
 */
export async function rememberCreated(ctx: Context, session: AccountsSession, account: { id?: unknown; email?: unknown }, sentEmail: string): Promise<void> {
  if (typeof account.id !== 'number') return;
  const email = typeof account.email === 'string' ? account.email : sentEmail;
  try {
    await withAccountsLedger(ctx, { ledgerPath: undefined, lockWaitMs: DEFAULT_LOCK_WAIT_SECONDS * 1000 }, (ledger) =>
      ledger.recordAccount('created', { origin: session.origin, email, profile: session.profile, at: ctx.clock.now(), account_id: account.id as number, source: 'create' }),
    );
  } catch (error) {
    const reason = error instanceof CliError ? error.message : String(error);
    await createOutput(ctx).note(`warning: account ${account.id} was created, but not recorded in the accounts ledger: ${reason}`);
  }
}

/** What the login-link ledger records of a link returned at creation: never the link itself. */
export interface CreationLink {
  target: LinkTarget;
  link: IssuedLink;
}

/** The purpose recorded for a link that came with its account (the service names none). */
export const CREATION_PURPOSE = 'account_creation';

interface CreatedAccount {
  id?: unknown;
  email?: unknown;
  created_at?: unknown;
  login_link_expires_at?: unknown;
  spouse?: { email?: unknown; login_link_expires_at?: unknown } | null;
}

/**
 * The links a creation answer carries (the holder's, and the invited spouse's), as login-link
 * ledger entries: renewal then knows them valid until they expire, instead of replacing a link
 * the client has just been sent.
 */
export function creationLinksOf(session: AccountsSession, account: CreatedAccount, sentEmail: string, now: Date): CreationLink[] {
  if (typeof account.id !== 'number') return [];
  const createdAt = typeof account.created_at === 'string' ? account.created_at : now.toISOString();
  const links: CreationLink[] = [];
  if (typeof account.login_link_expires_at === 'string') {
    const email = typeof account.email === 'string' ? account.email : sentEmail;
    links.push({
      target: { origin: session.origin, account_id: account.id, user_email: null },
      link: { user_email: email, purpose: CREATION_PURPOSE, expires_at: account.login_link_expires_at, created_at: createdAt },
    });
  }
  const spouse = account.spouse;
  if (spouse && typeof spouse.email === 'string' && typeof spouse.login_link_expires_at === 'string') {
    links.push({
      target: { origin: session.origin, account_id: account.id, user_email: spouse.email },
      link: { user_email: spouse.email, purpose: CREATION_PURPOSE, expires_at: spouse.login_link_expires_at, created_at: createdAt },
    });
  }
  return links;
}

/**
 * Records creation links in the login-link ledger (its lock taken for this write only, so an
 * import never holds up a renewal). The accounts exist whatever happens here: a busy or
 * unwritable ledger costs a warning, and renewal still recognises these accounts through the
 * accounts ledger and their creation time.
 */
export async function rememberCreationLinks(ctx: Context, session: AccountsSession, links: readonly CreationLink[], lockWaitMs = DEFAULT_LOCK_WAIT_SECONDS * 1000): Promise<void> {
  if (links.length === 0) return;
  try {
    await withLedger(await ledgerPlaceOf(LOGIN_LINKS, ctx, { ledgerPath: undefined }), LOGIN_LINKS, { waitMs: lockWaitMs, clock: ctx.clock, open: (lines) => Ledger.open(lines) }, (ledger) =>
      ledger.recordCreationLinks(links, { profile: session.profile, at: ctx.clock.now() }),
    );
  } catch (error) {
    const reason = error instanceof CliError ? error.message : String(error);
    await createOutput(ctx).note(`warning: ${links.length} login link${links.length === 1 ? '' : 's'} returned at creation not recorded in the login-link ledger: ${reason}`);
  }
}
