import { describe, expect, it } from 'vitest';
import { stateFromFixture } from '../../src/mock/fixture';
import { indexesOf } from '../../src/mock/indexes';
import { DEMO_FIXTURE } from '../../src/mock/seed';
import type { OutstandingItemRecord } from '../../src/mock/state';

const item = (id: number, project_id: number): OutstandingItemRecord => ({
  id,
  project_id,
  type: 'client_request',
  description: `item ${id}`,
  priority: 'low',
  requested_at: '2026-01-01T00:00:00.000Z',
});

describe('state indexes', () => {
  it('answer as a scan of the lists would, through appends, removals and replaced lists', () => {
    const { state } = stateFromFixture(DEMO_FIXTURE, new Date('2026-02-01T00:00:00Z'));
    const indexes = indexesOf(state);
    const scan = (projectId: number) => state.outstandingItems.filter((candidate) => candidate.project_id === projectId);
    const projectId = state.projects[0]!.id;
    expect(indexes.outstandingItemsOfProject(projectId)).toEqual(scan(projectId));

    state.outstandingItems.push(item(90_001, projectId), item(90_002, projectId));
    expect(indexes.outstandingItemsOfProject(projectId)).toEqual(scan(projectId));
    // A removal in the middle and an append before the next lookup: the list is as long as before.
    state.outstandingItems.splice(state.outstandingItems.indexOf(scan(projectId)[0]!), 1);
    state.outstandingItems.push(item(90_003, projectId));
    expect(indexes.outstandingItemsOfProject(projectId)).toEqual(scan(projectId));
    // The last record removed and another appended.
    state.outstandingItems.pop();
    state.outstandingItems.push(item(90_004, projectId));
    expect(indexes.outstandingItemsOfProject(projectId)).toEqual(scan(projectId));
    state.outstandingItems = [];
    expect(indexes.outstandingItemsOfProject(projectId)).toEqual([]);

    const account = state.accounts[0]!;
    expect(indexes.account(account.id)).toBe(account);
    expect(indexes.accountsWithEmail(account.email.toUpperCase())).toEqual([account]);
    expect(indexes.account(999_999)).toBeUndefined();
    expect(indexes.documentsOfAccount(account.id)).toEqual(state.documents.filter((document) => document.account_id === account.id));
  });

  it('are made anew for a new state (a reset)', () => {
    const first = stateFromFixture(DEMO_FIXTURE, new Date()).state;
    const second = stateFromFixture(DEMO_FIXTURE, new Date()).state;
    const id = first.accounts[0]!.id;
    expect(indexesOf(first).account(id)).toBe(first.accounts[0]);
    expect(indexesOf(second).account(id)).toBe(second.accounts[0]);
  });
});
