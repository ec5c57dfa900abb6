import type { Context } from '../../types';
import { UsageError } from '../../errors';
import { CredentialStoreUnavailable, profileKeyAccount } from '../../config/credentialStore';
import { crashPoint } from '../../lib/crashPoints';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { existingProfile, keyLocation, parseNameArgument, profileView } from './view';

export interface SecureProfileOptions {
  name: string;
}

export function parseOptions(raw: RawInvocation): SecureProfileOptions {
  return { name: parseNameArgument(raw.args[0]) };
}

/**
 * `taxprep profiles secure NAME`: the key of a plain-text profile into the credential store. In
 * this order: written to the store, read back and compared, and only then the file rewritten
 * without it, so that a kill at any step leaves the key in the file, the store or both, and a
 * second run finishes the move.
 */
export async function run(ctx: Context, options: SecureProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const profile = existingProfile(store, options.name);
  const out = createOutput(ctx);
  if (profile.keyStorage !== undefined && profile.keyStorage !== 'file') {
    await out.note(`Profile "${profile.name}" keeps no key in the file: its key is in ${keyLocation(ctx, store, profile)}. Nothing to move.`);
    if (ctx.globals.json) await out.json(profileView(profile, store.defaultName(), keyLocation(ctx, store, profile)));
    return 0;
  }
  const apiKey = profile.apiKey!;
  const credentials = ctx.credentials();
  const account = profileKeyAccount(profile.name, profile.baseUrl);
  let readBack: string | undefined;
  try {
    await credentials.set(account, apiKey);
    crashPoint('secure.after-store');
    readBack = await credentials.get(account);
  } catch (error) {
    if (!(error instanceof CredentialStoreUnavailable)) throw error;
    throw new UsageError(`cannot move the key of profile "${profile.name}" into the ${credentials.label}: ${error.reason}; the key stays in ${store.path}`, {
      details: { key_storage: [error.reason] },
      hint: 'Unlock the keyring (or start a desktop session) and run this command again.',
      cause: error,
    });
  }
  if (readBack !== apiKey) {
    throw new UsageError(`the ${credentials.label} did not give back the key of profile "${profile.name}" as written; the key stays in ${store.path}`, {
      details: { key_storage: ['the stored key did not read back'] },
    });
  }
  crashPoint('secure.after-verify');
  const { apiKey: _moved, ...rest } = profile;
  const secured = { ...rest, keyStorage: 'credential-store' as const };
  await store.save(secured);
  crashPoint('secure.after-file');
  const view = profileView(secured, store.defaultName(), credentials.label, apiKey);
  if (ctx.globals.json) await out.json(view);
  else await out.note(`Moved the key ${view.api_key} of profile "${profile.name}" into the ${credentials.label}; ${store.path} no longer holds it.`);
  return 0;
}
