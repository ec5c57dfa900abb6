import type { Context } from '../../types';
import { CliError, UsageError } from '../../errors';
import { readProfileKey } from '../../config/profileKey';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { existingProfile, keyLocation, parseNameArgument, profileView } from './view';

export interface ShowProfileOptions {
  /** Undefined: the default profile. */
  name: string | undefined;
}

export function parseOptions(raw: RawInvocation): ShowProfileOptions {
  return { name: raw.args[0] === undefined ? undefined : parseNameArgument(raw.args[0]) };
}

export async function run(ctx: Context, options: ShowProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const name = options.name ?? store.defaultName();
  if (name === undefined) {
    throw new UsageError('there is no default profile to show', { hint: 'Name one (taxprep profiles show <name>), or add one with: taxprep profiles add <name>' });
  }
  const profile = existingProfile(store, name);
  // The credential store's key is read to show it redacted; a command's is not run just to be shown.
  let apiKey = profile.apiKey;
  let unreadable: string | undefined;
  if (profile.keyStorage === 'credential-store') {
    try {
      apiKey = await readProfileKey(profile, { env: ctx.env, credentials: ctx.credentials });
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      unreadable = error.message;
    }
  }
  const view = profileView(profile, store.defaultName(), keyLocation(ctx, store, profile), apiKey);
  const out = createOutput(ctx);
  if (ctx.globals.json) {
    await out.json(view);
  } else {
    await out.card([
      {
        rows: [
          ['Profile', view.name],
          ['Base URL', view.base_url],
          ['API key', view.api_key ?? (unreadable === undefined ? 'read from the command when a command needs it' : `not readable: ${unreadable}`)],
          ['Key in', view.api_key_location],
          ['Default', view.default ? 'yes' : 'no'],
          ['Query names', view.query_parameters === undefined ? undefined : Object.entries(view.query_parameters).map(([setting, name]) => `${setting}=${name}`).join(', ')],
          ['Stored in', store.path],
        ],
      },
    ]);
  }
  return 0;
}
