import { DELIVERABLE_STATUSES, PROJECT_TYPES } from '../../contract/vocabulary';
import { pageFlags } from '../pageFlags';
import type { CommandSpec } from '../spec';
import { SERVICE_WITH_KEY } from '../exitCodes';

const SHARED_FIELDS = ['project_id', 'document_id', 'title', 'status', 'view_link', 'summary', 'prepared_date', 'expires_at'] as const;

export const listDeliverables: CommandSpec = {
  name: 'list',
  description: "List deliverables across all of the partner's projects",
  flags: [
    { flag: '--status <status>', field: 'status', help: 'only deliverables with this status', values: DELIVERABLE_STATUSES },
    { flag: '--account <account-id>', field: 'account_id', help: 'only deliverables of this account' },
    { flag: '--type <project-type>', field: 'project_type', help: 'only deliverables of projects of this type', values: PROJECT_TYPES },
    ...pageFlags('deliverables'),
  ],
  examples: [
    'taxprep deliverables list --status delivered',
    'taxprep deliverables list --account 1001 --type tax_return',
    `taxprep deliverables list --all --ndjson | jq -r 'select(.status == "draft") | .project_id'`,
  ],
  jsonFields: ['id', 'account_id', 'project_type', ...SHARED_FIELDS],
  exitCodes: SERVICE_WITH_KEY,
  load: () => import('./list'),
};

export const deliverables: CommandSpec = {
  name: 'deliverables',
  group: 'core',
  description: "Read projects' deliverables",
  subcommands: [
    listDeliverables,
    {
      name: 'get',
      description: "Show a project's deliverable with its summary and view link",
      arguments: [{ name: '<project-id>', help: 'project identifier' }],
      flags: [{ flag: '--open', help: 'open the view link in the browser' }],
      examples: ['taxprep deliverables get 5002', 'taxprep deliverables get 5002 --open', 'taxprep deliverables get 5002 --json | jq -r .view_link'],
      jsonFields: ['deliverable_id', 'type', ...SHARED_FIELDS],
      exitCodes: [...SERVICE_WITH_KEY, ['NOT_FOUND', 'no such project, or the project has no deliverable yet (DELIVERABLE_NOT_FOUND)']],
      load: () => import('./get'),
    },
  ],
};
