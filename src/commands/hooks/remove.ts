import { createOutput } from '../../output';
import { forgetStoredSecrets } from '../../hooks/store';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { editHook, hookIdArgument } from './view';

export function parseOptions(raw: RawInvocation): { id: string } {
  return { id: hookIdArgument(raw.args[0]) };
}

/** `taxprep hooks remove`: the hook and its secret are gone; its deliveries are sent no more. */
export async function run(ctx: Context, options: { id: string }): Promise<number> {
  const removed = await editHook(ctx, options.id, (hook, hooks) => hooks.splice(hooks.indexOf(hook), 1));
  const out = createOutput(ctx);
  await out.note(`Removed hook ${options.id}.`);
  const leftInStore = await forgetStoredSecrets(removed, ctx.credentials());
  if (leftInStore !== undefined) await out.note(leftInStore);
  return 0;
}
