import { UsageError } from '../../errors';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hooksPlaceOf } from '../../hooks/place';
import { markDue, whoSends } from './view';

export function parseOptions(raw: RawInvocation): { deliveries: string[] } {
  const deliveries = (raw.args[0] as string[] | undefined) ?? [];
  return { deliveries };
}

/**
 * `taxprep hooks redeliver`: makes deliveries due again, from the start of their schedule, under
 * the same webhook-id. Beside a running watch the watch takes them and sends them at once;
 * otherwise the next `watch` or `hooks deliver` sends them. Every id is checked first: one unknown
 * changes nothing.
 */
export async function run(ctx: Context, options: { deliveries: string[] }): Promise<number> {
  const place = await hooksPlaceOf(ctx);
  const { count, watch } = await markDue(ctx, place, (outbox) =>
    options.deliveries.flatMap((key) => {
      const matches = key.includes(':') ? [outbox.get(key)].filter((delivery) => delivery !== undefined) : outbox.ofEvent(key);
      if (matches.length === 0) {
        throw new UsageError(`unknown delivery ${key}: it must be a delivery (<webhook-id>:<hook id>) or a webhook-id that the outbox holds`, {
          details: { delivery: ['must be listed by taxprep hooks deliveries'] },
          hint: 'List them with: taxprep hooks deliveries --status failed',
        });
      }
      return matches.map(({ id, hook }) => ({ id, hook }));
    }),
  );
  await createOutput(ctx).note(`${count} deliver${count === 1 ? 'y is' : 'ies are'} due again; ${whoSends(watch, count === 1 ? 'it' : 'them')}.`);
  return 0;
}
