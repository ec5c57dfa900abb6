import { UsageError } from '../../errors';
import { hookTroubles } from '../../hooks/attention';
import type { Context, ResolvedSettings } from '../../types';
import { warn, type Check } from './checks';

/** The profile's hooks: a disabled or failing one is a warning naming it; a damaged hooks file too. None: no line. */
export async function hookChecks(ctx: Pick<Context, 'env' | 'clock'>, settings: ResolvedSettings): Promise<Check[]> {
  let troubles;
  try {
    troubles = await hookTroubles(ctx, { profile: settings.profileName, baseUrl: settings.baseUrl });
  } catch (error) {
    if (error instanceof UsageError) return [warn('local', 'hooks', error.message, error.hint)];
    throw error;
  }
  return troubles.map((trouble) => warn('local', 'hooks', `${trouble.hook} (${trouble.target}) is ${trouble.problem}`, `taxprep hooks show ${trouble.hook}; taxprep hooks enable ${trouble.hook} and taxprep hooks recover ${trouble.hook} --since <time> once the receiver is back`));
}
