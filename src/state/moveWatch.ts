import type { Clock, ResolvedSettings } from '../types';
import { defaultStatePath, readState, stagePass, stateDocument, type WatchState } from '../follow/state';
import { defaultHooksPath, hooksFile, inScope, type Scope } from '../hooks/store';
import type { SharedStore } from './backend';
import { sharedHooks } from './sharedHooks';
import { teamScopeOf, teamSqlOf } from './teamSql';
import { readSharedState } from './watchState';

/**
 * `state import` and `export` of watch's pieces beside the ledgers: the hooks of this profile and
 * base URL (by id: a hook the target has is left as it is; the shared store's belong to no
 * profile, the files' to this one), and the watch state, copied only where the target has none (a
 * last look does not merge: the target's own is newer or as new). The outbox moves in
 * ./moveOutbox.ts.
 */
export interface PieceMove {
  kind: { label: string };
  copied: number;
  present: number;
}

export interface WatchFiles {
  hooks: string;
  state: string;
}

/** This machine's hooks file and the watch state file of its profile and base URL. */
export function watchFilesOf(env: Record<string, string | undefined>, settings: Pick<ResolvedSettings, 'profileName' | 'baseUrl'>): WatchFiles {
  return { hooks: defaultHooksPath(env), state: defaultStatePath(env, settings.profileName, settings.baseUrl) };
}

export async function moveWatchPieces(
  direction: 'import' | 'export',
  files: WatchFiles,
  shared: SharedStore,
  scope: Scope,
  options: { dryRun: boolean; clock: Clock },
): Promise<PieceMove[]> {
  const sql = teamSqlOf(shared);
  const team = teamScopeOf(shared);
  const sharedScope = { profile: null, baseUrl: scope.baseUrl };
  const [from, to] = direction === 'import' ? [hooksFile(files.hooks), sharedHooks(sql, team)] : [sharedHooks(sql, team), hooksFile(files.hooks)];
  const [fromScope, toScope] = direction === 'import' ? [scope, sharedScope] : [sharedScope, scope];
  const moving = (await from.read()).filter((hook) => inScope(hook, fromScope));
  const missing = (hooks: readonly { id: string }[]) => moving.filter((hook) => !hooks.some((known) => known.id === hook.id));
  let copied = missing(await to.read()).length;
  if (!options.dryRun) {
    copied = await to.update(options.clock, (hooks) => {
      const fresh = missing(hooks);
      hooks.push(...fresh.map((hook) => ({ ...hook, profile: toScope.profile })));
      return fresh.length;
    });
  }
  const hooks = { kind: { label: 'hooks' }, copied, present: moving.length - copied };

  const source = direction === 'import' ? await readState(files.state, { baseUrl: scope.baseUrl }, { reset: false }) : await readSharedState(sql, team, { reset: false });
  const target = direction === 'import' ? await readSharedState(sql, team, { reset: false }) : await readState(files.state, { baseUrl: scope.baseUrl }, { reset: false });
  const copiesState = source !== undefined && target === undefined;
  if (copiesState && !options.dryRun) {
    if (direction === 'import') {
      await sql.query(`INSERT INTO taxprep_state.watch_state (namespace, base_url, state, saved_at) VALUES ($1, $2, $3::jsonb, now()) ON CONFLICT DO NOTHING`, [team.namespace, team.baseUrl, stateDocument(source!)]);
    } else {
      await (await stagePass(files.state, { state: { ...(source as WatchState), profile: scope.profile }, changes: [] })).commit();
    }
  }
  return [hooks, { kind: { label: 'watch state' }, copied: copiesState ? 1 : 0, present: source !== undefined && !copiesState ? 1 : 0 }];
}
