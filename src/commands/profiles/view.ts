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
  /** The names of query parameters the contract does not show, when the profile sets any (`doctor --save`). */
  query_parameters?: Record<string, string>;
}

export function profileView(profile: Profile, defaultName: string | undefined): ProfileView {
  const view: ProfileView = { name: profile.name, base_url: profile.baseUrl, api_key: redactApiKey(profile.apiKey), default: profile.name === defaultName };
  if (profile.queryParameters !== undefined && Object.keys(profile.queryParameters).length > 0) view.query_parameters = profile.queryParameters;
  return view;
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
