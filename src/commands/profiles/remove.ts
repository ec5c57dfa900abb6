import type { Context, Profile } from '../../types';
import { createOutput } from '../../output';
import { CredentialStoreUnavailable, profileKeyAccount } from '../../config/credentialStore';
import type { RawInvocation } from '../types';
import { existingProfile, keyLocation, parseNameArgument, profileView } from './view';

export interface RemoveProfileOptions {
  name: string;
}

export function parseOptions(raw: RawInvocation): RemoveProfileOptions {
  return { name: parseNameArgument(raw.args[0]) };
}

export async function run(ctx: Context, options: RemoveProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const profile = existingProfile(store, options.name);
  const wasDefault = store.defaultName() === profile.name;
  await store.remove(profile.name);
  const out = createOutput(ctx);
  const leftInStore = profile.keyStorage === 'credential-store' ? await forgetStoredKey(ctx, profile) : undefined;
  if (ctx.globals.json) {
    await out.json({ removed: profileView(profile, wasDefault ? profile.name : undefined, keyLocation(ctx, store, profile)) });
  } else {
    await out.note(`Removed profile "${profile.name}" and its key.`);
    if (leftInStore !== undefined) await out.note(leftInStore);
    if (wasDefault) await out.note('There is no default profile now; choose one with: taxprep profiles use <name>');
  }
  return 0;
}

/**
 * The profile's entry in the credential store goes with it. The profile is already gone from the
 * file; a store that cannot be reached now leaves an entry nothing refers to, which is said (with
 * what removes it) rather than failing a removal that happened.
 */
async function forgetStoredKey(ctx: Context, profile: Profile): Promise<string | undefined> {
  const account = profileKeyAccount(profile.name, profile.baseUrl);
  try {
    await ctx.credentials().delete(account);
    return undefined;
  } catch (error) {
    if (!(error instanceof CredentialStoreUnavailable)) throw error;
    return `warning: its key stays in the ${error.storeLabel} (${error.reason}): remove the entry of service "taxprep", user "${account}" there (on Linux: secret-tool clear service taxprep username '${account}').`;
  }
}
