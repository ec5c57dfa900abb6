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

async function printed(tty: boolean): Promise<string> {
  const t = createTestContext({ tty, columns: 120, globals: { color: false }, clock: { now: () => new Date('2026-11-25T13:00:00Z'), sleep: async () => undefined } });
  await printChanges(createOutput(t.ctx), false, changes);
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

  it('on a terminal: the time once above the table, the columns named', async () => {
    expect(await printed(true)).toBe(
      '\nChanges seen 2026-11-25 12:00 UTC (1 hour ago)\n' +
        'EVENT                 ACCOUNT  PROJECT  DELIVERABLE  WAS        NOW\n' +
        'project.status        1001     5001     -            in_review  completed\n' +
        'item.appeared         1001     5001     -            -          W-2 from the employer (high)\n' +
        'deliverable.appeared  -        5002     9001         -          draft\n',
    );
  });

  it('nothing at all for a pass without changes', async () => {
    const t = createTestContext({ tty: true });
    await printChanges(createOutput(t.ctx), false, []);
    expect(t.stdout()).toBe('');
  });
});
