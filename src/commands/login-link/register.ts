import { EXPIRY_HOURS, LOGIN_LINK_PURPOSES } from '../../contract/vocabulary';
import { YES_FLAG } from '../yesFlag';
import type { CommandSpec, FlagSpec } from '../spec';
import { batchRunFlags, ledgerFlag } from '../../batch/flags';
import { LOGIN_LINKS_FILE_NAME } from '../../batch/ledgers/fileNames';
import { SERVICE_WITH_KEY, STATE } from '../exitCodes';

export const DEFAULT_WINDOW = '24h';

const LINK_RECORD_FIELDS = [
  'login_link', 'user_email', 'expires_at', 'expires_in_hours', 'purpose', 'redirect_url',
  'notification_sent', 'previous_links_invalidated', 'created_at', 'account_id',
] as const;

const FROM_HELP = "accounts from a file (- for stdin): one id a line, a CSV or NDJSON with account_id, or an import's file or results";
const LEDGER_FLAG = ledgerFlag(LOGIN_LINKS_FILE_NAME);

/** The flags of every link a run generates, and of the run itself: `login-link` and `login-link renew` alike. */
const RUN_FLAGS: readonly FlagSpec[] = [
  { flag: '--expiry-hours <hours>', field: 'expiry_hours', help: 'hours until the link expires', range: EXPIRY_HOURS, default: String(EXPIRY_HOURS.default) },
  { flag: '--purpose <purpose>', field: 'purpose', help: 'recorded for audit', values: LOGIN_LINK_PURPOSES, valuesOpen: true, default: 'expired_link' },
  { flag: '--redirect-url <url>', field: 'redirect_url', help: 'https URL on a domain permitted for your partner account, opened after login' },
  { flag: '--no-notify', field: 'send_notification', help: 'do not email the link to the user' },
  { flag: '--partner-branded', field: 'notification_settings.partner_branded', help: 'send the email with your branding' },
  { flag: '--custom-subject <text>', field: 'notification_settings.custom_subject', help: 'subject of the email' },
  { flag: '--custom-message <text>', field: 'notification_settings.custom_message', help: 'message in the email' },
  { flag: '--no-instructions', field: 'notification_settings.include_instructions', help: 'leave the login instructions out of the email' },
  ...batchRunFlags(LOGIN_LINKS_FILE_NAME),
  { flag: '--reissue-uncertain', help: 'also generate links an interrupted run may already have generated' },
  YES_FLAG,
];

export const renew: CommandSpec = {
  name: 'renew',
  description: 'Regenerate the links that expire soon (for cron); unknown ones only when told to',
  flags: [
    { flag: '--from <file>', help: FROM_HELP, complete: 'files', required: true },
    { flag: '--within <duration>', help: 'renew links expiring within this window: 90m, 24h, 7d', default: DEFAULT_WINDOW },
    { flag: '--dry-run', help: 'list what the same run would do and why (generate, skip, hold); send nothing' },
    { flag: '--renew-unknown', help: 'also replace links the ledgers do not know (a terminal asks instead)' },
    { flag: '--skip-invalid', help: 'renew from the good lines and report the bad ones (as an import with --skip-invalid left them); exit 9' },
    ...RUN_FLAGS,
  ],
  examples: [
    'taxprep login-link renew --from clients.csv --within 24h --dry-run',
    'taxprep login-link renew --from clients.csv --within 24h --json >> renewals.ndjson',
  ],
  notes:
    'Renewing a link stops the earlier one from working. On a terminal it first says how many links it\n' +
    'renews and emails, and asks to continue (--yes skips the question; a pipe or cron is never asked).\n' +
    'Links handed out at account creation are in the ledger. A link the ledgers do not know is replaced\n' +
    'only when a person says yes at the terminal, or with --renew-unknown; otherwise it fails (exit 9).\n' +
    'After `accounts import --skip-invalid`, give --from the import\'s --results file (its accounts and\n' +
    'invited spouses), or its own file with --skip-invalid (its bad lines reported every run, exit 9).\n' +
    'A run killed half-way resumes without generating a link twice; only one run works on a ledger at\n' +
    'a time (exit 10 when another holds it). Exit codes to alert on: see `taxprep help exit-codes`.',
  exitCodes: [...SERVICE_WITH_KEY, ...STATE, ['PARTIAL', 'some links were not renewed; each is reported'], 'LOCKED', 'INTERRUPTED'],
  load: () => import('./renew'),
};

export const ledger: CommandSpec = {
  name: 'ledger',
  description: 'List the links the ledger knows, expiring soonest first',
  flags: [LEDGER_FLAG],
  examples: ['taxprep login-link ledger', "taxprep login-link ledger --json | jq '.links[0]'"],
  exitCodes: STATE,
  load: () => import('./ledger'),
};

/**
 * `taxprep login-link <account-id...>` with two subcommands, `renew` and `ledger`. Commander
 * dispatches to a subcommand when the first operand names one (ids are numeric, so never).
 */
export const loginLink: CommandSpec = {
  name: 'login-link',
  group: 'core',
  description: "Generate and renew clients' login links, one or a file of them",
  arguments: [{ name: '[account-id...]', help: 'account identifiers (or --from)' }],
  flags: [
    { flag: '--from <file>', help: FROM_HELP, complete: 'files' },
    { flag: '--restart', help: 'generate every link again, even if this same batch has an unfinished run to resume' },
    { flag: '--user-email <email>', field: 'user_email', help: 'the user the link is for (default: the primary holder; one account only)' },
    ...RUN_FLAGS,
  ],
  examples: [
    'taxprep login-link 1001',
    'taxprep login-link 1001 --user-email spouse@example.com --expiry-hours 48 --no-notify',
    'taxprep login-link 1001 1002 1003 --purpose support_request',
    'taxprep login-link --from clients.csv --json > links.ndjson',
    'cut -d, -f1 accounts.csv | taxprep login-link --from -',
  ],
  notes:
    'A new link stops every earlier link of the same user from working, and by default is emailed to\n' +
    'the user. On a terminal it first says who will be emailed and which links stop working, and asks\n' +
    'to continue (--yes skips the question; a pipe or cron is never asked); a batch asks once.\n' +
    'Each batch item prints one line as it finishes (NDJSON with --json); exit 9 when some failed.\n' +
    'Running the same batch again before all its links were generated resumes it: links already\n' +
    'generated are skipped, failed and unsent items are sent.\n' +
    'Every generated link is recorded (without its URL) in a ledger; see `taxprep login-link renew --help`.',
  jsonFields: [...LINK_RECORD_FIELDS, 'input', 'error', 'skipped'],
  exitCodes: [...SERVICE_WITH_KEY, ...STATE, ['NOT_FOUND', 'one account: no such account (ACCOUNT_NOT_FOUND) or user (USER_NOT_FOUND)'], ['REJECTED', 'one account: INVALID_EXPIRY, INVALID_REDIRECT_URL or ACCOUNT_SUSPENDED'], ['PARTIAL', 'several accounts or --from: some links were not generated; each is reported'], 'LOCKED', 'INTERRUPTED'],
  load: () => import('./create'),
  subcommands: [renew, ledger],
};
