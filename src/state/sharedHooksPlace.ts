import { LedgerLockedError } from '../errors';
import { Outbox } from '../batch/ledgers/outbox';
import { DEFAULT_LEASE_MS, keepLease, newHolder, releaseLease, takeLease } from '../follow/lease';
import type { HooksPlace } from '../hooks/place';
import type { Context } from '../types';
import type { SharedStore } from './backend';
import { sharedHooks } from './sharedHooks';
import { claimAttempt, sharedOutboxLines } from './sharedOutbox';
import { teamScopeOf, teamSqlOf } from './teamSql';

/** The lease a hooks command takes for its run: a watch's default, so a standby watch takes over as soon after its death. */
const OUTBOX_LEASE_MS = DEFAULT_LEASE_MS;

/** The hooks and outbox of a shared store's namespace and base URL (see `hooksPlaceOf`). */
export function sharedHooksPlace(ctx: Pick<Context, 'clock'>, shared: SharedStore, baseUrl: string): HooksPlace {
  const sql = teamSqlOf(shared);
  const team = teamScopeOf(shared);
  return {
    scope: { profile: null, baseUrl },
    store: sharedHooks(sql, team),
    where: `the shared store ${shared.describe}`,
    secretsWithHooks: true,
    outboxLines: sharedOutboxLines(sql, team, shared.describe, undefined),
    async withOutbox(work) {
      const taken = await takeLease(sql, team, newHolder(), OUTBOX_LEASE_MS);
      if (!taken.taken) {
        const { host, pid } = taken.current.holder;
        throw new LedgerLockedError(`the webhook outbox of ${shared.describe} is in use by the watch on ${host} (pid ${pid}); nothing was sent`, {
          details: { store: shared.describe, host, pid },
          hint: 'That watch delivers what is due itself; stop it first to run this command.',
        });
      }
      const { lease } = taken;
      // Renewed for as long as the command runs (`hooks deliver --wait`); lost, its next write is refused (exit 10).
      const keeper = keepLease(sql, team, lease, OUTBOX_LEASE_MS, ctx.clock, () => undefined);
      try {
        const outbox = await Outbox.open(sharedOutboxLines(sql, team, shared.describe, lease));
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
