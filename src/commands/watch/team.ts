import { EXIT, StateStoreError } from '../../errors';
import { sanitizeLine } from '../../output/sanitize';
import { formatDuration } from '../../lib/duration';
import { createOutput } from '../../output';
import { writeText } from '../../output/write';
import { keepLease, LeaseLostError, newHolder, releaseLease, standbyPollMs, takeLease, takeoverBoundMs, type HeldLease, type OtherHolder, type TakeResult } from '../../follow/lease';
import { readSharedState, stageSharedPass } from '../../state/watchState';
import { sharedHooks } from '../../state/sharedHooks';
import { claimAttempt, sharedOutboxLines } from '../../state/sharedOutbox';
import { sharedInbox } from '../../state/sharedInbox';
import type { TeamScope, TeamSql } from '../../state/teamSql';
import { Outbox } from '../../batch/ledgers/outbox';
import type { ApiClient } from '../../api/types';
import type { Context, ResolvedSettings } from '../../types';
import { watchFrom, type WatchOptions, type WatchPlace } from './watch';

/**
 * `taxprep watch` with a shared store: any number of machines run it, the one holding the lease
 * (src/follow/lease.ts) looks, the others stand by and take over when it stops renewing. The
 * holder keeps its state, hooks and outbox in the store, each write under the lease's token, so
 * the machine that takes over goes on from the last look recorded.
 */
export async function watchAsTeam(
  ctx: Context,
  options: WatchOptions,
  { api, settings, sql, team, storeName }: { api: ApiClient; settings: ResolvedSettings; sql: TeamSql; team: TeamScope; storeName: string },
): Promise<number> {
  const holder = newHolder('watch');
  const interrupted = ctx.interrupted();
  const leaseMs = options.leaseMs;
  let resetState = options.resetState;
  let standingBy: string | undefined;
  let outOfReach = false;
  /** Waits a standby's poll; false when Ctrl-C came instead. */
  const pause = async () => {
    try {
      await ctx.clock.sleep(standbyPollMs(leaseMs), interrupted);
      return true;
    } catch {
      return false;
    }
  };
  for (;;) {
    let taken: TakeResult;
    try {
      taken = await takeLease(sql, team, holder, leaseMs);
      outOfReach = false;
    } catch (error) {
      // A continuous watch outlives an outage of the store, standing by; --once reports it (exit 13).
      if (options.once || !(error instanceof StateStoreError)) throw error;
      if (!outOfReach) await createOutput(ctx).note(`watch: ${sanitizeLine(error.message)}; trying again every ${formatDuration(standbyPollMs(leaseMs))}`);
      outOfReach = true;
      if (!(await pause())) return EXIT.INTERRUPTED;
      continue;
    }
    if (!taken.taken) {
      // Said when the holder changes, not at every poll.
      const holderKey = `${taken.current.holder.host}:${taken.current.holder.pid}:${taken.current.holder.token}`;
      if (holderKey !== standingBy && (!options.once || ctx.io.stderrIsTTY || ctx.globals.verbose)) await standby(ctx, taken.current, leaseMs, options.once);
      standingBy = holderKey;
      // With --once (cron on every machine), the run that finds the lease held has nothing to do.
      if (options.once) return EXIT.OK;
      if (!(await pause())) return EXIT.INTERRUPTED;
      continue;
    }
    standingBy = undefined;
    const lease = taken.lease;
    await tell(ctx, { watch: 'holding', fence: lease.fence }, `watch: this machine holds the watch lease of ${storeName} (fencing token ${lease.fence}); looking`);
    const lost = new AbortController();
    const keeper = keepLease(sql, team, lease, leaseMs, ctx.clock, () => lost.abort());
    let code: number | undefined;
    try {
      code = await watchFrom(ctx, { ...options, resetState }, { api, settings, place: sharedPlace(sql, team, storeName, lease, () => lost.abort()), signal: AbortSignal.any([interrupted, lost.signal]) });
    } catch (error) {
      // Lost (refused as no longer the holder), or out of reach of the store: no longer looking, standing by.
      const standsBy = error instanceof LeaseLostError || lost.signal.aborted || (!options.once && error instanceof StateStoreError);
      if (!standsBy) {
        keeper.stop();
        await releaseLease(sql, team, lease).catch(() => undefined);
        throw error;
      }
      if (error instanceof StateStoreError) await createOutput(ctx).note(`watch: ${sanitizeLine(error.message)}`);
      lost.abort();
    } finally {
      keeper.stop();
    }
    if (!lost.signal.aborted && code !== undefined) {
      // A standby takes over at its next poll rather than after the lease runs out.
      await releaseLease(sql, team, lease).catch(() => undefined);
      return code;
    }
    if (interrupted.aborted) return EXIT.INTERRUPTED;
    // Its baseline (if it was asked for one) is recorded or another's: the next turn goes on from the store.
    resetState = false;
    await tell(ctx, { watch: 'lost', fence: lease.fence }, `watch: the lease was lost (another machine took over, or the store was out of reach for ${formatDuration(leaseMs)}); standing by`);
  }
}

/** The holder's state, hooks and outbox in the store, every write under `lease`; a write refused as the lease is lost calls `lost`. */
function sharedPlace(sql: TeamSql, team: TeamScope, where: string, lease: HeldLease, lost: () => void): WatchPlace {
  const onLost = (error: unknown): never => {
    if (error instanceof LeaseLostError) lost();
    throw error;
  };
  return {
    where,
    read: (reset) => readSharedState(sql, team, { reset }),
    stage: (record) => stageSharedPass(sql, team, lease, record).catch(onLost),
    hooks: {
      hooks: sharedHooks(sql, team),
      async openOutbox() {
        const outbox = await Outbox.open(sharedOutboxLines(sql, team, where, lease)).catch(onLost);
        return { outbox, release: async () => undefined, claim: (delivery, attempt) => claimAttempt(sql, team, lease, delivery, attempt).catch(onLost), inbox: sharedInbox(sql, team) };
      },
    },
  };
}

async function standby(ctx: Context, current: OtherHolder, leaseMs: number, once: boolean): Promise<void> {
  const { host, pid } = current.holder;
  const bound = formatDuration(takeoverBoundMs(leaseMs));
  const then = once ? 'this run reads nothing' : `standing by: taking over within ${bound} of it stopping`;
  await tell(ctx, { watch: 'standby', holder: { host, pid }, lease_expires_at: current.expires_at, takeover_within_ms: takeoverBoundMs(leaseMs) }, `watch: ${host} (pid ${pid}) holds the watch lease (until ${current.expires_at}, renewed while it runs); ${then}`);
}

/** A watch's word about the lease, on stderr: a sentence, or under --json one JSON line. */
async function tell(ctx: Context, document: Record<string, unknown>, sentence: string): Promise<void> {
  if (ctx.globals.json) await writeText(ctx.io.stderr, `${JSON.stringify(document)}\n`).catch(() => undefined);
  else await createOutput(ctx).note(sentence);
}
