import { join } from 'node:path';
import type { Context } from '../../types';
import { DEFAULT_LOCK_WAIT_SECONDS } from '../../batch/flags';
import { filePlace } from '../../batch/ledger';
import { defaultOutboxPath } from '../../batch/ledgers/outbox';
import { fileHooksPlace } from '../../hooks/place';
import { fileBackend, sharedStoreOf } from '../../state/backend';
import { mergeState } from '../../state/merge';
import { moveWatchPieces, watchFilesOf } from '../../state/moveWatch';
import { moveLearned } from '../../state/moveLearned';
import { sharedLearned } from '../../state/sharedLearned';
import { learnedFilePath, openLearnedFile } from '../../config/learned';
import { withOutboxMove } from '../../state/moveOutbox';
import { sharedHooksPlace } from '../../state/sharedHooksPlace';
import type { RawInvocation } from '../types';
import { printMerge } from './printMerge';

export interface ExportOptions {
  to: string | undefined;
  dryRun: boolean;
}

export function parseOptions(raw: RawInvocation): ExportOptions {
  return { to: typeof raw.flags.to === 'string' ? raw.flags.to : undefined, dryRun: raw.flags.dryRun === true };
}

/** `taxprep state export`: the shared ledgers merged into files (the data directory, or --to DIR). */
export async function run(ctx: Context, options: ExportOptions): Promise<void> {
  const store = await sharedStoreOf(ctx, 'state export');
  const shared = await ctx.state();
  const files = options.to === undefined ? fileBackend(ctx.env) : { describe: `files in ${options.to}`, ledger: (kind: { fileName: string }) => filePlace(join(options.to!, kind.fileName)) };
  const settings = await ctx.settings();
  const scope = { profile: settings.profileName, baseUrl: settings.baseUrl };
  const watchFiles = options.to === undefined ? watchFilesOf(ctx.env, settings) : { hooks: join(options.to, 'hooks.json'), state: join(options.to, 'watch-state.json') };
  const outboxFile = options.to === undefined ? defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl) : join(options.to, 'outbox.ndjson');
  const machine = { ...fileHooksPlace(ctx, scope, { hooks: watchFiles.hooks, outbox: outboxFile }), describe: outboxFile };
  // Both outboxes held first: beside a running watch, on the team's store or here, nothing is copied.
  const moved = await withOutboxMove(sharedHooksPlace(ctx, store, settings.baseUrl), machine, { dryRun: options.dryRun, clock: ctx.clock }, async (moveOutbox) => {
    const merged = await mergeState(shared.ledger, files.ledger, { dryRun: options.dryRun, waitMs: DEFAULT_LOCK_WAIT_SECONDS * 1000, clock: ctx.clock });
    const watch = await moveWatchPieces('export', watchFiles, store, scope, { dryRun: options.dryRun, clock: ctx.clock });
    const learnedFile = options.to === undefined ? learnedFilePath(ctx.env) : join(options.to, 'learned.json');
    const learned = await moveLearned(sharedLearned(store), openLearnedFile(learnedFile, settings.profileName, settings.baseUrl), { dryRun: options.dryRun });
    return [...merged, ...watch, await moveOutbox(), learned];
  });
  await printMerge(ctx, moved, { from: shared.describe, to: files.describe, dryRun: options.dryRun });
}
