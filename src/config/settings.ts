import { API_KEY_HINT, isWellFormedApiKey } from '../contract/apiKeys';
import type { GlobalOptions, Profile, ProfileStore, ResolvedSettings, SettingSource } from '../context';
import { MalformedApiKeyError, MissingCredentialsError, UsageError } from '../errors';

type Env = Record<string, string | undefined>;

/** Where `taxprep serve --mock` listens by default, so a fresh install works against the mock. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:4010/v1beta';

export const ENVIRONMENT_VARIABLES = {
  profile: 'TAXPREP_PROFILE',
  apiKey: 'TAXPREP_API_KEY',
  baseUrl: 'TAXPREP_BASE_URL',
} as const;

/** An empty variable counts as unset, so `TAXPREP_API_KEY= taxprep ...` falls back to the profile. */
function fromEnv(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A base URL taxprep will send a key to: http or https, no credentials, no query or fragment.
 * Returned without a trailing slash; `where` names its source for the message.
 */
export function checkBaseUrl(value: string, where: string): string {
  const rule = 'must be an http:// or https:// URL without user name, password, query or fragment';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`base URL "${value}" (${where}) ${rule}`, { details: { base_url: [rule] } });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new UsageError(`base URL (${where}) ${rule}`, { details: { base_url: [rule] } });
  }
  return url.href.replace(/\/+$/, '');
}

/** For `profiles add`: a key that cannot be a key is refused before it is stored. */
export function checkNewApiKey(key: string): string {
  if (!isWellFormedApiKey(key)) throw new UsageError(`the API key is not well formed. ${API_KEY_HINT}`, { details: { api_key: [API_KEY_HINT] } });
  return key;
}

/**
 * Settings precedence (clig.dev): flags, then environment, then the profile, then defaults.
 * `--profile` is a flag, so a profile named with it supplies its key and base URL over
 * TAXPREP_API_KEY / TAXPREP_BASE_URL (only `--base-url` beats it): the key of an explicitly chosen
 * profile is never swapped for another one sent to that profile's host.
 * The profile store is not opened when flags and environment already give a base URL and a key.
 */
export async function resolveSettings(input: {
  globals: Pick<GlobalOptions, 'profile' | 'baseUrl'>;
  env: Env;
  profiles: () => Promise<ProfileStore>;
}): Promise<ResolvedSettings> {
  const { globals, env } = input;
  const envProfile = fromEnv(env, ENVIRONMENT_VARIABLES.profile);
  const envKey = fromEnv(env, ENVIRONMENT_VARIABLES.apiKey);
  const envBaseUrl = fromEnv(env, ENVIRONMENT_VARIABLES.baseUrl);
  const flagBaseUrl = globals.baseUrl;

  const named: { name: string; source: SettingSource } | undefined =
    globals.profile !== undefined
      ? { name: globals.profile, source: 'flag' }
      : envProfile !== undefined
        ? { name: envProfile, source: 'environment' }
        : undefined;

  const needStore = named !== undefined || envKey === undefined || (flagBaseUrl === undefined && envBaseUrl === undefined);
  let profile: Profile | undefined;
  let profileSource: SettingSource | undefined;
  if (needStore) {
    const store = await input.profiles();
    if (named !== undefined) {
      profile = store.get(named.name);
      if (profile === undefined) {
        const { unknownProfile } = await import('./store');
        throw unknownProfile(named.name, store.list().map((p) => p.name));
      }
      profileSource = named.source;
    } else {
      const defaultName = store.defaultName();
      profile = defaultName === undefined ? undefined : store.get(defaultName);
      if (profile !== undefined) profileSource = 'default';
    }
  }
  const profileWins = named?.source === 'flag';

  const [baseUrlRaw, baseUrlSource, baseUrlWhere]: [string, SettingSource, string] =
    flagBaseUrl !== undefined
      ? [flagBaseUrl, 'flag', '--base-url']
      : profileWins && profile
        ? [profile.baseUrl, 'profile', `profile "${profile.name}"`]
        : envBaseUrl !== undefined
          ? [envBaseUrl, 'environment', ENVIRONMENT_VARIABLES.baseUrl]
          : profile
            ? [profile.baseUrl, 'profile', `profile "${profile.name}"`]
            : [DEFAULT_BASE_URL, 'default', 'default'];

  const [apiKey, apiKeySource]: [string | undefined, SettingSource | undefined] =
    profileWins && profile
      ? [profile.apiKey, 'profile']
      : envKey !== undefined
        ? [envKey, 'environment']
        : profile
          ? [profile.apiKey, 'profile']
          : [undefined, undefined];

  const resolved: ResolvedSettings = {
    profileName: profile?.name ?? null,
    baseUrl: checkBaseUrl(baseUrlRaw, baseUrlWhere),
    baseUrlSource,
    apiKey,
    apiKeySource,
  };
  if (profileSource !== undefined) resolved.profileSource = profileSource;
  return resolved;
}

/** Where the key came from, in words for messages. */
export function describeKeySource(settings: ResolvedSettings): string {
  if (settings.apiKeySource === 'environment') return ENVIRONMENT_VARIABLES.apiKey;
  if (settings.apiKeySource === 'profile') return `profile "${settings.profileName}"`;
  return 'nowhere';
}

/** Fails before any request when the command needs a key and none usable is configured. */
export function checkApiKey(settings: ResolvedSettings): void {
  if (settings.apiKey === undefined) {
    throw new MissingCredentialsError('no API key is configured', {
      hint: `Add a profile with \`taxprep profiles add <name>\` (the key is read from a prompt or stdin), or set ${ENVIRONMENT_VARIABLES.apiKey}.`,
    });
  }
  if (!isWellFormedApiKey(settings.apiKey)) {
    throw new MalformedApiKeyError(`the API key from ${describeKeySource(settings)} is not well formed`, {
      details: { hint: API_KEY_HINT },
      hint: API_KEY_HINT,
    });
  }
}

/** The key to send: only a well-formed one (a malformed key is never put on the wire). */
export function usableApiKey(settings: ResolvedSettings): string | undefined {
  return settings.apiKey !== undefined && isWellFormedApiKey(settings.apiKey) ? settings.apiKey : undefined;
}
