import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import {
  DeliverableListItem,
  OUTSTANDING_ITEM_PRIORITIES,
  OUTSTANDING_ITEM_TYPES,
  OutstandingItem,
  ProjectStatusRecord,
  enumFilter,
  integer,
  oneOf,
} from '../../src/contract';
import { createClock } from '../../src/mock/clock';
import type { MockDeps } from '../../src/mock/deps';
import { recordFields } from '../../src/mock/recordRules';
import { deliverableListItemOf } from '../../src/mock/routes/deliverables';
import { projectStatusOf } from '../../src/mock/routes/projects';
import { createRequestLog } from '../../src/mock/requestLog';
import { DEMO_FIXTURE } from '../../src/mock/seed';
import { createSimulation, type Simulation } from '../../src/mock/simulation';
import { documentKeyOf, uploadAnswersItem } from '../../src/mock/simulation/documentMatching';
import { REQUESTED_DOCUMENTS } from '../../src/mock/simulation/preparer';
import type { DocumentRecord, OutstandingItemRecord, ProjectRecord } from '../../src/mock/state';
import { openStore } from '../../src/mock/store';
import { startMock, type RunningMock } from '../helpers/mock';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const START = new Date('2026-03-02T09:00:00.000Z');

// The contract's response schemas, narrowed to the contract's own vocabulary and rules: the
// tolerant forms alone accept any string as a status.
const isoTimestamp = z.iso.datetime({ offset: true });
const StrictProjectStatus = ProjectStatusRecord.extend({
  status: enumFilter.projectStatus,
  progress_percentage: integer(0, 100),
  estimated_completion: isoTimestamp.nullable(),
  last_updated: isoTimestamp,
  outstanding_items: z.array(
    OutstandingItem.extend({
      type: oneOf(OUTSTANDING_ITEM_TYPES),
      priority: oneOf(OUTSTANDING_ITEM_PRIORITIES),
      description: recordFields.itemDescription,
      requested_at: isoTimestamp,
    }),
  ),
});
const StrictDeliverable = DeliverableListItem.extend({
  status: enumFilter.deliverableStatus,
  title: recordFields.deliverableTitle,
  summary: recordFields.deliverableSummary,
  prepared_date: isoTimestamp,
  expires_at: isoTimestamp,
});

interface InProcess {
  deps: MockDeps;
  simulation: Simulation;
  advance(milliseconds: number): Promise<void>;
  /**
   * Every project in the status endpoint's form and every deliverable in the list's form, checked
   * by the strict schemas; view links left out (each store signs them with a random secret).
   */
  snapshot(): { projects: unknown[]; deliverables: unknown[] };
  upload(document: Pick<DocumentRecord, 'account_id' | 'filename' | 'tax_year' | 'description'>): void;
  close(): Promise<void>;
}

/** The demo data and a simulation on a clock that moves only when told (the fixture's relative times too). */
async function inProcess(seed: number, dataDir?: string): Promise<InProcess> {
  const store = await openStore({ fixture: DEMO_FIXTURE, ...(dataDir === undefined ? {} : { dataDir }) });
  const clock = createClock(store);
  const deps: MockDeps = {
    store,
    clock,
    settings: { baseUrl: 'http://127.0.0.1:1/v1beta', appUrl: 'http://127.0.0.1:1', rateLimits: [], uploadMaxBytes: 1024, faults: { latencyMs: 0, errorRate: 0, dropRate: 0 } },
    requestLog: createRequestLog(),
  };
  const simulation = createSimulation(deps, seed);
  return {
    deps,
    simulation,
    async advance(milliseconds) {
      await clock.advance(milliseconds);
      if (simulation.due()) await simulation.catchUp();
    },
    snapshot() {
      const { state } = store;
      return {
        projects: state.projects.map((project) => StrictProjectStatus.parse(projectStatusOf(state, project))),
        deliverables: state.deliverables.map((deliverable) => {
          const project = state.projects.find((candidate) => candidate.id === deliverable.project_id)!;
          const { view_link: _signed, ...listed } = StrictDeliverable.parse(deliverableListItemOf(deps, deliverable, project));
          return listed;
        }),
      };
    },
    upload(document) {
      // What the upload route stores, without the bytes: the simulation reads only the record.
      store.state.documents.push({ id: store.nextId('document'), file_size: 1, file_type: 'text/plain', blob: 'none', uploaded_at: clock.nowIso(), ...document });
    },
    close: () => store.close(),
  };
}

/** The states seen after each advance, as the status and list endpoints show them. */
async function run(seed: number, steps: readonly number[]) {
  const mock = await inProcess(seed);
  try {
    const seen = [];
    for (const milliseconds of steps) {
      await mock.advance(milliseconds);
      seen.push(mock.snapshot());
    }
    return seen;
  } finally {
    await mock.close();
  }
}

const statusOf = (snapshot: { projects: unknown[] }, id: number) => (snapshot.projects as Array<{ id: number; status: string }>).find((project) => project.id === id)!.status;

describe('serve --mock --simulate: the preparer simulation', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: START });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the same sequence of states for the same seed, and moves projects and deliverables along', async () => {
    const days = Array.from({ length: 20 }, () => DAY_MS);
    const first = await run(7, days);
    const second = await run(7, days);
    expect(second).toEqual(first);

    const initial = await run(7, [0]);
    expect(statusOf(initial[0]!, 5002)).toBe('in_progress');
    expect(statusOf(first.at(-1)!, 5002)).toBe('completed');
    // 5002's draft deliverable (9001) was completed with its project; 5007 (in progress, no deliverable) got a draft, then completed.
    const deliverables = first.at(-1)!.deliverables as Array<{ id: number; project_id: number; status: string }>;
    expect(deliverables.find((deliverable) => deliverable.id === 9001)!.status).toBe('completed');
    const drafted = first.map((snapshot) => (snapshot.deliverables as Array<{ project_id: number; status: string }>).find((each) => each.project_id === 5007)?.status);
    expect(drafted).toContain('draft');
    expect(drafted.at(-1)).toBe('completed');
  });

  it('gives another sequence for another seed', async () => {
    const days = Array.from({ length: 5 }, () => DAY_MS);
    expect(await run(8, days)).not.toEqual(await run(7, days));
  });

  it('reaches the same state whether the clock moves an hour at a time or days at once', async () => {
    const byHour = await run(11, Array.from({ length: 72 }, () => HOUR_MS));
    const byDays = await run(11, [DAY_MS, 2 * DAY_MS]);
    expect(byDays.at(-1)).toEqual(byHour.at(-1));
  });

  it('produces only states the contract allows, over half a year and several seeds', async () => {
    for (const seed of [1, 2, 42]) {
      const mock = await inProcess(seed);
      try {
        const { state } = mock.deps.store;
        let previous = new Map<number, string>();
        const statuses = new Set<string>();
        let documentsAskedFor = 0;
        for (let day = 1; day <= 180; day += 1) {
          await mock.advance(DAY_MS);
          const { projects, deliverables } = mock.snapshot(); // parsing is the check
          const now = mock.deps.clock.nowIso();
          for (const project of projects as Array<{ id: number; status: string; progress_percentage: number; last_updated: string }>) {
            expect(project.last_updated <= now).toBe(true);
            expect(project.last_updated >= (previous.get(project.id) ?? '')).toBe(true);
            if (project.status === 'completed') expect(project.progress_percentage).toBe(100);
            statuses.add(project.status);
          }
          previous = new Map((projects as Array<{ id: number; last_updated: string }>).map((project) => [project.id, project.last_updated]));
          expect(deliverables.length).toBeLessThanOrEqual(projects.length);
          documentsAskedFor += state.outstandingItems.filter((item) => REQUESTED_DOCUMENTS.some((description) => item.description.startsWith(description))).length;
          // The client answers every missing document every other day; each month the work starts over.
          if (day % 2 === 0) {
            for (const item of state.outstandingItems.filter((each) => each.type === 'missing_document')) {
              const project = state.projects.find((candidate) => candidate.id === item.project_id)!;
              mock.upload({ account_id: project.account_id, tax_year: project.tax_year, filename: `${documentKeyOf(item.description)}.pdf`, description: '' });
            }
          }
          if (day % 30 === 0) {
            for (const project of state.projects.filter((each) => each.status === 'completed')) Object.assign(project, { status: 'in_progress', progress_percentage: 10, last_updated: now });
          }
        }
        expect([...statuses].sort()).toEqual([...enumFilter.projectStatus.options].sort());
        expect(documentsAskedFor).toBeGreaterThan(0);
      } finally {
        await mock.close();
      }
    }
  });

  it('moves a project waiting on the client to in_progress once every missing document is uploaded', async () => {
    const mock = await inProcess(5);
    try {
      const project5005 = () => mock.snapshot().projects.find((project) => (project as { id: number }).id === 5005) as { status: string; outstanding_items: Array<{ description: string }> };
      await mock.advance(2 * DAY_MS);
      // Nothing uploaded: the missing RSU agreements keep it waiting, however long.
      expect(project5005().status).toBe('waiting_on_client');
      expect(project5005().outstanding_items.map((item) => item.description)).toContain('RSU grant agreements');

      mock.upload({ account_id: 1002, filename: 'rsu-grants.pdf', tax_year: 2024, description: 'RSU grant agreements' });
      await mock.advance(0);
      expect(project5005().status).toBe('waiting_on_client'); // another tax year answers nothing

      mock.upload({ account_id: 1002, filename: 'RSU_grant_agreements.pdf', tax_year: 2025, description: '' });
      await mock.advance(0);
      expect(project5005().outstanding_items.map((item) => item.description)).not.toContain('RSU grant agreements');
      expect(project5005().status).toBe('in_progress');
    } finally {
      await mock.close();
    }
  });

  it('continues where it stood after a restart with a data directory; another seed starts afresh', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'taxprep-simulation-'));
    try {
      const first = await inProcess(4, dataDir);
      await first.advance(2 * DAY_MS + HOUR_MS / 2);
      const before = first.snapshot();
      await first.close();

      const again = await inProcess(4, dataDir);
      expect(again.deps.store.state.simulation).toEqual({ seed: 4, started_at_ms: START.getTime(), steps_done: 48, documents_seen: expect.any(Number) });
      expect(again.snapshot()).toEqual(before);
      await again.close();

      const other = await inProcess(5, dataDir);
      expect(other.deps.store.state.simulation).toMatchObject({ seed: 5, started_at_ms: START.getTime() + 2 * DAY_MS + HOUR_MS / 2, steps_done: 0 });
      await other.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts afresh after a reset, from the fixture', async () => {
    const mock = await inProcess(3);
    try {
      await mock.advance(30 * DAY_MS);
      expect(statusOf(mock.snapshot(), 5002)).toBe('completed');
      await mock.deps.store.reset();
      await mock.advance(0);
      expect(statusOf(mock.snapshot(), 5002)).toBe('in_progress');
      expect(mock.deps.store.state.simulation?.steps_done).toBe(0);
    } finally {
      await mock.close();
    }
  });
});

describe('which upload answers a missing document', () => {
  const project = { id: 1, account_id: 10, tax_year: 2025 } as ProjectRecord;
  const item = (description: string): OutstandingItemRecord => ({
    id: 1,
    project_id: 1,
    type: 'missing_document',
    description,
    priority: 'high',
    requested_at: '2026-01-10T00:00:00.000Z',
  });
  const upload = (filename: string, description = '', changes: Partial<DocumentRecord> = {}) =>
    ({ account_id: 10, tax_year: 2025, filename, description, uploaded_at: '2026-01-11T00:00:00.000Z', ...changes }) as DocumentRecord;

  it('keys an item by its first form name (a word with a digit that is not a year), else its first word', () => {
    expect(documentKeyOf('Form 1098 mortgage interest statement for 2025')).toBe('1098');
    expect(documentKeyOf('Third-quarter 1099-NEC forms')).toBe('1099nec');
    expect(documentKeyOf('Form W-2 from the second employer')).toBe('w2');
    expect(documentKeyOf('Receipts for home office expenses')).toBe('receipts');
    expect(documentKeyOf('Statements for 2025')).toBe('statements');
  });

  it('matches the key in the filename or the description, ignoring case and punctuation', () => {
    expect(uploadAnswersItem(upload('1099-nec-q3.pdf'), item('Third-quarter 1099-NEC forms'), project)).toBe(true);
    expect(uploadAnswersItem(upload('scan.pdf', 'Form 1098 from the bank'), item('Form 1098 mortgage interest statement'), project)).toBe(true);
    expect(uploadAnswersItem(upload('home-office-RECEIPTS.jpg'), item('Receipts for home office expenses'), project)).toBe(true);
    expect(uploadAnswersItem(upload('1099-int.pdf'), item('Third-quarter 1099-NEC forms'), project)).toBe(false);
  });

  it('needs the same account and tax year, an upload made after the request, and a missing_document item', () => {
    const receipts = item('Receipts for home office expenses');
    expect(uploadAnswersItem(upload('receipts.pdf', '', { account_id: 11 }), receipts, project)).toBe(false);
    expect(uploadAnswersItem(upload('receipts.pdf', '', { tax_year: 2024 }), receipts, project)).toBe(false);
    expect(uploadAnswersItem(upload('receipts.pdf', '', { uploaded_at: '2026-01-09T00:00:00.000Z' }), receipts, project)).toBe(false);
    expect(uploadAnswersItem(upload('receipts.pdf'), { ...receipts, type: 'client_request' }, project)).toBe(false);
  });
});

describe('serve --mock --simulate over HTTP', () => {
  let mock: RunningMock | undefined;
  afterEach(async () => {
    await mock?.close();
    mock = undefined;
  });

  const advance = (duration: string) => mock!.request('/_mock/clock', { body: { advance: duration } });
  const status = async (projectId: number) => (await mock!.request(`/projects/${projectId}/status`, { key: mock!.keys.acme })).json;

  it('resolves the items an upload names and resumes the project; the /_mock controls keep working', async () => {
    mock = await startMock({ simulationSeed: 2 });
    await advance('1d');
    expect((await status(5001)).status).toBe('waiting_on_client');

    for (const [name, text] of [['1098-mortgage-2025.pdf', 'Form 1098'], ['home-office-receipts.csv', 'a,b']] as const) {
      const form = new FormData();
      form.set('tax_year', '2025');
      form.set('file', new Blob([text], { type: name.endsWith('.pdf') ? 'application/pdf' : 'text/csv' }), name);
      const response = await fetch(`${mock.baseUrl}/accounts/1001/documents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${mock.keys.acme}` } });
      expect(response.status).toBe(201);
    }
    const resumed = await status(5001);
    expect(resumed.status).toBe('in_progress');
    expect(resumed.outstanding_items.map((item: { type: string }) => item.type)).not.toContain('missing_document');

    const moved = await mock.request('/_mock/projects/5004', { body: { status: 'waiting_on_client', progress_percentage: 50 } });
    expect(moved.status).toBe(200);
    expect((await status(5004)).status).toBe('waiting_on_client');
  });

  it('leaves every record as it is on a mock without --simulate, however far the clock moves', async () => {
    mock = await startMock();
    const before = await status(5002);
    await advance('30d');
    expect(await status(5002)).toEqual(before);
  });
});
