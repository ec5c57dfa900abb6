import type { FlagSpec } from '../commands/spec';

/**
 * The run flags every batch command shares, with the same meaning: `--concurrency`, `--ledger`,
 * `--lock-wait`. Plain declarations (no zod), loaded when help and completions are built.
 */
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;
export const DEFAULT_LOCK_WAIT_SECONDS = 5;
export const MAX_LOCK_WAIT_SECONDS = 3600;

export const CONCURRENCY_FLAG: FlagSpec = {
  flag: '--concurrency <n>',
  field: 'concurrency',
  help: 'requests at a time in a batch',
  range: { min: 1, max: MAX_CONCURRENCY },
  default: String(DEFAULT_CONCURRENCY),
};

/** `--ledger <path>`, naming the kind's default file. */
export function ledgerFlag(fileName: string): FlagSpec {
  return { flag: '--ledger <path>', help: `ledger file (default: ${fileName} in the user data directory)`, complete: 'files' };
}

export const LOCK_WAIT_FLAG: FlagSpec = {
  flag: '--lock-wait <seconds>',
  field: 'lock_wait',
  help: 'how long to wait for another run holding the ledger',
  range: { min: 0, max: MAX_LOCK_WAIT_SECONDS },
  default: String(DEFAULT_LOCK_WAIT_SECONDS),
};

/** `--concurrency`, `--ledger`, `--lock-wait`, in that order. */
export function batchRunFlags(ledgerFileName: string): FlagSpec[] {
  return [CONCURRENCY_FLAG, ledgerFlag(ledgerFileName), LOCK_WAIT_FLAG];
}
