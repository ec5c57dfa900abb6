import { dateColumn, wrapped, type Column, type Output } from '../output';
import type { Change, ChangeEvent } from './changes';

/** The changes of a pass: NDJSON under --json, tables on a terminal, tab-separated lines in a pipe. */
export async function printChanges(out: Output, json: boolean, changes: Change[]): Promise<void> {
  if (changes.length === 0) return;
  if (json) {
    for (const change of changes) await out.ndjson(change);
    return;
  }
  const { format } = out;
  const value = (change: Change, side: unknown) => {
    if (change.item === undefined || side === null) return side === null ? '-' : format.text(side);
    return `${format.text(change.item.description)} (${format.text(change.item.priority)})`;
  };
  const ids = (change: Change) => [format.text(change.account_id ?? '-'), String(change.project_id)];
  const deliverable = (change: Change) => (change.deliverable_id === undefined ? '-' : String(change.deliverable_id));
  if (!out.forPeople) {
    await out.table(
      ['Seen', 'Event', 'Account', 'Project', 'Deliverable', 'Was', 'Now'],
      changes.map((change) => [format.date(change.seen_at), change.event, ...ids(change), deliverable(change), value(change, change.old), value(change, change.new)]),
    );
    return;
  }
  // On a terminal, one table per kind of change, named by its event, in the order the pass met
  // them: each table's columns then hold one kind of value. Ids are never left out (a deliverable
  // that appeared is known by its id), and no column is spent on an event name 28 wide, so that
  // an estimated completion, a timestamp, is a date column: shortened on a narrow terminal
  // (`2026-12-15`), never split over lines. Statuses and items are wrapped, never cut (a cut status
  // misleads). One pass's changes share one time: it is said once, above the first table.
  const groups = new Map<ChangeEvent, Change[]>();
  for (const change of changes) groups.set(change.event, [...(groups.get(change.event) ?? []), change]);
  let first = true;
  for (const [event, group] of groups) {
    const timestamps = event === 'project.estimated_completion';
    const side = (change: Change, sideValue: unknown) => (timestamps ? format.date(sideValue) : value(change, sideValue));
    const hasDeliverable = event.startsWith('deliverable.');
    const head: Column[] = ['Account', 'Project', ...(hasDeliverable ? ['Deliverable'] : []), ...(['Was', 'Now'] as const).map((title) => (timestamps ? dateColumn(title) : wrapped(title)))];
    const rows = group.map((change) => [...ids(change), ...(hasDeliverable ? [deliverable(change)] : []), side(change, change.old), side(change, change.new)]);
    await out.table(head, rows, first ? `Changes seen ${format.date(changes[0]!.seen_at)}\n${event}` : event);
    first = false;
  }
}
