import { readOutbox, type OutboxView } from '../../batch/ledgers/outbox';
import { InterruptedError, LedgerLockedError, UsageError } from '../../errors';
import { describeWatch, type HooksRequest, type RunningWatch } from '../../hooks/requests';
import { formatDuration, parseDuration, durationRule } from '../../lib/duration';
import { redactSecret } from '../../hooks/sign';
import { hooksPlaceOf, type HooksPlace } from '../../hooks/place';
import { findHook, inScope, secretsOf, targetOf, withStoredSecrets, type Hook } from '../../hooks/store';
import type { Context } from '../../types';

/** The hooks of the command's scope (see `hooksPlaceOf`), with where they are kept and the outbox; their secrets not read. */
export async function placedHooks(ctx: Context): Promise<HooksPlace & { hooks: Hook[] }> {
  const place = await hooksPlaceOf(ctx);
  return { ...place, hooks: (await place.store.read()).filter((hook) => inScope(hook, place.scope)) };
}

/** `placedHooks` with their secrets read: from the credential store where a hook keeps them there. */
export async function scopedHooks(ctx: Context): Promise<HooksPlace & { hooks: Hook[] }> {
  const placed = await placedHooks(ctx);
  return { ...placed, hooks: await withStoredSecrets(placed.hooks, ctx.credentials()) };
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

/** Changes one hook of this scope in its store (the hooks file under its lock); an unknown id changes nothing (exit 2). */
export async function editHook(ctx: Context, id: string, change: (hook: Hook, hooks: Hook[]) => void): Promise<Hook> {
  const { scope, store } = await hooksPlaceOf(ctx);
  return store.update(ctx.clock, (hooks) => {
    const hook = findHook(hooks, scope, id);
    change(hook, hooks);
    return hook;
  });
}

/**
 * Makes deliveries due again, chosen by `choose` from the outbox as it stands (it may throw: then
 * nothing changed): handed to the running watch, on this machine or, in a shared store, on any
 * machine of the team, which sends them at once; or applied here when no watch runs. Returns how
 * many, and the watch that took them.
 */
export async function markDue(ctx: Context, place: HooksPlace, choose: (outbox: OutboxView) => HooksRequest['marks']): Promise<{ count: number; watch: RunningWatch | undefined }> {
  const marks = choose(await readOutbox(place.outboxLines));
  const watch = await handOver(ctx, place, { marks, retry_waiting: false });
  return { count: marks.length, watch };
}

/** Who sends what a command made due: the running watch that took it, or the next run. */
export function whoSends(watch: RunningWatch | undefined, them: string): string {
  return watch === undefined ? `taxprep hooks deliver (or the next watch) sends ${them}` : `${describeWatch(watch)} and sends ${them} now`;
}

/** How often a command handing a request to a watch looks whether it was taken. */
const HAND_OVER_POLL_MS = 50;

/**
 * Puts `request` in the outbox's inbox and sees it applied: by the running watch (returned), or,
 * when none runs (or it stops before it takes it), by opening the outbox here. Refused (the
 * outbox held by another hooks command), the request is taken back: nothing changed (unless that
 * holder took it first: then it is applied, and the next run sends it).
 */
export async function handOver(ctx: Context, place: HooksPlace, request: HooksRequest): Promise<RunningWatch | undefined> {
  const { inbox } = place;
  const id = await inbox.submit(request, ctx.clock.now());
  const interrupted = ctx.interrupted();
  for (;;) {
    const watch = await inbox.runningWatch();
    if (watch === undefined) {
      try {
        await place.withOutbox(async () => undefined);
        return undefined;
      } catch (error) {
        if (error instanceof LedgerLockedError && (await inbox.runningWatch()) !== undefined) continue;
        if (await inbox.withdraw(id)) throw error;
        return undefined;
      }
    }
    if (!(await inbox.waiting(id))) return watch;
    try {
      await ctx.clock.sleep(HAND_OVER_POLL_MS, interrupted);
    } catch {
      // Not taken back: the watch may be applying it right now. It stays, and is applied.
      throw new InterruptedError(`interrupted: ${describeWatch(watch)} and has not taken the request yet; it stays in the outbox's inbox, and the watch (or the next run to open the outbox) applies it`);
    }
  }
}

/** Where a hook's secrets live, in words. */
export function secretsLocation(ctx: Context, hook: Hook, place: Pick<HooksPlace, 'where'>): string {
  return hook.secrets_in === undefined ? place.where : ctx.credentials().label;
}
