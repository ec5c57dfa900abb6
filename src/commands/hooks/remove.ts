import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { editHook, hookIdArgument } from './view';

export function parseOptions(raw: RawInvocation): { id: string } {
  return { id: hookIdArgument(raw.args[0]) };
}

/** `taxprep hooks remove`: the hook and its secret are gone; its deliveries are sent no more. */
export async function run(ctx: Context, options: { id: string }): Promise<number> {
  await editHook(ctx, options.id, (hook, hooks) => hooks.splice(hooks.indexOf(hook), 1));
  await createOutput(ctx).note(`Removed hook ${options.id}.`);
  return 0;
}
