import { integer } from '../contract';
import { DEFAULT_CONCURRENCY, DEFAULT_LOCK_WAIT_SECONDS, MAX_CONCURRENCY, MAX_LOCK_WAIT_SECONDS } from './flags';

/** What `--concurrency`, `--ledger` and `--lock-wait` come to, checked. */
export interface BatchFlags {
  concurrency: number;
  /** `--ledger PATH`; undefined: the kind's file in the user's data directory. */
  ledgerPath: string | undefined;
  lockWaitMs: number;
}

/**
 * The zod fields of the shared run flags, to extend a command's own schema with (their
 * `FlagSpec.field`s are `concurrency` and `lock_wait`). The run's own limits, sent nowhere.
 */
export const BATCH_FIELDS = {
  concurrency: integer(1, MAX_CONCURRENCY).default(DEFAULT_CONCURRENCY),
  lock_wait: integer(0, MAX_LOCK_WAIT_SECONDS, `a whole number of seconds from 0 to ${MAX_LOCK_WAIT_SECONDS}`).default(DEFAULT_LOCK_WAIT_SECONDS),
};

/** The shared flags from a schema's parsed `concurrency`/`lock_wait` and the raw `--ledger`. */
export function batchFlagsOf(parsed: { concurrency: number; lock_wait: number }, flags: Record<string, unknown>): BatchFlags {
  return { concurrency: parsed.concurrency, ledgerPath: typeof flags.ledger === 'string' ? flags.ledger : undefined, lockWaitMs: parsed.lock_wait * 1000 };
}
