import { redactApiKey } from '../../contract/apiKeys';
import type { Context, Profile, ProfileStore } from '../../types';
import { checkProfileName, unknownProfile } from '../../config/store';
import { profileKeyLocation } from '../../config/profileKey';
import { UsageError } from '../../errors';

/** A profile as printed (`--json` included): the key only ever redacted. */
export interface ProfileView {
  name: string;
  base_url: string;
  /** Null when the key is not at hand: in the credential store or a command's (`profiles list` reads neither). */
  api_key: string | null;
  /** Where the key lives: `credential store (Secret Service)`, ``command `op read ...` ``, `insecure file <path>`. */
  api_key_location: string;
  default: boolean;
  /** The names of query parameters the contract does not show, when the profile sets any (`doctor --save`). */
  query_parameters?: Record<string, string>;
}

export function profileView(profile: Profile, defaultName: string | undefined, location: string, apiKey = profile.apiKey): ProfileView {
  const view: ProfileView = {
    name: profile.name,
    base_url: profile.baseUrl,
    api_key: apiKey === undefined ? null : redactApiKey(apiKey),
    api_key_location: location,
    default: profile.name === defaultName,
  };
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

/** Where the profile's key lives, in words (the credential store's binding is not loaded for this). */
export function keyLocation(ctx: Context, store: ProfileStore, profile: Profile): string {
  return profileKeyLocation(profile, ctx.credentials().label, store.path);
}
