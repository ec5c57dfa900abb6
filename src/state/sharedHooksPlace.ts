import { LedgerLockedError } from '../errors';
import { DEFAULT_LEASE_MS, keepLease, newHolder, releaseLease, takeLease } from '../follow/lease';
import { OUTBOX_WAIT_MS, openTakingRequests, type HooksPlace } from '../hooks/place';
import type { Context } from '../types';
import type { SharedStore } from './backend';
import { sharedHooks } from './sharedHooks';
import { sharedInbox } from './sharedInbox';
import { claimAttempt, sharedOutboxLines } from './sharedOutbox';
import { teamScopeOf, teamSqlOf } from './teamSql';

/** The lease a hooks command takes for its run: a watch's default, so a standby watch takes over as soon after its death. */
const OUTBOX_LEASE_MS = DEFAULT_LEASE_MS;
/** How often a hooks command asks again for the lease another hooks command holds. */
const LEASE_POLL_MS = 200;

/** The hooks and outbox of a shared store's namespace and base URL (see `hooksPlaceOf`). */
export function sharedHooksPlace(ctx: Pick<Context, 'clock'>, shared: SharedStore, baseUrl: string): HooksPlace {
  const sql = teamSqlOf(shared);
  const team = teamScopeOf(shared);
  const inbox = sharedInbox(sql, team);
  return {
    scope: { profile: null, baseUrl },
    store: sharedHooks(sql, team),
    where: `the shared store ${shared.describe}`,
    inbox,
    secretsWithHooks: true,
    outboxLines: sharedOutboxLines(sql, team, shared.describe, undefined),
    async withOutbox(work) {
      // Held as a hooks command's: a watch's would be handed requests that this run never takes.
      const holder = newHolder('hooks');
      const deadline = ctx.clock.now().getTime() + OUTBOX_WAIT_MS;
      let taken = await takeLease(sql, team, holder, OUTBOX_LEASE_MS);
      // Another hooks command is waited for, as the outbox file's lock; a watch is handed the work at once (`handOver`).
      while (!taken.taken && taken.current.holder.kind !== 'watch' && ctx.clock.now().getTime() < deadline) {
        await ctx.clock.sleep(LEASE_POLL_MS);
        taken = await takeLease(sql, team, holder, OUTBOX_LEASE_MS);
      }
      if (!taken.taken) {
        const { host, pid, kind } = taken.current.holder;
        throw new LedgerLockedError(`the webhook outbox of ${shared.describe} is in use by ${kind === 'watch' ? 'the watch' : 'taxprep hooks'} on ${host} (pid ${pid}); nothing was sent`, {
          details: { store: shared.describe, host, pid },
          hint: kind === 'watch' ? 'That watch delivers what is due itself.' : 'Let that run finish (hooks deliver --wait stays until nothing is pending), then run this again.',
        });
      }
      const { lease } = taken;
      // Renewed for as long as the command runs (`hooks deliver --wait`); lost, its next write is refused (exit 10).
      const keeper = keepLease(sql, team, lease, OUTBOX_LEASE_MS, ctx.clock, () => undefined);
      try {
        const outbox = await openTakingRequests(sharedOutboxLines(sql, team, shared.describe, lease), inbox, ctx.clock.now());
        try {
          return await work(outbox, (delivery, attempt) => claimAttempt(sql, team, lease, delivery, attempt));
        } finally {
          await outbox.close();
        }
      } finally {
        keeper.stop();
        await releaseLease(sql, team, lease).catch(() => undefined);
      }
    },
  };
}
