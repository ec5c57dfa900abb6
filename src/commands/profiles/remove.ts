import type { Context, Profile } from '../../types';
import { createOutput } from '../../output';
import { CredentialStoreUnavailable, profileKeyAccount } from '../../config/credentialStore';
import type { RawInvocation } from '../types';
import { defaultHooksPath, forgetStoredSecrets, readHooks, updateHooks, type Hook } from '../../hooks/store';
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
  const hooks = await removeProfileHooks(ctx, profile);
  const warnings = [leftInStore, ...hooks.warnings].filter((warning) => warning !== undefined);
  if (ctx.globals.json) {
    await out.json({ removed: profileView(profile, wasDefault ? profile.name : undefined, keyLocation(ctx, store, profile)), removed_hooks: hooks.ids });
    for (const warning of warnings) await out.note(warning);
  } else {
    const ids = hooks.ids.join(', ');
    await out.note(`Removed profile "${profile.name}" and its key${hooks.ids.length === 0 ? '' : ` and its webhook${hooks.ids.length === 1 ? '' : 's'} (${ids}) with their secrets`}.`);
    for (const warning of warnings) await out.note(warning);
    if (wasDefault) await out.note('There is no default profile now; choose one with: taxprep profiles use <name>');
  }
  return 0;
}

/**
 * The profile's webhooks go with it (no run can reach them without it: their scope is the profile
 * and its base URL), and their secrets in the credential store with them, after the hooks file no
 * longer names them. Hooks of a shared store belong to the team, not to a profile: untouched.
 */
async function removeProfileHooks(ctx: Context, profile: Profile): Promise<{ ids: string[]; warnings: Array<string | undefined> }> {
  const path = defaultHooksPath(ctx.env);
  const ofProfile = (hook: Hook) => hook.profile === profile.name && hook.base_url === profile.baseUrl;
  if (!(await readHooks(path)).some(ofProfile)) return { ids: [], warnings: [] };
  const removed = await updateHooks(path, ctx.clock, (hooks) => {
    const gone = hooks.filter(ofProfile);
    hooks.splice(0, hooks.length, ...hooks.filter((hook) => !ofProfile(hook)));
    return gone;
  });
  const credentials = ctx.credentials();
  const warnings = [];
  for (const hook of removed) warnings.push(await forgetStoredSecrets(hook, credentials));
  return { ids: removed.map((hook) => hook.id), warnings };
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
