import { readOutbox } from '../batch/ledgers/outbox';
import { StateStoreError } from '../errors';
import { formatDuration } from '../lib/duration';
import type { Context } from '../types';
import { hooksPlaceOf } from './place';
import { inScope, targetOf } from './store';

export interface HookTrouble {
  hook: string;
  target: string;
  problem: string;
}

/**
 * The hooks of this profile and base URL that need a person, for `status` and `doctor`: disabled
 * ones (a 410, --disable-after, hooks disable), and enabled ones with failed deliveries or whose
 * deliveries fail now. Reads the hooks and the outbox (files, or the shared store); asks the
 * service nothing.
 */
export async function hookTroubles(ctx: Context): Promise<HookTrouble[]> {
  const { scope, store, outboxLines } = await hooksPlaceOf(ctx);
  let hooks;
  try {
    hooks = (await store.read()).filter((hook) => inScope(hook, scope));
  } catch (error) {
    // A role not granted the shared store's hooks (which hold their secrets: docs/team.md) has none to look after.
    if (error instanceof StateStoreError && error.details?.sqlstate_or_errno === '42501') return [];
    throw error;
  }
  if (hooks.length === 0) return [];
  const outbox = await readOutbox(outboxLines);
  const failed = new Map<string, number>();
  for (const delivery of outbox.all()) if (delivery.status === 'failed') failed.set(delivery.hook, (failed.get(delivery.hook) ?? 0) + 1);
  const now = ctx.clock.now().getTime();
  return hooks.flatMap((hook): HookTrouble[] => {
    const base = { hook: hook.id, target: targetOf(hook) };
    if (!hook.enabled) return [{ ...base, problem: `disabled (${hook.disabled_reason ?? 'by hooks disable'})` }];
    const count = failed.get(hook.id) ?? 0;
    const since = outbox.failingSinceMs(hook.id);
    const problems = [
      ...(since === undefined ? [] : [`every delivery has failed for ${formatDuration(now - since)}`]),
      ...(count === 0 ? [] : [`${count} failed deliver${count === 1 ? 'y' : 'ies'} (taxprep hooks deliveries --status failed)`]),
    ];
    return problems.length === 0 ? [] : [{ ...base, problem: problems.join('; ') }];
  });
}
