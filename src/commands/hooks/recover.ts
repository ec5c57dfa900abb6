import { findHook } from '../../hooks/store';
import { matchesEvent } from '../../hooks/events';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookIdArgument, parseSince, scopedHooks } from './view';

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
 * each under its own webhook-id.
 */
export async function run(ctx: Context, options: RecoverOptions): Promise<number> {
  const { scope, hooks, withOutbox } = await scopedHooks(ctx);
  const hook = findHook(hooks, scope, options.id);
  const sinceMs = parseSince(options.since, ctx.clock.now());
  const count = await withOutbox(async (outbox) => {
    const events = outbox.eventsSince(sinceMs).filter((event) => event.event !== 'taxprep.ping' && matchesEvent(hook.events, event.event));
    for (const event of events) await outbox.redeliver(event.id, hook.id, ctx.clock.now());
    return events.length;
  });
  await createOutput(ctx).note(`${count} change${count === 1 ? ' is' : 's are'} due again for ${hook.id}; taxprep hooks deliver (or a running watch) sends them.${hook.enabled ? '' : ` The hook is disabled: taxprep hooks enable ${hook.id}`}`);
  return 0;
}
