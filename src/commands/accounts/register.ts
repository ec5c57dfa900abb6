import { NAME_MAX_CHARACTERS } from '../../contract/vocabulary';
import type { CommandSpec, FlagSpec } from '../spec';
import { YES_FLAG } from '../yesFlag';

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
  load: () => import('./create'),
};

export const accounts: CommandSpec = {
  name: 'accounts',
  group: 'core',
  description: 'Create client accounts and read them',
  subcommands: [
    createAccount,
    {
      name: 'get',
      description: 'Show an account',
      arguments: [{ name: '<account-id>', help: 'account identifier' }],
      examples: ['taxprep accounts get 1001', 'taxprep accounts get 1001 --json | jq -r .status'],
      jsonFields: ACCOUNT_FIELDS,
      load: () => import('./get'),
    },
  ],
};
