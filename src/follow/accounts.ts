import { readItems } from '../commands/login-link/create';
import { readLedger } from '../commands/login-link/lib/ledgerStore';
import type { Context } from '../types';

/**
 * Which accounts `status` and `watch` look at, and where each came from. The contract has no list
 * of accounts, so they are gathered: the partner-wide deliverable list names some (read by the
 * pass itself), `--accounts FILE` (the input formats of `login-link --from`) others, and the
 * ledger the rest (accounts taxprep generated login links for, on this service).
 */

export type AccountOrigin = 'deliverables' | 'file' | 'ledger';

export interface AccountSources {
  /** Account -> where it came from, in the order first seen (the deliverable list is added later). */
  origins: Map<number, Set<AccountOrigin>>;
  /** `--accounts` line of each account from the file, for messages (`clients.txt line 3`). */
  fileLines: Map<number, string>;
}

export async function gatherAccounts(ctx: Context, options: { accountsFile: string | undefined; ledgerPath: string; baseUrl: string }): Promise<AccountSources> {
  const sources: AccountSources = { origins: new Map(), fileLines: new Map() };
  if (options.accountsFile !== undefined) {
    const source = options.accountsFile === '-' ? 'stdin' : options.accountsFile;
    for (const item of await readItems(ctx, options.accountsFile)) {
      addOrigin(sources, item.account_id, 'file');
      if (!sources.fileLines.has(item.account_id)) sources.fileLines.set(item.account_id, `${source} ${item.origin}`);
    }
  }
  const origin = new URL(options.baseUrl).origin;
  const ledger = await readLedger(options.ledgerPath);
  for (const entry of ledger.links()) if (entry.origin === origin) addOrigin(sources, entry.account_id, 'ledger');
  return sources;
}

export function addOrigin(sources: AccountSources, account: number, origin: AccountOrigin): void {
  const known = sources.origins.get(account);
  if (known === undefined) sources.origins.set(account, new Set([origin]));
  else known.add(origin);
}

/** `300 accounts: 12 from the deliverable list, 250 from clients.txt, 40 from the ledger` (an account counted once per source). */
export function describeSources(sources: AccountSources, accountsFile: string | undefined): string {
  const count = (origin: AccountOrigin) => [...sources.origins.values()].filter((set) => set.has(origin)).length;
  const parts = [`${count('deliverables')} from the deliverable list`];
  if (accountsFile !== undefined) parts.push(`${count('file')} from ${accountsFile === '-' ? 'stdin' : accountsFile}`);
  parts.push(`${count('ledger')} from the ledger`);
  const total = sources.origins.size;
  return `${total} account${total === 1 ? '' : 's'} (${parts.join(', ')})`;
}
