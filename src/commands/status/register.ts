import type { CommandSpec } from '../spec';
import { ACCOUNT_FLAGS } from '../watch/register';
import { SERVICE_WITH_KEY, STATE } from '../exitCodes';

export const DEFAULT_WITHIN = '24h';

export const status: CommandSpec = {
  name: 'status',
  description: 'What needs attention across your clients: deliverables ready to send, clients who owe documents, links expiring',
  flags: [
    ...ACCOUNT_FLAGS,
    { flag: '--within <duration>', help: 'login links of the ledger expiring within this window: 90m, 24h, 7d', default: DEFAULT_WITHIN },
    { flag: '--csv', help: 'one CSV for a spreadsheet (a row per line of every section)' },
  ],
  examples: ['taxprep status', 'taxprep status --accounts clients.csv --within 3d', "taxprep status --json | jq '.waiting_on_client[0]'", 'taxprep status --csv > attention.csv'],
  notes:
    'Accounts looked at: those the deliverable list names, those of --accounts, and those the login-link\n' +
    'ledger knows for this service; the summary on stderr says how many of each, and which the service\n' +
    'would not show. Outstanding items: highest priority, then oldest first (priorities other than high\n' +
    'and medium after those two, in the order first seen).\n' +
    'Requests: the deliverable list (one per 100 deliverables), then per account looked at its project list\n' +
    'and the status of each project waiting on the client: 1 + accounts + waiting projects at least, all\n' +
    'reads, paced by the rate limit. --verbose shows each request.',
  exitCodes: [...SERVICE_WITH_KEY, ...STATE, ['NOT_FOUND', 'the service answered a list (such as GET /deliverables) with 404'], ['INTERRUPTED', 'stopped by Ctrl-C while reading the service; nothing was printed']],
  load: () => import('./status'),
};
