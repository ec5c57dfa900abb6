import { redactApiKey } from '../../contract/apiKeys';
import type { Context } from '../../types';
import { baseUrlVersionWarning, checkBaseUrl, checkNewApiKey, DEFAULT_BASE_URL } from '../../config/settings';
import { UsageError } from '../../errors';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { parseNameArgument, profileView } from './view';

export interface AddProfileOptions {
  name: string;
  baseUrl: string | undefined;
  apiKeyFromStdin: boolean;
  makeDefault: boolean;
}

export function parseOptions(raw: RawInvocation): AddProfileOptions {
  const baseUrl = typeof raw.flags.baseUrl === 'string' ? checkBaseUrl(raw.flags.baseUrl, '--base-url') : undefined;
  return {
    name: parseNameArgument(raw.args[0]),
    baseUrl,
    apiKeyFromStdin: raw.flags.apiKeyStdin === true,
    makeDefault: raw.flags.default === true,
  };
}

export async function run(ctx: Context, options: AddProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const existing = store.get(options.name);
  const apiKey = checkNewApiKey(await readKey(ctx, options));
  const baseUrl = options.baseUrl ?? existing?.baseUrl ?? DEFAULT_BASE_URL;
  // Replacing the key or address keeps the profile's other settings (max_response_size, query_parameters).
  await store.save({ ...existing, name: options.name, baseUrl, apiKey });
  if (options.makeDefault) await store.setDefault(options.name);

  const out = createOutput(ctx);
  const versionWarning = baseUrlVersionWarning(baseUrl);
  if (versionWarning !== undefined) await out.note(versionWarning);
  const view = profileView({ name: options.name, baseUrl, apiKey }, store.defaultName());
  if (ctx.globals.json) {
    await out.json(view);
  } else {
    await out.note(
      `${existing ? 'Replaced' : 'Added'} profile "${view.name}": ${view.base_url}, key ${redactApiKey(apiKey)}` +
        `${view.default ? ' (the default profile)' : ''}. Stored in ${store.path}.`,
    );
    if (options.baseUrl === undefined && existing === undefined) {
      await out.note(`The base URL is the local mock's; give --base-url for the service.`);
    }
  }
  return 0;
}

/** The key never comes from a flag: a hidden prompt on a terminal, else the first line of stdin. */
async function readKey(ctx: Context, options: AddProfileOptions): Promise<string> {
  const prompt = options.apiKeyFromStdin ? '' : `API key for profile "${options.name}": `;
  const key = await ctx.readSecret(prompt);
  if (key === '') {
    throw new UsageError('no API key was given', {
      hint: ctx.io.stdinIsTTY ? 'Paste the key at the prompt.' : 'Pipe the key on stdin: printf \'%s\\n\' "$KEY" | taxprep profiles add <name> --api-key-stdin',
    });
  }
  return key;
}
