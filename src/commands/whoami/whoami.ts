import { hasApiKeyShape, redactApiKey } from '../../contract/apiKeys';
import type { Context, ResolvedSettings, SettingSource } from '../../types';
import { baseUrlVersionWarning, ENVIRONMENT_VARIABLES } from '../../config/settings';
import { EXIT } from '../../errors';
import { checkKey, type KeyCheck } from '../../api/keyCheck';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';

export interface WhoamiOptions {
  /** Skip the request that checks the key against the service. */
  offline: boolean;
}

export function parseOptions(raw: RawInvocation): WhoamiOptions {
  return { offline: raw.flags.offline === true };
}

function describeCheck(check: KeyCheck | null): string {
  if (check === null) return 'not checked (--offline)';
  const answer = check.status === null ? 'no answer' : `HTTP ${check.status}${check.code ? ` ${check.code}` : ''}`;
  if (check.result === 'accepted') return `accepted (${check.request}: ${answer}${check.code ? ', the key lacks deliverables:read' : ''})`;
  return `${check.result === 'refused' ? 'refused' : 'not confirmed'} (${check.request}: ${answer})`;
}

/** The `--json` document: each setting with its source, the key only redacted. */
export function whoamiDocument(settings: ResolvedSettings) {
  return {
    profile: settings.profileName,
    profile_source: settings.profileSource ?? null,
    base_url: settings.baseUrl,
    base_url_source: settings.baseUrlSource,
    api_key: settings.apiKey === undefined ? null : redactApiKey(settings.apiKey),
    api_key_source: settings.apiKeySource ?? null,
    /** Where the key lives: `credential store (Secret Service)`, ``command `...` ``, `insecure file <path>`, `environment variable TAXPREP_API_KEY`. */
    api_key_location: settings.apiKeyLocation ?? null,
  };
}

const SOURCE_WORDS: Record<SettingSource, (variable: string, flag: string) => string> = {
  flag: (_variable, flag) => `from ${flag}`,
  environment: (variable) => `from ${variable}`,
  profile: () => 'from the profile',
  default: () => 'the default',
};

export async function run(ctx: Context, options: WhoamiOptions): Promise<number> {
  const settings = await ctx.settings();
  const usableKey = settings.apiKey !== undefined && hasApiKeyShape(settings.apiKey);
  const out = createOutput(ctx);
  const versionWarning = baseUrlVersionWarning(settings.baseUrl);
  if (versionWarning !== undefined) await out.note(versionWarning);
  const checked = usableKey && !options.offline ? await checkKey(await ctx.api()) : undefined;
  const document = { ...whoamiDocument(settings), key_check: checked?.check ?? null };
  if (ctx.globals.json) {
    await out.json(document);
  } else {
    const profileSource =
      settings.profileSource === undefined ? '' : ` (${settings.profileSource === 'default' ? 'the default profile' : SOURCE_WORDS[settings.profileSource](ENVIRONMENT_VARIABLES.profile, '--profile')})`;
    const keySource = settings.apiKeySource === undefined ? '' : ` (${SOURCE_WORDS[settings.apiKeySource](ENVIRONMENT_VARIABLES.apiKey, '--profile')})`;
    await out.card([
      {
        rows: [
          ['Profile', `${settings.profileName ?? 'none'}${profileSource}`],
          ['Base URL', `${settings.baseUrl} (${SOURCE_WORDS[settings.baseUrlSource](ENVIRONMENT_VARIABLES.baseUrl, '--base-url')})`],
          ['API key', document.api_key === null ? (settings.apiKeyProblem === undefined ? 'none' : 'not readable') : `${document.api_key}${keySource}`],
          ['Key in', settings.apiKeyLocation],
          ['Service', usableKey ? describeCheck(document.key_check) : undefined],
        ],
      },
    ]);
  }
  if (settings.apiKeyProblem !== undefined) throw settings.apiKeyProblem;
  if (!usableKey) {
    await out.note(
      settings.apiKey === undefined
        ? `No API key is configured: add a profile with \`taxprep profiles add <name>\` or set ${ENVIRONMENT_VARIABLES.apiKey}.`
        : 'The API key is not well formed; requests that need it will be refused before they are sent.',
    );
    return EXIT.AUTH;
  }
  if (checked?.error !== undefined) throw checked.error;
  return EXIT.OK;
}
