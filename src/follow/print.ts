import { wrapped, type Output } from '../output';
import type { Change } from './changes';

/** The changes of a pass: NDJSON under --json, a table on a terminal, tab-separated lines in a pipe. */
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
  // Was and Now hold statuses and item descriptions: wrapped, never cut (a cut status misleads).
  // One pass's changes share one time: a terminal shows it once, above the table, and gives the
  // columns to the values; a pipe keeps it on every line.
  const seen = out.forPeople ? [] : ['Seen'];
  await out.table(
    // A project has one deliverable, and belongs to one account: on a narrow terminal the project
    // alone names both, and those columns give way first.
    [...seen, 'Event', { title: 'Account', drop: 2 }, 'Project', { title: 'Deliverable', drop: 1 }, wrapped('Was'), wrapped('Now')],
    changes.map((change) => [
      ...(out.forPeople ? [] : [format.date(change.seen_at)]),
      change.event,
      format.text(change.account_id ?? '-'),
      String(change.project_id),
      change.deliverable_id === undefined ? '-' : String(change.deliverable_id),
      value(change, change.old),
      value(change, change.new),
    ]),
    `Changes seen ${format.date(changes[0]!.seen_at)}`,
  );
}
