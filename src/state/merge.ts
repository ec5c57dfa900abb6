import type { Clock } from '../types';
import { withLedger, type LedgerKind, type LedgerPlace, type LineStore } from '../batch/ledger';
import { ACCOUNTS, AccountsLedger, readAccountsLedger, type AccountsLedgerEntry, type AccountsLedgerView } from '../batch/ledgers/accounts';
import { DOCUMENTS, DocumentsLedger, readDocumentsLedger, type DocumentsLedgerEntry, type DocumentsLedgerView } from '../batch/ledgers/documents';
import { LOGIN_LINKS, Ledger, readLedger, type LedgerEntry, type LedgerView } from '../batch/ledgers/loginLinks';

/**
 * Moving state between two places (`taxprep state import`: this machine's files into the shared
 * store; `state export`: the other way), kind by kind, through each kind's own fold: what the
 * source knows and the target does not is appended to the target as it was written (ids and times
 * kept). For a user's login link, the newer link wins; an account, an upload, an open intent the
 * target already has is not copied again, so a second run copies nothing. Unfinished batch runs
 * stay where they were: a run resumes on the machine (or store) it started on.
 */
export interface KindMerge {
  kind: LedgerKind;
  /** Entries the target lacks, in the source's order. */
  copied: number;
  /** Entries the target already had (or had newer). */
  present: number;
}

interface MergeableKind<V, E> {
  kind: LedgerKind;
  read(lines: LineStore): Promise<V>;
  open(lines: LineStore): Promise<{ copyIn(entries: readonly E[]): Promise<void>; close(): Promise<void> }>;
  /** The source's entries worth moving, each with whether the target lacks it. */
  plan(source: V, target: V): Array<{ entry: E; missing: boolean }>;
}

const linkTime = (entry: { link: { created_at: string } }) => Date.parse(entry.link.created_at);

const LOGIN_LINK_MERGE: MergeableKind<LedgerView, LedgerEntry> = {
  kind: LOGIN_LINKS,
  read: readLedger,
  open: (lines) => Ledger.open(lines),
  plan: (source, target) => [
    ...source.links().map((entry) => {
      const known = target.findLink({ origin: entry.origin, account_id: entry.account_id, user_email: entry.link.user_email });
      return { entry: entry as LedgerEntry, missing: known === undefined || linkTime(known) < linkTime(entry) };
    }),
    ...source.uncertainIntents().map((entry) => ({ entry: entry as LedgerEntry, missing: target.uncertainIntent(entry)?.id !== entry.id })),
  ],
};

const ACCOUNT_MERGE: MergeableKind<AccountsLedgerView, AccountsLedgerEntry> = {
  kind: ACCOUNTS,
  read: readAccountsLedger,
  open: (lines) => AccountsLedger.open(lines),
  plan: (source, target) => [
    ...source.accounts().map((entry) => ({ entry: entry as AccountsLedgerEntry, missing: target.findAccount(entry.origin, entry.email)?.account_id !== entry.account_id })),
    ...source.uncertainIntents().map((entry) => ({
      entry: entry as AccountsLedgerEntry,
      missing: target.uncertainIntent(entry.origin, entry.email)?.id !== entry.id && target.findAccount(entry.origin, entry.email) === undefined,
    })),
  ],
};

const DOCUMENT_MERGE: MergeableKind<DocumentsLedgerView, DocumentsLedgerEntry> = {
  kind: DOCUMENTS,
  read: readDocumentsLedger,
  open: (lines) => DocumentsLedger.open(lines),
  plan: (source, target) => [
    ...source.uploads().map((entry) => ({ entry: entry as DocumentsLedgerEntry, missing: target.uploadedContent(entry, entry.sha256)?.document_id !== entry.document_id })),
    ...source.uncertainIntents().map((entry) => ({ entry: entry as DocumentsLedgerEntry, missing: target.openIntent(entry)?.id !== entry.id })),
  ],
};

/** Every kind `state import` and `export` move, in the order they are moved. */
const KINDS = [ACCOUNT_MERGE, LOGIN_LINK_MERGE, DOCUMENT_MERGE] as const;

/**
 * Copies what `from` knows and `to` lacks, kind by kind, each under the target's lock (a dry run
 * reads both without locks and writes nothing). Returns what was (or would be) copied per kind.
 */
export async function mergeState(
  from: (kind: LedgerKind) => LedgerPlace,
  to: (kind: LedgerKind) => LedgerPlace,
  options: { dryRun: boolean; waitMs: number; clock: Clock },
): Promise<KindMerge[]> {
  const merged: KindMerge[] = [];
  for (const mergeable of KINDS as ReadonlyArray<MergeableKind<unknown, unknown>>) {
    const source = await mergeable.read(from(mergeable.kind).lines);
    const count = (plan: Array<{ missing: boolean }>) => ({ kind: mergeable.kind, copied: plan.filter((item) => item.missing).length, present: plan.filter((item) => !item.missing).length });
    if (options.dryRun) {
      merged.push(count(mergeable.plan(source, await mergeable.read(to(mergeable.kind).lines))));
      continue;
    }
    // The plan is made under the target's lock, from the target as it is then.
    merged.push(
      await withLedger(to(mergeable.kind), mergeable.kind, { waitMs: options.waitMs, clock: options.clock, open: mergeable.open }, async (ledger) => {
        const plan = mergeable.plan(source, ledger);
        await ledger.copyIn(plan.filter((item) => item.missing).map((item) => item.entry));
        return count(plan);
      }),
    );
  }
  return merged;
}
