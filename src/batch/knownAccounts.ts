import { ledgerPlaceOf } from '../state/backend';
import type { Context } from '../types';
import { ACCOUNTS, readAccountsLedger } from './ledgers/accounts';
import { LOGIN_LINKS, readLedger } from './ledgers/loginLinks';

/** How an account became known to this machine's ledgers. */
export type AccountOrigin = 'accounts create' | 'accounts import' | 'login-link';

export interface KnownAccount {
  /** The service origin the account lives at. */
  origin: string;
  account_id: number;
  /** The primary holder's email, when the accounts ledger has it (a login-link ledger knows only ids). */
  email?: string;
  /** Every command that made it known, in the order first seen. */
  sources: AccountOrigin[];
  /** The profile of the last command that touched it. */
  profile: string | null;
  /** When it was last created, found or linked. */
  at: string;
}

/**
 * The accounts the ledgers know, per service and id: created by `accounts create` or
 * `accounts import` (or found by import's 409 as already ours), or linked by `login-link`.
 * Reads without locks (ledgers are appended whole and replaced by rename); missing ledgers are empty.
 * `ledgers` overrides where each ledger is (`--ledger`-style paths); `origin` keeps one service's.
 */
export async function knownAccounts(
  ctx: Pick<Context, 'env' | 'state'>,
  options: { ledgers?: { accounts?: string; loginLinks?: string }; origin?: string } = {},
): Promise<KnownAccount[]> {
  const [accounts, links] = await Promise.all([
    ledgerPlaceOf(ACCOUNTS, ctx, { ledgerPath: options.ledgers?.accounts }).then((place) => readAccountsLedger(place.lines)),
    ledgerPlaceOf(LOGIN_LINKS, ctx, { ledgerPath: options.ledgers?.loginLinks }).then((place) => readLedger(place.lines)),
  ]);
  const known = new Map<string, KnownAccount>();
  const add = (origin: string, accountId: number, source: AccountOrigin, fields: { email?: string; profile: string | null; at: string }) => {
    if (options.origin !== undefined && origin !== options.origin) return;
    const key = `${origin}|${accountId}`;
    const entry = known.get(key);
    if (entry === undefined) {
      known.set(key, { origin, account_id: accountId, ...(fields.email === undefined ? {} : { email: fields.email }), sources: [source], profile: fields.profile, at: fields.at });
      return;
    }
    // The email is the one first seen: the accounts ledger, every line of which has one, is read before the links.
    if (!entry.sources.includes(source)) entry.sources.push(source);
    if (fields.at > entry.at) Object.assign(entry, { profile: fields.profile, at: fields.at });
  };
  for (const entry of accounts.accounts()) {
    add(entry.origin, entry.account_id, entry.source === 'create' ? 'accounts create' : 'accounts import', entry);
  }
  for (const entry of links.links()) add(entry.origin, entry.account_id, 'login-link', { profile: entry.profile, at: entry.at });
  return [...known.values()];
}
