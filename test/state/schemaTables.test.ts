import { describe, expect, it } from 'vitest';
import { schemaTables } from '../../src/state/schema';

// doctor checks the role's rights on the tables the migrations make, derived from their steps: a
// table a new step adds is checked without a list to keep beside it.
describe('the tables of the shared store, from the migrations', () => {
  it("are every area's, core's and watch's", () => {
    // Containing, not equal: another area's new step adds to them.
    expect(schemaTables()).toEqual(expect.arrayContaining([
      'taxprep_state.ledger_lines',
      'taxprep_state.lock_holders',
      'taxprep_state.learned_rules',
      'taxprep_state.watch_lease',
      'taxprep_state.watch_state',
      'taxprep_state.outbox_claims',
      'taxprep_state.hooks',
    ]));
  });

  it('follow a later step that adds a table or drops one', () => {
    const areas = [
      { area: 'core', steps: [['CREATE TABLE taxprep_state.first (a int)', 'CREATE TABLE IF NOT EXISTS taxprep_state.Second (b int)']] },
      { area: 'later', steps: [['create table taxprep_state.third (c int)'], ['DROP TABLE IF EXISTS taxprep_state.first', 'CREATE INDEX third_c ON taxprep_state.third (c)']] },
    ];
    expect(schemaTables(areas)).toEqual(['taxprep_state.second', 'taxprep_state.third']);
  });
});
