import { UsageError } from '../errors';
import { fenced, type HeldLease } from '../follow/lease';
import { parseStateDocument, stateDocument, type PassRecord, type WatchState } from '../follow/state';
import type { StagedFile } from '../lib/files';
import type { TeamScope, TeamSql } from './teamSql';

/**
 * The watch state in a shared store: one row per namespace and base URL holding the same document
 * as the state file, written only by the lease's holder (`fenced`), so that the machine that takes
 * over reads the last look its predecessor recorded: no baseline again, no change reported twice
 * or missed.
 */

function damaged(rule: string): UsageError {
  return new UsageError(`the watch state in the shared store is damaged: ${rule}; it was left as it is`, {
    details: { state: [rule] },
    hint: 'Run watch once with --reset-state to start a new baseline (that run then reports nothing).',
  });
}

/** The state the last holder recorded, or undefined when none was (the team's first watch: a baseline). */
export async function readSharedState(sql: TeamSql, scope: TeamScope, options: { reset: boolean }): Promise<WatchState | undefined> {
  if (options.reset) return undefined;
  const rows = await sql.query<{ state: string }>('SELECT state::text AS state FROM taxprep_state.watch_state WHERE namespace = $1 AND base_url = $2', [scope.namespace, scope.baseUrl]);
  return rows[0] === undefined ? undefined : parseStateDocument(rows[0].state, damaged);
}

/**
 * The shared store's half of watch's one durable step (see `stagePass`): staging checks that the
 * lease is still held, so a holder that lost it prints nothing; `commit` writes the state only if
 * it still is.
 */
export async function stageSharedPass(sql: TeamSql, scope: TeamScope, lease: HeldLease, record: PassRecord): Promise<StagedFile> {
  await fenced(sql, scope, lease, async () => undefined);
  return {
    commit: () =>
      fenced(sql, scope, lease, async (tx) => {
        await tx.query(
          `INSERT INTO taxprep_state.watch_state (namespace, base_url, state, saved_at) VALUES ($1, $2, $3::jsonb, now())
           ON CONFLICT (namespace, base_url) DO UPDATE SET state = EXCLUDED.state, saved_at = EXCLUDED.saved_at`,
          [scope.namespace, scope.baseUrl, stateDocument(record.state)],
        );
      }),
  };
}
