import type { Context } from '../../types';
import { UsageError } from '../../errors';
import { CredentialStoreUnavailable, profileKeyAccount } from '../../config/credentialStore';
import { crashPoint } from '../../lib/crashPoints';
import { defaultHooksPath, hookSecretsAccount, inScope, readHooks, SECRETS_IN_STORE, secretsOf, updateHooks } from '../../hooks/store';
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
  const credentials = ctx.credentials();
  const unavailable = (error: unknown, what: string, where: string): unknown => {
    if (!(error instanceof CredentialStoreUnavailable)) return error;
    return new UsageError(`cannot move ${what} into the ${credentials.label}: ${error.reason}; ${where}`, {
      details: { key_storage: [error.reason] },
      hint: 'Unlock the keyring (or start a desktop session) and run this command again.',
      cause: error,
    });
  };
  const keyMoved = profile.keyStorage === undefined || profile.keyStorage === 'file' ? await moveKey() : undefined;
  const hooksMoved = await moveHookSecrets();
  const secured = store.get(profile.name)!;
  const view = { ...profileView(secured, store.defaultName(), keyLocation(ctx, store, secured), keyMoved), hooks_moved: hooksMoved };
  if (ctx.globals.json) await out.json(view);
  else {
    await out.note(
      keyMoved === undefined
        ? `The key of profile "${profile.name}" was not in the file (it is in ${view.api_key_location}).`
        : `Moved the key ${view.api_key} of profile "${profile.name}" into the ${credentials.label}; ${store.path} no longer holds it.`,
    );
    if (hooksMoved.length > 0) await out.note(`Moved the secrets of ${hooksMoved.length === 1 ? 'hook' : 'hooks'} ${hooksMoved.join(', ')} into the ${credentials.label}.`);
  }
  return 0;

  /** The key: written, read back, then the file rewritten without it. */
  async function moveKey(): Promise<string> {
    const apiKey = profile.apiKey!;
    const account = profileKeyAccount(profile.name, profile.baseUrl);
    let readBack: string | undefined;
    try {
      await credentials.set(account, apiKey);
      crashPoint('secure.after-store');
      readBack = await credentials.get(account);
    } catch (error) {
      throw unavailable(error, `the key of profile "${profile.name}"`, `the key stays in ${store.path}`);
    }
    if (readBack !== apiKey) {
      throw new UsageError(`the ${credentials.label} did not give back the key of profile "${profile.name}" as written; the key stays in ${store.path}`, {
        details: { key_storage: ['the stored key did not read back'] },
      });
    }
    crashPoint('secure.after-verify');
    const { apiKey: _moved, ...rest } = profile;
    await store.save({ ...rest, keyStorage: 'credential-store' });
    crashPoint('secure.after-file');
    return apiKey;
  }

  /**
   * The secrets of the profile's hooks kept in hooks.json, in the same order: each written and read
   * back, then the file rewritten naming the store. A hook rotated in between keeps its file.
   */
  async function moveHookSecrets(): Promise<string[]> {
    const hooksPath = defaultHooksPath(ctx.env);
    const scope = { profile: profile.name, baseUrl: profile.baseUrl };
    const stored = new Map<string, string>();
    for (const hook of (await readHooks(hooksPath)).filter((candidate) => inScope(candidate, scope) && candidate.secrets_in === undefined)) {
      const secrets = JSON.stringify(secretsOf(hook));
      try {
        await credentials.set(hookSecretsAccount(hook), secrets);
        if ((await credentials.get(hookSecretsAccount(hook))) !== secrets) throw new UsageError(`the ${credentials.label} did not give back the secrets of hook ${hook.id} as written; they stay in ${hooksPath}`);
      } catch (error) {
        throw unavailable(error, `the secrets of hook ${hook.id}`, `they stay in ${hooksPath}`);
      }
      stored.set(hook.id, secrets);
    }
    if (stored.size === 0) return [];
    crashPoint('secure.after-hooks-store');
    return updateHooks(hooksPath, ctx.clock, (hooks) =>
      hooks
        .filter((hook) => hook.secrets_in === undefined && stored.get(hook.id) === JSON.stringify(hook.secrets))
        .map((hook) => {
          hook.secrets_in = SECRETS_IN_STORE;
          return hook.id;
        }),
    );
  }
}
