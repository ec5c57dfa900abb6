import { DELIVERABLE_TYPE_OF_PROJECT, type Deliverable, type DeliverableListItem } from '../../contract';
import { ownedAccount, ownedProject } from '../access';
import type { MockDeps } from '../deps';
import { MockError } from '../errors';
import type { Handlers } from '../handler';
import { indexesOf, newestFirst } from '../indexes';
import type { DeliverableRecord, ProjectRecord } from '../state';
import { issueViewLink } from '../viewLinks';
import { paginate } from './listing';

export const deliverableHandlers: Pick<Handlers, 'getProjectDeliverable' | 'listDeliverables'> = {
  getProjectDeliverable({ params, partner }, deps) {
    const project = ownedProject(deps.store.state, partner, params.project_id);
    const deliverable = indexesOf(deps.store.state).deliverableOfProject(project.id);
    if (!deliverable) {
      throw new MockError('DELIVERABLE_NOT_FOUND', `Project ${project.id} has no deliverable yet.`, { project_id: project.id });
    }
    return deliverableOf(deps, deliverable, project);
  },

  listDeliverables({ query, partner }, deps) {
    const { state } = deps.store;
    // An account filter naming another partner's (or no) account is refused like any other route.
    if (query.account_id !== undefined) ownedAccount(state, partner, query.account_id);
    const indexes = indexesOf(state);
    // One account's few projects, or the partner's deliverables as the index keeps them: newest first, by project type when asked.
    const candidates =
      query.account_id === undefined
        ? indexes.deliverablesOfPartner(partner.id, query.project_type)
        : indexes
            .projectsOfAccount(query.account_id)
            .filter((project) => query.project_type === undefined || project.type === query.project_type)
            .flatMap((project) => indexes.deliverableOfProject(project.id) ?? [])
            .sort(newestFirst((deliverable) => deliverable.prepared_date));
    // The status changes, so it is the one filter that reads the records.
    const matching = query.status === undefined ? candidates : candidates.filter((deliverable) => deliverable.status === query.status);
    const { page, total_count, has_more } = paginate(matching, query);
    return {
      deliverables: page.map((deliverable) => deliverableListItemOf(deps, deliverable, projectOfDeliverable(deps, deliverable))),
      total_count,
      has_more,
    };
  },
};

export function projectOfDeliverable(deps: MockDeps, deliverable: DeliverableRecord): ProjectRecord {
  const project = indexesOf(deps.store.state).project(deliverable.project_id);
  if (!project) throw new Error(`deliverable ${deliverable.id} points at missing project ${deliverable.project_id}`);
  return project;
}

function deliverableOf(deps: MockDeps, deliverable: DeliverableRecord, project: ProjectRecord): Deliverable {
  const { view_link, expires_at } = issueViewLink(deps, deliverable);
  return {
    deliverable_id: deliverable.id,
    project_id: project.id,
    document_id: deliverable.document_id,
    title: deliverable.title,
    type: DELIVERABLE_TYPE_OF_PROJECT[project.type],
    status: deliverable.status,
    view_link,
    summary: deliverable.summary,
    prepared_date: deliverable.prepared_date,
    expires_at,
  };
}

/** The list endpoint's form; the `/_mock/deliverables` controls answer with it too. */
export function deliverableListItemOf(deps: MockDeps, deliverable: DeliverableRecord, project: ProjectRecord): DeliverableListItem {
  const { view_link, expires_at } = issueViewLink(deps, deliverable);
  return {
    id: deliverable.id,
    project_id: project.id,
    account_id: project.account_id,
    document_id: deliverable.document_id,
    title: deliverable.title,
    project_type: project.type,
    status: deliverable.status,
    view_link,
    summary: deliverable.summary,
    prepared_date: deliverable.prepared_date,
    expires_at,
  };
}
