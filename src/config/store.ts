import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyStorage, Profile, ProfileStore } from '../types';
import { UsageError } from '../errors';
import { importPackage } from '../lib/importPackage';
import { appDirectory } from '../lib/paths';

type Env = Record<string, string | undefined>;

export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const PROFILE_NAME_RULE = 'must be 1-64 letters, digits, "-" or "_", starting with a letter or digit';

/**
 * The file as conf writes it (JSON, tab-indented), in the service's snake_case like every other
 * document taxprep handles. Keys taxprep does not know are kept through every write.
 */
interface StoredProfile {
  base_url: string;
  /** Absent (a profile from before the credential store) or `file`: the key is `api_key`, in plain text. */
  api_key_source?: KeyStorage;
  api_key?: string;
  api_key_command?: string;
  max_response_size?: string;
  query_parameters?: Record<string, string>;
  upload_max_size?: string;
  upload_types?: string[];
  ca_file?: string;
  state_url?: string;
  state_namespace?: string;
  [key: string]: unknown;
}
interface StoredProfiles {
  default_profile?: string;
  profiles?: Record<string, StoredProfile>;
  [key: string]: unknown;
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new UsageError(`profile name "${name}" ${PROFILE_NAME_RULE}`, { details: { name: [PROFILE_NAME_RULE] } });
  }
  return name;
}

/**
 * Reads parse the file directly: loading conf (and its dependencies) cost about 75 ms on every
 * command that uses a stored profile. Writes go through conf, which is loaded only then, so the
 * file keeps conf's format and atomic writes. The store holds API keys: written, the directory is
 * made private (0700) and the file 0600.
 */
export function openProfileStore(env: Env): ProfileStore {
  const directory = appDirectory('config', env);
  const path = join(directory, 'profiles.json');

  const read = (): StoredProfiles & { profiles: Record<string, StoredProfile> } => {
    const stored = readStoredProfiles(path);
    // Without a prototype, so that a profile named "constructor" or "toString" is only ever a stored one.
    return { ...stored, profiles: Object.assign(Object.create(null) as Record<string, StoredProfile>, stored.profiles) };
  };
  const write = async (next: StoredProfiles): Promise<void> => {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    if (process.platform !== 'win32') chmodSync(directory, 0o700);
    const { default: Conf } = await importPackage<typeof import('conf')>('conf');
    const conf = unlessInvalid(
      path,
      () =>
        new Conf<StoredProfiles>({
          projectName: 'taxprep',
          cwd: directory,
          configName: 'profiles',
          configFileMode: 0o600,
          accessPropertiesByDotNotation: false,
        }),
    );
    conf.store = next;
  };
  const toProfile = (name: string, stored: StoredProfile): Profile => {
    const profile: Profile = { name, baseUrl: stored.base_url };
    if (stored.api_key_source !== undefined) profile.keyStorage = stored.api_key_source;
    if (stored.api_key !== undefined) profile.apiKey = stored.api_key;
    if (stored.api_key_command !== undefined) profile.apiKeyCommand = stored.api_key_command;
    if (stored.max_response_size !== undefined) profile.maxResponseSize = stored.max_response_size;
    if (stored.query_parameters !== undefined) profile.queryParameters = stored.query_parameters;
    if (stored.upload_max_size !== undefined) profile.uploadMaxSize = stored.upload_max_size;
    if (stored.upload_types !== undefined) profile.uploadTypes = stored.upload_types;
    if (stored.ca_file !== undefined) profile.caFile = stored.ca_file;
    if (stored.state_url !== undefined) profile.stateUrl = stored.state_url;
    if (stored.state_namespace !== undefined) profile.stateNamespace = stored.state_namespace;
    return profile;
  };
  const toStored = (profile: Profile): StoredProfile => {
    const stored: StoredProfile = { base_url: profile.baseUrl };
    if (profile.keyStorage !== undefined) stored.api_key_source = profile.keyStorage;
    if (profile.keyStorage === undefined || profile.keyStorage === 'file') stored.api_key = profile.apiKey;
    if (profile.keyStorage === 'command') stored.api_key_command = profile.apiKeyCommand;
    if (profile.maxResponseSize !== undefined) stored.max_response_size = profile.maxResponseSize;
    if (profile.queryParameters !== undefined) stored.query_parameters = profile.queryParameters;
    if (profile.uploadMaxSize !== undefined) stored.upload_max_size = profile.uploadMaxSize;
    if (profile.uploadTypes !== undefined) stored.upload_types = profile.uploadTypes;
    if (profile.caFile !== undefined) stored.ca_file = profile.caFile;
    if (profile.stateUrl !== undefined) stored.state_url = profile.stateUrl;
    if (profile.stateNamespace !== undefined) stored.state_namespace = profile.stateNamespace;
    return stored;
  };

  return {
    path,
    list: () =>
      Object.entries(read().profiles)
        .map(([name, stored]) => toProfile(name, stored))
        .sort((a, b) => a.name.localeCompare(b.name)),
    get(name) {
      const stored = read().profiles[name];
      return stored === undefined ? undefined : toProfile(name, stored);
    },
    defaultName: () => read().default_profile,
    async save(profile) {
      const current = read();
      const name = checkProfileName(profile.name);
      // The other sources' fields go: a key moved into the credential store leaves no copy behind.
      const { api_key: _key, api_key_command: _command, api_key_source: _source, ...kept } = current.profiles[name] ?? ({} as Partial<StoredProfile>);
      const profiles = { ...current.profiles, [name]: { ...kept, ...toStored(profile) } };
      await write({ ...current, profiles, default_profile: current.default_profile ?? profile.name });
    },
    async remove(name) {
      const { default_profile: defaultName, ...current } = read();
      if (current.profiles[name] === undefined) return false;
      const { [name]: _removed, ...profiles } = current.profiles;
      const next: StoredProfiles = { ...current, profiles };
      if (defaultName !== undefined && defaultName !== name) next.default_profile = defaultName;
      await write(next);
      return true;
    },
    async setDefault(name) {
      const current = read();
      if (current.profiles[name] === undefined) throw unknownProfile(name, Object.keys(current.profiles));
      await write({ ...current, default_profile: name });
    },
  };
}

/** The file's content; no file is no profiles. */
function readStoredProfiles(path: string): StoredProfiles {
  return unlessInvalid(path, () => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    return checkStoredProfiles(JSON.parse(text));
  });
}

const KEY_STORAGES: readonly KeyStorage[] = ['credential-store', 'command', 'file'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function checkStoredProfiles(value: unknown): StoredProfiles {
  if (!isObject(value)) throw new Error('the file: must be a JSON object');
  const problems: string[] = [];
  if (value.default_profile !== undefined && typeof value.default_profile !== 'string') problems.push('default_profile: must be a string');
  if (value.profiles !== undefined && !isObject(value.profiles)) problems.push('profiles: must be an object');
  else {
    for (const [name, profile] of Object.entries(value.profiles ?? {})) {
      if (!isObject(profile)) problems.push(`profiles.${name}: must be an object`);
      else {
        const source = profile.api_key_source ?? 'file';
        if (!KEY_STORAGES.includes(source as KeyStorage)) problems.push(`profiles.${name}.api_key_source: must be one of ${KEY_STORAGES.join(', ')}`);
        const required = { file: 'api_key', command: 'api_key_command', 'credential-store': undefined }[source as KeyStorage];
        for (const field of ['base_url', required]) if (field !== undefined && typeof profile[field] !== 'string') problems.push(`profiles.${name}.${field}: must be a string`);
        for (const field of ['max_response_size', 'upload_max_size', 'ca_file']) if (profile[field] !== undefined && typeof profile[field] !== 'string') problems.push(`profiles.${name}.${field}: must be a string`);
        const types = profile.upload_types;
        if (types !== undefined && !(Array.isArray(types) && types.every((type) => typeof type === 'string'))) problems.push(`profiles.${name}.upload_types: must be an array of strings`);
        const parameters = profile.query_parameters;
        if (parameters !== undefined && !(isObject(parameters) && Object.values(parameters).every((value) => typeof value === 'string'))) {
          problems.push(`profiles.${name}.query_parameters: must be an object of strings`);
        }
      }
    }
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  return value as StoredProfiles;
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
