import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { editHook, hookIdArgument } from './view';

export function parseOptions(raw: RawInvocation): { id: string } {
  return { id: hookIdArgument(raw.args[0]) };
}

/** `taxprep hooks enable`: deliveries resume; what was marked failed while it was off is sent again by `recover` or `redeliver`. */
export async function run(ctx: Context, options: { id: string }): Promise<number> {
  await editHook(ctx, options.id, (hook) => Object.assign(hook, { enabled: true, disabled_reason: null }));
  await createOutput(ctx).note(`Enabled hook ${options.id}. Send again what it missed with: taxprep hooks recover ${options.id} --since <time>`);
  return 0;
}
