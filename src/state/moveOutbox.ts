import type { Clock } from '../types';
import { readOutbox, type Delivery, type Outbox, type OutboxLine, type OutboxView } from '../batch/ledgers/outbox';
import type { HooksPlace } from '../hooks/place';
import type { PieceMove } from './moveWatch';

/**
 * `state import` and `export` of the webhook outbox, through the outbox's own fold and appender:
 * each delivery of a committed change (a watch pass not committed stays where it is) is copied with
 * its webhook-id, its body as signed, its hook, and its last line as written (attempts made, when
 * the next is due, or how it ended), unless the target has it already (by webhook-id and hook).
 * Delivered and failed ones are copied too, so that `hooks deliveries` and `hooks recover` there
 * know them. Each pending or failed delivery the target now holds is then marked `moved` in the
 * source, which never sends it again (a delivered one stays delivered there). The target's lines
 * are written before the source's marks: a run killed between the two leaves the delivery in both,
 * and the next run marks it; it is never in neither.
 */

/** What a source delivery does in the target: copied, already there, or nothing (moved elsewhere before). */
type Step = 'copy' | 'present' | 'none';

function stepOf(delivery: Delivery, target: OutboxView): Step {
  const known = target.get(delivery.key);
  // A delivery moved out of the target comes back to life there (an import, then an export back).
  const present = known !== undefined && known.status !== 'moved';
  if (present) return 'present';
  return delivery.status === 'moved' ? 'none' : 'copy';
}

function counted(steps: readonly Step[]): PieceMove {
  return { kind: { label: 'webhook outbox' }, copied: steps.filter((step) => step === 'copy').length, present: steps.filter((step) => step === 'present').length };
}

/** The lines that give the target `copies` (deliveries of one change) as they stand in the source. */
async function linesOf(copies: readonly Delivery[], source: Outbox, target: OutboxView): Promise<OutboxLine[]> {
  const event = copies[0]!.event;
  const lines: OutboxLine[] = [];
  const known = target.hasEvent(event.id);
  if (!known) {
    // `pass` absent: only committed changes move.
    const { id, event: name, seen_at, at } = event;
    lines.push({ type: 'event', id, event: name, hooks: copies.map((delivery) => delivery.hook), seen_at, at, body: await source.bodyOf(event) });
  }
  for (const delivery of copies) {
    const last = delivery.last;
    if (last.type === 'redeliver') {
      // The source's request ids are its own inbox's: not the target's.
      lines.push({ type: 'redeliver', id: last.id, hook: last.hook, at: last.at });
      continue;
    }
    // A change the target knows gets this hook (back) through a redeliver line, due when it was queued.
    if (known) lines.push({ type: 'redeliver', id: event.id, hook: delivery.hook, at: event.at });
    if (last.type === 'attempt') lines.push(last);
  }
  return lines;
}

/** Copies the source's deliveries the target lacks, then marks those the target now sends as moved in the source. */
async function moveDeliveries(source: Outbox, target: Outbox, to: string, clock: Clock): Promise<PieceMove> {
  const deliveries = [...source.all()];
  const steps = deliveries.map((delivery) => stepOf(delivery, target));
  const copiesByEvent = new Map<string, Delivery[]>();
  deliveries.forEach((delivery, index) => {
    if (steps[index] === 'copy') copiesByEvent.set(delivery.id, [...(copiesByEvent.get(delivery.id) ?? []), delivery]);
  });
  const lines: OutboxLine[] = [];
  for (const copies of copiesByEvent.values()) lines.push(...(await linesOf(copies, source, target)));
  await target.copyIn(lines);
  const sentThere = deliveries.filter((delivery, index) => steps[index] !== 'none' && (delivery.status === 'pending' || delivery.status === 'failed'));
  await source.markMoved(sentThere, to, clock.now());
  return counted(steps);
}

/**
 * Moves the outbox of `from` into that of `to` (`to.where`: in the source's `moved` lines), each
 * open under its lock (a file's lock, or the watch lease taken for the run: a watch holding either
 * is exit 10, before anything is copied); `work` runs inside both, so that `state import` copies
 * nothing at all beside a running watch. A dry run reads both without locks and writes nothing.
 */
export async function withOutboxMove<T>(
  from: Pick<HooksPlace, 'outboxLines' | 'withOutbox'>,
  to: Pick<HooksPlace, 'outboxLines' | 'withOutbox'> & { describe: string },
  options: { dryRun: boolean; clock: Clock },
  work: (moveOutbox: () => Promise<PieceMove>) => Promise<T>,
): Promise<T> {
  if (options.dryRun) {
    return work(async () => {
      const [source, target] = [await readOutbox(from.outboxLines), await readOutbox(to.outboxLines)];
      return counted([...source.all()].map((delivery) => stepOf(delivery, target)));
    });
  }
  return from.withOutbox((source) => to.withOutbox((target) => work(() => moveDeliveries(source, target, to.describe, options.clock))));
}
