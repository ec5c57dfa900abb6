import type { Context } from '../../types';
import { CliError } from '../../errors';
import { createOutput } from '../../output';
import { ledgerPathOf, withLedger } from '../../batch/ledger';
import { ACCOUNTS, AccountsLedger } from '../../batch/ledgers/accounts';
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
export function withAccountsLedger<T>(ctx: Context, flags: { ledgerPath: string | undefined; lockWaitMs: number }, work: (ledger: AccountsLedger) => Promise<T>): Promise<T> {
  return withLedger(ledgerPathOf(ACCOUNTS, ctx, flags), ACCOUNTS, { waitMs: flags.lockWaitMs, clock: ctx.clock, open: (path) => AccountsLedger.open(path) }, work);
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
