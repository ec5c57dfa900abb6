import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hasApiKeyShape, redactApiKey } from '../../contract/apiKeys';
import { BASE_PATH } from '../../contract/version';
import { describeKeySource, ENVIRONMENT_VARIABLES } from '../../config/settings';
import { EXIT } from '../../errors';
import { appDirectory } from '../../lib/paths';
import type { Profile, ResolvedSettings } from '../../types';
import { defaultLedgerPath } from '../../batch/ledgers/loginLinks';
import { fail, ok, warn, type Check } from './checks';
import { isLoopback, proxyInEffect } from './proxy';

type Env = Record<string, string | undefined>;

/** What the base URL says before anything is sent: scheme, version segment, proxy. */
export function baseUrlChecks(settings: ResolvedSettings, env: Env): Check[] {
  const url = new URL(settings.baseUrl);
  const checks: Check[] = [];
  if (url.protocol === 'https:') checks.push(ok('base_url', 'scheme', 'https'));
  else if (isLoopback(url.hostname)) checks.push(ok('base_url', 'scheme', `http, on this machine (${url.hostname})`));
  else {
    checks.push(
      fail('base_url', 'scheme', `plain http to ${url.hostname}: the key would cross the network unencrypted, so doctor does not send it`, `Use the service's https:// address (taxprep profiles add <name> --base-url https://${url.host}${url.pathname}).`, EXIT.USAGE),
    );
  }
  if (url.pathname.replace(/\/+$/, '').endsWith(BASE_PATH)) checks.push(ok('base_url', 'version segment', `the path ends in ${BASE_PATH}`));
  else checks.push(warn('base_url', 'version segment', `the path ${url.pathname} does not end in ${BASE_PATH}, the service's version segment`, `Add ${BASE_PATH}: taxprep profiles add <name> --base-url ${url.origin}${url.pathname.replace(/\/+$/, '')}${BASE_PATH}`));
  const proxy = proxyInEffect(settings.baseUrl, env);
  checks.push(ok('base_url', 'proxy', proxy.proxy === undefined ? `none: a direct connection (${proxy.because})` : `through ${proxy.proxy} (from ${proxy.because})`));
  return checks;
}

/** The key as configured: present and shaped like a key (the service is asked later). */
export function keyConfigured(settings: ResolvedSettings): Check {
  if (settings.apiKeyProblem !== undefined) return fail('key', 'configured', settings.apiKeyProblem.message, settings.apiKeyProblem.hint ?? '', EXIT.AUTH);
  if (settings.apiKey === undefined) {
    return fail('key', 'configured', 'no API key is configured', `Add a profile with \`taxprep profiles add <name>\` (the key is read from a prompt or stdin), or set ${ENVIRONMENT_VARIABLES.apiKey}.`, EXIT.AUTH);
  }
  if (!hasApiKeyShape(settings.apiKey)) {
    return fail('key', 'configured', `the key from ${describeKeySource(settings)} is not well formed (<prefix>_<random>)`, 'Store the key exactly as the service operator gave it: taxprep profiles add <name>', EXIT.AUTH);
  }
  return ok('key', 'configured', `${redactApiKey(settings.apiKey)} (from ${describeKeySource(settings)}${settings.apiKeyLocation === undefined ? '' : `, in ${settings.apiKeyLocation}`})`);
}

/**
 * Profiles from before the credential store, whose key is in plain text in the profile file: each a
 * warning naming the command that moves it. A key put there with --insecure-storage was a choice.
 */
export function plainTextKeyChecks(profiles: Profile[], path: string): Check[] {
  return profiles
    .filter((profile) => profile.keyStorage === undefined)
    .map((profile) =>
      warn('local', `key of profile "${profile.name}"`, `in plain text in ${path}`, `Move it into the credential store: taxprep profiles secure ${profile.name} (or keep it there on purpose: taxprep profiles add ${profile.name} --insecure-storage).`),
    );
}

/** The profile file holds keys: it must be the user's alone. */
export function profileFileCheck(path: string, settings: ResolvedSettings): Check {
  if (!existsSync(path)) return ok('local', 'profile file', `none yet (${path}); the key comes from ${describeKeySource(settings)}`);
  if (process.platform === 'win32') return ok('local', 'profile file', `${path} (permissions are the folder's on Windows)`);
  const mode = statSync(path).mode & 0o777;
  const shown = `0${mode.toString(8)}`;
  if ((mode & 0o077) !== 0) {
    return fail('local', 'profile file', `${path} has mode ${shown}: other users can read the keys in it`, `chmod 600 '${path}'`, EXIT.USAGE);
  }
  return ok('local', 'profile file', `${path}, mode ${shown}`);
}

/** The nearest directory of `path` that exists, and whether this user may create or change files in it. */
function writable(path: string): { at: string; writable: boolean } {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK | constants.X_OK);
    return { at, writable: true };
  } catch {
    return { at, writable: false };
  }
}

/** The ledger's directory (the ledger and its lock) must be writable for `login-link`. */
export function ledgerDirectoryCheck(env: Env): Check {
  const directory = dirname(defaultLedgerPath(env));
  const place = writable(directory);
  if (place.writable) return ok('local', 'ledger directory', place.at === directory ? `${directory}, writable` : `${directory}, not made yet; ${place.at} is writable`);
  return fail('local', 'ledger directory', `${place.at} is not writable: login-link cannot keep its ledger (${directory})`, `Make it writable (chmod u+w '${place.at}'), or set XDG_DATA_HOME to a writable directory, or give login-link --ledger PATH.`, EXIT.USAGE);
}

/** The compiled-code cache only makes start-up faster: a problem with it is a warning. */
export function codeCacheCheck(env: Env): Check {
  if (env.NODE_DISABLE_COMPILE_CACHE) return ok('local', 'code cache', 'off (NODE_DISABLE_COMPILE_CACHE is set): each command compiles afresh');
  const directory = join(appDirectory('cache', env), 'compiled');
  const place = writable(directory);
  if (!place.writable) {
    return warn('local', 'code cache', `${place.at} is not writable: every command compiles afresh, which slows start-up`, `Make it writable (chmod u+w '${place.at}'), or set XDG_CACHE_HOME to a writable directory.`);
  }
  const builds = existsSync(directory) ? readdirSync(directory).length : 0;
  return ok('local', 'code cache', `${directory}, writable${builds > 0 ? ` (${builds} build${builds === 1 ? '' : 's'} cached)` : ', empty'}`);
}
