import type { Dispatcher } from 'undici';
import { loadAgent, loadConnector } from '../api/undici';
import type { Trust } from '../api/trust';
import type { Delivery, Outbox } from '../batch/ledgers/outbox';
import { WindowLimiter } from '../batch/pacer';
import { crashPoint } from '../lib/crashPoints';
import { formatDuration } from '../lib/duration';
import type { Clock } from '../types';
import { attemptDelivery, type AttemptOutcome } from './attempt';
import { inScope, liveSecrets, targetOf, withStoredSecrets, type Hook, type HooksStore, type Scope } from './store';
import type { CredentialStore } from '../config/credentialStore';

/** Deliveries in flight at once, over all hooks. */
export const DELIVERY_CONCURRENCY = 8;

export interface DelivererOptions {
  outbox: Outbox;
  hooks: HooksStore;
  scope: Scope;
  clock: Clock;
  /** A notice for the person (stderr): a hook disabled, a delivery given up. */
  note: (message: string) => Promise<void>;
  /** Where hooks keep secrets outside the file (read at every sweep: a rotation elsewhere shows at once). */
  credentials: CredentialStore;
  concurrency?: number;
  /** The certificate authorities an https receiver's certificate may come from. */
  trust: Trust;
  /**
   * Claims an attempt before it is sent, when several machines share the outbox (a shared store:
   * src/state/sharedOutbox.ts); throws when this machine may no longer send. Absent for the outbox
   * file, whose lock makes its holder the only sender.
   */
  claim?: (delivery: Delivery, attempt: number) => Promise<void>;
}

export interface SweepResult {
  delivered: number;
  retried: number;
  failed: number;
  /** When the next pending delivery of an enabled hook falls due (ms), if any. */
  nextDueMs: number | undefined;
}

/**
 * Sends what the outbox holds as it falls due, and records each outcome in it: 2xx is delivered,
 * 410 disables the hook, 429 and 503 wait at least `Retry-After`, anything else is retried by the
 * hook's schedule and is `failed` when the schedule is spent. Nothing here asks the service
 * anything, so delivery never spends the key's request budget.
 */
export class Deliverer {
  private readonly limiters = new Map<string, WindowLimiter>();
  /** Hooks that took a delivery in this run; any other is sent one delivery at a time until it does. */
  private readonly healthy = new Set<string>();
  private readonly inFlight = new Map<string, number>();
  private agent: Promise<Dispatcher> | undefined;
  private readonly concurrency: number;

  constructor(private readonly options: DelivererOptions) {
    this.concurrency = options.concurrency ?? DELIVERY_CONCURRENCY;
  }

  /** One keep-alive pool for every receiver, loaded only when an HTTP hook is sent to. */
  private dispatcher = (): Promise<Dispatcher> => {
    this.agent ??= Promise.all([loadAgent(), loadConnector(this.options.trust)]).then(([Agent, connect]) => new Agent({ keepAliveTimeout: 10_000, connections: this.concurrency, connect }));
    return this.agent;
  };

  async close(): Promise<void> {
    if (this.agent !== undefined) await (await this.agent).close();
  }

  /** Sends every delivery due now (and those that fall due while it sends, for an ordered hook's next one). */
  async sweep(signal: AbortSignal): Promise<SweepResult> {
    const result: SweepResult = { delivered: 0, retried: 0, failed: 0, nextDueMs: undefined };
    for (;;) {
      const enabled = (await this.options.hooks.read()).filter((hook) => hook.enabled && inScope(hook, this.options.scope));
      const hooks = new Map((await withStoredSecrets(enabled, this.options.credentials)).map((hook) => [hook.id, hook]));
      const { due, nextDueMs } = this.dueDeliveries(hooks);
      result.nextDueMs = nextDueMs;
      if (due.length === 0 || signal.aborted) return result;
      let next = 0;
      const worker = async () => {
        while (!signal.aborted && next < due.length) {
          const delivery = due[next]!;
          next += 1;
          const hook = hooks.get(delivery.hook)!;
          // A hook disabled by a 410 earlier in this round gets nothing more; one not known to be
          // up is probed with one request at a time (so a 410 is answered to one request, not eight).
          if (!hook.enabled || (!this.healthy.has(hook.id) && (this.inFlight.get(hook.id) ?? 0) > 0)) continue;
          this.inFlight.set(hook.id, (this.inFlight.get(hook.id) ?? 0) + 1);
          try {
            // Not a call to pace for a hook without --rate: an await per delivery for nothing.
            if (hook.rate !== null) await this.pace(hook.rate, hook.id, signal);
            await this.send(delivery, hook, result);
          } finally {
            this.inFlight.set(hook.id, this.inFlight.get(hook.id)! - 1);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, due.length) }, worker));
    }
  }

  /** Due deliveries of enabled hooks; an ordered hook's only candidate is its oldest pending one. */
  private dueDeliveries(hooks: Map<string, Hook>): { due: Delivery[]; nextDueMs: number | undefined } {
    const nowMs = this.options.clock.now().getTime();
    const due: Delivery[] = [];
    const orderedSeen = new Set<string>();
    let nextDueMs: number | undefined;
    for (const delivery of this.options.outbox.all()) {
      if (delivery.status !== 'pending') continue;
      const hook = hooks.get(delivery.hook);
      if (hook === undefined) continue;
      if (hook.ordered) {
        if (orderedSeen.has(hook.id)) continue;
        orderedSeen.add(hook.id);
      }
      if (delivery.dueMs <= nowMs) due.push(delivery);
      else nextDueMs = Math.min(nextDueMs ?? Number.POSITIVE_INFINITY, delivery.dueMs);
    }
    return { due, nextDueMs };
  }

  private async pace(rate: NonNullable<Hook['rate']>, hookId: string, signal: AbortSignal): Promise<void> {
    let limiter = this.limiters.get(hookId);
    if (limiter === undefined) this.limiters.set(hookId, (limiter = new WindowLimiter(rate.requests, rate.window_ms)));
    const now = () => this.options.clock.now().getTime();
    for (let wait = limiter.waitMs(now()); wait > 0; wait = limiter.waitMs(now())) await this.options.clock.sleep(wait, signal);
    limiter.take(now());
  }

  private async send(delivery: Delivery, hook: Hook, result: SweepResult): Promise<void> {
    const { outbox, clock } = this.options;
    const now = clock.now();
    const body = await outbox.bodyOf(delivery.event);
    if (this.options.claim !== undefined) await this.options.claim(delivery, delivery.attempts + 1);
    crashPoint('hooks.before-attempt');
    const outcome = await attemptDelivery(hook, delivery.event, body, liveSecrets(hook, now), now, this.dispatcher);
    crashPoint('hooks.after-attempt');
    const attempt = delivery.attempts + 1;
    const at = clock.now();
    const base = { id: delivery.id, hook: hook.id, attempt, detail: outcome.detail, at: at.toISOString() };
    if (outcome.kind === 'delivered') {
      this.healthy.add(hook.id);
      result.delivered += 1;
      await outbox.recordAttempt({ ...base, result: 'delivered' });
      return;
    }
    if (outcome.kind === 'gone') {
      result.failed += 1;
      await outbox.recordAttempt({ ...base, result: 'failed' });
      await this.disable(hook, `the receiver answered 410 Gone on ${at.toISOString()}`);
      return;
    }
    this.healthy.delete(hook.id);
    const delayMs = retryDelay(hook, attempt, outcome);
    if (delayMs === undefined) {
      result.failed += 1;
      await outbox.recordAttempt({ ...base, result: 'failed' });
      await this.options.note(`hooks: delivery ${delivery.key} to ${targetOf(hook)} failed after ${attempt} attempt${attempt === 1 ? '' : 's'} (${outcome.detail}); see taxprep hooks deliveries --status failed`);
    } else {
      result.retried += 1;
      await outbox.recordAttempt({ ...base, result: 'retry', next_at: new Date(at.getTime() + delayMs).toISOString() });
    }
    const failingSince = outbox.failingSinceMs(hook.id);
    if (failingSince !== undefined && at.getTime() - failingSince >= hook.disable_after_ms) {
      await this.disable(hook, `every delivery failed for ${formatDuration(at.getTime() - failingSince)} (--disable-after ${formatDuration(hook.disable_after_ms)})`);
    }
  }

  /** Disables the hook in its store; its pending deliveries are marked failed, for `redeliver` or `recover` once it is enabled again. */
  private async disable(hook: Hook, reason: string): Promise<void> {
    if (!hook.enabled) return;
    hook.enabled = false;
    await this.options.hooks.update(this.options.clock, (hooks) => {
      const stored = hooks.find((candidate) => candidate.id === hook.id);
      if (stored !== undefined) Object.assign(stored, { enabled: false, disabled_reason: reason });
    });
    const at = this.options.clock.now().toISOString();
    for (const delivery of [...this.options.outbox.all()]) {
      if (delivery.hook === hook.id && delivery.status === 'pending') {
        await this.options.outbox.recordAttempt({ id: delivery.id, hook: hook.id, attempt: delivery.attempts, result: 'failed', detail: 'not sent: the hook was disabled', at });
      }
    }
    await this.options.note(`hooks: hook ${hook.id} (${targetOf(hook)}) is disabled: ${reason}; nothing more is sent to it (taxprep hooks enable ${hook.id})`);
  }
}

/** Milliseconds until the next attempt after `attempt` failed, or undefined when the schedule is spent. */
export function retryDelay(hook: Pick<Hook, 'retry_schedule_ms'>, attempt: number, outcome: Pick<AttemptOutcome, 'notBeforeMs'>): number | undefined {
  const scheduled = hook.retry_schedule_ms[attempt - 1];
  if (scheduled === undefined) return undefined;
  return Math.max(scheduled, outcome.notBeforeMs ?? 0);
}
