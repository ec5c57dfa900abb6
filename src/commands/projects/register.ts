import { PROJECT_STATUSES, PROJECT_TYPES } from '../../contract/vocabulary';
import type { CommandSpec } from '../spec';
import { SERVICE_WITH_KEY } from '../exitCodes';

export const DEFAULT_WATCH_INTERVAL = '30s';
export const MIN_WATCH_INTERVAL = '3s';

const PROJECT_FIELDS = ['id', 'type', 'tax_year', 'status', 'progress_percentage', 'estimated_completion'] as const;

export const listProjects: CommandSpec = {
  name: 'list',
  description: "List an account's projects with their status and progress",
  arguments: [{ name: '<account-id>', help: 'account identifier' }],
  flags: [
    { flag: '--tax-year <year>', field: 'tax_year', help: 'only projects of this tax year, such as 2025' },
    { flag: '--type <type>', field: 'type', help: 'only projects of this type', values: PROJECT_TYPES },
    { flag: '--status <status>', field: 'status', help: 'only projects with this status', values: PROJECT_STATUSES },
  ],
  examples: [
    'taxprep projects list 1001',
    'taxprep projects list 1001 --tax-year 2024 --status waiting_on_client',
    `taxprep projects list 1001 --json | jq -r '.projects[] | "\\(.id) \\(.progress_percentage)"'`,
  ],
  jsonFields: [...PROJECT_FIELDS, 'created_at'],
  exitCodes: [...SERVICE_WITH_KEY, 'NOT_FOUND'],
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
      flags: [
        { flag: '--watch', help: 'keep looking until the project is completed: redraws on a terminal, prints a line per change in a pipe (NDJSON with --json)' },
        { flag: '--interval <duration>', help: `time between looks with --watch, at least ${MIN_WATCH_INTERVAL} (one request a look keeps within a budget of 20 a minute)`, default: DEFAULT_WATCH_INTERVAL },
        { flag: '--timeout <duration>', help: 'with --watch: stop watching after this long (it also bounds each request, as everywhere)' },
        { flag: '--exit-status', help: 'with --watch: exit 0 once completed, 8 when --timeout ends the watch while the project is still pending' },
      ],
      examples: [
        'taxprep projects status 5001',
        'taxprep projects status 5001 --json | jq .outstanding_items',
        'taxprep projects status 5001 --watch --interval 1m --timeout 2h --exit-status && echo done',
      ],
      jsonFields: [...PROJECT_FIELDS, 'account_id', 'last_updated', 'outstanding_items'],
      exitCodes: [...SERVICE_WITH_KEY, 'NOT_FOUND', ['STILL_PENDING', 'with --watch --exit-status: --timeout ended the watch while the project was still pending'], ['INTERRUPTED', 'with --watch: stopped by Ctrl-C']],
      load: () => import('./status'),
    },
  ],
};
