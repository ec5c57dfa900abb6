import { CONTRACT_API_KEY_HINT, hasApiKeyShape, keyRedactor } from '../contract/apiKeys';
import { BASE_PATH, endsInVersion } from '../contract/version';
import { normalType } from '../contract/uploads';
import type { GlobalOptions, Profile, ProfileStore, ResolvedSettings, SettingSource, StateSetting } from '../types';
import { CliError, MalformedApiKeyError, MissingCredentialsError, UsageError } from '../errors';
import { readCaFile, type CaFile } from './caFile';

type Env = Record<string, string | undefined>;

/** Where `taxprep serve --mock` listens by default, so a fresh install works against the mock. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:4010/v1beta';

export const ENVIRONMENT_VARIABLES = {
  profile: 'TAXPREP_PROFILE',
  apiKey: 'TAXPREP_API_KEY',
  baseUrl: 'TAXPREP_BASE_URL',
  maxResponseSize: 'TAXPREP_MAX_RESPONSE_SIZE',
  queryParameters: 'TAXPREP_QUERY_PARAMETERS',
  caFile: 'TAXPREP_CA_FILE',
  stateUrl: 'TAXPREP_STATE_URL',
  stateNamespace: 'TAXPREP_STATE_NAMESPACE',
} as const;

/** "A few MB": far above any page of 100 items, far below what would trouble the machine. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 };
const SIZE_RULE = 'must be a size such as 8MB, 512KB or 1048576 (bytes), from 1KB to 1GB';

/** "8MB" -> 8388608 (units are powers of 1024, as taxprep prints sizes). */
export function parseSize(text: string, where: string, field = 'max_response_size', rule = SIZE_RULE, maxBytes = 1024 ** 3): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
  const bytes = match && unit !== undefined ? Math.round(Number(match[1]) * unit) : NaN;
  if (!(bytes >= 1024 && bytes <= maxBytes)) throw new UsageError(`${where} ${rule}`, { details: { [field]: [rule] } });
  return bytes;
}

const UPLOAD_SIZE_RULE = 'must be a size such as 25MB, 500MB or 2GB, from 1KB to 1TB';
const UPLOAD_TYPES_RULE = 'must be a list of media types (application/pdf) or file extensions (.pdf)';

/** The profile's hand-set upload rules, checked: the service's limit and the types it takes, when the user knows them. */
function profileUploadRules(profile: Profile | undefined): Pick<ResolvedSettings, 'uploadMaxBytes' | 'uploadTypes'> {
  if (profile === undefined) return {};
  const rules: Pick<ResolvedSettings, 'uploadMaxBytes' | 'uploadTypes'> = {};
  if (profile.uploadMaxSize !== undefined) rules.uploadMaxBytes = parseSize(profile.uploadMaxSize, `upload_max_size of profile "${profile.name}"`, 'upload_max_size', UPLOAD_SIZE_RULE, 1024 ** 4);
  if (profile.uploadTypes !== undefined) {
    const types = profile.uploadTypes.map(normalType);
    if (types.length === 0 || types.some((type) => type === undefined)) {
      throw new UsageError(`upload_types of profile "${profile.name}" ${UPLOAD_TYPES_RULE}`, { details: { upload_types: [UPLOAD_TYPES_RULE] } });
    }
    rules.uploadTypes = types as string[];
  }
  return rules;
}

/**
 * Query parameters whose names the contract does not show (four filters, and the deliverable
 * list's offset, "not confirmed by a sample"), by `<list>.<parameter>`; each may be renamed for a
 * service that names it differently (TAXPREP_QUERY_PARAMETERS, the profile's `query_parameters`,
 * which `taxprep doctor --save` writes). The values are the names taxprep sends by default.
 */
export const CONFIGURABLE_QUERY_PARAMETERS = {
  'projects.type': 'type',
  'projects.status': 'status',
  'deliverables.account_id': 'account_id',
  'deliverables.project_type': 'project_type',
  'deliverables.offset': 'offset',
} as const;
export type ConfigurableQueryParameter = keyof typeof CONFIGURABLE_QUERY_PARAMETERS;
const PARAMETER_NAME = /^[A-Za-z0-9_.\-[\]]{1,64}$/;
const PARAMETER_RULE = `must map ${Object.keys(CONFIGURABLE_QUERY_PARAMETERS).join(', ')} to names of letters, digits, "_", "-", ".", "[" or "]"`;

/** `projects.type=project_type,deliverables.account_id=account` (or the profile's object) -> checked names. */
export function checkQueryParameters(entries: Array<[string, string]>, where: string): Partial<Record<ConfigurableQueryParameter, string>> {
  const names: Partial<Record<ConfigurableQueryParameter, string>> = {};
  for (const [filter, name] of entries) {
    if (!Object.hasOwn(CONFIGURABLE_QUERY_PARAMETERS, filter) || !PARAMETER_NAME.test(name)) {
      throw new UsageError(`query parameter names (${where}) ${PARAMETER_RULE}; got "${filter}=${name}"`, { details: { query_parameters: [PARAMETER_RULE] } });
    }
    names[filter as ConfigurableQueryParameter] = name;
  }
  return names;
}

function queryParametersFromEnv(text: string): Array<[string, string]> {
  return text
    .split(',')
    .filter((pair) => pair.trim() !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      return at < 0 ? [pair.trim(), ''] : [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    });
}

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
  if (!hasApiKeyShape(key)) throw new UsageError(`the API key is not well formed. ${CONTRACT_API_KEY_HINT}`, { details: { api_key: [CONTRACT_API_KEY_HINT] } });
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
  globals: Pick<GlobalOptions, 'profile' | 'baseUrl' | 'maxResponseSize' | 'caFile' | 'stateUrl'>;
  env: Env;
  profiles: () => Promise<ProfileStore>;
  /** The key of a profile whose key is not in the file (the credential store, a command); read only when it is the key in use. */
  profileKey?: (profile: Profile) => Promise<string>;
  /** Where the chosen profile's key lives, in words. */
  keyLocation?: (profile: Profile, profilePath: string) => string;
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
  let profilePath = '';
  if (needStore) {
    const store = await input.profiles();
    profilePath = store.path;
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

  const keyFromProfile = profile !== undefined && (profileWins || envKey === undefined);
  let [apiKey, apiKeySource]: [string | undefined, SettingSource | undefined] = keyFromProfile ? [profile!.apiKey, 'profile'] : envKey !== undefined ? [envKey, 'environment'] : [undefined, undefined];
  let apiKeyProblem: CliError | undefined;
  if (keyFromProfile && profile!.keyStorage !== undefined && profile!.keyStorage !== 'file' && input.profileKey !== undefined) {
    // A key that cannot be read fails only the commands that need it (checkApiKey), not those that only show settings.
    try {
      apiKey = await input.profileKey(profile!);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      apiKeyProblem = error;
    }
  }
  // A command line may hold the key itself (`printf %s tpk_...`): shown, it is redacted like the key.
  const location = apiKeySource === 'environment' ? `environment variable ${ENVIRONMENT_VARIABLES.apiKey}` : keyFromProfile ? input.keyLocation?.(profile!, profilePath) : undefined;
  const apiKeyLocation = location === undefined ? undefined : keyRedactor(apiKey)(location);

  const envSize = fromEnv(env, ENVIRONMENT_VARIABLES.maxResponseSize);
  const maxResponseBytes =
    globals.maxResponseSize !== undefined
      ? parseSize(globals.maxResponseSize, '--max-response-size')
      : envSize !== undefined
        ? parseSize(envSize, ENVIRONMENT_VARIABLES.maxResponseSize)
        : profile?.maxResponseSize !== undefined
          ? parseSize(profile.maxResponseSize, `max_response_size of profile "${profile.name}"`)
          : DEFAULT_MAX_RESPONSE_BYTES;
  const envParameters = fromEnv(env, ENVIRONMENT_VARIABLES.queryParameters);
  const queryParameters = {
    ...CONFIGURABLE_QUERY_PARAMETERS,
    ...(profile?.queryParameters === undefined ? {} : checkQueryParameters(Object.entries(profile.queryParameters), `query_parameters of profile "${profile.name}"`)),
    ...(envParameters === undefined ? {} : checkQueryParameters(queryParametersFromEnv(envParameters), ENVIRONMENT_VARIABLES.queryParameters)),
  };

  const resolved: ResolvedSettings = {
    profileName: profile?.name ?? null,
    baseUrl: checkBaseUrl(baseUrlRaw, baseUrlWhere),
    baseUrlSource,
    apiKey,
    apiKeySource,
    ...(apiKeyLocation === undefined ? {} : { apiKeyLocation }),
    ...(apiKeyProblem === undefined ? {} : { apiKeyProblem }),
    maxResponseBytes,
    queryParameters,
    ...profileUploadRules(profile),
  };
  const state = stateSetting(globals, env, profile);
  if (state !== undefined) resolved.state = state;
  if (profileSource !== undefined) resolved.profileSource = profileSource;
  const caFile = caFileOf(globals, env, profile);
  if (caFile !== undefined) resolved.caFile = caFile;
  return resolved;
}

/** The CA file in effect (flag, then environment, then the profile), read and checked; undefined when none is named. */
export function caFileOf(globals: Pick<GlobalOptions, 'caFile'>, env: Env, profile: Profile | undefined): CaFile | undefined {
  const envCaFile = fromEnv(env, ENVIRONMENT_VARIABLES.caFile);
  if (globals.caFile !== undefined) return readCaFile(globals.caFile, '--ca-file');
  if (envCaFile !== undefined) return readCaFile(envCaFile, ENVIRONMENT_VARIABLES.caFile);
  if (profile?.caFile !== undefined) return readCaFile(profile.caFile, `ca_file of profile "${profile.name}"`);
  return undefined;
}

const NAMESPACE_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
const NAMESPACE_RULE = 'must be 1 to 63 lower-case letters, digits, "_", "." or "-", starting with a letter or digit';

/**
 * The shared store of taxprep's state, when one is set: `--state-url`, then TAXPREP_STATE_URL,
 * then the profile's `state_url`; its namespace from TAXPREP_STATE_NAMESPACE, the profile's
 * `state_namespace`, or "default". The URL is checked when the store is opened (src/state/).
 */
function stateSetting(globals: Pick<GlobalOptions, 'stateUrl'>, env: Env, profile: Profile | undefined): StateSetting | undefined {
  const envUrl = fromEnv(env, ENVIRONMENT_VARIABLES.stateUrl);
  const [url, source]: [string | undefined, SettingSource] =
    globals.stateUrl !== undefined ? [globals.stateUrl, 'flag'] : envUrl !== undefined ? [envUrl, 'environment'] : [profile?.stateUrl, 'profile'];
  if (url === undefined) return undefined;
  const envNamespace = fromEnv(env, ENVIRONMENT_VARIABLES.stateNamespace);
  const [namespace, where] =
    envNamespace !== undefined
      ? [envNamespace, ENVIRONMENT_VARIABLES.stateNamespace]
      : profile?.stateNamespace !== undefined
        ? [profile.stateNamespace, `state_namespace of profile "${profile.name}"`]
        : ['default', 'default'];
  return { url, source, namespace: checkStateNamespace(namespace, where) };
}

export function checkStateNamespace(namespace: string, where: string): string {
  if (!NAMESPACE_PATTERN.test(namespace)) throw new UsageError(`${where} ${NAMESPACE_RULE}`, { details: { state_namespace: [NAMESPACE_RULE] } });
  return namespace;
}

/** Whether a base URL ends in the contract's version segment; `profiles add` and `whoami` warn when not. */
export function baseUrlVersionWarning(baseUrl: string): string | undefined {
  if (endsInVersion(baseUrl)) return undefined;
  return `warning: the base URL ${baseUrl} does not end in ${BASE_PATH}, the service's version segment; requests will likely miss the API (e.g. https://partner-api.example.com${BASE_PATH}).`;
}

/** Where the key came from, in words for messages. */
export function describeKeySource(settings: ResolvedSettings): string {
  if (settings.apiKeySource === 'environment') return ENVIRONMENT_VARIABLES.apiKey;
  if (settings.apiKeySource === 'profile') return `profile "${settings.profileName}"`;
  return 'nowhere';
}

/** Fails before any request when the command needs a key and none usable is configured. */
export function checkApiKey(settings: ResolvedSettings): void {
  if (settings.apiKeyProblem !== undefined) throw settings.apiKeyProblem;
  if (settings.apiKey === undefined) {
    throw new MissingCredentialsError('no API key is configured', {
      hint: `Add a profile with \`taxprep profiles add <name>\` (the key is read from a prompt or stdin), or set ${ENVIRONMENT_VARIABLES.apiKey}.`,
    });
  }
  if (!hasApiKeyShape(settings.apiKey)) {
    throw new MalformedApiKeyError(`the API key from ${describeKeySource(settings)} is not well formed`, {
      details: { hint: CONTRACT_API_KEY_HINT },
      hint: CONTRACT_API_KEY_HINT,
    });
  }
}

/** The key to send: only a well-formed one (a malformed key is never put on the wire). */
export function usableApiKey(settings: ResolvedSettings): string | undefined {
  return settings.apiKey !== undefined && hasApiKeyShape(settings.apiKey) ? settings.apiKey : undefined;
}
