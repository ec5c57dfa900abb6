import { UsageError } from '../../errors';
import { liveSecrets, findHook } from '../../hooks/store';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { hookIdArgument, hookView, scopedHooks, secretsLocation } from './view';

export interface ShowHookOptions {
  id: string;
  secret: boolean;
}

export function parseOptions(raw: RawInvocation): ShowHookOptions {
  return { id: hookIdArgument(raw.args[0]), secret: raw.flags.secret === true };
}

/** `taxprep hooks show`: a hook, redacted; `--secret` prints only its secret(s), one a line, for a pipe. */
export async function run(ctx: Context, options: ShowHookOptions): Promise<number> {
  const place = await scopedHooks(ctx);
  const { scope, hooks } = place;
  const hook = findHook(hooks, scope, options.id);
  const now = ctx.clock.now();
  const out = createOutput(ctx);
  if (options.secret) {
    if (ctx.globals.json) throw new UsageError('hooks show --secret prints the secret alone; it takes no --json', { details: { '--secret': ['not with --json'] } });
    ctx.io.stdout.write(`${liveSecrets(hook, now).join('\n')}\n`);
    return 0;
  }
  const view = { ...hookView(hook, now), secrets_location: secretsLocation(ctx, hook, place) };
  if (ctx.globals.json) {
    await out.json(view);
    return 0;
  }
  await out.card([
    {
      rows: [
        ['Hook', view.id],
        [view.url === undefined ? 'Command' : 'URL', view.url ?? view.exec],
        ['State', view.enabled ? 'enabled' : `disabled: ${view.disabled_reason ?? 'by hooks disable'}`],
        ['Events', view.events.join(', ')],
        ['Format', view.format],
        ['Headers', view.headers.length === 0 ? undefined : view.headers.join(', ')],
        ['Retries', view.retry_schedule.join(', ') || 'none'],
        ['Timeout', view.timeout],
        ['Rate', view.rate ?? undefined],
        ['Ordered', view.ordered ? 'yes' : 'no'],
        ['Disable after', view.disable_after],
        ['Secrets', view.secrets.map((secret) => (secret.expires_at === null ? secret.secret : `${secret.secret} (until ${secret.expires_at})`)).join(', ')],
        ['Secrets in', view.secrets_location],
        ['Created', view.created_at],
      ],
    },
  ]);
  return 0;
}
