import { keyRedactor, redactApiKey } from '../../contract/apiKeys';
import type { Context, KeyStorage, Profile } from '../../types';
import { baseUrlVersionWarning, checkBaseUrl, checkNewApiKey, checkStateNamespace, DEFAULT_BASE_URL, ENVIRONMENT_VARIABLES } from '../../config/settings';
import { CredentialStoreUnavailable, profileKeyAccount } from '../../config/credentialStore';
import { runKeyCommand, splitCommandLine } from '../../config/keyCommand';
import { readProfileKey } from '../../config/profileKey';
import { checkStateUrlFlag } from '../../state/urlFlag';
import { readCaFile } from '../../config/caFile';
import { resolve as resolvePath } from 'node:path';
import { CliError, NetworkError, NotTheApiError, UsageError, type ExitCode } from '../../errors';
import { notTheApiWith } from '../../api/errors';
import { BASE_PATH } from '../../contract/version';
import { checkKey, type KeyCheck } from '../../api/keyCheck';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { keyLocation, parseNameArgument, profileView } from './view';

export interface AddProfileOptions {
  name: string;
  baseUrl: string | undefined;
  apiKeyFromStdin: boolean;
  makeDefault: boolean;
  /** Ask the service whether it accepts the key before storing it (`--no-verify`: offline use). */
  verify: boolean;
  /** `--insecure-storage`: the key in the profile file (0600) instead of the credential store. */
  insecureStorage: boolean;
  /** `--api-key-command`: the key is this command's standard output, read when needed. */
  apiKeyCommand: string | undefined;
  /** The program's `--ca-file`, kept as the profile's `ca_file` (absolute). */
  caFile: string | undefined;
  /** `--state-url`, `--state-namespace`: the team's shared store (docs/team.md). */
  stateUrl: string | undefined;
  stateNamespace: string | undefined;
}

export function parseOptions(raw: RawInvocation): AddProfileOptions {
  const baseUrl = typeof raw.flags.baseUrl === 'string' ? checkBaseUrl(raw.flags.baseUrl, '--base-url') : undefined;
  return {
    name: parseNameArgument(raw.args[0]),
    baseUrl,
    apiKeyFromStdin: raw.flags.apiKeyStdin === true,
    makeDefault: raw.flags.default === true,
    verify: raw.flags.verify !== false,
    ...keyStorageFlags(raw),
    caFile: typeof raw.flags.caFile === 'string' ? resolvePath(raw.flags.caFile) : undefined,
    stateUrl: typeof raw.flags.stateUrl === 'string' ? checkStateUrlFlag(raw.flags.stateUrl, '--state-url') : undefined,
    stateNamespace: typeof raw.flags.stateNamespace === 'string' ? checkStateNamespace(raw.flags.stateNamespace, '--state-namespace') : undefined,
  };
}

function keyStorageFlags(raw: RawInvocation): Pick<AddProfileOptions, 'insecureStorage' | 'apiKeyCommand'> {
  const insecureStorage = raw.flags.insecureStorage === true;
  const apiKeyCommand = typeof raw.flags.apiKeyCommand === 'string' ? raw.flags.apiKeyCommand : undefined;
  if (apiKeyCommand !== undefined) {
    if (insecureStorage) throw new UsageError('--api-key-command keeps no key to store: it takes no --insecure-storage', { details: { '--insecure-storage': ['not with --api-key-command'] } });
    if (raw.flags.apiKeyStdin === true) throw new UsageError('--api-key-command reads the key from the command: it takes no --api-key-stdin', { details: { '--api-key-stdin': ['not with --api-key-command'] } });
    splitCommandLine(apiKeyCommand);
  }
  return { insecureStorage, apiKeyCommand };
}

export async function run(ctx: Context, options: AddProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const existing = store.get(options.name);
  const baseUrl = options.baseUrl ?? existing?.baseUrl ?? DEFAULT_BASE_URL;
  // A CA file that is not one is refused before the key is read or anything is stored.
  if (options.caFile !== undefined) readCaFile(options.caFile, '--ca-file');
  const apiKey = checkNewApiKey(options.apiKeyCommand === undefined ? await readKey(ctx, options) : await runKeyCommand(options.name, options.apiKeyCommand, ctx.env));
  const oldKey = existing === undefined ? undefined : await existingKey(ctx, existing);
  if (options.verify) await verifyKey(ctx, options.name, baseUrl, apiKey, oldKey);
  const keyStorage: KeyStorage = options.apiKeyCommand !== undefined ? 'command' : options.insecureStorage ? 'file' : 'credential-store';
  if (keyStorage === 'credential-store') await keepInCredentialStore(ctx, options.name, baseUrl, apiKey);
  // Replacing the key or address keeps the profile's other settings (max_response_size, query_parameters).
  const { apiKey: _old, apiKeyCommand: _oldCommand, ...settings } = existing ?? {};
  const profile: Profile = { ...settings, name: options.name, baseUrl, keyStorage };
  if (options.caFile !== undefined) profile.caFile = options.caFile;
  if (options.stateUrl !== undefined) profile.stateUrl = options.stateUrl;
  if (options.stateNamespace !== undefined) profile.stateNamespace = options.stateNamespace;
  if (keyStorage === 'file') profile.apiKey = apiKey;
  if (keyStorage === 'command') profile.apiKeyCommand = options.apiKeyCommand;
  await store.save(profile);
  // The old entry of the store goes only now that the file no longer refers to it.
  if (existing?.keyStorage === 'credential-store' && (keyStorage !== 'credential-store' || existing.baseUrl !== baseUrl)) {
    try {
      await ctx.credentials().delete(profileKeyAccount(existing.name, existing.baseUrl));
    } catch (error) {
      if (!(error instanceof CredentialStoreUnavailable)) throw error;
    }
  }
  if (options.makeDefault) await store.setDefault(options.name);

  const out = createOutput(ctx);
  const versionWarning = baseUrlVersionWarning(baseUrl);
  if (versionWarning !== undefined) await out.note(versionWarning);
  const view = profileView(profile, store.defaultName(), keyRedactor(apiKey)(keyLocation(ctx, store, profile)), apiKey);
  if (ctx.globals.json) {
    await out.json(view);
  } else {
    await out.note(
      `${existing ? 'Replaced' : 'Added'} profile "${view.name}": ${view.base_url}, key ${describeKeyChange(apiKey, oldKey)}` +
        `${view.default ? ' (the default profile)' : ''}${options.verify ? ', accepted by the service' : ', not checked (--no-verify)'}. ` +
        `${keyStorage === 'command' ? 'The key is read from' : 'Key in'} ${view.api_key_location}; profile in ${store.path}.`,
    );
    if (options.baseUrl === undefined && existing === undefined) {
      await out.note(`The base URL is the local mock's; give --base-url for the service.`);
    }
  }
  return 0;
}

/**
 * The key goes into the system's credential store. Where none answers, nothing is stored and the
 * user is told why and the two ways on: nothing silently falls back to the file.
 */
async function keepInCredentialStore(ctx: Context, name: string, baseUrl: string, apiKey: string): Promise<void> {
  const credentials = ctx.credentials();
  try {
    await credentials.set(profileKeyAccount(name, baseUrl), apiKey);
  } catch (error) {
    if (!(error instanceof CredentialStoreUnavailable)) throw error;
    throw new UsageError(`cannot keep the key of profile "${name}" in the ${credentials.label}: ${error.reason}; nothing was stored`, {
      details: { key_storage: [error.reason] },
      hint:
        `Keep it in the profile file instead (plain text, mode 0600): add --insecure-storage. Or let a password manager hand it over: --api-key-command 'op read op://...'. ` +
        `For scripts and CI, ${ENVIRONMENT_VARIABLES.apiKey} needs no profile. See docs/secrets.md.`,
      cause: error,
    });
  }
}

/** The key a replaced profile had, for the message (a locked store or a failing command: unknown, not an error). */
async function existingKey(ctx: Context, existing: Profile): Promise<string | undefined> {
  if (existing.keyStorage === undefined || existing.keyStorage === 'file') return existing.apiKey;
  if (existing.keyStorage === 'command') return undefined;
  try {
    return await readProfileKey(existing, { env: ctx.env, credentials: ctx.credentials });
  } catch (error) {
    if (error instanceof CliError) return undefined;
    throw error;
  }
}

/**
 * The key as the service sees it, with the check `whoami` and `doctor` make (src/api/keyCheck.ts).
 * A refused key, or one that could not be checked, is not stored: the profile keeps its old key.
 */
async function verifyKey(ctx: Context, name: string, baseUrl: string, apiKey: string, oldKey: string | undefined): Promise<void> {
  const api = await ctx.api({ service: { baseUrl, apiKey, profileName: name } });
  const { check, error } = await checkKey(api);
  if (error === undefined) return;
  const kept = oldKey === undefined ? 'nothing was stored' : `profile "${name}" keeps its key ${redactApiKey(oldKey)}`;
  // A base URL that is not the API: storing it unchecked (--no-verify) would only keep a broken profile.
  if (error instanceof NotTheApiError) throw notTheApiWith(error.details ?? {}, `Give --base-url the service's address, ending in ${BASE_PATH}.`, `; ${kept}`);
  const answer = check.status === null ? error.message : `${check.request}: HTTP ${check.status}${check.code ? ` ${check.code}` : ''}`;
  const what = check.result === 'refused' ? `the service refused the key ${redactApiKey(apiKey)} (${answer})` : `the key ${redactApiKey(apiKey)} could not be checked (${answer})`;
  throw new KeyNotStoredError(error.code, error.exitCode, `${what}; ${kept}`, { details: error.details, hint: notStoredHint(error, check.result, baseUrl), cause: error });
}

/**
 * What to do about a key that was not stored, by its cause: an expired key needs a new one (pasting
 * it again cannot help); a refused one, a look at the key; a check that failed, at the address
 * given here (not at `whoami`, which shows the profile in use, maybe another one).
 */
export function notStoredHint(error: CliError, result: KeyCheck['result'], baseUrl: string): string {
  if (error.code === 'EXPIRED_API_KEY') return 'The key has expired: ask the service operator for a new key, then run this command again with it.';
  if (result === 'refused') return 'Check the key (paste it again exactly as the service operator gave it) and the base URL.';
  // A hint sending the user to `whoami` (the settings in use) is replaced: the address at fault is the one given here.
  const pointsAtSettings = error instanceof NetworkError && (error.hint ?? '').includes('taxprep whoami');
  const check = pointsAtSettings ? `Check that ${baseUrl} is the service's address and can be reached (and any HTTPS_PROXY / NO_PROXY settings).` : (error.hint ?? '');
  return `${check} To store the key without checking it, add --no-verify.`.trim();
}

/** Why the key was not stored, with the code and exit code of what the service (or the network) said. */
class KeyNotStoredError extends CliError {
  constructor(
    readonly code: string,
    readonly exitCode: ExitCode,
    message: string,
    options: { details?: Record<string, unknown>; hint?: string; cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The new key redacted, and on replacing one, the old one too (two keys may look alike redacted). */
function describeKeyChange(apiKey: string, oldKey: string | undefined): string {
  if (oldKey === undefined) return redactApiKey(apiKey);
  if (oldKey === apiKey) return `${redactApiKey(apiKey)} (unchanged)`;
  const [was, now] = [redactApiKey(oldKey), redactApiKey(apiKey)];
  return was === now ? `${now} (replacing a different key that also reads ${was})` : `${now} (was ${was})`;
}

/** The key never comes from a flag: a hidden prompt on a terminal, else the first line of stdin. */
async function readKey(ctx: Context, options: AddProfileOptions): Promise<string> {
  const prompt = options.apiKeyFromStdin ? '' : `API key for profile "${options.name}" (input is hidden): `;
  const key = await ctx.readSecret(prompt);
  if (key === '') {
    throw new UsageError('no API key was given', {
      hint: ctx.io.stdinIsTTY ? 'Paste the key at the prompt.' : 'Pipe the key on stdin: printf \'%s\\n\' "$KEY" | taxprep profiles add <name> --api-key-stdin',
    });
  }
  return key;
}
