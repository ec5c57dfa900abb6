import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/follow/changes';
import { printChanges } from '../../src/follow/print';
import { createOutput } from '../../src/output';
import { createTestContext } from '../helpers/context';

const seen_at = '2026-11-25T12:00:00.000Z';
const item = { type: 'missing_document', description: 'W-2 from the employer', priority: 'high', requested_at: '2026-11-20T09:00:00Z' };
const changes: Change[] = [
  { event: 'project.status', account_id: 1001, project_id: 5001, old: 'in_review', new: 'completed', seen_at },
  { event: 'item.appeared', account_id: 1001, project_id: 5001, item, old: null, new: item, seen_at },
  { event: 'deliverable.appeared', account_id: null, project_id: 5002, deliverable_id: 9001, old: null, new: 'draft', seen_at },
];

async function printed(tty: boolean, printing: Change[] = changes, columns = 120): Promise<string> {
  const t = createTestContext({ tty, columns, globals: { color: false }, clock: { now: () => new Date('2026-11-25T13:00:00Z'), sleep: async () => undefined } });
  await printChanges(createOutput(t.ctx), false, printing);
  return t.stdout();
}

describe('the changes of a watch pass, printed', () => {
  it('in a pipe: a tab-separated line per change with its time; an item as its description and priority, nothing as -', async () => {
    expect(await printed(false)).toBe(
      '2026-11-25T12:00:00.000Z\tproject.status\t1001\t5001\t-\tin_review\tcompleted\n' +
        '2026-11-25T12:00:00.000Z\titem.appeared\t1001\t5001\t-\t-\tW-2 from the employer (high)\n' +
        '2026-11-25T12:00:00.000Z\tdeliverable.appeared\t-\t5002\t9001\t-\tdraft\n',
    );
  });

  it('on a terminal: the time once above the tables, a table per event named by it, the columns named', async () => {
    expect(await printed(true)).toBe(
      '\nChanges seen 2026-11-25 12:00 UTC (1 hour ago)\n' +
        'project.status\n' +
        'ACCOUNT  PROJECT  WAS        NOW\n' +
        '1001     5001     in_review  completed\n' +
        '\nitem.appeared\n' +
        'ACCOUNT  PROJECT  WAS  NOW\n' +
        '1001     5001     -    W-2 from the employer (high)\n' +
        '\ndeliverable.appeared\n' +
        'ACCOUNT  PROJECT  DELIVERABLE  WAS  NOW\n' +
        '-        5002     9001         -    draft\n',
    );
  });

  describe('on a terminal of 60, 80 and 120 columns, with a change of each kind (issue 32)', () => {
    const resolved = { ...item, description: 'Signed engagement letter for the 2025 return, both spouses' };
    const every: Change[] = [
      { event: 'project.appeared', account_id: 1001, project_id: 5003, old: null, new: 'waiting_on_client', seen_at },
      { event: 'project.status', account_id: 1001, project_id: 5001, old: 'waiting_on_client', new: 'in_progress', seen_at },
      { event: 'project.progress', account_id: 1001, project_id: 5001, old: 40, new: 65, seen_at },
      { event: 'project.estimated_completion', account_id: 1001, project_id: 5001, old: '2026-12-01T17:30:00Z', new: '2026-12-15T09:00:00.000Z', seen_at },
      { event: 'item.appeared', account_id: 1001, project_id: 5001, item, old: null, new: item, seen_at },
      { event: 'item.resolved', account_id: 1001, project_id: 5001, item: resolved, old: resolved, new: null, seen_at },
      { event: 'deliverable.appeared', account_id: 1002, project_id: 5002, deliverable_id: 90017, old: null, new: 'draft', seen_at },
      { event: 'deliverable.status', account_id: 1002, project_id: 5002, deliverable_id: 90018, old: 'draft', new: 'delivered', seen_at },
    ];
    /** The rows of the table under the heading `event`. */
    const tableOf = (text: string, event: string) => text.split('\n\n').find((part) => part.split('\n').includes(event))!.split('\n').filter((line) => line !== '');
    const rowsOf = (text: string, event: string) => tableOf(text, event).slice(event === 'project.appeared' ? 3 : 2);
    /** What the column `title` of the first row of the table under `event` holds, its lines read in order. */
    const cellOf = (text: string, event: string, title: string, next: string) => {
      const [header] = tableOf(text, event).filter((line) => line.includes(title));
      const [start, end] = [header!.indexOf(title), header!.indexOf(next)];
      return rowsOf(text, event).map((line) => line.slice(start, end).trim()).filter((piece) => piece !== '').join(' ');
    };

    it.each([60, 80, 120])('at %i columns: no line wider, every id shown, an estimated completion whole on its row', async (columns) => {
      const text = await printed(true, every, columns);
      for (const line of text.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(columns);
      expect(text).not.toContain('not shown');
      // The deliverables' ids on their rows, with their project and account.
      expect(rowsOf(text, 'deliverable.appeared')[0]).toMatch(/^1002 +5002 +90017 +- +draft$/);
      expect(rowsOf(text, 'deliverable.status')[0]).toMatch(/^1002 +5002 +90018 +draft +delivered$/);
      // Each timestamp on one line, beside its ids: the date always, the time when there is room.
      const [estimate] = rowsOf(text, 'project.estimated_completion');
      expect(estimate).toMatch(/^1001 +5001 +2026-12-01\b.* 2026-12-15\b/);
      if (columns === 120) expect(estimate).toMatch(/2026-12-01 17:30 UTC \(in 6 days\) +2026-12-15 09:00 UTC \(in 20 days\)$/);
      // Statuses and items whole, items wrapped between words.
      expect(rowsOf(text, 'project.status')[0]).toMatch(/^1001 +5001 +waiting_on_client +in_progress$/);
      expect(cellOf(text, 'item.resolved', 'WAS', 'NOW')).toBe('Signed engagement letter for the 2025 return, both spouses (high)');
    });
  });

  it('nothing at all for a pass without changes', async () => {
    const t = createTestContext({ tty: true });
    await printChanges(createOutput(t.ctx), false, []);
    expect(t.stdout()).toBe('');
  });
});
