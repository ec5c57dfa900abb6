import { sourceName } from '../batch/input';
import { readAccountInput } from '../batch/accountInput';
import { knownAccounts, type AccountOrigin as LedgerOrigin } from '../batch/knownAccounts';
import type { Context } from '../types';

/**
 * Which accounts `status` and `watch` look at, and where each came from. The contract has no list
 * of accounts, so they are gathered: the partner-wide deliverable list names some (read by the
 * pass itself), `--accounts FILE` (src/batch/accountInput.ts) others, and the
 * ledgers the rest: accounts this machine created (`accounts create`, `accounts import`) or
 * generated login links for, on this service.
 */

export type AccountOrigin = 'deliverables' | 'file' | 'ledger';

export interface AccountSources {
  /** Account -> where it came from, in the order first seen (the deliverable list is added later). */
  origins: Map<number, Set<AccountOrigin>>;
  /** `--accounts` line of each account from the file, for messages (`clients.txt line 3`). */
  fileLines: Map<number, string>;
  /** How many ledger accounts each command made known. */
  ledgerCounts: Map<LedgerOrigin, number>;
}

export async function gatherAccounts(
  ctx: Context,
  options: { accountsFile: string | undefined; loginLinksLedger: string | undefined; baseUrl: string },
): Promise<AccountSources> {
  const sources: AccountSources = { origins: new Map(), fileLines: new Map(), ledgerCounts: new Map() };
  if (options.accountsFile !== undefined) {
    const source = sourceName(options.accountsFile);
    for (const item of await readAccountInput(ctx, options.accountsFile, '--accounts', async () => options.baseUrl)) {
      addOrigin(sources, item.account_id, 'file');
      if (!sources.fileLines.has(item.account_id)) sources.fileLines.set(item.account_id, `${source} ${item.origin}`);
    }
  }
  const known = await knownAccounts(ctx, { ledgers: { loginLinks: options.loginLinksLedger }, origin: new URL(options.baseUrl).origin });
  for (const account of known) {
    addOrigin(sources, account.account_id, 'ledger');
    for (const from of account.sources) sources.ledgerCounts.set(from, (sources.ledgerCounts.get(from) ?? 0) + 1);
  }
  return sources;
}

export function addOrigin(sources: AccountSources, account: number, origin: AccountOrigin): void {
  const known = sources.origins.get(account);
  if (known === undefined) sources.origins.set(account, new Set([origin]));
  else known.add(origin);
}

/** How many accounts came from `origin` (an account may come from several). */
export function countFrom(sources: AccountSources, origin: AccountOrigin): number {
  return [...sources.origins.values()].filter((set) => set.has(origin)).length;
}

/**
 * `300 accounts (12 from the deliverable list, 250 from clients.txt, 40 from the ledgers: accounts
 * import 30, login-link 12)`; an account is counted once per place it came from.
 */
export function describeSources(sources: AccountSources, accountsFile: string | undefined): string {
  const parts = [`${countFrom(sources, 'deliverables')} from the deliverable list`];
  if (accountsFile !== undefined) parts.push(`${countFrom(sources, 'file')} from ${sourceName(accountsFile)}`);
  const byCommand = [...sources.ledgerCounts].map(([command, count]) => `${command} ${count}`).join(', ');
  parts.push(`${countFrom(sources, 'ledger')} from the ledgers${byCommand === '' ? '' : `: ${byCommand}`}`);
  const total = sources.origins.size;
  return `${total} account${total === 1 ? '' : 's'} (${parts.join(', ')})`;
}
