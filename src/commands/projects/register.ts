import { PROJECT_STATUSES, PROJECT_TYPES, TAX_YEAR } from '../../contract/vocabulary';
import type { CommandSpec } from '../spec';

const PROJECT_FIELDS = ['id', 'type', 'tax_year', 'status', 'progress_percentage', 'estimated_completion'] as const;

export const listProjects: CommandSpec = {
  name: 'list',
  description: "List an account's projects with their status and progress",
  arguments: [{ name: '<account-id>', help: 'account identifier' }],
  flags: [
    { flag: '--tax-year <year>', field: 'tax_year', help: 'only projects of this tax year', range: TAX_YEAR },
    { flag: '--type <type>', field: 'type', help: 'only projects of this type', values: PROJECT_TYPES },
    { flag: '--status <status>', field: 'status', help: 'only projects with this status', values: PROJECT_STATUSES },
  ],
  examples: [
    'taxprep projects list 1001',
    'taxprep projects list 1001 --tax-year 2024 --status waiting_on_client',
    `taxprep projects list 1001 --json | jq -r '.projects[] | "\\(.id) \\(.progress_percentage)"'`,
  ],
  jsonFields: [...PROJECT_FIELDS, 'created_at'],
  load: () => import('./list'),
};

export const projects: CommandSpec = {
  name: 'projects',
  group: 'core',
  description: "Follow an account's tax projects",
  subcommands: [
    listProjects,
    {
      name: 'status',
      description: "Show a project's status, progress and outstanding items",
      arguments: [{ name: '<project-id>', help: 'project identifier' }],
      examples: ['taxprep projects status 5001', 'taxprep projects status 5001 --json | jq .outstanding_items'],
      jsonFields: [...PROJECT_FIELDS, 'account_id', 'last_updated', 'outstanding_items'],
      load: () => import('./status'),
    },
  ],
};
