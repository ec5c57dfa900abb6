import { UsageError } from '../../errors';
import { readOutbox, type Delivery } from '../../batch/ledgers/outbox';
import { findHook } from '../../hooks/store';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookIdArgument, parseSince, placedHooks } from './view';

const STATUSES = ['pending', 'failed', 'delivered', 'moved', 'all'] as const;

export interface DeliveriesOptions {
  hook: string | undefined;
  status: (typeof STATUSES)[number];
  since: string | undefined;
}

export function parseOptions(raw: RawInvocation): DeliveriesOptions {
  const status = typeof raw.flags.status === 'string' ? raw.flags.status : 'all';
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`--status "${status}" must be one of ${STATUSES.join(', ')}`, { details: { '--status': [`must be one of ${STATUSES.join(', ')}`] } });
  }
  return { hook: raw.flags.hook === undefined ? undefined : hookIdArgument(raw.flags.hook), status: status as DeliveriesOptions['status'], since: typeof raw.flags.since === 'string' ? raw.flags.since : undefined };
}

export function deliveryView(delivery: Delivery) {
  return {
    delivery: delivery.key,
    webhook_id: delivery.id,
    hook: delivery.hook,
    type: delivery.event.event,
    status: delivery.status,
    attempts: delivery.attempts,
    last_result: delivery.detail,
    next_attempt_at: delivery.status === 'pending' && Number.isFinite(delivery.dueMs) ? new Date(delivery.dueMs).toISOString() : null,
    seen_at: delivery.event.seen_at,
    updated_at: delivery.updated_at,
  };
}

/** `taxprep hooks deliveries`: the outbox, read without its lock (a running watch keeps writing it). */
export async function run(ctx: Context, options: DeliveriesOptions): Promise<number> {
  const { scope, hooks, outboxLines } = await placedHooks(ctx);
  if (options.hook !== undefined) findHook(hooks, scope, options.hook);
  const sinceMs = options.since === undefined ? undefined : parseSince(options.since, ctx.clock.now());
  const known = new Set(hooks.map((hook) => hook.id));
  const outbox = await readOutbox(outboxLines);
  const views = [...outbox.all()]
    .filter((delivery) => known.has(delivery.hook) && (options.hook === undefined || delivery.hook === options.hook))
    .filter((delivery) => options.status === 'all' || delivery.status === options.status)
    .filter((delivery) => sinceMs === undefined || Date.parse(delivery.event.seen_at) >= sinceMs)
    .map(deliveryView);
  const out = createOutput(ctx);
  if (ctx.globals.json) {
    await out.json({ deliveries: views }, 'deliveries');
  } else if (views.length === 0) {
    await out.note('No deliveries match.');
  } else {
    await out.table(
      ['delivery', 'type', 'status', 'attempts', 'last result', 'seen'],
      views.map((view) => [view.delivery, view.type, view.status, String(view.attempts), view.last_result ?? '-', out.format.date(view.seen_at)]),
    );
  }
  return 0;
}
