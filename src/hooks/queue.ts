import { randomBytes } from 'node:crypto';
import type { EventLine } from '../batch/ledgers/outbox';
import type { Change } from '../follow/changes';
import { matchesEvent } from './events';
import type { Hook } from './store';

/**
 * A change's `webhook-id`: random, given once when the change is queued. It stays the same for
 * every attempt and redelivery; a change found again after a kill is found by a new pass, whose
 * queued events replace the dropped pass's (see src/batch/ledgers/outbox.ts), so no change is
 * ever sent under two ids and no id carries two changes.
 */
export function newWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** The Standard Webhooks body of a change: `{type, timestamp, data}` with the change as `watch --json` prints it. */
export function bodyOf(type: string, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}

/** The outbox lines for a pass's changes: each for every enabled hook whose patterns match it. */
export function eventsFor(changes: readonly Change[], hooks: readonly Hook[], pass: string, at: Date): Array<Omit<EventLine, 'type'>> {
  return changes.map((change) => ({
    id: newWebhookId(),
    event: change.event,
    hooks: hooks.filter((hook) => hook.enabled && matchesEvent(hook.events, change.event)).map((hook) => hook.id),
    body: bodyOf(change.event, change.seen_at, change),
    seen_at: change.seen_at,
    pass,
    at: at.toISOString(),
  }));
}
