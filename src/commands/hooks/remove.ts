import { createOutput } from '../../output';
import { hookSecretsAccount } from '../../hooks/store';
import { CredentialStoreUnavailable } from '../../config/credentialStore';
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
  if (removed.secrets_in !== undefined) {
    // Gone from the file first: an entry left behind (a store that cannot be reached now) is named, not an error.
    try {
      await ctx.credentials().delete(hookSecretsAccount(removed));
    } catch (error) {
      if (!(error instanceof CredentialStoreUnavailable)) throw error;
      await out.note(`warning: its secret stays in the ${error.storeLabel} (${error.reason}): remove the entry of service "taxprep", user "${hookSecretsAccount(removed)}" there.`);
    }
  }
  return 0;
}
