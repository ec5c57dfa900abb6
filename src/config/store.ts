import Conf from 'conf';
import * as z from 'zod';
import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Profile, ProfileStore } from '../context';
import { UsageError } from '../errors';

type Env = Record<string, string | undefined>;

export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const PROFILE_NAME_RULE = 'must be 1-64 letters, digits, "-" or "_", starting with a letter or digit';

/**
 * The file's schema. On disk the store uses the service's snake_case, like every other document
 * taxprep handles. Checked with zod rather than conf's `schema` option: conf would compile it with
 * ajv on every start (a cost as large as loading zod), while API commands load zod anyway.
 */
const StoredProfiles = z.object({
  default_profile: z.string().optional(),
  profiles: z
    .record(
      z.string(),
      z.object({
        base_url: z.string(),
        api_key: z.string(),
        max_response_size: z.string().optional(),
        query_parameters: z.record(z.string(), z.string()).optional(),
      }),
    )
    .optional(),
});
type StoredProfiles = z.infer<typeof StoredProfiles>;
type StoredProfile = NonNullable<StoredProfiles['profiles']>[string];

/**
 * The directory for taxprep's settings. XDG_CONFIG_HOME is honoured on every platform (so tests and
 * the demo can point it at a temporary directory); otherwise the platform's usual place.
 */
export function configDirectory(env: Env, platform: NodeJS.Platform = process.platform, home = env.HOME || env.USERPROFILE || homedir()): string {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'taxprep');
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', 'taxprep');
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'taxprep', 'Config');
  return join(home, '.config', 'taxprep');
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new UsageError(`profile name "${name}" ${PROFILE_NAME_RULE}`, { details: { name: [PROFILE_NAME_RULE] } });
  }
  return name;
}

/** The store holds API keys: the directory is made private (0700) and the file is written 0600. */
export function openProfileStore(env: Env): ProfileStore {
  const directory = configDirectory(env);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') chmodSync(directory, 0o700);

  const conf = unlessInvalid(
    join(directory, 'profiles.json'),
    () =>
      new Conf<StoredProfiles>({
        projectName: 'taxprep',
        cwd: directory,
        configName: 'profiles',
        configFileMode: 0o600,
        accessPropertiesByDotNotation: false,
      }),
  );
  // No defaults are given to conf: it would write the file merely to read it.
  const read = (): StoredProfiles & { profiles: Record<string, StoredProfile> } => {
    const stored = unlessInvalid(conf.path, () => {
      const parsed = StoredProfiles.safeParse(conf.store);
      if (parsed.success) return parsed.data;
      throw new Error(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'the file'}: ${issue.message}`).join('; '));
    });
    return { ...stored, profiles: stored.profiles ?? {} };
  };
  const toProfile = (name: string, stored: StoredProfile): Profile => {
    const profile: Profile = { name, baseUrl: stored.base_url, apiKey: stored.api_key };
    if (stored.max_response_size !== undefined) profile.maxResponseSize = stored.max_response_size;
    if (stored.query_parameters !== undefined) profile.queryParameters = stored.query_parameters;
    return profile;
  };
  const toStored = (profile: Profile): StoredProfile => {
    const stored: StoredProfile = { base_url: profile.baseUrl, api_key: profile.apiKey };
    if (profile.maxResponseSize !== undefined) stored.max_response_size = profile.maxResponseSize;
    if (profile.queryParameters !== undefined) stored.query_parameters = profile.queryParameters;
    return stored;
  };

  return {
    path: conf.path,
    list: () =>
      Object.entries(read().profiles)
        .map(([name, stored]) => toProfile(name, stored))
        .sort((a, b) => a.name.localeCompare(b.name)),
    get(name) {
      const stored = read().profiles[name];
      return stored === undefined ? undefined : toProfile(name, stored);
    },
    defaultName: () => read().default_profile,
    save(profile) {
      const current = read();
      const profiles = { ...current.profiles, [checkProfileName(profile.name)]: toStored(profile) };
      conf.store = { ...current, profiles, default_profile: current.default_profile ?? profile.name };
    },
    remove(name) {
      const current = read();
      if (current.profiles[name] === undefined) return false;
      const { [name]: _removed, ...profiles } = current.profiles;
      const next: StoredProfiles = { profiles };
      if (current.default_profile !== undefined && current.default_profile !== name) next.default_profile = current.default_profile;
      conf.store = next;
      return true;
    },
    setDefault(name) {
      const current = read();
      if (current.profiles[name] === undefined) throw unknownProfile(name, Object.keys(current.profiles));
      conf.store = { ...current, default_profile: name };
    },
  };
}

export function unknownProfile(name: string, known: string[]): UsageError {
  const list = known.length > 0 ? `profiles: ${known.sort().join(', ')}` : 'no profiles exist yet';
  return new UsageError(`profile "${name}" does not exist (${list})`, { hint: `Add it with: taxprep profiles add ${name}` });
}

/** A hand-edited or damaged file is the user's to fix: say which file and why, never a stack trace. */
function unlessInvalid<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`the profile file ${path} is not valid: ${reason}`, {
      hint: 'Fix the file, or remove it and add the profiles again with `taxprep profiles add`.',
      cause: error,
    });
  }
}
