import type { ProjectType } from '../../contract';
import { indexesOf } from '../indexes';
import type { MockState, OutstandingItemRecord, ProjectRecord } from '../state';
import { documentKeyOf } from './documentMatching';
import { draw } from './random';

/**
 * What the simulated preparer does to one project in one step (an hour of virtual time). Every
 * decision is a `draw` of the seed, the project, the step and what is decided, so the same seed
 * and the same uploads give the same records. The rules, with their odds per step, are in the
 * docs/mock.md ("Simulating the preparer"); the constants below are those odds.
 */

/** One step of the simulation, in virtual time. */
export const STEP_MS = 3_600_000;
const DAY_MS = 24 * STEP_MS;

/** A client answers a `client_request` within about a day and a half on average. */
const ANSWER_CHANCE = 1 / 36;
/** In progress, the work moves on about every seventh hour, by 5 to 15 points, up to 80: a few days from start to review. */
const WORK_CHANCE = 0.15;
const REVIEW_AT = 80;
/** While below 60%, now and then the preparer finds a document missing (about once in two days). */
const REQUEST_CHANCE = 0.02;
const REQUEST_BELOW = 60;
/** In review, the checks move by 1 to 5 points up to 95; from 90 on, the deliverable is completed with this chance. */
const REVIEW_WORK_CHANCE = 0.15;
const REVIEWED = 95;
const COMPLETE_FROM = 90;
const COMPLETE_CHANCE = 0.05;

/** Documents the preparer may ask for; each description's key (`documentKeyOf`) is what an upload must name. */
export const REQUESTED_DOCUMENTS = [
  'Form 1099-DIV dividend statement',
  'Form 1098-T tuition statement',
  'Form W-2 from the second employer',
  'Schedule K-1 from the partnership',
  'Receipts for charitable donations',
] as const;

const DELIVERABLE_TITLES: Record<ProjectType, string> = {
  tax_return: 'tax return',
  quarterly_estimate: 'estimated tax payment',
  tax_planning: 'tax plan',
  equity_planning: 'equity compensation plan',
};

/** Decisions, so that two choices in one step never share a draw. */
const Decision = { Work: 1, WorkAmount: 2, Request: 3, RequestWhich: 4, RequestPriority: 5, Complete: 6, Answer: 7 } as const;
type Decision = (typeof Decision)[keyof typeof Decision];

export interface Step {
  seed: number;
  index: number;
  atMs: number;
  /** `atMs` as stored timestamps are written. */
  at: string;
}

/** What a step needs of the mock beyond the state: new ids, and a deliverable with its document. */
export interface StepEffects {
  nextItemId(): number;
  addDraftDeliverable(project: ProjectRecord, title: string, summary: string, at: string): Promise<void>;
}

/** True when no step can change the project: only an upload or a `/_mock` control can move it on. */
export function isSettled(state: MockState, project: ProjectRecord): boolean {
  if (project.status === 'completed') return true;
  if (project.status !== 'waiting_on_client') return false;
  const items = itemsOf(state, project);
  return items.some((item) => item.type === 'missing_document') && !items.some((item) => item.type === 'client_request');
}

export async function stepProject(state: MockState, project: ProjectRecord, step: Step, effects: StepEffects): Promise<void> {
  const chance = (decision: Decision, ...parts: number[]) => draw(step.seed, project.id, step.index, decision, ...parts);
  const touch = () => {
    project.last_updated = step.at;
  };

  for (const item of itemsOf(state, project)) {
    if (item.type === 'client_request' && chance(Decision.Answer, item.id) < ANSWER_CHANCE) {
      state.outstandingItems.splice(state.outstandingItems.indexOf(item), 1);
      touch();
    }
  }

  switch (project.status) {
    case 'waiting_on_client':
      if (!itemsOf(state, project).some((item) => item.type === 'missing_document')) resumeWork(project, step);
      return;
    case 'in_progress':
      if (chance(Decision.Work) < WORK_CHANCE) {
        project.progress_percentage = Math.min(REVIEW_AT, project.progress_percentage + 5 + Math.floor(chance(Decision.WorkAmount) * 11));
        touch();
        if (project.progress_percentage >= REVIEW_AT) {
          project.status = 'in_review';
          project.estimated_completion = new Date(step.atMs + 3 * DAY_MS).toISOString();
        }
      } else if (project.progress_percentage < REQUEST_BELOW && chance(Decision.Request) < REQUEST_CHANCE) {
        requestDocument(state, project, step, effects, chance(Decision.RequestWhich), chance(Decision.RequestPriority));
      }
      break;
    case 'in_review':
      if (project.progress_percentage < REVIEWED && chance(Decision.Work) < REVIEW_WORK_CHANCE) {
        project.progress_percentage = Math.min(REVIEWED, project.progress_percentage + 1 + Math.floor(chance(Decision.WorkAmount) * 5));
        touch();
      } else if (project.progress_percentage >= COMPLETE_FROM && chance(Decision.Complete) < COMPLETE_CHANCE) {
        complete(state, project, step);
      }
      break;
    case 'completed':
      return;
  }
  // A project in review has its deliverable as a draft; one moved into review by a control gets it at the next step.
  if (project.status === 'in_review' && !state.deliverables.some((deliverable) => deliverable.project_id === project.id)) {
    const title = `${project.tax_year} ${DELIVERABLE_TITLES[project.type]}`;
    await effects.addDraftDeliverable(project, title, `Draft of the ${title}, ready for the preparer's review.`, step.at);
  }
}

/** The documents the project waited for are in: the preparer resumes, expecting to finish in a week. */
export function resumeWork(project: ProjectRecord, step: Pick<Step, 'at' | 'atMs'>): void {
  project.status = 'in_progress';
  project.estimated_completion = new Date(step.atMs + 7 * DAY_MS).toISOString();
  project.last_updated = step.at;
}

function requestDocument(state: MockState, project: ProjectRecord, step: Step, effects: StepEffects, which: number, priority: number): void {
  const open = new Set(itemsOf(state, project).map((item) => documentKeyOf(item.description)));
  const candidates = REQUESTED_DOCUMENTS.filter((description) => !open.has(documentKeyOf(description)));
  const description = candidates[Math.floor(which * candidates.length)];
  if (description === undefined) return;
  state.outstandingItems.push({
    id: effects.nextItemId(),
    project_id: project.id,
    type: 'missing_document',
    description: `${description} for ${project.tax_year}`,
    priority: priority < 0.3 ? 'high' : priority < 0.8 ? 'medium' : 'low',
    requested_at: step.at,
  });
  project.status = 'waiting_on_client';
  project.last_updated = step.at;
}

function complete(state: MockState, project: ProjectRecord, step: Step): void {
  project.status = 'completed';
  project.progress_percentage = 100;
  project.estimated_completion = step.at;
  project.last_updated = step.at;
  const deliverable = indexesOf(state).deliverableOfProject(project.id);
  if (deliverable?.status === 'draft') deliverable.status = 'completed';
}

export function itemsOf(state: MockState, project: ProjectRecord): OutstandingItemRecord[] {
  return state.outstandingItems.filter((item) => item.project_id === project.id);
}
