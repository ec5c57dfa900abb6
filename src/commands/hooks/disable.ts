import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { editHook, hookIdArgument } from './view';

export function parseOptions(raw: RawInvocation): { id: string } {
  return { id: hookIdArgument(raw.args[0]) };
}

/** `taxprep hooks disable`: nothing is queued for or sent to it; its pending deliveries wait for `enable`. */
export async function run(ctx: Context, options: { id: string }): Promise<number> {
  await editHook(ctx, options.id, (hook) => Object.assign(hook, { enabled: false, disabled_reason: `disabled by hooks disable on ${ctx.clock.now().toISOString()}` }));
  await createOutput(ctx).note(`Disabled hook ${options.id}.`);
  return 0;
}
