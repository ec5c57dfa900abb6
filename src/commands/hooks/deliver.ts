import { EXIT } from '../../errors';
import { Deliverer } from '../../hooks/deliverer';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hooksPlaceOf } from '../../hooks/place';

export function parseOptions(raw: RawInvocation): { wait: boolean } {
  return { wait: raw.flags.wait === true };
}

/**
 * `taxprep hooks deliver`: sends what is due and asks the service nothing (for cron between watch
 * runs); `--wait` stays until nothing is pending (retries included). Exit 0, or 9 when a delivery
 * failed for good in this run.
 */
export async function run(ctx: Context, options: { wait: boolean }): Promise<number> {
  const { scope, store, withOutbox } = await hooksPlaceOf(ctx);
  const out = createOutput(ctx);
  const signal = ctx.interrupted();
  const totals = await withOutbox(async (outbox, claim) => {
    const deliverer = new Deliverer({ outbox, hooks: store, scope, clock: ctx.clock, note: (message) => out.note(message), claim });
    const sum = { delivered: 0, retried: 0, failed: 0 };
    try {
      for (;;) {
        const result = await deliverer.sweep(signal);
        sum.delivered += result.delivered;
        sum.retried += result.retried;
        sum.failed += result.failed;
        if (!options.wait || result.nextDueMs === undefined || signal.aborted) return { ...sum, nextDueMs: result.nextDueMs };
        await ctx.clock.sleep(Math.max(0, result.nextDueMs - ctx.clock.now().getTime()), signal).catch(() => undefined);
      }
    } finally {
      await deliverer.close();
    }
  });
  if (ctx.globals.json) await out.json({ delivered: totals.delivered, retried: totals.retried, failed: totals.failed, next_due_at: totals.nextDueMs === undefined ? null : new Date(totals.nextDueMs).toISOString() });
  else if (ctx.io.stderrIsTTY || totals.failed > 0) await out.note(`hooks deliver: ${totals.delivered} delivered, ${totals.retried} to retry, ${totals.failed} failed.`);
  if (signal.aborted) return EXIT.INTERRUPTED;
  return totals.failed > 0 ? EXIT.PARTIAL : EXIT.OK;
}
