import { UsageError } from '../../errors';
import { formatDuration, parseDuration, durationRule } from '../../lib/duration';
import { redactSecret } from '../../hooks/sign';
import { hooksPlaceOf, type HooksPlace } from '../../hooks/place';
import { findHook, inScope, targetOf, type Hook } from '../../hooks/store';
import type { Context } from '../../types';

/** The hooks of the command's scope (see `hooksPlaceOf`), with where they are kept and the outbox. */
export async function scopedHooks(ctx: Context): Promise<HooksPlace & { hooks: Hook[] }> {
  const place = await hooksPlaceOf(ctx);
  return { ...place, hooks: (await place.store.read()).filter((hook) => inScope(hook, place.scope)) };
}

/** A hook as every output shows it: headers' values and secrets redacted. */
export function hookView(hook: Hook, now: Date) {
  const target: { url?: string; exec?: string } = hook.url === undefined ? { exec: hook.exec } : { url: hook.url };
  return {
    id: hook.id,
    ...target,
    events: hook.events,
    format: hook.format,
    headers: hook.headers.map(([name, value]) => `${name}: ${redactHeaderValue(value)}`),
    retry_schedule: hook.retry_schedule_ms.map(formatDuration),
    timeout: formatDuration(hook.timeout_ms),
    rate: hook.rate === null ? null : `${hook.rate.requests}/${formatDuration(hook.rate.window_ms)}`,
    ordered: hook.ordered,
    allow_http: hook.allow_http,
    disable_after: formatDuration(hook.disable_after_ms),
    enabled: hook.enabled,
    disabled_reason: hook.disabled_reason,
    secrets: hook.secrets.filter((secret) => secret.expires_at === null || Date.parse(secret.expires_at) > now.getTime()).map((secret) => ({ secret: redactSecret(secret.secret), expires_at: secret.expires_at })),
    profile: hook.profile,
    base_url: hook.base_url,
    created_at: hook.created_at,
  };
}

export function redactHeaderValue(value: string): string {
  return value.length <= 4 ? '…' : `…${value.slice(-4)}`;
}

export function describeTarget(hook: Hook): string {
  return targetOf(hook);
}

export function hookIdArgument(value: unknown): string {
  const id = String(value);
  if (!/^hk_[a-z0-9]+$/.test(id)) {
    throw new UsageError(`unknown hook ${id}: a hook id is hk_ followed by letters and digits`, { details: { hook: ['must be a hook id such as hk_1a2b3c4d5e6f'] }, hint: 'List them with: taxprep hooks list' });
  }
  return id;
}

/** `--since`: an ISO date or time, or a duration ago (`2h`, `7d`). Milliseconds since the epoch. */
export function parseSince(text: string, now: Date): number {
  const ago = parseDuration(text);
  if (ago !== undefined) return now.getTime() - ago;
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at)) {
    const rule = `must be an ISO date or time (2026-11-25, 2026-11-25T10:00:00Z) or ${durationRule()} ago`;
    throw new UsageError(`--since ${rule}`, { details: { '--since': [rule] } });
  }
  return at;
}

/** Changes one hook of this scope in its store (the hooks file under its lock); an unknown id changes nothing (exit 2). */
export async function editHook(ctx: Context, id: string, change: (hook: Hook, hooks: Hook[]) => void): Promise<Hook> {
  const { scope, store } = await hooksPlaceOf(ctx);
  return store.update(ctx.clock, (hooks) => {
    const hook = findHook(hooks, scope, id);
    change(hook, hooks);
    return hook;
  });
}
