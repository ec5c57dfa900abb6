import type { Context } from '../../types';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { existingProfile, keyLocation, parseNameArgument, profileView } from './view';

export interface UseProfileOptions {
  name: string;
}

export function parseOptions(raw: RawInvocation): UseProfileOptions {
  return { name: parseNameArgument(raw.args[0]) };
}

export async function run(ctx: Context, options: UseProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const profile = existingProfile(store, options.name);
  await store.setDefault(profile.name);
  const out = createOutput(ctx);
  if (ctx.globals.json) await out.json(profileView(profile, profile.name, keyLocation(ctx, store, profile)));
  else await out.note(`Profile "${profile.name}" is now the default (${profile.baseUrl}).`);
  return 0;
}
