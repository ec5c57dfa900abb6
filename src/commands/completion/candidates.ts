import type { Context } from '../../types';
import { UsageError } from '../../errors';
import type { RawInvocation } from '../types';

export interface CandidatesOptions {
  kind: 'profiles';
}

export function parseOptions(raw: RawInvocation): CandidatesOptions {
  if (raw.args[0] !== 'profiles') throw new UsageError('__complete knows one kind: profiles');
  return { kind: 'profiles' };
}

/**
 * Stored profile names, one a line: names only, never a key. A missing or damaged profile file
 * lists nothing: a Tab press is no place for an error message.
 */
export async function run(ctx: Context): Promise<number> {
  let names: string[] = [];
  try {
    names = (await ctx.profiles()).list().map((profile) => profile.name);
  } catch {
    names = [];
  }
  ctx.io.stdout.write(names.map((name) => `${name}\n`).join(''));
  return 0;
}
