import { randomUUID } from 'node:crypto';
import { loadAgent, loadConnector } from '../../api/undici';
import { EXIT } from '../../errors';
import { attemptDelivery } from '../../hooks/attempt';
import { PING_EVENT } from '../../hooks/events';
import { bodyOf } from '../../hooks/queue';
import { findHook, liveSecrets, targetOf } from '../../hooks/store';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookIdArgument, scopedHooks } from './view';

export function parseOptions(raw: RawInvocation): { id: string } {
  return { id: hookIdArgument(raw.args[0]) };
}

/** `taxprep hooks test`: one signed `taxprep.ping`, sent now and not queued; exit 0 when delivered, 7 when not. */
export async function run(ctx: Context, options: { id: string }): Promise<number> {
  const { scope, hooks } = await scopedHooks(ctx);
  const hook = findHook(hooks, scope, options.id);
  const now = ctx.clock.now();
  const seenAt = now.toISOString();
  const event = { type: 'event' as const, id: `msg_${randomUUID().replace(/-/g, '')}`, event: PING_EVENT, hooks: [hook.id], seen_at: seenAt, at: seenAt };
  const [Agent, connect] = await Promise.all([loadAgent(), ctx.trust().then((trust) => loadConnector(trust))]);
  const agent = new Agent({ connect });
  try {
    const outcome = await attemptDelivery(hook, event, bodyOf(PING_EVENT, seenAt, { hook: hook.id }), liveSecrets(hook, now), now, () => Promise.resolve(agent));
    const out = createOutput(ctx);
    const delivered = outcome.kind === 'delivered';
    if (ctx.globals.json) await out.json({ hook: hook.id, webhook_id: event.id, delivered, detail: outcome.detail });
    else await out.note(`${delivered ? 'Delivered' : 'Not delivered'}: ${PING_EVENT} ${event.id} to ${targetOf(hook)} (${outcome.detail}).`);
    return delivered ? EXIT.OK : EXIT.NETWORK;
  } finally {
    await agent.close();
  }
}
