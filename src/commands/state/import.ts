import type { Context } from '../../types';
import { DEFAULT_LOCK_WAIT_SECONDS } from '../../batch/flags';
import { defaultOutboxPath } from '../../batch/ledgers/outbox';
import { fileHooksPlace } from '../../hooks/place';
import { fileBackend, sharedStoreOf } from '../../state/backend';
import { mergeState } from '../../state/merge';
import { moveWatchPieces, watchFilesOf } from '../../state/moveWatch';
import { moveLearned } from '../../state/moveLearned';
import { sharedLearned } from '../../state/sharedLearned';
import { openLearnedStore } from '../../config/learned';
import { withOutboxMove } from '../../state/moveOutbox';
import { sharedHooksPlace } from '../../state/sharedHooksPlace';
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
  const settings = await ctx.settings();
  const scope = { profile: settings.profileName, baseUrl: settings.baseUrl };
  const watchFiles = watchFilesOf(ctx.env, settings);
  const machine = fileHooksPlace(ctx, scope, { hooks: watchFiles.hooks, outbox: defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl) });
  const team = { ...sharedHooksPlace(ctx, store, settings.baseUrl), describe: shared.describe };
  // Both outboxes held first: beside a running watch, here or on the team's store, nothing is copied.
  const moved = await withOutboxMove(machine, team, { dryRun: options.dryRun, clock: ctx.clock }, async (moveOutbox) => {
    const merged = await mergeState(files.ledger, shared.ledger, { dryRun: options.dryRun, waitMs: DEFAULT_LOCK_WAIT_SECONDS * 1000, clock: ctx.clock });
    const watch = await moveWatchPieces('import', watchFiles, store, scope, { dryRun: options.dryRun, clock: ctx.clock });
    const learned = await moveLearned(openLearnedStore(ctx.env, settings.profileName, settings.baseUrl), sharedLearned(store), { dryRun: options.dryRun });
    return [...merged, ...watch, await moveOutbox(), learned];
  });
  await printMerge(ctx, moved, { from: files.describe, to: shared.describe, dryRun: options.dryRun });
}
