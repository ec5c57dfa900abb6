import { addDeliverableRecords } from '../deliverableRecords';
import type { MockDeps } from '../deps';
import { DEFAULT_FILE_TYPE, VIEW_LINK_HOURS } from '../recordRules';
import type { DocumentRecord, MockState, SimulationCursor } from '../state';
import { uploadAnswersItem } from './documentMatching';
import { isSettled, itemsOf, resumeWork, STEP_MS, stepProject, type Step, type StepEffects } from './preparer';

/**
 * `serve --mock --simulate`: the mock plays the preparer, moving projects along as the virtual
 * clock advances (docs/mock.md, "Simulating the preparer"). It works lazily: the server asks `due()`
 * before each request (a few comparisons) and, only when an hour step has come or an upload has
 * not been looked at yet, awaits `catchUp()`, which takes every step up to now. Nothing runs while
 * nobody asks, an advance of a year costs one catch-up at the next request, and no timer races
 * the tests. Without `--simulate` the server installs none of it.
 */
export interface Simulation {
  due(): boolean;
  catchUp(): Promise<void>;
}

export function createSimulation(deps: MockDeps, seed: number): Simulation {
  const { store, clock } = deps;
  // A state from a reset, or one another seed was simulating, starts afresh from now.
  const cursorOf = (state: MockState): SimulationCursor => {
    if (state.simulation?.seed !== seed) {
      state.simulation = { seed, started_at_ms: clock.nowMs(), steps_done: 0, documents_seen: state.documents.length };
    }
    return state.simulation;
  };
  cursorOf(store.state);

  const due = () => {
    const { state } = store;
    const cursor = state.simulation;
    return (
      cursor === undefined ||
      cursor.seed !== seed ||
      state.documents.length > cursor.documents_seen ||
      clock.nowMs() >= cursor.started_at_ms + (cursor.steps_done + 1) * STEP_MS
    );
  };

  async function pass(): Promise<void> {
    const { state } = store;
    const cursor = cursorOf(state);
    const stillCurrent = () => store.state === state;
    const effects: StepEffects = {
      nextItemId: () => store.nextId('outstandingItem'),
      async addDraftDeliverable(project, title, summary, at) {
        const fields = { title, summary, status: 'draft', file_type: DEFAULT_FILE_TYPE, view_link_hours: VIEW_LINK_HOURS.default } as const;
        await addDeliverableRecords(deps, project, fields, at);
      },
    };
    const stepsUntil = async (targetMs: number) => {
      const last = Math.floor((targetMs - cursor.started_at_ms) / STEP_MS);
      let active = state.projects.filter((project) => !isSettled(state, project));
      while (cursor.steps_done < last && stillCurrent()) {
        // Settled projects wait for an upload or a control: the steps between change nothing.
        if (active.length === 0) {
          cursor.steps_done = last;
          break;
        }
        const index = cursor.steps_done + 1;
        const atMs = cursor.started_at_ms + index * STEP_MS;
        const step: Step = { seed, index, atMs, at: new Date(atMs).toISOString() };
        for (const project of active) await stepProject(state, project, step, effects);
        cursor.steps_done = index;
        active = active.filter((project) => !isSettled(state, project));
      }
    };
    // Uploads in the order they came, each after the steps before it, so that chunks of clock never change the outcome.
    while (cursor.documents_seen < state.documents.length && stillCurrent()) {
      const upload = state.documents[cursor.documents_seen]!;
      await stepsUntil(Date.parse(upload.uploaded_at));
      if (!state.deliverables.some((deliverable) => deliverable.document_id === upload.id)) answerItems(state, upload);
      cursor.documents_seen += 1;
    }
    await stepsUntil(clock.nowMs());
    await store.commit();
  }

  let running: Promise<void> | undefined;
  return {
    due,
    catchUp() {
      // One catch-up at a time: concurrent requests wait for the one under way, then see its result.
      running ??= (async () => {
        try {
          while (due()) await pass();
        } finally {
          running = undefined;
        }
      })();
      return running;
    },
  };
}

/** Removes the `missing_document` items an upload answers; a project no longer missing any resumes. */
function answerItems(state: MockState, upload: DocumentRecord): void {
  for (const project of state.projects) {
    if (project.account_id !== upload.account_id) continue;
    const answered = itemsOf(state, project).filter((item) => uploadAnswersItem(upload, item, project));
    if (answered.length === 0) continue;
    for (const item of answered) state.outstandingItems.splice(state.outstandingItems.indexOf(item), 1);
    project.last_updated = upload.uploaded_at;
    if (project.status === 'waiting_on_client' && !itemsOf(state, project).some((item) => item.type === 'missing_document')) {
      resumeWork(project, { at: upload.uploaded_at, atMs: Date.parse(upload.uploaded_at) });
    }
  }
}
