import { MissingCredentialsError } from '../errors';
import type { Profile } from '../types';
import { CredentialStoreUnavailable, profileKeyAccount, type CredentialStore } from './credentialStore';
import { runKeyCommand } from './keyCommand';

/** Where a profile's key lives, in words for `whoami`, `profiles show` and `doctor`. */
export function profileKeyLocation(profile: Profile, storeLabel: string, profilePath: string): string {
  if (profile.keyStorage === 'credential-store') return storeLabel;
  if (profile.keyStorage === 'command') return `command \`${profile.apiKeyCommand}\``;
  return `insecure file ${profilePath}`;
}

/**
 * The key of a profile: read from the file, the credential store or the profile's command. A key
 * that cannot be read is exit 3 naming the profile, with the ways to go on.
 */
export async function readProfileKey(profile: Profile, deps: { env: Record<string, string | undefined>; credentials: () => CredentialStore }): Promise<string> {
  if (profile.keyStorage === 'command') return runKeyCommand(profile.name, profile.apiKeyCommand!, deps.env);
  if (profile.keyStorage !== 'credential-store') return profile.apiKey!;
  const store = deps.credentials();
  let key: string | undefined;
  try {
    key = await store.get(profileKeyAccount(profile.name, profile.baseUrl));
  } catch (error) {
    if (!(error instanceof CredentialStoreUnavailable)) throw error;
    throw new MissingCredentialsError(`the key of profile "${profile.name}" is in the ${store.label}, which cannot be read: ${error.reason}`, {
      hint: 'Unlock the keyring (log in to a desktop session), or set TAXPREP_API_KEY for this run; see `taxprep help environment`.',
      cause: error,
    });
  }
  if (key === undefined) {
    throw new MissingCredentialsError(`the ${store.label} has no key for profile "${profile.name}" (${profile.baseUrl})`, {
      hint: `Store it again with: taxprep profiles add ${profile.name}`,
    });
  }
  return key;
}
