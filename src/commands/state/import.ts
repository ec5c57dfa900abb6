import type { Context } from '../../types';
import { DEFAULT_LOCK_WAIT_SECONDS } from '../../batch/flags';
import { fileBackend, sharedStoreOf } from '../../state/backend';
import { mergeState } from '../../state/merge';
import type { RawInvocation } from '../types';
import { printMerge } from './printMerge';

export interface ImportOptions {
  dryRun: boolean;
}

export function parseOptions(raw: RawInvocation): ImportOptions {
  return { dryRun: raw.flags.dryRun === true };
}

/** `taxprep state import`: this machine's ledgers merged into the shared store. */
export async function run(ctx: Context, options: ImportOptions): Promise<void> {
  await sharedStoreOf(ctx, 'state import');
  const shared = await ctx.state();
  const files = fileBackend(ctx.env);
  const merged = await mergeState(files.ledger, shared.ledger, { dryRun: options.dryRun, waitMs: DEFAULT_LOCK_WAIT_SECONDS * 1000, clock: ctx.clock });
  await printMerge(ctx, merged, { from: files.describe, to: shared.describe, dryRun: options.dryRun });
}
