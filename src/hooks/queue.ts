import { createHash } from 'node:crypto';
import type { EventEntry } from '../batch/ledgers/outbox';
import type { Change } from '../follow/changes';
import { matchesEvent } from './events';
import type { Hook, Scope } from './store';

/**
 * The `webhook-id` of a change: a digest of the look it was found against (the state's
 * `saved_at`), the change itself and the profile and base URL. A change found again after a kill
 * between queueing it and recording it as seen is found against the same look, so it gets the same
 * id and is not queued twice; two different changes never share one (a change found against a
 * later look is another change, even with the same values).
 */
export function webhookIdOf(scope: Scope, lookSavedAt: string, change: Change): string {
  const { seen_at: _seenAt, ...identity } = change;
  const digest = createHash('sha256').update(JSON.stringify([scope.profile, scope.baseUrl, lookSavedAt, identity])).digest('base64url');
  return `msg_${digest.slice(0, 27)}`;
}

/** The Standard Webhooks body of a change: `{type, timestamp, data}` with the change as `watch --json` prints it. */
export function bodyOf(type: string, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}

/** The outbox lines for a pass's changes: each for every enabled hook whose patterns match it. */
export function eventsFor(changes: readonly Change[], hooks: readonly Hook[], scope: Scope, lookSavedAt: string, at: Date): Array<Omit<EventEntry, 'type'>> {
  return changes.map((change) => ({
    id: webhookIdOf(scope, lookSavedAt, change),
    event: change.event,
    hooks: hooks.filter((hook) => hook.enabled && matchesEvent(hook.events, change.event)).map((hook) => hook.id),
    body: bodyOf(change.event, change.seen_at, change),
    seen_at: change.seen_at,
    at: at.toISOString(),
  }));
}
