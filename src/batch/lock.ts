import type { Clock } from '../types';
import { LedgerLockedError } from '../errors';
import { acquireFileLock, type FileLock, type LockOwner } from '../lib/fileLock';
import type { LedgerKind } from './ledger';

export type LedgerLock = FileLock;

export function lockPathOf(ledgerPath: string): string {
  return `${ledgerPath}.lock`;
}

/**
 * Takes a ledger's lock (each ledger file has its own; `src/lib/fileLock.ts`), so two overlapping
 * runs (cron firing while the previous run is still going) never work on one ledger. Waits up to
 * `waitMs` for a live holder.
 */
export async function acquireLedgerLock(ledgerPath: string, options: { waitMs: number; clock: Clock; kind?: Pick<LedgerKind, 'label'> }): Promise<LedgerLock> {
  const path = lockPathOf(ledgerPath);
  return acquireFileLock(path, { waitMs: options.waitMs, clock: options.clock, lockedError: (owner) => lockedError(ledgerPath, path, owner, options.kind) });
}

function lockedError(ledgerPath: string, lockPath: string, owner: LockOwner | undefined, kind: Pick<LedgerKind, 'label'> | undefined): LedgerLockedError {
  const holder = owner === undefined ? 'another taxprep run' : `taxprep (pid ${owner.pid} on ${owner.hostname}, started ${owner.started_at})`;
  return new LedgerLockedError(`the ${kind === undefined ? '' : `${kind.label} `}ledger ${ledgerPath} is in use by ${holder}; nothing was sent`, {
    details: { ledger: ledgerPath, lock_file: lockPath, ...(owner ?? {}) },
    hint: `Let that run finish (or raise --lock-wait). If that process is gone, delete ${lockPath}.`,
  });
}
