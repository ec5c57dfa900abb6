import { StateStoreError, UsageError } from '../../errors';
import { hookTroubles } from '../../hooks/attention';
import type { Context } from '../../types';
import { warn, type Check } from './checks';

/** The profile's hooks: a disabled or failing one is a warning naming it; a damaged hooks file too. None: no line. */
export async function hookChecks(ctx: Context): Promise<Check[]> {
  let troubles;
  try {
    troubles = await hookTroubles(ctx);
  } catch (error) {
    // Damaged hooks, or a shared store out of reach (its own checks say more): a warning, not the end of doctor.
    if (error instanceof UsageError || error instanceof StateStoreError) return [warn('local', 'hooks', error.message, error.hint)];
    throw error;
  }
  return troubles.map((trouble) => warn('local', 'hooks', `${trouble.hook} (${trouble.target}) is ${trouble.problem}`, `taxprep hooks show ${trouble.hook}; taxprep hooks enable ${trouble.hook} and taxprep hooks recover ${trouble.hook} --since <time> once the receiver is back`));
}
