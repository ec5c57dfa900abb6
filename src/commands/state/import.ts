import type { Context } from '../../types';
import { DEFAULT_LOCK_WAIT_SECONDS } from '../../batch/flags';
import { fileBackend, sharedStoreOf } from '../../state/backend';
import { mergeState } from '../../state/merge';
import { moveWatchPieces, watchFilesOf } from '../../state/moveWatch';
import { moveLearned } from '../../state/moveLearned';
import { sharedLearned } from '../../state/sharedLearned';
import { openLearnedStore } from '../../config/learned';
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
  const store = await sharedStoreOf(ctx, 'state import');
  const shared = await ctx.state();
  const files = fileBackend(ctx.env);
  const merged = await mergeState(files.ledger, shared.ledger, { dryRun: options.dryRun, waitMs: DEFAULT_LOCK_WAIT_SECONDS * 1000, clock: ctx.clock });
  const settings = await ctx.settings();
  const watch = await moveWatchPieces('import', watchFilesOf(ctx.env, settings), store, { profile: settings.profileName, baseUrl: settings.baseUrl }, { dryRun: options.dryRun, clock: ctx.clock });
  const learned = await moveLearned(openLearnedStore(ctx.env, settings.profileName, settings.baseUrl), sharedLearned(store), { dryRun: options.dryRun });
  await printMerge(ctx, [...merged, ...watch, learned], { from: files.describe, to: shared.describe, dryRun: options.dryRun });
}
