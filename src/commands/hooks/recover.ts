import { findHook } from '../../hooks/store';
import { matchesEvent } from '../../hooks/events';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookIdArgument, markDue, parseSince, placedHooks, whoSends } from './view';

export interface RecoverOptions {
  id: string;
  since: string;
}

export function parseOptions(raw: RawInvocation): RecoverOptions {
  return { id: hookIdArgument(raw.args[0]), since: String(raw.flags.since) };
}

/**
 * `taxprep hooks recover`: every change the outbox holds that was seen since a time and matches
 * the hook is made due for it again (also those queued while it was disabled or not yet added),
 * each under its own webhook-id; a running watch takes them and sends them at once.
 */
export async function run(ctx: Context, options: RecoverOptions): Promise<number> {
  const place = await placedHooks(ctx);
  const hook = findHook(place.hooks, place.scope, options.id);
  const sinceMs = parseSince(options.since, ctx.clock.now());
  const { count, watch } = await markDue(ctx, place, (outbox) =>
    outbox
      .eventsSince(sinceMs)
      .filter((event) => event.event !== 'taxprep.ping' && matchesEvent(hook.events, event.event))
      .map((event) => ({ id: event.id, hook: hook.id })),
  );
  await createOutput(ctx).note(`${count} change${count === 1 ? ' is' : 's are'} due again for ${hook.id}; ${whoSends(watch, count === 1 ? 'it' : 'them')}.${hook.enabled ? '' : ` The hook is disabled: taxprep hooks enable ${hook.id}`}`);
  return 0;
}
