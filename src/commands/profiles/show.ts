import type { Context } from '../../types';
import { UsageError } from '../../errors';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { existingProfile, parseNameArgument, profileView } from './view';

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
  const view = profileView(existingProfile(store, name), store.defaultName());
  const out = createOutput(ctx);
  if (ctx.globals.json) {
    await out.json(view);
  } else {
    await out.card([
      {
        rows: [
          ['Profile', view.name],
          ['Base URL', view.base_url],
          ['API key', view.api_key],
          ['Default', view.default ? 'yes' : 'no'],
          ['Query names', view.query_parameters === undefined ? undefined : Object.entries(view.query_parameters).map(([setting, name]) => `${setting}=${name}`).join(', ')],
          ['Stored in', store.path],
        ],
      },
    ]);
  }
  return 0;
}
