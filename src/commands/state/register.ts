import type { CommandSpec } from '../spec';
import { STATE } from '../exitCodes';

const MOVE_CODES: CommandSpec['exitCodes'] = [...STATE, ['LOCKED', 'a watch holds an outbox (nothing copied), or a run on some machine a ledger (none of it copied)']];

/** `taxprep state`: the shared store of a team (docs/team.md). */
export const state: CommandSpec = {
  name: 'state',
  description: "Share taxprep's state in PostgreSQL: migrate the schema, move a machine's ledgers in or out",
  notes: 'The store is chosen by --state-url, TAXPREP_STATE_URL or the profile\'s state_url (docs/team.md).',
  subcommands: [
    {
      name: 'migrate',
      description: "Create or bring up to date taxprep's schema in the shared store (run once with the owner role)",
      examples: ['taxprep state migrate --state-url postgres://taxprep_owner@db.example.com/taxprep'],
      notes: 'Each command migrates by itself when its role may; a team that gives operators a role without DDL runs this once per upgrade.',
      exitCodes: STATE,
      load: () => import('./migrate'),
    },
    {
      name: 'import',
      description: "Copy this machine's ledgers (accounts, login links, documents) into the shared store, merging",
      flags: [{ flag: '--dry-run', help: 'say what would be copied; copy nothing' }],
      examples: ['taxprep state import --dry-run', 'taxprep state import'],
      notes:
        'The newer link of a user wins; an account, upload or open intent the store has is not copied again, so a\n' +
        'second run copies nothing. Unfinished batch runs are not copied: finish them here first.\n' +
        'Each rule learned from the service is copied where the store has none or an older one.\n' +
        'The hooks of this profile and base URL are copied by id, and the watch state when the\n' +
        'store has none. The webhook outbox moves: each delivery keeps its webhook-id, body and\n' +
        'schedule, and is marked moved here, never sent from here again. A watch holding this\n' +
        "machine's outbox or the store's lease: exit 10, nothing copied (docs/team.md).",
      exitCodes: MOVE_CODES,
      load: () => import('./import'),
    },
    {
      name: 'export',
      description: 'Copy the shared ledgers into files: this machine\'s data directory, or --to DIR',
      flags: [
        { flag: '--to <dir>', help: 'directory for accounts.ndjson, login-links.ndjson, documents.ndjson (default: the user data directory)', complete: 'files' },
        { flag: '--dry-run', help: 'say what would be copied; copy nothing' },
      ],
      examples: ['taxprep state export --to backup/', 'taxprep state export --dry-run'],
      notes:
        'Also the hooks (by id, into hooks.json), the watch state (when the target has none;\n' +
        'watch-state.json under --to) and the webhook outbox (outbox.ndjson under --to), whose\n' +
        'deliveries are marked moved in the store and sent from the files from then on; and the rules\n' +
        'learned from the service, where the target has none or an older one (learned.json under --to).',
      exitCodes: MOVE_CODES,
      load: () => import('./export'),
    },
  ],
};
