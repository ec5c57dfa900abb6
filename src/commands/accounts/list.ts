import type { Context } from '../../types';
import { ApiError } from '../../errors';
import { knownAccounts, type AccountOrigin } from '../../batch/knownAccounts';
import { createOutput, freeText } from '../../output';
import type { RawInvocation } from '../types';

/** Where an account was seen: a command whose ledger knows it, or the partner-wide deliverable list. */
export type SeenIn = AccountOrigin | 'deliverable list';

export interface ListedAccount {
  account_id: number;
  /** The primary holder's email when the accounts ledger has it; null otherwise. */
  email: string | null;
  seen_in: SeenIn[];
}

/** Said with every listing: what the list is, since the service cannot give one. */
export const NO_ACCOUNT_LIST = 'The service has no list of accounts: these are the accounts this machine knows for';

export function parseOptions(_raw: RawInvocation): Record<string, never> {
  return {};
}

/**
 * `accounts list`: the accounts this profile's service is known to hold, gathered where they can
 * be seen (the contract has no account list): the accounts and login-link ledgers of this machine,
 * and the partner-wide deliverable list, read in full.
 */
export async function run(ctx: Context): Promise<number> {
  const [settings, api] = await Promise.all([ctx.settings(), ctx.api()]);
  const origin = new URL(settings.baseUrl).origin;
  const byId = new Map<number, ListedAccount>();
  const see = (accountId: number, where: SeenIn, email?: string) => {
    const entry = byId.get(accountId) ?? { account_id: accountId, email: null, seen_in: [] };
    if (!entry.seen_in.includes(where)) entry.seen_in.push(where);
    if (entry.email === null && email !== undefined) entry.email = email;
    byId.set(accountId, entry);
  };
  for (const account of await knownAccounts(ctx, { origin })) for (const source of account.sources) see(account.account_id, source, account.email);

  const out = createOutput(ctx);
  let deliverablesRead = true;
  try {
    for await (const page of api.pages('listDeliverables', {})) {
      for (const deliverable of page.data.deliverables) {
        const accountId = Number(deliverable.account_id);
        if (Number.isSafeInteger(accountId) && accountId > 0) see(accountId, 'deliverable list');
      }
    }
  } catch (error) {
    // A key without deliverables:read still has its ledgers: the list says what it could not read.
    if (!(error instanceof ApiError && error.code === 'INSUFFICIENT_PERMISSIONS')) throw error;
    deliverablesRead = false;
  }

  const accounts = [...byId.values()].sort((a, b) => a.account_id - b.account_id);
  const where = `${origin} (its ledgers${deliverablesRead ? ' and the deliverable list' : ''}); an account in none of these is not shown.`;
  if (ctx.globals.json) {
    await out.json({ service: origin, deliverables_read: deliverablesRead, accounts });
  } else if (accounts.length > 0) {
    await out.table(['Account', freeText('Email', { min: 20 }), freeText('Seen in', { min: 16 })], accounts.map((account) => [String(account.account_id), account.email === null ? '-' : out.format.text(account.email), account.seen_in.join(', ')]));
  }
  await out.note(`${NO_ACCOUNT_LIST} ${where}`);
  if (!deliverablesRead) await out.note('The deliverable list was not read: this key lacks the deliverables:read permission.');
  return 0;
}
