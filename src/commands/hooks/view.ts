import { withLedger } from '../../batch/ledger';
import { OUTBOX, Outbox, defaultOutboxPath, readOutbox, type OutboxView } from '../../batch/ledgers/outbox';
import { InterruptedError, LedgerLockedError, UsageError } from '../../errors';
import { applyRequests, describeWatch, requestWaiting, removeRequest, runningWatch, submitRequest, type HooksRequest } from '../../hooks/requests';
import type { LockOwner } from '../../lib/fileLock';
import { formatDuration, parseDuration, durationRule } from '../../lib/duration';
import { redactSecret } from '../../hooks/sign';
import { defaultHooksPath, findHook, inScope, readHooks, secretsOf, targetOf, updateHooks, withStoredSecrets, type Hook, type Scope } from '../../hooks/store';
import type { Context } from '../../types';

/** The profile and base URL a hooks command works in, and where the hooks file is. */
export async function hooksScope(ctx: Context): Promise<{ scope: Scope; hooksPath: string }> {
  const settings = await ctx.settings();
  return { scope: { profile: settings.profileName, baseUrl: settings.baseUrl }, hooksPath: defaultHooksPath(ctx.env) };
}

export async function scopedHooks(ctx: Context): Promise<{ scope: Scope; hooksPath: string; hooks: Hook[] }> {
  const { scope, hooksPath } = await hooksScope(ctx);
  const hooks = (await readHooks(hooksPath)).filter((hook) => inScope(hook, scope));
  return { scope, hooksPath, hooks: await withStoredSecrets(hooks, ctx.credentials()) };
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
    secrets: secretsOf(hook).filter((secret) => secret.expires_at === null || Date.parse(secret.expires_at) > now.getTime()).map((secret) => ({ secret: redactSecret(secret.secret), expires_at: secret.expires_at })),
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

/** Changes one hook of this scope under the hooks file's lock; an unknown id changes nothing (exit 2). */
export async function editHook(ctx: Context, id: string, change: (hook: Hook, hooks: Hook[]) => void): Promise<Hook> {
  const { scope, hooksPath } = await hooksScope(ctx);
  return updateHooks(hooksPath, ctx.clock, (hooks) => {
    const hook = findHook(hooks, scope, id);
    change(hook, hooks);
    return hook;
  });
}

/**
 * Runs `work` with this scope's outbox locked and open, after applying the requests handed in
 * for a watch that stopped before it took them. A running watch or another hooks command holds it
 * (exit 10): `markDue` and `hooks deliver` look for a running watch first.
 */
export async function withOutbox<T>(ctx: Context, scope: Scope, work: (outbox: Outbox) => Promise<T>): Promise<T> {
  const open = async (path: string) => {
    const outbox = await Outbox.open(path);
    try {
      await applyRequests(outbox, ctx.clock.now());
    } catch (error) {
      await outbox.close();
      throw error;
    }
    return outbox;
  };
  return withLedger(outboxPathOf(ctx, scope), OUTBOX, { waitMs: 2_000, clock: ctx.clock, open }, work);
}

export function outboxPathOf(ctx: Context, scope: Scope): string {
  return defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl);
}

/**
 * Makes deliveries due again, chosen by `choose` from the outbox as it stands (it may throw: then
 * nothing changed): handed to the running watch, which sends them at once, or applied here when
 * no watch runs. Returns how many, and the watch that took them.
 */
export async function markDue(ctx: Context, scope: Scope, choose: (outbox: OutboxView) => HooksRequest['marks']): Promise<{ count: number; watch: LockOwner | undefined }> {
  const marks = choose(await readOutbox(outboxPathOf(ctx, scope)));
  const watch = await handOver(ctx, scope, { marks, retry_waiting: false });
  return { count: marks.length, watch };
}

/** Who sends what a command made due: the running watch that took it, or the next run. */
export function whoSends(watch: LockOwner | undefined, them: string): string {
  return watch === undefined ? `taxprep hooks deliver (or the next watch) sends ${them}` : `${describeWatch(watch)} and sends ${them} now`;
}

/** How often a command handing a request to a watch looks whether it was taken. */
const HAND_OVER_POLL_MS = 50;

/**
 * Writes `request` into the outbox's inbox and sees it applied: by the running watch (returned),
 * or, when none runs (or it stops before it takes it), by opening the outbox here. Refused (the
 * outbox held by another hooks command), the request is withdrawn: nothing changed.
 */
export async function handOver(ctx: Context, scope: Scope, request: HooksRequest): Promise<LockOwner | undefined> {
  const path = outboxPathOf(ctx, scope);
  const id = await submitRequest(path, request, ctx.clock.now());
  const interrupted = ctx.interrupted();
  for (;;) {
    const watch = await runningWatch(path);
    if (watch === undefined) {
      try {
        await withOutbox(ctx, scope, async () => undefined);
        return undefined;
      } catch (error) {
        if (error instanceof LedgerLockedError && (await runningWatch(path)) !== undefined) continue;
        await removeRequest(path, id);
        throw error;
      }
    }
    if (!(await requestWaiting(path, id))) return watch;
    try {
      await ctx.clock.sleep(HAND_OVER_POLL_MS, interrupted);
    } catch {
      // Not taken back: the watch may be applying it right now. It stays, and is applied.
      throw new InterruptedError(`interrupted: ${describeWatch(watch)} and has not taken the request yet; it stays in the outbox's inbox, and the watch (or the next run to open the outbox) applies it`);
    }
  }
}

/** Where a hook's secrets live, in words. */
export function secretsLocation(ctx: Context, hook: Hook, hooksPath: string): string {
  return hook.secrets_in === undefined ? `insecure file ${hooksPath}` : ctx.credentials().label;
}
