import type { Command } from 'commander';
import { commandAction } from '../action';
import type { CommandModule, Dispatch } from '../types';

const PURPOSES = 'initial_access, expired_link, lost_credentials, additional_user, support_request';

/**
 * A subcommand's action that also hands over the flags of `login-link` itself. Commander gives
 * every flag `login-link` knows to `login-link`, wherever it stands (`login-link renew --from x`
 * included), so the subcommands define only their own flags and read the parent's.
 */
function subcommandAction(dispatch: Dispatch, load: () => Promise<CommandModule<unknown>>) {
  return function (this: Command): Promise<void> {
    return dispatch(load, { args: this.processedArgs, flags: { ...this.parent!.opts(), ...this.opts() } });
  };
}

/**
 * `taxprep login-link <account-id...>` with two subcommands, `renew` and `ledger`. Commander
 * dispatches to a subcommand when the first operand names one (ids are numeric, so never).
 */
export function registerLoginLink(program: Command, dispatch: Dispatch): void {
  const loginLink = program
    .command('login-link')
    .description('Generate login links for clients: one, many, or a file of them; renew them from cron')
    .argument('[account-id...]', 'account identifiers (or --from)')
    .option('--from <file>', 'accounts from a file (- for stdin): one id a line, a CSV with an account_id column, or NDJSON')
    .option('--restart', 'generate every link again, even if this same batch has an unfinished run to resume')
    .option('--user-email <email>', 'the user the link is for (default: the primary holder; one account only)')
    .option('--expiry-hours <hours>', 'hours until the link expires, 1-168 (default 168)')
    .option('--purpose <purpose>', `recorded for audit: ${PURPOSES} (default expired_link)`)
    .option('--redirect-url <url>', 'https URL on a domain permitted for your partner account, opened after login')
    .option('--no-notify', 'do not email the link to the user')
    .option('--partner-branded', 'send the email with your branding')
    .option('--custom-subject <text>', 'subject of the email (at most 200 characters)')
    .option('--custom-message <text>', 'message in the email (at most 2000 characters)')
    .option('--no-instructions', 'leave the login instructions out of the email')
    .option('--concurrency <n>', 'requests at a time in a batch, 1-16 (default 4)')
    .option('--ledger <path>', 'ledger file (default: login-links.ndjson in the user data directory)')
    .option('--lock-wait <seconds>', 'how long to wait for another run holding the ledger (default 5)')
    .option('--reissue-uncertain', 'also generate links an interrupted run may already have generated')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep login-link 1001
  $ taxprep login-link 1001 --user-email spouse@example.com --expiry-hours 48 --no-notify
  $ taxprep login-link 1001 1002 1003 --purpose support_request
  $ taxprep login-link --from clients.csv --json > links.ndjson
  $ cut -d, -f1 accounts.csv | taxprep login-link --from -

Each batch item prints one line as it finishes (NDJSON with --json); exit 9 when some failed.
Running the same batch again before all its links were generated resumes it: links already
generated are skipped, failed and unsent items are sent.
Every generated link is recorded (without its URL) in a ledger; see \`taxprep login-link renew --help\`.`,
    )
    .action(commandAction(dispatch, () => import('./create')));

  loginLink
    .command('renew')
    .description('Regenerate only the links the ledger does not know or that expire soon (for cron)')
    .option('--within <duration>', 'renew links expiring within this window: 90m, 24h, 7d (default 24h)')
    .option('--dry-run', 'list what would be generated and why; send nothing')
    .configureHelp({ showGlobalOptions: true })
    .addHelpText(
      'after',
      `
--from (required) and the flags of \`taxprep login-link\` apply, except --user-email.

Examples:
  $ taxprep login-link renew --from clients.csv --within 24h --dry-run
  $ taxprep login-link renew --from clients.csv --within 24h --json >> renewals.ndjson

A run killed half-way resumes without generating a link twice; only one run works on a ledger at
a time (exit 10 when another holds it). Exit codes to alert on: see \`taxprep help exit-codes\`.`,
    )
    .action(subcommandAction(dispatch, () => import('./renew')));

  loginLink
    .command('ledger')
    .description('List the links the ledger knows, expiring soonest first')
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', '\nExamples:\n  $ taxprep login-link ledger\n  $ taxprep login-link ledger --json | jq \'.links[0]\'\n')
    .action(subcommandAction(dispatch, () => import('./ledger')));
}
