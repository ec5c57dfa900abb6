import type { Context } from '../../types';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';
import { existingProfile, parseNameArgument, profileView } from './view';

export interface RemoveProfileOptions {
  name: string;
}

export function parseOptions(raw: RawInvocation): RemoveProfileOptions {
  return { name: parseNameArgument(raw.args[0]) };
}

export async function run(ctx: Context, options: RemoveProfileOptions): Promise<number> {
  const store = await ctx.profiles();
  const profile = existingProfile(store, options.name);
  const wasDefault = store.defaultName() === profile.name;
  await store.remove(profile.name);
  const out = createOutput(ctx);
  if (ctx.globals.json) {
    await out.json({ removed: profileView(profile, wasDefault ? profile.name : undefined) });
  } else {
    await out.note(`Removed profile "${profile.name}" and its key.`);
    if (wasDefault) await out.note('There is no default profile now; choose one with: taxprep profiles use <name>');
  }
  return 0;
}
