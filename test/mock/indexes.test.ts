import { describe, expect, it } from 'vitest';
import { stateFromFixture } from '../../src/mock/fixture';
import { DEMO_FIXTURE } from '../../src/mock/seed';
import { indexesOf as indexesOfState, newestFirst } from '../../src/mock/indexes';
import type { DeliverableRecord, MockState, OutstandingItemRecord } from '../../src/mock/state';

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
    const indexes = indexesOfState(state);
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
    expect(indexesOfState(first).account(id)).toBe(first.accounts[0]);
    expect(indexesOfState(second).account(id)).toBe(second.accounts[0]);
  });
});

describe('the deliverables of a partner', () => {
  /** The list route's answer by a scan of every deliverable, as it was made before the index. */
  const scan = (state: MockState, partnerId: number, projectType?: string) =>
    state.deliverables
      .filter((deliverable) => {
        const project = state.projects.find((candidate) => candidate.id === deliverable.project_id);
        const account = project && state.accounts.find((candidate) => candidate.id === project.account_id);
        return account?.partner_id === partnerId && (projectType === undefined || project!.type === projectType);
      })
      .sort(newestFirst((deliverable) => deliverable.prepared_date));

  it('are those a scan finds, newest first, by project type too, through deliverables appended in any order', () => {
    const { state } = stateFromFixture(DEMO_FIXTURE, new Date('2026-02-01T00:00:00Z'));
    const indexes = indexesOfState(state);
    const partners = [...new Set(state.accounts.map((account) => account.partner_id))];
    const types = [...new Set(state.projects.map((project) => project.type))];
    const check = () => {
      for (const partner of [...partners, 999]) {
        expect(indexes.deliverablesOfPartner(partner)).toEqual(scan(state, partner));
        for (const type of types) expect(indexes.deliverablesOfPartner(partner, type)).toEqual(scan(state, partner, type));
      }
    };
    check();
    expect(scan(state, partners[0]!).length).toBeGreaterThan(0);
    // New deliverables of every project, prepared out of order (older ones appended later), some in the same millisecond.
    let id = 80_000;
    const template = state.deliverables[0]!;
    for (const [index, project] of state.projects.entries()) {
      const prepared = new Date(Date.UTC(2026, 0, 1 + ((index * 7) % 5))).toISOString();
      state.deliverables.push({ ...template, id: (id += 1), project_id: project.id, prepared_date: prepared } satisfies DeliverableRecord);
      check();
    }
    state.deliverables.splice(3, 2);
    check();
  });
});
