import type { ArgumentSpec, CommandSpec } from '../spec';
import { SERVICE_WITH_KEY } from '../exitCodes';

const NAME: ArgumentSpec = { name: '<name>', help: 'profile name', complete: 'profiles' };

export const profiles: CommandSpec = {
  name: 'profiles',
  description: 'Store API keys and service addresses as named profiles (one is the default)',
  subcommands: [
    {
      name: 'add',
      description: 'Add or replace a profile; the key is read from a hidden prompt, or from stdin',
      arguments: [{ name: '<name>', help: 'profile name: letters, digits, "-" and "_"' }],
      flags: [
        { flag: '--base-url <url>', help: 'service address including /v1beta (default: the local mock, http://127.0.0.1:4010/v1beta)' },
        { flag: '--api-key-stdin', help: 'read the key from stdin (the default when stdin is not a terminal)' },
        { flag: '--default', help: 'make it the default profile (the first profile always is)' },
        { flag: '--no-verify', help: 'store the key without asking the service whether it accepts it (offline use)' },
        { flag: '--state-url <url>', help: 'keep state in this PostgreSQL, shared by the team (no password: PGPASSWORD, ~/.pgpass; docs/team.md)' },
        { flag: '--state-namespace <name>', help: 'the namespace of the shared state (default "default")' },
      ],
      examples: [
        'taxprep profiles add acme --base-url https://partner-api.example.com/v1beta',
        `printf '%s\\n' "$KEY" | taxprep profiles add ci --api-key-stdin --default`,
        'taxprep profiles add laptop --no-verify      # no network: check it later with taxprep whoami',
      ],
      notes:
        'The key is never accepted as a flag: flags end up in shell history and process lists.\n' +
        'Before storing it, the key is checked with GET /deliverables?limit=1 (as whoami checks it): a key\n' +
        'the service refuses exits 3 and one that cannot be checked exits as the failure does (7 when the\n' +
        'service cannot be reached); either way nothing is stored and a replaced profile keeps its old key.',
      exitCodes: [...SERVICE_WITH_KEY, ['INTERRUPTED', 'Ctrl-C at the hidden key prompt: nothing was saved']],
      load: () => import('./add'),
    },
    {
      name: 'list',
      description: 'List profiles (keys shown redacted)',
      examples: ['taxprep profiles list', "taxprep profiles list --json | jq -r '.profiles[].name'"],
      exitCodes: [],
      load: () => import('./list'),
    },
    {
      name: 'use',
      description: 'Make a profile the default',
      arguments: [NAME],
      examples: ['taxprep profiles use acme'],
      exitCodes: [],
      load: () => import('./use'),
    },
    {
      name: 'show',
      description: 'Show a profile (the default one when no name is given)',
      arguments: [{ ...NAME, name: '[name]' }],
      examples: ['taxprep profiles show', 'taxprep profiles show acme --json'],
      exitCodes: [],
      load: () => import('./show'),
    },
    {
      name: 'remove',
      description: 'Remove a profile and its stored key',
      arguments: [NAME],
      examples: ['taxprep profiles remove old-staging'],
      exitCodes: [],
      load: () => import('./remove'),
    },
  ],
};
