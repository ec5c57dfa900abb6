import { OUTSTANDING_ITEM_PRIORITIES, type OutstandingItem, type ProjectListItem, type ProjectStatusRecord } from '../../contract';
import { ownedAccount, ownedProject } from '../access';
import type { Handlers } from '../handler';
import { indexesOf, newestFirst } from '../indexes';
import type { MockState, OutstandingItemRecord, ProjectRecord } from '../state';

export const projectHandlers: Pick<Handlers, 'listProjects' | 'getProjectStatus'> = {
  listProjects({ params, query, partner }, deps) {
    const { state } = deps.store;
    ownedAccount(state, partner, params.account_id);
    const projects = indexesOf(state)
      .projectsOfAccount(params.account_id)
      .filter((project) => query.tax_year === undefined || project.tax_year === query.tax_year)
      .filter((project) => query.type === undefined || project.type === query.type)
      .filter((project) => query.status === undefined || project.status === query.status)
      .sort(newestFirst((project) => project.created_at));
    return { projects: projects.map(projectListItemOf), total_count: projects.length };
  },

  getProjectStatus({ params, partner }, deps) {
    const { state } = deps.store;
    return projectStatusOf(state, ownedProject(state, partner, params.project_id));
  },
};

function projectListItemOf(project: ProjectRecord): ProjectListItem {
  return {
    id: project.id,
    type: project.type,
    tax_year: project.tax_year,
    status: project.status,
    progress_percentage: project.progress_percentage,
    created_at: project.created_at,
    estimated_completion: project.estimated_completion,
  };
}

/** The status endpoint's form; the `/_mock/projects` controls answer with it too. */
export function projectStatusOf(state: MockState, project: ProjectRecord): ProjectStatusRecord {
  return {
    id: project.id,
    account_id: project.account_id,
    type: project.type,
    tax_year: project.tax_year,
    status: project.status,
    progress_percentage: project.progress_percentage,
    estimated_completion: project.estimated_completion,
    last_updated: project.last_updated,
    outstanding_items: outstandingItemsOf(state, project.id).map(outstandingItemOf),
  };
}

/** Most urgent first (high, medium, low), then the longest waiting. */
function outstandingItemsOf(state: MockState, projectId: number): OutstandingItemRecord[] {
  const rank = (item: OutstandingItemRecord) => OUTSTANDING_ITEM_PRIORITIES.indexOf(item.priority);
  return [...indexesOf(state).outstandingItemsOfProject(projectId)].sort((a, b) => rank(a) - rank(b) || a.requested_at.localeCompare(b.requested_at) || a.id - b.id);
}

function outstandingItemOf(item: OutstandingItemRecord): OutstandingItem {
  return { type: item.type, description: item.description, priority: item.priority, requested_at: item.requested_at };
}
