import { NAME_MAX_CHARACTERS } from '../../contract/vocabulary';
import type { CommandSpec, FlagSpec } from '../spec';
import { YES_FLAG } from '../yesFlag';
import { batchRunFlags } from '../../batch/flags';
import { ACCOUNTS_FILE_NAME } from '../../batch/ledgers/fileNames';
import { SERVICE_WITH_KEY, STATE } from '../exitCodes';

const ACCOUNT_FIELDS = ['id', 'email', 'first_name', 'last_name', 'status'] as const;

export const SPOUSE_FLAGS: readonly FlagSpec[] = [
  { flag: '--spouse-email <email>', field: 'spouse.email', help: 'spouse email (with --spouse-first-name and --spouse-last-name)' },
  { flag: '--spouse-first-name <name>', field: 'spouse.first_name', help: 'spouse first name', maxCharacters: NAME_MAX_CHARACTERS },
  { flag: '--spouse-last-name <name>', field: 'spouse.last_name', help: 'spouse last name', maxCharacters: NAME_MAX_CHARACTERS },
];

export const createAccount: CommandSpec = {
  name: 'create',
  description: 'Create a client account, optionally with one spouse user; prints its login link',
  flags: [
    { flag: '--email <email>', field: 'email', help: 'primary holder email (unique across accounts)', required: true },
    { flag: '--first-name <name>', field: 'first_name', help: 'primary holder first name', maxCharacters: NAME_MAX_CHARACTERS, required: true },
    { flag: '--last-name <name>', field: 'last_name', help: 'primary holder last name', maxCharacters: NAME_MAX_CHARACTERS, required: true },
    ...SPOUSE_FLAGS,
    { flag: '--no-spouse-invitation', field: 'spouse.send_invitation', help: 'add the spouse without sending them a login link now' },
    YES_FLAG,
  ],
  examples: [
    'taxprep accounts create --email jane@example.com --first-name Jane --last-name Doe',
    'taxprep accounts create --email jane@example.com --first-name Jane --last-name Doe \\\n      --spouse-email john@example.com --spouse-first-name John --spouse-last-name Doe',
    'taxprep accounts create --email jane@example.com --first-name Jane --last-name Doe --json | jq -r .login_link',
  ],
  notes:
    'With a spouse, the service emails them an invitation with a login link (unless --no-spouse-invitation).\n' +
    'On a terminal it first says so and asks to continue (--yes skips the question; a pipe or cron is never asked).',
  jsonFields: [...ACCOUNT_FIELDS, 'login_link', 'login_link_expires_at', 'spouse', 'created_at'],
  exitCodes: [...SERVICE_WITH_KEY, ...STATE, ['REJECTED', 'the service refused the account: VALIDATION_ERROR, or DUPLICATE_EMAIL (an account with that email exists)'], ['INTERRUPTED', 'Ctrl-C at the Continue? question: nothing was sent']],
  load: () => import('./create'),
};

export const importAccounts: CommandSpec = {
  name: 'import',
  description: 'Create one account per row of a CSV or NDJSON file; safe to run again',
  arguments: [{ name: '<file>', help: 'CSV with a header row, or NDJSON (- for stdin)', complete: 'files' }],
  flags: [
    { flag: '--links <file>', help: 'append the login links returned at creation to this file (made 0600; CSV if it ends in .csv)', complete: 'files' },
    { flag: '--results <file>', help: 'write one line per input row: line, email, status, account id, error (CSV if it ends in .csv, else NDJSON)', complete: 'files' },
    { flag: '--skip-invalid', help: 'send the valid rows and report the invalid ones as failed (default: refuse the file)' },
    { flag: '--dry-run', help: 'check every row and print what would be sent; send nothing' },
    ...batchRunFlags(ACCOUNTS_FILE_NAME),
  ],
  examples: [
    'taxprep accounts import clients.csv --links links.csv --results results.csv',
    'taxprep accounts import clients.csv --dry-run',
    "taxprep accounts import clients.ndjson --json | jq -c 'select(.status == \"failed\")'",
  ],
  notes:
    'Columns: email, first_name, last_name, and optionally spouse_email, spouse_first_name,\n' +
    'spouse_last_name (all three or none) and send_invitation (true/false). A row with a spouse\n' +
    'EMAILS THE SPOUSE an invitation unless send_invitation is false: the import does not ask.\n' +
    'Every row is checked before anything is sent; a bad row stops the file (exit 2) unless\n' +
    '--skip-invalid. Each row ends created, exists (the email is already one of your accounts:\n' +
    'its id is given), failed or skipped (created by an earlier run, from the ledger). Running\n' +
    'the same file again after a failure, Ctrl-C or a crash creates no account twice.\n' +
    'Exit 0 when no row failed, 9 when some did, 10 when another run holds the ledger.',
  exitCodes: [...SERVICE_WITH_KEY, ...STATE, ['PARTIAL', 'some rows were not imported; each is reported (and in --results)'], 'LOCKED', 'INTERRUPTED'],
  load: () => import('./import'),
};

export const accounts: CommandSpec = {
  name: 'accounts',
  group: 'core',
  description: 'Create client accounts, one or a file of them, and read them',
  subcommands: [
    createAccount,
    importAccounts,
    {
      name: 'get',
      description: 'Show an account',
      arguments: [{ name: '<account-id>', help: 'account identifier' }],
      examples: ['taxprep accounts get 1001', 'taxprep accounts get 1001 --json | jq -r .status'],
      jsonFields: ACCOUNT_FIELDS,
      exitCodes: [...SERVICE_WITH_KEY, 'NOT_FOUND', 'REJECTED'],
      load: () => import('./get'),
    },
    {
      name: 'list',
      description: 'List the accounts this machine knows for the service (the service has no account list)',
      examples: ['taxprep accounts list', "taxprep accounts list --json | jq '.accounts[].account_id'"],
      notes:
        'The service has no endpoint that lists accounts. This lists the accounts seen here: those\n' +
        'accounts create and accounts import made or found (the accounts ledger), those login-link\n' +
        'generated links for (the login-link ledger), and those the deliverable list names, with where\n' +
        'each was seen. An account in none of these places is not shown.',
      exitCodes: [...SERVICE_WITH_KEY, ...STATE],
      load: () => import('./list'),
    },
  ],
};
