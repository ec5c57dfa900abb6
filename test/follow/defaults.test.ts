import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What the watch's modules fix once, at load: the default budget and the rule of --budget, the
 * order of readings of one age, the state file's format and ids, the known priorities. Each test
 * loads its module itself (nothing is imported at the top of this file), so that the mutation
 * tests credit the module's top-level code to it: a mutant of a constant is then tested here, by
 * what a user sees of it, rather than only by the first test that happened to load the module.
 */

describe('the watch planner\'s fixed rules', () => {
  it('budgets 20 a minute by default, words the --budget rule, and reads the deliverable list, then lists, then statuses', async () => {
    const { DEFAULT_BUDGET, formatBudget, parseBudget, planTasks } = await import('../../src/follow/planner');
    const { emptySnapshot } = await import('../../src/follow/changes');
    expect(formatBudget(DEFAULT_BUDGET)).toBe('20/min');
    expect(() => parseBudget('101/min')).toThrow(
      /^--budget must be <requests>\/min \(or \/<duration>\), such as 20\/min or 5\/10s: at most 100 a minute, a window from 1s to 1h$/,
    );
    // Ids that sort against the kinds: only the kind order puts account 2's list before project 1's status.
    const snapshot = emptySnapshot();
    snapshot.projects = { 1: { account_id: 2, status: 'in_progress', progress_percentage: 10, estimated_completion: null } };
    expect(planTasks(snapshot, [2]).map((task) => task.kind)).toEqual(['deliverables', 'projects', 'status']);
  });
});

describe('the watch state file\'s format', () => {
  it('reads a document of its format whole, and refuses ids that are not whole numbers', async () => {
    const { readState } = await import('../../src/follow/state');
    const base = 'http://127.0.0.1:4010/v1beta';
    const project = { account_id: 1001, status: 'in_progress', progress_percentage: 10, estimated_completion: null };
    const document = (projects: Record<string, unknown>) => ({
      format: 'taxprep-watch-state',
      version: 1,
      base_url: base,
      profile: null,
      saved_at: '2026-11-25T00:00:00.000Z',
      snapshot: {
        deliverables: { 9001: { project_id: 5001, account_id: 1001, status: 'draft', title: 'Q3', expires_at: null } },
        projects,
        accounts: { 1001: { listed_at: '2026-11-25T00:00:00.000Z' } },
      },
      sent: [],
      unknown_accounts: {},
    });
    const directory = mkdtempSync(join(tmpdir(), 'taxprep-watch-format-'));
    const read = async (content: unknown) => {
      const path = join(directory, 'state.json');
      writeFileSync(path, JSON.stringify(content));
      return readState(path, { baseUrl: base }, { reset: false });
    };
    const { format: _format, version: _version, ...state } = document({ 5001: project });
    expect(await read(document({ 5001: project }))).toStrictEqual(state);
    await expect(read(document({ x5001: project }))).rejects.toThrow(/is damaged: snapshot\.projects\.x5001: /);
    await expect(read(document({ '5001x': project }))).rejects.toThrow(/is damaged: snapshot\.projects\.5001x: /);
    await expect(read({ ...document({}), format: '' })).rejects.toThrow(/is damaged: format: /);
  });
});

describe('the priorities status knows', () => {
  it('puts high, then medium, before any other, whatever order they come in', async () => {
    const { sortByPriority } = await import('../../src/follow/attention');
    const items = ['low', 'medium', 'urgent', 'high'].map((priority) => ({ priority, requested_at: '2026-11-20T00:00:00Z' }));
    expect(sortByPriority(items).map((item) => item.priority)).toEqual(['high', 'medium', 'low', 'urgent']);
  });
});
