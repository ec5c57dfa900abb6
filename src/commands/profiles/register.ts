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
        { flag: '--insecure-storage', help: 'keep the key in the profile file, in plain text (mode 0600), not in the credential store' },
        { flag: '--api-key-command <command>', help: "store no key: run this command (no shell) when a key is needed; its stdout is the key" },
        { flag: '--ca-file <path>', help: "also trust this PEM file's certificate authorities, kept in the profile (ca_file)", complete: 'files' },
        { flag: '--state-url <url>', help: 'keep state in this PostgreSQL, shared by the team (no password: PGPASSWORD, ~/.pgpass; docs/team.md)' },
        { flag: '--state-namespace <name>', help: 'the namespace of the shared state (default "default")' },
      ],
      examples: [
        'taxprep profiles add acme --base-url https://partner-api.example.com/v1beta',
        `printf '%s\\n' "$KEY" | taxprep profiles add ci --api-key-stdin --default`,
        'taxprep profiles add laptop --no-verify      # no network: check it later with taxprep whoami',
        "taxprep profiles add acme --api-key-command 'op read op://Partners/taxprep/key'",
        "taxprep profiles add acme --api-key-command 'pass show taxprep/acme'",
        'taxprep profiles add box --insecure-storage  # no credential store here (a server)',
        'taxprep profiles add firm --ca-file /etc/firm/inspection-ca.pem',
      ],
      notes:
        'The key is never accepted as a flag: flags end up in shell history and process lists.\n' +
        'Before storing it, the key is checked with GET /deliverables?limit=1 (as whoami checks it): a key\n' +
        'the service refuses exits 3 and one that cannot be checked exits as the failure does (7 when the\n' +
        'service cannot be reached); either way nothing is stored and a replaced profile keeps its old key.\n' +
        "The key goes into the system's credential store (Secret Service on Linux, the macOS Keychain, the\n" +
        'Windows Credential Manager); the profile file only says so. Where no store answers, nothing is\n' +
        'stored (exit 2): choose --insecure-storage or --api-key-command. The command is split into words\n' +
        'as a shell would, but run without one; it runs at most once per taxprep run, within 30s\n' +
        '(TAXPREP_API_KEY_COMMAND_TIMEOUT), and its failure, empty output or hang exits 3. See docs/secrets.md.\n' +
        '--ca-file is kept in the profile (ca_file, its absolute path): every command of the profile then\n' +
        "trusts that file's certificate authorities too (docs/tls.md).",
      exitCodes: [
        ...SERVICE_WITH_KEY.filter((name) => name !== 'AUTH'),
        ['AUTH', 'the service refused the key, or the --api-key-command failed, printed nothing or hung'],
        ['USAGE', 'bad flags or key, or no credential store answers: nothing was stored'],
        ['INTERRUPTED', 'Ctrl-C at the hidden key prompt: nothing was saved'],
      ],
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
      name: 'secure',
      description: "Move a profile's key and its hooks' secrets from the files into the credential store",
      arguments: [NAME],
      examples: ['taxprep profiles secure acme', 'taxprep doctor   # names every profile whose key is still in the file'],
      notes:
        'The key is written to the store and read back before the file is rewritten without it, so that\n' +
        'an interruption at any moment leaves it in the file, in the store, or in both: run it again to\n' +
        "finish. The secrets of the profile's hooks follow in the same order (hooks.json rewritten last).",
      exitCodes: [['USAGE', 'no credential store answers, or no such profile: the file keeps the key']],
      load: () => import('./secure'),
    },
    {
      name: 'remove',
      description: 'Remove a profile, its stored key and its webhooks (with their secrets)',
      arguments: [NAME],
      examples: ['taxprep profiles remove old-staging'],
      exitCodes: [],
      load: () => import('./remove'),
    },
  ],
};
