import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { LedgerState, type LedgerKind, type LineStore } from '../ledger';
import { appDirectory } from '../../lib/paths';

/**
 * The webhook outbox: the batch engine's ledger (append-only NDJSON, group-committed with
 * fdatasync, compacted, locked) for deliveries. An `event` line queues one change for the hooks it
 * matched, with the exact body every attempt signs; an `attempt` line records an attempt's
 * outcome and when the next is due; a `redeliver` line makes a delivery due again from the start
 * of its schedule; a `moved` line says `taxprep state import` or `export` copied a delivery to
 * another outbox, which sends it from then on (this one never does). One file per profile and
 * base URL, as hooks and watch state are.
 *
 * A watch pass queues its changes under its `pass` id before its state is recorded, and the state
 * names that pass (`outbox_pass`) in the same rename that records the changes as seen; a `pass`
 * line then says `committed`. A pass killed before its state was recorded is `dropped` by the next
 * watch (which finds those changes again, in a pass of its own): so a change is never lost, never
 * sent under two ids, and nothing of a pass is sent before it is committed.
 */
export const OUTBOX: LedgerKind = {
  label: 'webhook outbox',
  fileName: 'outbox.ndjson',
  types: ['event', 'attempt', 'redeliver', 'pass', 'moved'],
  damagedHint: 'deliveries it held that were not sent are lost; `taxprep hooks recover` can send again what watch saw since a time',
  // 100,000 pending deliveries would otherwise hold 100,000 bodies in memory; each is read from the file when sent.
  keptOnDisk: ['body'],
  // Values that repeat: event names, hook ids, the time of the pass that saw or queued a change
  // (an attempt's time is its own: one copy of each would be kept for the life of the process).
  sharedValues: { event: ['event', 'hooks', 'seen_at', 'at'], attempt: ['hook', 'result'], moved: ['hook', 'to', 'at'] },
  // Attempt outcomes (appended without waiting) come as fast as receivers answer: written in groups.
  gatherMs: 25,
};

/** `<data dir>/outbox/<profile>-<digest of the base URL>.ndjson`. */
export function defaultOutboxPath(env: Record<string, string | undefined>, profile: string | null, baseUrl: string): string {
  const digest = createHash('sha256').update(baseUrl).digest('hex').slice(0, 12);
  const name = (profile ?? 'no-profile').replace(/[^A-Za-z0-9_.-]/g, '_');
  return join(appDirectory('data', env), 'outbox', `${name}-${digest}.ndjson`);
}

/** An `event` line as the fold holds it: its body stays in the file (`Outbox.bodyOf` reads it). */
export interface EventEntry {
  type: 'event';
  /** The `webhook-id`: one per change, the same for every attempt and every hook. */
  id: string;
  event: string;
  hooks: string[];
  /** When the change was seen (the body's `timestamp`). */
  seen_at: string;
  /** The watch pass that queued it; absent once the pass is committed (compaction drops it). */
  pass?: string;
  at: string;
}

/** An `event` line as written. */
export interface EventLine extends EventEntry {
  /** The body as sent and signed (JSON text), so that every attempt sends the same bytes. */
  body: string;
}

export interface PassEntry {
  type: 'pass';
  pass: string;
  result: 'committed' | 'dropped';
  at: string;
}

export type AttemptResult = 'delivered' | 'retry' | 'failed';

export interface AttemptEntry {
  type: 'attempt';
  id: string;
  hook: string;
  /** Attempts made so far (of the current schedule: a redelivery starts it again). */
  attempt: number;
  result: AttemptResult;
  /** What happened: `HTTP 500`, `timeout after 15s`, `exit 1`. */
  detail: string;
  /** When the next attempt is due (`retry` only). */
  next_at?: string;
  at: string;
}

export interface RedeliverEntry {
  type: 'redeliver';
  id: string;
  hook: string;
  /** The request (src/hooks/requests.ts) that asked for it, when a command handed it to the holder of the lock. */
  request?: string;
  at: string;
}

/** A delivery copied to another outbox by `state import` or `export`: settled here, sent there. */
export interface MovedEntry {
  type: 'moved';
  id: string;
  hook: string;
  /** The outbox it was copied to, in words (the shared store, or a file). */
  to: string;
  /** Attempts made before it moved. */
  attempt: number;
  at: string;
}

export type OutboxEntry = EventEntry | AttemptEntry | RedeliverEntry | PassEntry | MovedEntry;
export type OutboxLine = EventLine | AttemptEntry | RedeliverEntry | PassEntry | MovedEntry;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'moved';

export interface Delivery {
  /** `<webhook-id>:<hook id>`: what `redeliver` takes. */
  readonly key: string;
  readonly id: string;
  readonly hook: string;
  readonly event: EventEntry;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  /** When the next attempt is due (ms since the epoch), for a pending delivery. */
  readonly dueMs: number;
  readonly detail: string | null;
  /** When it was queued, or last settled (ISO). */
  readonly updated_at: string;
  /** The line that says where the delivery stands, for compaction. */
  readonly last: OutboxEntry;
}

/** The last time `timeOf` parsed: the deliveries of a pass share their `at` (LedgerKind.sharedValues), so a sweep parses it once. */
let parsedText = '';
let parsedMs = Number.NaN;

function timeOf(text: string): number {
  if (parsedText !== text) {
    parsedMs = Date.parse(text);
    parsedText = text;
  }
  return parsedMs;
}

/**
 * A delivery as queued (by an event or a redeliver line): where it stands is read off its last
 * line when asked, not held in fields of its own (with 100,000 pending, each field was 400 KB,
 * and a time in milliseconds a boxed number of 16 bytes more), and its key is made when asked.
 */
class QueuedDelivery implements Delivery {
  constructor(
    readonly event: EventEntry,
    readonly hook: string,
    public last: EventEntry | RedeliverEntry | AttemptEntry | MovedEntry,
  ) {}

  get id(): string {
    return this.event.id;
  }

  get key(): string {
    return deliveryKey(this.id, this.hook);
  }

  get status(): DeliveryStatus {
    if (this.last.type === 'moved') return 'moved';
    return this.last.type !== 'attempt' || this.last.result === 'retry' ? 'pending' : this.last.result;
  }

  get attempts(): number {
    return this.last.type === 'attempt' || this.last.type === 'moved' ? this.last.attempt : 0;
  }

  get dueMs(): number {
    if (this.last.type === 'moved') return Number.POSITIVE_INFINITY;
    if (this.last.type !== 'attempt') return timeOf(this.last.at);
    return this.last.next_at === undefined ? Number.POSITIVE_INFINITY : Date.parse(this.last.next_at);
  }

  get detail(): string | null {
    if (this.last.type === 'moved') return `moved to ${this.last.to}`;
    return this.last.type === 'attempt' ? this.last.detail : null;
  }

  get updated_at(): string {
    return this.last.at;
  }
}

/** Delivered (or moved) deliveries stay listed this long, then compaction drops them. */
const DELIVERED_KEPT_MS = 7 * 86_400_000;

export function deliveryKey(id: string, hook: string): string {
  return `${id}:${hook}`;
}

/** An event's deliveries, one per hook it is queued for (an event line names at least one), in the order of its `hooks`. */
type Deliveries = [QueuedDelivery, ...QueuedDelivery[]];

export class OutboxView extends LedgerState<OutboxEntry, OutboxLine> {
  /**
   * Each event's deliveries by its webhook-id, in the order queued: an `--ordered` hook is sent its
   * deliveries in this order. Not a map of deliveries keyed by a string made for each, nor a record
   * per event: with 100,000 pending, those were a quarter of the memory the outbox held.
   */
  private readonly events = new Map<string, Deliveries>();
  /** Passes queued and not yet committed or dropped, with their events. */
  private readonly openPasses = new Map<string, EventEntry[]>();
  /** Per hook, when it began to fail every attempt (since its last success). */
  private readonly failingSince = new Map<string, number>();
  /** Requests whose redeliver lines were read or written: a request is applied once, even after a crash before its file was removed. */
  private readonly appliedRequests = new Set<string>();

  constructor(source: LineStore | string) {
    super(source, OUTBOX);
  }

  protected apply(entry: OutboxEntry): void {
    switch (entry.type) {
      case 'event': {
        // A change detected again after a kill before its state was recorded carries the same id: queued once.
        // An event for no hook has nothing to deliver (`queue` writes none; a hand-edited file might).
        if (this.events.has(entry.id) || entry.hooks.length === 0) return;
        this.events.set(entry.id, entry.hooks.map((hook) => new QueuedDelivery(entry, hook, entry)) as Deliveries);
        if (entry.pass !== undefined) {
          const open = this.openPasses.get(entry.pass) ?? [];
          this.openPasses.set(entry.pass, [...open, entry]);
        }
        return;
      }
      case 'moved': {
        const delivery = this.events.get(entry.id)?.find((candidate) => candidate.hook === entry.hook);
        if (delivery !== undefined) delivery.last = entry;
        return;
      }
      case 'attempt': {
        const delivery = this.events.get(entry.id)?.find((candidate) => candidate.hook === entry.hook);
        if (delivery === undefined) return;
        delivery.last = entry;
        if (entry.result === 'delivered') this.failingSince.delete(entry.hook);
        else if (!this.failingSince.has(entry.hook)) this.failingSince.set(entry.hook, Date.parse(entry.at));
        return;
      }
      case 'pass': {
        for (const event of this.openPasses.get(entry.pass) ?? []) {
          if (entry.result === 'committed') {
            // Not `delete`: that would turn each committed event into a larger dictionary-mode object.
            event.pass = undefined;
            continue;
          }
          this.events.delete(event.id);
        }
        this.openPasses.delete(entry.pass);
        return;
      }
      case 'redeliver': {
        if (entry.request !== undefined) this.appliedRequests.add(entry.request);
        const deliveries = this.events.get(entry.id);
        if (deliveries === undefined) return;
        const event = deliveries[0].event;
        const delivery = new QueuedDelivery(event, entry.hook, entry);
        const index = deliveries.findIndex((candidate) => candidate.hook === entry.hook);
        if (index !== -1) {
          deliveries[index] = delivery;
          return;
        }
        // `recover` sends a change to a hook it was not queued for (added or disabled at the time).
        // A new array: the fold shares one array among the events queued for the same hooks.
        event.hooks = [...event.hooks, entry.hook];
        deliveries.push(delivery);
        return;
      }
    }
  }

  /** Lines still needed: each kept event, and the last line of each of its deliveries. */
  protected *liveEntries(): IterableIterator<OutboxEntry> {
    const cutoff = Date.now() - DELIVERED_KEPT_MS;
    // Events of an open pass keep their `pass`: compaction runs only when a watch opens the outbox, after settling.
    for (const deliveries of this.events.values()) {
      const event = deliveries[0].event;
      if (deliveries.every((delivery) => (delivery.status === 'delivered' || delivery.status === 'moved') && Date.parse(delivery.updated_at) < cutoff)) {
        this.events.delete(event.id);
        continue;
      }
      yield event;
      for (const delivery of deliveries) if (delivery.last !== event) yield delivery.last;
    }
  }

  /** Since when every attempt to `hook` failed (ms), or undefined when its last attempt succeeded. */
  failingSinceMs(hook: string): number | undefined {
    return this.failingSince.get(hook);
  }

  /** Deliveries of committed changes (a pass not yet recorded as seen sends nothing). */
  *all(): IterableIterator<Delivery> {
    for (const deliveries of this.events.values()) if (deliveries[0].event.pass === undefined) yield* deliveries;
  }

  /** Whether a request's redeliver lines are in the outbox already. */
  applied(request: string): boolean {
    return this.appliedRequests.has(request);
  }

  /** Passes queued and neither committed nor dropped: a watch was killed between queueing and recording them. */
  unsettledPasses(): string[] {
    return [...this.openPasses.keys()];
  }

  get(key: string): Delivery | undefined {
    const colon = key.lastIndexOf(':');
    if (colon === -1) return undefined;
    const hook = key.slice(colon + 1);
    return this.ofEvent(key.slice(0, colon)).find((delivery) => delivery.hook === hook);
  }

  hasEvent(id: string): boolean {
    return this.events.has(id);
  }

  /** Deliveries of one webhook-id (every hook it was queued for). */
  ofEvent(id: string): Delivery[] {
    const deliveries = this.events.get(id);
    return deliveries === undefined || deliveries[0].event.pass !== undefined ? [] : [...deliveries];
  }

  eventsSince(sinceMs: number): EventEntry[] {
    return [...this.events.values()].map((deliveries) => deliveries[0].event).filter((event) => event.pass === undefined && Date.parse(event.seen_at) >= sinceMs);
  }
}

export function readOutbox(source: LineStore | string): Promise<OutboxView> {
  return new OutboxView(source).read();
}

/** The outbox opened for writing, by the holder of its lock. */
export class Outbox extends OutboxView {
  static async open(source: LineStore | string): Promise<Outbox> {
    const outbox = await new Outbox(source).read();
    await outbox.openForAppend();
    return outbox;
  }

  /** The body a delivery of `event` sends, read from the outbox file. */
  async bodyOf(event: EventEntry): Promise<string> {
    return ((await this.readBack(event)) as EventLine).body;
  }

  /** Queues changes (durable when it resolves); ids already queued are left as they are. */
  async queue(events: Array<Omit<EventLine, 'type'>>): Promise<void> {
    const fresh = events.filter((event) => event.hooks.length > 0 && !this.hasEvent(event.id));
    await Promise.all(fresh.map((event) => this.append({ type: 'event', ...event })));
  }

  /** The pass's state is recorded (committed), or was never recorded and its changes will be found again (dropped). */
  settlePass(pass: string, result: PassEntry['result'], at: Date): Promise<void> {
    return this.append({ type: 'pass', pass, result, at: at.toISOString() });
  }

  /**
   * Records an attempt's outcome without waiting for the disk (outcomes gather for up to the
   * kind's `gatherMs`, then go out in one group commit, in order, or sooner with a line someone
   * waits for; `close` writes the rest and reports a failed write): losing it to a crash only sends
   * that delivery again under its same id, which at least once allows, and waiting for an
   * fdatasync per answer would cap delivery at the disk's sync rate.
   */
  recordAttempt(entry: Omit<AttemptEntry, 'type'>): Promise<void> {
    return this.append({ type: 'attempt', ...entry }, { wait: false });
  }

  /** Settles deliveries copied to another outbox (`to`, in words), which sends them from then on. */
  async markMoved(deliveries: readonly Delivery[], to: string, at: Date): Promise<void> {
    await Promise.all(deliveries.map((delivery) => this.append({ type: 'moved', id: delivery.id, hook: delivery.hook, to, attempt: delivery.attempts, at: at.toISOString() })));
  }

  /** Makes a delivery due now from the start of its schedule; with a hook it was not queued for, adds it. */
  redeliver(id: string, hook: string, at: Date, request?: string): Promise<void> {
    return this.append({ type: 'redeliver', id, hook, ...(request === undefined ? {} : { request }), at: at.toISOString() });
  }
}
