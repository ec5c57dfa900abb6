import { redactApiKey } from '../../contract/apiKeys';
import type { Profile, ProfileStore } from '../../types';
import { checkProfileName, unknownProfile } from '../../config/store';
import { UsageError } from '../../errors';

/** A profile as printed (`--json` included): the key only ever redacted. */
export interface ProfileView {
  name: string;
  base_url: string;
  api_key: string;
  default: boolean;
}

export function profileView(profile: Profile, defaultName: string | undefined): ProfileView {
  return { name: profile.name, base_url: profile.baseUrl, api_key: redactApiKey(profile.apiKey), default: profile.name === defaultName };
}

/** The `<name>` argument of profiles commands. */
export function parseNameArgument(value: unknown): string {
  if (typeof value !== 'string') throw new UsageError('a profile name is required');
  return checkProfileName(value);
}

export function existingProfile(store: ProfileStore, name: string): Profile {
  const profile = store.get(name);
  if (profile === undefined) throw unknownProfile(name, store.list().map((p) => p.name));
  return profile;
}
