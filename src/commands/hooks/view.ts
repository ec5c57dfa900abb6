import { withLedger } from '../../batch/ledger';
import { OUTBOX, Outbox, defaultOutboxPath } from '../../batch/ledgers/outbox';
import { UsageError } from '../../errors';
import { formatDuration, parseDuration, durationRule } from '../../lib/duration';
import { redactSecret } from '../../hooks/sign';
import { defaultHooksPath, findHook, hooksFile, inScope, targetOf, type Hook, type HooksStore, type Scope } from '../../hooks/store';
import type { Context } from '../../types';

/** The profile and base URL a hooks command works in, and where the hooks are kept. */
export async function hooksScope(ctx: Context): Promise<{ scope: Scope; store: HooksStore }> {
  const settings = await ctx.settings();
  return { scope: { profile: settings.profileName, baseUrl: settings.baseUrl }, store: hooksFile(defaultHooksPath(ctx.env)) };
}

export async function scopedHooks(ctx: Context): Promise<{ scope: Scope; store: HooksStore; hooks: Hook[] }> {
  const { scope, store } = await hooksScope(ctx);
  return { scope, store, hooks: (await store.read()).filter((hook) => inScope(hook, scope)) };
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
  const { scope, store } = await hooksScope(ctx);
  return store.update(ctx.clock, (hooks) => {
    const hook = findHook(hooks, scope, id);
    change(hook, hooks);
    return hook;
  });
}

/** Runs `work` with this scope's outbox locked and open: a running watch holds it (exit 10). */
export async function withOutbox<T>(ctx: Context, scope: Scope, work: (outbox: Outbox) => Promise<T>): Promise<T> {
  return withLedger(defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl), OUTBOX, { waitMs: 2_000, clock: ctx.clock, open: Outbox.open }, work);
}
