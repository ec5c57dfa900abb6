import { readOutbox, type Delivery, type Outbox, type OutboxView } from '../../batch/ledgers/outbox';
import { EXIT, LedgerLockedError } from '../../errors';
import { Deliverer, type DelivererOptions, type SweepResult } from '../../hooks/deliverer';
import { describeWatch, waitingRetries, type RunningWatch } from '../../hooks/requests';
import { inScope } from '../../hooks/store';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hooksPlaceOf, type HooksPlace } from '../../hooks/place';
import { handOver } from './view';

export interface DeliverOptions {
  wait: boolean;
  retryNow: boolean;
}

export function parseOptions(raw: RawInvocation): DeliverOptions {
  return { wait: raw.flags.wait === true, retryNow: raw.flags.retryNow === true };
}

type Totals = Omit<SweepResult, 'nextDueMs'> & { nextDueMs: number | undefined };

/** How often `hooks deliver` beside a running watch reads the outbox to see what the watch sent. */
const WATCH_POLL_MS = 100;

/**
 * `taxprep hooks deliver`: sends what is due and asks the service nothing (for cron between watch
 * runs); `--retry-now` first makes due every delivery waiting for a retry (a receiver back after
 * failures), `--wait` stays until nothing is pending (retries included). Beside a running watch,
 * which holds the outbox, the watch sends (its request handed over) and this run reports what it
 * sent. Exit 0, or 9 when a delivery failed for good in this run.
 */
export async function run(ctx: Context, options: DeliverOptions): Promise<number> {
  const place = await hooksPlaceOf(ctx);
  const out = createOutput(ctx);
  const signal = ctx.interrupted();
  let watch = await place.inbox.runningWatch();
  let totals: Totals | undefined;
  while (totals === undefined) {
    if (watch !== undefined) {
      ({ watch, totals } = await besideWatch(ctx, place, options, signal));
      continue;
    }
    try {
      totals = await place.withOutbox((outbox, claim) => deliverHere(ctx, place, outbox, claim, options, signal));
    } catch (error) {
      // A watch that started in between holds the outbox: it is handed the work instead.
      watch = error instanceof LedgerLockedError ? await place.inbox.runningWatch() : undefined;
      if (watch === undefined) throw error;
    }
  }
  if (ctx.globals.json) await out.json({ delivered: totals.delivered, retried: totals.retried, failed: totals.failed, next_due_at: totals.nextDueMs === undefined ? null : new Date(totals.nextDueMs).toISOString() });
  // Quiet in cron when all went well (cron mails what it prints), beside a watch too.
  else if (ctx.io.stderrIsTTY || ctx.globals.verbose || totals.failed > 0) await out.note(`hooks deliver: ${totals.delivered} delivered, ${totals.retried} to retry, ${totals.failed} failed${watch === undefined ? '' : `; ${describeWatch(watch)} and sent them`}.`);
  if (signal.aborted) return EXIT.INTERRUPTED;
  return totals.failed > 0 ? EXIT.PARTIAL : EXIT.OK;
}

/** Sends from the outbox this run holds. */
async function deliverHere(ctx: Context, place: HooksPlace, outbox: Outbox, claim: DelivererOptions['claim'], options: DeliverOptions, signal: AbortSignal): Promise<Totals> {
  const out = createOutput(ctx);
  const trust = await ctx.trust();
  if (options.retryNow) await Promise.all(waitingRetries(outbox, ctx.clock.now()).map((mark) => outbox.redeliver(mark.id, mark.hook, ctx.clock.now())));
  const deliverer = new Deliverer({ outbox, hooks: place.store, scope: place.scope, clock: ctx.clock, note: (message) => out.note(message), credentials: ctx.credentials(), trust, claim });
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
}

/**
 * Hands the running watch the request (with `--retry-now`, to make waiting retries due) and reads
 * the outbox until the watch has tried every delivery due (with `--wait`: until none is pending):
 * the totals are what became of the deliveries pending when this run began. A watch that stops
 * before it took the request leaves the sending to this run (`totals` undefined).
 */
async function besideWatch(ctx: Context, place: HooksPlace, options: DeliverOptions, signal: AbortSignal): Promise<{ watch: RunningWatch | undefined; totals: Totals | undefined }> {
  const { outboxLines, scope } = place;
  const before = new Map([...(await readOutbox(outboxLines)).all()].filter((delivery) => delivery.status === 'pending').map((delivery) => [delivery.key, delivery.attempts]));
  const watch = await handOver(ctx, place, { marks: [], retry_waiting: options.retryNow });
  if (watch === undefined) return { watch, totals: undefined };
  for (;;) {
    const outbox = await readOutbox(outboxLines);
    const enabled = new Set((await place.store.read()).filter((hook) => hook.enabled && inScope(hook, scope)).map((hook) => hook.id));
    const pending = [...outbox.all()].filter((delivery) => delivery.status === 'pending' && enabled.has(delivery.hook));
    const nowMs = ctx.clock.now().getTime();
    const settled = options.wait ? pending.length === 0 : pending.every((delivery) => delivery.dueMs > nowMs);
    if (settled || signal.aborted) return { watch, totals: totalsSince(before, outbox, pending) };
    if ((await place.inbox.runningWatch()) === undefined) return { watch: undefined, totals: undefined };
    await ctx.clock.sleep(WATCH_POLL_MS, signal).catch(() => undefined);
  }
}

/** What became of the deliveries pending before (by key, with their attempts then). */
function totalsSince(before: Map<string, number>, outbox: OutboxView, pending: Delivery[]): Totals {
  const totals: Totals = { delivered: 0, retried: 0, failed: 0, nextDueMs: undefined };
  for (const [key, attempts] of before) {
    const delivery = outbox.get(key);
    if (delivery === undefined) continue;
    if (delivery.status === 'delivered') totals.delivered += 1;
    else if (delivery.status === 'failed') totals.failed += 1;
    else if (delivery.attempts > attempts) totals.retried += 1;
  }
  for (const delivery of pending) totals.nextDueMs = Math.min(totals.nextDueMs ?? Number.POSITIVE_INFINITY, delivery.dueMs);
  return totals;
}
