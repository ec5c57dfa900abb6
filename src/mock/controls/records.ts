import * as z from 'zod';
import {
  ACCOUNT_STATUSES,
  DELIVERABLE_STATUSES,
  FILENAME_MAX_CHARACTERS,
  OUTSTANDING_ITEM_PRIORITIES,
  OUTSTANDING_ITEM_TYPES,
  PROJECT_STATUSES,
  integer,
  oneOf,
  multilineText,
} from '../../contract';
import { addDeliverableRecords } from '../deliverableRecords';
import { MockError } from '../errors';
import { VIEW_LINK_HOURS, VIEW_LINK_HOURS_RULE, nonBlank, recordFields } from '../recordRules';
import { deliverableListItemOf, projectOfDeliverable } from '../routes/deliverables';
import { documentOf } from '../routes/documents';
import { projectStatusOf } from '../routes/projects';
import type { AccountRecord, DocumentRecord, MockState, OutstandingItemRecord, ProjectRecord } from '../state';
import { indexesOf } from '../indexes';
import { control, idParams, unknownRecord } from './control';

/** Controls that move the service's records where a real back office would: statuses, progress, items, deliverables. */

const DELIVERABLE_CONTENT_MAX_CHARACTERS = 1_000_000;

const viewLinkHours = integer(VIEW_LINK_HOURS.min, VIEW_LINK_HOURS.max, VIEW_LINK_HOURS_RULE);
const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp such as 2026-04-15T00:00:00Z' });
const atLeastOneField = (value: object) => Object.keys(value).length > 0;
const NOTHING_TO_CHANGE = { error: 'must give at least one field to change' };

const setAccountStatus = control({
  method: 'POST',
  path: '/accounts/:account_id/status',
  summary: 'Set an account status (active, onboarding, suspended, completed).',
  params: idParams('account_id'),
  body: z.strictObject({ status: oneOf(ACCOUNT_STATUSES) }),
  async handle({ params, body }, deps) {
    const account = findAccount(deps.store.state, params.account_id);
    account.status = body.status;
    await deps.store.commit();
    return { id: account.id, email: account.email, first_name: account.first_name, last_name: account.last_name, status: account.status };
  },
});

const updateProject = control({
  method: 'POST',
  path: '/projects/:project_id',
  summary: 'Move a project: status, progress_percentage, estimated_completion (null clears it). Sets last_updated.',
  params: idParams('project_id'),
  body: z
    .strictObject({
      status: oneOf(PROJECT_STATUSES).optional(),
      progress_percentage: integer(0, 100).optional(),
      estimated_completion: timestamp.nullable().optional(),
    })
    .refine(atLeastOneField, NOTHING_TO_CHANGE),
  async handle({ params, body }, deps) {
    const { state } = deps.store;
    const project = findProject(state, params.project_id);
    if (body.status !== undefined) project.status = body.status;
    if (body.progress_percentage !== undefined) project.progress_percentage = body.progress_percentage;
    if (body.estimated_completion !== undefined) project.estimated_completion = normalisedTimestamp(body.estimated_completion);
    project.last_updated = deps.clock.nowIso();
    await deps.store.commit();
    return projectStatusOf(state, project);
  },
});

const addOutstandingItem = control({
  method: 'POST',
  path: '/projects/:project_id/outstanding-items',
  summary: 'Add an outstanding item {type, description, priority (default medium)} to a project.',
  params: idParams('project_id'),
  body: z.strictObject({
    type: oneOf(OUTSTANDING_ITEM_TYPES),
    description: recordFields.itemDescription,
    priority: oneOf(OUTSTANDING_ITEM_PRIORITIES).default('medium'),
  }),
  successStatus: 201,
  async handle({ params, body }, deps) {
    const { state } = deps.store;
    const project = findProject(state, params.project_id);
    const now = deps.clock.nowIso();
    const item: OutstandingItemRecord = { id: deps.store.nextId('outstandingItem'), project_id: project.id, ...body, requested_at: now };
    state.outstandingItems.push(item);
    project.last_updated = now;
    await deps.store.commit();
    return item;
  },
});

const removeOutstandingItem = control({
  method: 'DELETE',
  path: '/projects/:project_id/outstanding-items/:item_id',
  summary: 'Remove an outstanding item (the client sent the document or answered).',
  params: idParams('project_id', 'item_id'),
  async handle({ params, reply }, deps) {
    const { state } = deps.store;
    const project = findProject(state, params.project_id);
    const index = state.outstandingItems.findIndex((item) => item.id === params.item_id && item.project_id === project.id);
    if (index < 0) throw unknownRecord(`outstanding item of project ${project.id}`, params.item_id, reply);
    const [removed] = state.outstandingItems.splice(index, 1);
    project.last_updated = deps.clock.nowIso();
    await deps.store.commit();
    return removed;
  },
});

const addDeliverable = control({
  method: 'POST',
  path: '/projects/:project_id/deliverable',
  summary:
    'Give a project its deliverable {title, status (default draft), summary, filename, file_type, content, view_link_hours}; its document is created too.',
  params: idParams('project_id'),
  body: z.strictObject({
    title: recordFields.deliverableTitle,
    status: oneOf(DELIVERABLE_STATUSES).default('draft'),
    summary: recordFields.deliverableSummary.default(''),
    filename: nonBlank(FILENAME_MAX_CHARACTERS).optional(),
    file_type: recordFields.fileType,
    content: multilineText(DELIVERABLE_CONTENT_MAX_CHARACTERS).optional(),
    view_link_hours: viewLinkHours.default(VIEW_LINK_HOURS.default),
  }),
  successStatus: 201,
  async handle({ params, body }, deps) {
    const { state } = deps.store;
    const project = findProject(state, params.project_id);
    const existing = indexesOf(state).deliverableOfProject(project.id);
    if (existing) {
      throw new MockError('DELIVERABLE_EXISTS', `Project ${project.id} already has deliverable ${existing.id}; update it instead.`, {
        project_id: project.id,
        deliverable_id: existing.id,
      });
    }
    const { deliverable, document } = await addDeliverableRecords(deps, project, body, deps.clock.nowIso());
    await deps.store.commit();
    return { deliverable: deliverableListItemOf(deps, deliverable, project), document: documentOf(document) };
  },
});

const updateDeliverable = control({
  method: 'POST',
  path: '/deliverables/:deliverable_id',
  summary: 'Change a deliverable: status, title, summary, view_link_hours.',
  params: idParams('deliverable_id'),
  body: z
    .strictObject({
      status: oneOf(DELIVERABLE_STATUSES).optional(),
      title: recordFields.deliverableTitle.optional(),
      summary: recordFields.deliverableSummary.optional(),
      view_link_hours: viewLinkHours.optional(),
    })
    .refine(atLeastOneField, NOTHING_TO_CHANGE),
  async handle({ params, body, reply }, deps) {
    const deliverable = indexesOf(deps.store.state).deliverable(params.deliverable_id);
    if (!deliverable) throw unknownRecord('deliverable', params.deliverable_id, reply);
    Object.assign(deliverable, body);
    await deps.store.commit();
    return deliverableListItemOf(deps, deliverable, projectOfDeliverable(deps, deliverable));
  },
});

const documentContent = control({
  method: 'GET',
  path: '/documents/:document_id/content',
  summary: 'Download the stored bytes of any document (uploads and deliverables).',
  params: idParams('document_id'),
  handle({ params, reply }, deps) {
    const document = findDocument(deps.store.state, params.document_id);
    return reply
      .type(document.file_type)
      .header('content-length', String(document.file_size))
      .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(document.filename)}`)
      .send(deps.store.blobs.read(document.blob));
  },
});

export const recordControls = [
  setAccountStatus,
  updateProject,
  addOutstandingItem,
  removeOutstandingItem,
  addDeliverable,
  updateDeliverable,
  documentContent,
];

/** Controls see every partner's records; ids they do not know get the contract's own not-found codes. */
function findAccount(state: MockState, accountId: number): AccountRecord {
  const account = indexesOf(state).account(accountId);
  if (!account) throw new MockError('ACCOUNT_NOT_FOUND', `No account with id ${accountId} exists.`, { account_id: accountId });
  return account;
}

function findProject(state: MockState, projectId: number): ProjectRecord {
  const project = indexesOf(state).project(projectId);
  if (!project) throw new MockError('PROJECT_NOT_FOUND', `No project with id ${projectId} exists.`, { project_id: projectId });
  return project;
}

function findDocument(state: MockState, documentId: number): DocumentRecord {
  const document = indexesOf(state).document(documentId);
  if (!document) throw new MockError('DOCUMENT_NOT_FOUND', `No document with id ${documentId} exists.`, { document_id: documentId });
  return document;
}

/** Stored timestamps are all `toISOString()` form, so that they sort as strings. */
function normalisedTimestamp(value: string | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}
