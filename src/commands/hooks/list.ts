import { readOutbox } from '../../batch/ledgers/outbox';
import { createOutput, freeText, wrapped } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookView, scopedHooks } from './view';

export function parseOptions(_raw: RawInvocation): Record<string, never> {
  return {};
}

/** `taxprep hooks list`: this profile's hooks, with how many deliveries are pending or failed. */
export async function run(ctx: Context): Promise<number> {
  const { hooks, outboxLines } = await scopedHooks(ctx);
  const outbox = await readOutbox(outboxLines);
  const counts = new Map<string, { pending: number; failed: number }>();
  for (const delivery of outbox.all()) {
    const count = counts.get(delivery.hook) ?? { pending: 0, failed: 0 };
    if (delivery.status === 'pending') count.pending += 1;
    if (delivery.status === 'failed') count.failed += 1;
    counts.set(delivery.hook, count);
  }
  const now = ctx.clock.now();
  const views = hooks.map((hook) => ({ ...hookView(hook, now), pending: counts.get(hook.id)?.pending ?? 0, failed: counts.get(hook.id)?.failed ?? 0 }));
  const out = createOutput(ctx);
  if (ctx.globals.json) {
    await out.json({ hooks: views }, 'hooks');
  } else if (views.length === 0) {
    await out.note('No hooks for this profile yet. Add one with: taxprep hooks add <url>');
  } else {
    await out.table(
      // A URL is copied, so it is wrapped whole, never cut; on a narrow terminal the counts give it room.
      ['id', wrapped('target', { min: 26 }), freeText('events'), 'state', { title: 'pending', drop: 1 }, { title: 'failed', drop: 2 }],
      views.map((view) => [view.id, view.url ?? `exec: ${view.exec}`, view.events.join(','), view.enabled ? 'enabled' : `disabled: ${view.disabled_reason ?? 'by hooks disable'}`, String(view.pending), String(view.failed)]),
    );
  }
  return 0;
}
